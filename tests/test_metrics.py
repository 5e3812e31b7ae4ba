"""Per-broker load in plain Python (describe, report, final verification), worked out by hand."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kafka_rebalance.cli import app
from kafka_rebalance.metrics import broker_loads, brokers_over_threshold, check_threshold_setting, is_over_threshold
from kafka_rebalance.snapshot import snapshot_from_dict, write_snapshot
from kafka_rebalance.userinput import InputError


def _snap(parts: list[tuple[list[int], int]]):
    return snapshot_from_dict({
        "cluster_id": "c",
        "brokers": [{"id": 0}, {"id": 1}, {"id": 2}],
        "partitions": [
            {"topic": "t", "partition": i, "replicas": reps, "leader": leader,
             "isr": [r for r in reps if leader != -1 or r != reps[0]]}
            for i, (reps, leader) in enumerate(parts)
        ],
    })  # fmt: skip


def test_leaderless_partition_is_not_led_by_its_preferred_replica(tmp_path) -> None:
    # t-0 led by 0 (its preferred), t-1 has no leader (-1), t-2 led by 2.
    snap = _snap([([0, 1], 0), ([0, 2], -1), ([2, 1], 2)])
    loads = {b.broker_id: b for b in broker_loads(snap)}
    assert (loads[0].preferred_partitions, loads[0].preferred_not_led, loads[0].leaders) == (2, 1, 1)
    assert loads[0].imbalance_ratio == 0.5
    assert (loads[1].leaders, loads[2].leaders) == (0, 1)
    # final verification: broker 0 (1 of 2 preferred partitions not led) is over 10%
    assert brokers_over_threshold(list(loads.values()), 10) == [0]
    # describe prints the same figures
    path = write_snapshot(snap, tmp_path / "s.json")
    r = CliRunner().invoke(app, ["describe", "--snapshot", str(path), "--json"])
    assert r.exit_code == 0, r.output
    row = json.loads(r.stdout)["brokers"][0]
    assert (row["leaders"], row["preferred_partitions"], row["preferred_not_led"], row["imbalance_ratio"]) == (1, 2, 1, 0.5)


def test_a_broker_exactly_at_the_threshold_is_not_over_it() -> None:
    # Broker 0 prefers 10 partitions and leads 9: ratio 0.1 == 10% is allowed (Kafka: ratio > threshold).
    at = _snap([([0, 1], 1 if i == 0 else 0) for i in range(10)])
    assert broker_loads(at)[0].imbalance_ratio == 0.1
    assert brokers_over_threshold(broker_loads(at), 10) == []
    over = _snap([([0, 1], 1 if i < 2 else 0) for i in range(10)])
    assert brokers_over_threshold(broker_loads(over), 10) == [0]
    assert not is_over_threshold(None, 0) and is_over_threshold(0.01, 0)


def test_every_figure_of_broker_loads_by_hand() -> None:
    snap = snapshot_from_dict({
        "cluster_id": "c",
        "brokers": [{"id": 0, "rack": "a"}, {"id": 1, "rack": "b"}, {"id": 2, "rack": "a", "alive": False}],
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [0, 1], "leader": 1, "isr": [0, 1], "size_bytes": 100, "bytes_in_per_sec": 5.0},
            {"topic": "t", "partition": 1, "replicas": [1, 0, 2], "leader": 1, "isr": [1, 0], "size_bytes": 30, "bytes_in_per_sec": 2.5},
            {"topic": "u", "partition": 0, "replicas": [0], "leader": 0, "isr": [0]},  # size and rate unknown: 0
        ],
    })  # fmt: skip
    rows = [
        (b.broker_id, b.rack, b.alive, b.replicas, b.leaders, b.preferred_partitions, b.preferred_not_led, b.size_bytes,
         b.leader_bytes_in_per_sec)
        for b in broker_loads(snap)
    ]
    assert rows == [
        (0, "a", True, 3, 1, 2, 1, 130, 0.0),
        (1, "b", True, 2, 2, 1, 0, 130, 7.5),
        (2, "a", False, 1, 0, 0, 0, 30, 0.0),
    ]


def test_threshold_setting_is_a_percentage_including_both_ends() -> None:
    for ok in (None, 0, 0.5, 100):
        check_threshold_setting(ok)
    for bad, shown in ((100.5, "100.5"), (101, "101"), (-0.5, "-0.5"), (float("inf"), "inf")):
        with pytest.raises(InputError) as err:
            check_threshold_setting(bad)
        assert str(err.value) == f"--threshold-percentage: must be a percentage within 0..100, got {shown}"
