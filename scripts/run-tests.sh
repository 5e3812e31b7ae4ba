#!/usr/bin/env bash
# `make test`: the suite in two phases.
#   1. Everything but the `quiet` tests on PYTEST_WORKERS pytest-xdist workers (tests/conftest.py groups each
#      module on one worker, every test of the shared Kafka sandbox on one, longest first).
#   2. The `quiet` tests (copy times and rates measured on real Kafka) alone, on a machine the first phase has left.
# TYPECHECK, where set, is a type checker run beside phase 1; its output follows that phase, and its failure fails the run.
# Both phases always run; the exit status is the first failure's (pytest's 5, "nothing selected", is not one).
# Usage: scripts/run-tests.sh <python> [pytest args...]
set -uo pipefail
python=$1
shift
workers=${PYTEST_WORKERS:-3}
parallel=()
if [ "$workers" != 0 ]; then
  parallel=(-n "$workers" --dist loadscope --no-loadscope-reorder)
fi
status=0
# TYPECHECK (the type checker, `make test` sets it) runs beside the first phase: on 2 cores the suite leaves room.
typecheck_out=
if [ -n "${TYPECHECK:-}" ]; then
  typecheck_out=$(mktemp)
  "$TYPECHECK" > "$typecheck_out" 2>&1 &
  typecheck_pid=$!
  # Stopped with the script, by its pid, and its output removed: SIGTERM and SIGINT exit through the EXIT trap (once
  # the running phase has ended: bash waits for it), which a signal with no trap of its own would skip.
  trap 'kill "$typecheck_pid" 2>/dev/null; rm -f "$typecheck_out"' EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
fi
"$python" -m pytest "${parallel[@]}" -m 'not matrix and not quiet' "$@"
rc=$?; if [ $rc -ne 0 ] && [ $rc -ne 5 ]; then status=$rc; fi
if [ -n "$typecheck_out" ]; then
  wait "$typecheck_pid"
  rc=$?
  cat "$typecheck_out"
  rm -f "$typecheck_out"
  if [ $rc -ne 0 ] && [ $status -eq 0 ]; then status=$rc; fi
fi
"$python" -m pytest -m 'quiet and not matrix' "$@"
rc=$?; if [ $rc -ne 0 ] && [ $rc -ne 5 ] && [ $status -eq 0 ]; then status=$rc; fi
exit $status
