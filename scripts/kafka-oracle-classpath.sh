#!/usr/bin/env bash
# Resolves the AdminUtils oracle (kafka-server-common 4.0.x + kafka-clients) from Maven Central into
# .kafka/adminutils-<version>/lib/ once. Later runs find the stamp and return at once, offline.
# Prints the lib directory on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
pom=kafka/adminutils-oracle/pom.xml
version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")
root=".kafka/adminutils-${version}"
dest="${root}/lib"
if [ ! -f "${root}/.resolved" ]; then
  if ! command -v mvn >/dev/null 2>&1; then
    echo "error: Maven 3.6+ is required to fetch kafka-server-common ${version} (AdminUtils) from Maven Central and no 'mvn' is on PATH." >&2
    echo "       Debian/Ubuntu: sudo apt-get install -y maven      macOS: brew install maven" >&2
    exit 1
  fi
  echo ">> resolving Kafka ${version}'s AdminUtils (kafka-server-common) from Maven Central into ${dest} (once)" >&2
  mkdir -p "$root"
  rm -rf "$dest.tmp"
  if ! mvn -q -B -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$PWD/$dest.tmp" >"${root}/mvn.log" 2>&1; then
    echo "error: could not resolve kafka-server-common ${version} from Maven Central; see ${root}/mvn.log" >&2
    tail -5 "${root}/mvn.log" >&2
    exit 1
  fi
  rm -rf "$dest" && mv "$dest.tmp" "$dest"
  touch "${root}/.resolved"
fi
echo "$PWD/$dest"
