"""summary.targets.byte_misses (planner/byte_misses.py): each eligible broker a plan leaves outside its
byte band, with the cause the state proves, on clusters small enough to follow by hand."""

from __future__ import annotations

from kafka_rebalance.planner import PlanOptions, make_plan
from kafka_rebalance.planner.byte_misses import byte_misses
from tests.support.clusters import GiB, part, planner_state, snapshot

RATE = {"throttle_bytes_per_sec": 1024 * 1024 * 1024}


def test_a_partition_that_pins_its_racks_bytes_is_named_for_the_broker_left_short() -> None:
    # RF 3 over racks a (brokers 0, 1), b (2) and c (3): every partition keeps one replica in each rack.
    # g-0 is 120 GiB, t-0..t-7 10 GiB each: 200 GiB per rack, 600 in all, a mean of 150. Rack a's share
    # (100 per broker) is forced below the mean's band, so brokers 0 and 1 are held to [95, 165] GiB (the
    # share within half the tolerance at the bottom, the mean's top); racks b and c are forced to 200.
    # Before: 0 holds g-0 and four 10s (160 GiB, 5 replicas), 1 the other four (40, 4); counts [4, 5].
    # One single move fits the counts: 150 / 50. Broker 0 is in its band; broker 1 is not, and no plan
    # gets it there: rack a holds exactly 200 GiB, whichever broker holds g-0 the other has at most 80.
    racks = [(0, "a"), (1, "a"), (2, "b"), (3, "c")]
    parts = [part("g", 0, [0, 2, 3], size_bytes=120 * GiB)]
    parts += [part("t", i, [0 if i < 4 else 1, 2, 3], size_bytes=10 * GiB) for i in range(8)]
    s = make_plan(snapshot(racks, parts), PlanOptions(optimizer="heuristic", **RATE)).summary
    assert s["targets"]["replicas_reached"] and not s["targets"]["bytes_reached"]
    assert s["targets"]["forced_shares"] == [
        {"rack": "a", "brokers": [0, 1], "share": 100.0 * GiB, "share_over_mean": 0.6667, "bound": "ceiling"},
        {"rack": "b", "brokers": [2], "share": 200.0 * GiB, "share_over_mean": 1.3333, "bound": "floor"},
        {"rack": "c", "brokers": [3], "share": 200.0 * GiB, "share_over_mean": 1.3333, "bound": "floor"},
    ]
    assert s["targets"]["byte_misses"] == [
        {"broker_id": 1, "bytes": 50 * GiB, "low": 95 * GiB, "high": 165 * GiB,
         "reason": "rack a holds at most 200.0 GiB; whichever 1 broker holds g-0 (120.0 GiB), the other 1 share at "
                   "most 80.0 GiB, below the bottoms of their bands summed (95.0 GiB): no plan puts every broker of "
                   "rack a in its band"},
    ]


def test_a_partition_too_big_for_every_band_is_named_for_its_broker() -> None:
    # RF 3 over racks a (brokers 0, 1), b (2) and c (3) as above, g-0 now 400 GiB: 480 GiB per rack, mean
    # 360, rack a's brokers held to [228, 396]. g-0 alone is above that top, and cannot leave rack a.
    racks = [(0, "a"), (1, "a"), (2, "b"), (3, "c")]
    parts = [part("g", 0, [0, 2, 3], size_bytes=400 * GiB)]
    parts += [part("t", i, [0 if i < 4 else 1, 2, 3], size_bytes=10 * GiB) for i in range(8)]
    state = planner_state(racks, parts, targets=True)
    (miss,) = [m for m in byte_misses(state) if m["broker_id"] == 0]
    assert miss["reason"] == (
        "holds g-0 (400.0 GiB), more than any broker of rack a can take and stay in its band (at most 396.0 GiB); "
        "rack safety keeps 1 replica of it in each of the 3 racks, so it cannot leave a")


def test_without_racks_the_partition_must_fit_some_brokers_band() -> None:
    # No racks, brokers 0-2, 1,000 / 3,800 (2,000 + 1,800) / 3,000 bytes: mean 2,600, band [2,340, 2,860].
    # The 3,000-byte partition fits no band, wherever it goes. Brokers 0 and 1 could both reach theirs
    # (4,800 bytes between them, 4,680 needed): their misses are the heuristic's choice, in a cluster
    # that cannot reach every band.
    parts = [part("a", 0, [0], size_bytes=1000), part("a", 1, [1], size_bytes=2000), part("a", 2, [2], size_bytes=3000),
             part("a", 3, [1], size_bytes=1800)]
    state = planner_state([0, 1, 2], parts, targets=True)
    big = "holds a-2 (3,000 bytes), more than any eligible broker can take and stay in its band (at most 2,860 bytes)"
    unproven = f"not reached by the heuristic, in a cluster where no plan reaches every band (broker 2: {big})"
    assert byte_misses(state) == [
        {"broker_id": 0, "bytes": 1000, "low": 2340, "high": 2860, "reason": unproven},
        {"broker_id": 1, "bytes": 3800, "low": 2340, "high": 2860, "reason": unproven},
        {"broker_id": 2, "bytes": 3000, "low": 2340, "high": 2860, "reason": big},
    ]
    # the same state as the exact model's plan: the unproven miss is the solver's, not the heuristic's
    assert byte_misses(state, by_exact=True)[0]["reason"] == (
        f"not reached by the exact model within its work limit, in a cluster where no plan reaches every band "
        f"(broker 2: {big})")


def test_a_giant_that_leaves_the_others_too_little_is_named_for_them() -> None:
    # 1,000 / 2,000 / 3,000 bytes: mean 2,000, band [1,800, 2,200]. Whoever holds a-2, the other two share
    # 3,000 bytes, below their bottoms' 3,600: broker 0's miss is proven too, and names a-2.
    parts = [part("a", 0, [0], size_bytes=1000), part("a", 1, [1], size_bytes=2000), part("a", 2, [2], size_bytes=3000)]
    state = planner_state([0, 1, 2], parts, targets=True)
    assert byte_misses(state)[0] == {
        "broker_id": 0, "bytes": 1000, "low": 1800, "high": 2200,
        "reason": "the cluster holds at most 6,000 bytes; whichever 1 broker holds a-2 (3,000 bytes), the other 2 "
                  "share at most 3,000 bytes, below the bottoms of their bands summed (3,600 bytes): no plan puts "
                  "every broker of the cluster in its band"}


def test_a_broker_in_its_band_is_no_miss() -> None:
    parts = [part("a", 0, [0], size_bytes=1000), part("a", 1, [1], size_bytes=1050)]
    assert byte_misses(planner_state([0, 1], parts, targets=True)) == []
