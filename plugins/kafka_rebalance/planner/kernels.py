"""The planner's compiled loops (numba), compiled ahead of use: ``python -m kafka_rebalance.planner.kernels``.

numba compiles a kernel on its first call and caches the machine code beside its module. The first plan that needs
them pays for it (about 45 s of CPU for the goals' three, and more for the dispatcher's), and every process that reaches
the first call before the cache is written pays again: ``make test``'s workers would each compile them. ``make test``
and ``make demo`` run this first, one process, so everything after loads the cache (a few seconds). Where the sources
have not changed it only loads. The cache lives in a directory per version of the kernels' sources (kernel_cache.py);
this removes the other versions' directories.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner import make_plan
from kafka_rebalance.planner.goals.byte_focus import next_focus
from kafka_rebalance.planner.kernel_cache import CACHE_DIR, prune_others
from kafka_rebalance.planner.peaks import DiskLedger, DiskRoom
from kafka_rebalance.planner.schedule import Dispatcher
from kafka_rebalance.testing import corpus

# Every kernel runs on this member with these goals: the count and byte goals' searches (donor_arrays), topic spread's
# replica search and first replicas, network in's searches (network_search), network out's hand-overs, the schedule's
# simulation.
MEMBER = "hot-topics-40b"
GOALS = ("replica-count", "bytes", "topic-spread", "network-in", "network-out", "preferred-leader")


def warm() -> float:
    """Run every kernel once (compiling what the cache lacks); the CPU seconds it took."""
    start = time.process_time()
    snapshot, options = corpus.member(MEMBER)
    plan = make_plan(snapshot, PlanOptions(**{**options, "goals": GOALS}))
    # The dispatcher as the executor drives it, step by step, with a hold, a cancellation and disk room.
    steps = [s.step for s in plan.schedule.steps]
    after = [s.after for s in plan.schedule.steps]
    brokers = sorted({b for s in steps for b in (*s.adds, *s.removes)})
    room = DiskRoom(dict.fromkeys(brokers, 0.0), dict.fromkeys(brokers, 1e18))
    dispatcher = Dispatcher(steps, after, 2, 4, 1e12, disk=room)
    dispatcher.start(allow=lambda i: False)
    started = dispatcher.start()
    dispatcher.abandon(started[0])
    for i in started[1:]:
        dispatcher.finish(i)
    dispatcher.disk_blocked()
    ledger = DiskLedger(room)
    ledger.start(steps[0])
    ledger.blocker(steps[0])
    ledger.finish(steps[0])
    # The byte goal's choice of broker as its Python methods call it (its compiled run calls it inside its kernel).
    one, flag = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=bool)
    next_focus(one, one, np.zeros(1), np.zeros(1), np.zeros(1), flag, one, False, False, flag, 1, np.empty(2, dtype=np.int64))
    return time.process_time() - start


def main() -> int:
    # Caches of earlier kernel sources (kernel_cache.py) are never read again: only this version's is kept.
    prune_others(CACHE_DIR)
    print(f">> planner kernels compiled and cached ({warm():.0f} s of CPU)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
