#!/usr/bin/env bash
# Resolves real Apache Kafka (broker + Kafka's own tools + the log4j2 binding) from Maven Central
# into .kafka/<version>/lib/ once. Later runs find the stamp and return at once, offline.
#   scripts/kafka-classpath.sh            the version pinned in kafka/pom.xml
#   scripts/kafka-classpath.sh 4.1.2      another release (kafka-rebalance sandbox up --kafka-version)
set -euo pipefail
cd "$(dirname "$0")/.."
pinned=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' kafka/pom.xml)
version="${1:-$pinned}"
home="${KAFKA_REBALANCE_KAFKA_DIR:-$PWD/.kafka}"
dest="$home/${version}/lib"
stamp="$home/${version}/.resolved"
[ -f "$stamp" ] && exit 0
if ! command -v mvn >/dev/null 2>&1; then
  echo "error: Maven 3.6+ is required to fetch Apache Kafka ${version} from Maven Central and no 'mvn' is on PATH" \
       "(Debian/Ubuntu: sudo apt-get install -y maven; macOS: brew install maven)" >&2
  exit 1
fi
echo ">> resolving Apache Kafka ${version} (broker + tools) from Maven Central into ${dest} (once, ~20 s)" >&2
mkdir -p "$home/${version}"
log="$home/${version}/mvn.log"
rm -rf "$dest.tmp"
if ! mvn -q -B -f kafka/pom.xml dependency:copy-dependencies -DincludeScope=runtime \
      -Dkafka.version="$version" -DoutputDirectory="$dest.tmp" >"$log" 2>&1; then
  echo "error: could not resolve Apache Kafka ${version} from Maven Central (is it a served release?); see $log" >&2
  exit 1
fi
rm -rf "$dest" && mv "$dest.tmp" "$dest"
touch "$stamp"
