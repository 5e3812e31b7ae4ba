#!/usr/bin/env bash
# Spark 4 needs Java 17 or 21. Fail early, with the fix, instead of a JVM stack trace later.
set -euo pipefail
if ! command -v java >/dev/null 2>&1 && [ -z "${JAVA_HOME:-}" ]; then
  echo "error: Java 17+ is required (Spark 4 runs on the JVM) and no 'java' is on PATH." >&2
  echo "       Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless" >&2
  echo "       macOS:         brew install openjdk@17   (then set JAVA_HOME)" >&2
  exit 1
fi
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"
version=$("$java_bin" -version 2>&1 | awk -F'"' '/version/ {print $2; exit}')
major=${version%%.*}
if [ "$major" = "1" ]; then major=$(echo "$version" | cut -d. -f2); fi
if [ -z "$major" ] || [ "$major" -lt 17 ]; then
  echo "error: Java 17+ is required by Spark 4; found '${version:-unknown}' at $(command -v "$java_bin")." >&2
  echo "       Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless  (and point JAVA_HOME at it)" >&2
  exit 1
fi
