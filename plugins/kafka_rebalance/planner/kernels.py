"""The planner's compiled loops (numba), compiled ahead of use: ``python -m kafka_rebalance.planner.kernels``.

numba compiles a kernel on its first call and caches the machine code beside its module. The first plan that needs
them pays for it (about 45 s of CPU for the three), and every process that reaches the first call before the cache is
written pays again: ``make test``'s workers would each compile them. ``make test`` and ``make demo`` run this first, one
process, so everything after loads the cache (about 2 s). Where the sources have not changed it only loads.
"""

from __future__ import annotations

import sys
import time

from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner import make_plan
from kafka_rebalance.testing import corpus

# Every kernel runs on this member with these goals: topic spread's replica search and first replicas, network
# out's hand-overs.
MEMBER = "hot-topics-40b"
GOALS = ("replica-count", "bytes", "topic-spread", "network-out", "preferred-leader")


def warm() -> float:
    """Run every kernel once (compiling what the cache lacks); the CPU seconds it took."""
    start = time.process_time()
    snapshot, options = corpus.member(MEMBER)
    make_plan(snapshot, PlanOptions(**{**options, "goals": GOALS}))
    return time.process_time() - start


def main() -> int:
    print(f">> planner kernels compiled and cached ({warm():.0f} s of CPU)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
