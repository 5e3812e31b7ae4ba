#!/usr/bin/env bash
# Resolves real Apache Kafka (broker + Kafka's own tools + log4j2 binding) from Maven Central
# into .kafka/<version>/lib/ once. Later runs find the stamp and return at once, offline.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' kafka/pom.xml)
dest=".kafka/${version}/lib"
stamp=".kafka/${version}/.resolved"
[ -f "$stamp" ] && exit 0
if ! command -v mvn >/dev/null 2>&1; then
  echo "error: Maven 3.6+ is required to fetch Apache Kafka ${version} from Maven Central and no 'mvn' is on PATH." >&2
  echo "       Debian/Ubuntu: sudo apt-get install -y maven      macOS: brew install maven" >&2
  exit 1
fi
echo ">> resolving Apache Kafka ${version} (broker + tools) from Maven Central into ${dest} (once, ~20 s)" >&2
mkdir -p ".kafka/${version}"
rm -rf "$dest.tmp"
if ! mvn -q -B -f kafka/pom.xml dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$PWD/$dest.tmp" >".kafka/mvn-${version}.log" 2>&1; then
  echo "error: could not resolve Apache Kafka ${version} from Maven Central; see .kafka/mvn-${version}.log" >&2
  tail -5 ".kafka/mvn-${version}.log" >&2
  exit 1
fi
rm -rf "$dest" && mv "$dest.tmp" "$dest"
touch "$stamp"
