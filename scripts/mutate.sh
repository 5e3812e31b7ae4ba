#!/usr/bin/env bash
# `make mutate`: mutmut over the pure core with the fast unit tests ([tool.mutmut] in pyproject.toml).
# mutmut names mutants after the module path relative to ./, src/ or source/, so the package is
# staged as build/mutate/src/kafka_rebalance (tests import `kafka_rebalance`, as they do here).
# Usage: scripts/mutate.sh [MUTANT NAME GLOBS...]   e.g. 'kafka_rebalance.metrics*'
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${VENV_BIN:-$root/.venv/bin}"
stage="$root/build/mutate"
rm -rf "$stage" && mkdir -p "$stage/src"
cp -r "$root/plugins/kafka_rebalance" "$stage/src/"
cp -r "$root/tests" "$root/config" "$root/samples" "$root/expectations" "$stage/"
sed -e 's#^pythonpath = \["plugins", "."\]#pythonpath = ["src", "."]#' \
    -e 's#"plugins/kafka_rebalance#"src/kafka_rebalance#g' "$root/pyproject.toml" > "$stage/pyproject.toml"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +
cd "$stage"
export PATH="$bin:$PATH"  # type_check_command's `mypy` is the virtualenv's
started=$(date +%s)
"$bin/python" "$root/scripts/mutate_run.py" run --max-children "${MUTATE_JOBS:-2}" "$@"
"$bin/mutmut" results | tail -n 60
echo "survivors above; inspect one with: cd $stage && $bin/mutmut show NAME"
"$bin/python" "$root/scripts/mutate_summary.py" "$stage"
echo "mutation run took $(( $(date +%s) - started )) s"
