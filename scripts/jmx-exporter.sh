#!/usr/bin/env bash
# Resolves the Prometheus JMX exporter java agent (io.prometheus.jmx:jmx_prometheus_javaagent, one
# shaded jar) from Maven Central into .kafka/jmx-exporter/<version>/ once, for `sandbox up --metrics`.
# Later runs find the stamp and return at once, offline.
#   scripts/jmx-exporter.sh 1.0.1
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:?usage: scripts/jmx-exporter.sh VERSION}"
home="${KAFKA_REBALANCE_KAFKA_DIR:-$PWD/.kafka}"
dest="$home/jmx-exporter/${version}"
stamp="$dest/.resolved"
[ -f "$stamp" ] && exit 0
if ! command -v mvn >/dev/null 2>&1; then
  echo "error: Maven 3.6+ is required to fetch the JMX exporter ${version} from Maven Central and no 'mvn' is on PATH" \
       "(Debian/Ubuntu: sudo apt-get install -y maven; macOS: brew install maven)" >&2
  exit 1
fi
echo ">> resolving io.prometheus.jmx:jmx_prometheus_javaagent:${version} from Maven Central into ${dest} (once)" >&2
mkdir -p "$home/jmx-exporter"
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
log="$home/jmx-exporter/mvn-${version}.log"
if ! mvn -q -B dependency:copy -Dartifact="io.prometheus.jmx:jmx_prometheus_javaagent:${version}" \
      -DoutputDirectory="$dest.tmp" >"$log" 2>&1; then
  echo "error: could not resolve io.prometheus.jmx:jmx_prometheus_javaagent:${version} from Maven Central; see $log" >&2
  exit 1
fi
rm -rf "$dest" && mv "$dest.tmp" "$dest"
touch "$stamp"
