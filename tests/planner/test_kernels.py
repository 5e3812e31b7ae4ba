"""The kernels' warm-up (``python -m kafka_rebalance.planner.kernels``, run by ``make test`` and ``make demo``)."""

from __future__ import annotations

import subprocess
import sys

# The dispatcher's functions Python calls (schedule.Dispatcher and simulate, dispatch.build).
DISPATCH = ["new_heap", "_lists", "_involved", "_structs", "_init", "choose", "requeue", "take", "fit", "finish", "abandon",
            "disk_full", "simulate_steps"]


def test_the_warm_up_runs_every_compiled_kernel() -> None:
    # A fresh process: its dispatchers start with no signature, so each one listed ran in the warm-up (compiled, or
    # loaded from the cache). A kernel the member and goals stopped reaching would be compiled by each test worker again.
    code = ("from kafka_rebalance.planner.kernels import warm; warm()\n"
            "from kafka_rebalance.planner.goals.hand_overs import hand_overs\n"
            "from kafka_rebalance.planner.goals.topic_spread_leaders import spread_leaders\n"
            "from kafka_rebalance.planner.goals.topic_spread_moves import spread_replicas\n"
            "from kafka_rebalance.planner.goals.network_search import closest_to_need, nearest_cooler\n"
            "from kafka_rebalance.planner.goals.byte_focus import next_focus\n"
            "from kafka_rebalance.planner.goals.replica_count_moves import count_moves\n"
            "from kafka_rebalance.planner.goals.donor_arrays import empty_indexes\n"
            "from kafka_rebalance.planner.goals.byte_balance_moves import byte_moves\n"
            "from kafka_rebalance.planner.goals.byte_trim_moves import trim_pass\n"
            "from kafka_rebalance.planner.goals.leader_keep_moves import keep_pass\n"
            "from kafka_rebalance.planner import batching, dispatch, peaks\n"
            "kernels = [hand_overs, spread_leaders, spread_replicas, closest_to_need, nearest_cooler, next_focus,\n"
            "           count_moves, empty_indexes, byte_moves, trim_pass, keep_pass,\n"
            "           *(getattr(dispatch, k) for k in KERNELS),\n"
            "           peaks.ledger_full, peaks.ledger_add, batching._batch_moves]\n"
            "print(*(len(k.signatures) for k in kernels))")
    out = subprocess.run([sys.executable, "-c", f"KERNELS = {DISPATCH!r}\n" + code], capture_output=True, text=True,
                         check=True, timeout=600)  # fmt: skip
    assert out.stdout.split() == ["1"] * (14 + len(DISPATCH))


def test_the_warm_up_says_what_it_did() -> None:
    out = subprocess.run([sys.executable, "-m", "kafka_rebalance.planner.kernels"], capture_output=True, text=True,
                         timeout=600)  # fmt: skip
    assert out.returncode == 0
    assert out.stderr.startswith(">> planner kernels compiled and cached (") and out.stderr.rstrip().endswith("s of CPU)")
