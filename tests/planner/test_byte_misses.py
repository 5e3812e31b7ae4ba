"""summary.targets.byte_misses (planner/byte_misses.py): each eligible broker a plan leaves outside its
byte band, with the cause the state proves, on clusters small enough to follow by hand."""

from __future__ import annotations

from kafka_rebalance.planner import PlanOptions, make_plan
from kafka_rebalance.planner.byte_misses import byte_misses
from tests.support.clusters import GiB, part, planner_state, snapshot

RATE = {"throttle_bytes_per_sec": 1024 * 1024 * 1024}


def test_a_partition_bigger_than_its_racks_band_is_named_and_so_is_the_broker_left_short() -> None:
    # RF 3 over racks a (brokers 0, 1), b (2) and c (3): every partition keeps one replica in each rack.
    # g-0 is 120 GiB, t-0..t-7 10 GiB each: 200 GiB per rack, so brokers 0 and 1 aim at 100 GiB, band
    # [90, 110] GiB, and brokers 2 and 3 at 200 (they hold everything of their rack, in band).
    # Before: 0 holds g-0 and four 10s (160 GiB, 5 replicas), 1 the other four (40, 4); counts [4, 5].
    # One single move fits the counts: the 10 nearest the wanted min(60, 60) -> 150 / 50. Then no swap
    # helps (g-0 for a 10 only mirrors them: 40 / 160), so the plan ends at 150 / 50.
    # Broker 0: g-0 alone is above every rack-a band top (110), and it cannot leave rack a. Broker 1: what
    # fits under its top is the eight 10s, 80 GiB, below its bottom of 90.
    racks = [(0, "a"), (1, "a"), (2, "b"), (3, "c")]
    parts = [part("g", 0, [0, 2, 3], size_bytes=120 * GiB)]
    parts += [part("t", i, [0 if i < 4 else 1, 2, 3], size_bytes=10 * GiB) for i in range(8)]
    s = make_plan(snapshot(racks, parts), PlanOptions(optimizer="heuristic", **RATE)).summary
    assert s["targets"]["replicas_reached"] and not s["targets"]["bytes_reached"]
    low, high = 90 * GiB, 110 * GiB
    assert s["targets"]["byte_misses"] == [
        {"broker_id": 0, "bytes": 150 * GiB, "low": low, "high": high,
         "reason": "holds g-0 (120.0 GiB), more than any broker of rack a can take and stay in its band (at most "
                   "110.0 GiB); rack safety keeps 1 replica of it in each of the 3 racks, so it cannot leave a"},
        {"broker_id": 1, "bytes": 50 * GiB, "low": low, "high": high,
         "reason": "every partition it could hold without going over its band's top adds up to 80.0 GiB with its "
                   "unmovable load, below its band's bottom 90.0 GiB; the other partition would take it over its "
                   "band's top"},
    ]


def test_without_racks_the_partition_must_fit_some_brokers_band() -> None:
    # No racks, brokers 0-2, 1,000 / 2,000 / 3,000 bytes (one replica each): target 2,000, band [1,800,
    # 2,200]. The 3,000-byte partition fits no band, wherever it goes; 1,000 alone is short, but a broker
    # could hold 2,000 instead, so that miss is the heuristic's choice in a cluster that cannot reach all.
    parts = [part("a", 0, [0], size_bytes=1000), part("a", 1, [1], size_bytes=2000), part("a", 2, [2], size_bytes=3000)]
    state = planner_state([0, 1, 2], parts, targets=True)
    big = "holds a-2 (3,000 bytes), more than any eligible broker can take and stay in its band (at most 2,200 bytes)"
    assert byte_misses(state) == [
        {"broker_id": 0, "bytes": 1000, "low": 1800, "high": 2200,
         "reason": f"not reached by the heuristic, in a cluster where no plan reaches every band (broker 2: {big})"},
        {"broker_id": 2, "bytes": 3000, "low": 1800, "high": 2200, "reason": big},
    ]
    # the same state as the exact model's plan: the unproven miss is the solver's, not the heuristic's
    assert byte_misses(state, by_exact=True)[0]["reason"] == (
        f"not reached by the exact model within its work limit, in a cluster where no plan reaches every band "
        f"(broker 2: {big})")


def test_a_broker_in_its_band_is_no_miss() -> None:
    parts = [part("a", 0, [0], size_bytes=1000), part("a", 1, [1], size_bytes=1050)]
    assert byte_misses(planner_state([0, 1], parts, targets=True)) == []
