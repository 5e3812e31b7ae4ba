"""Kafka's AdminUtils / AdminZkClient placement, checked against the seeds' worked examples."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rebalance.assignment import (
    BrokerMetadata,
    assign_replicas_to_brokers,
    create_new_partitions_assignment,
    parse_replica_assignment,
    rack_alternated_broker_list,
    validate_replica_assignment,
)
from kafka_rebalance.errors import AssignmentError


def brokers(*ids: int, racks: dict[int, str] | None = None) -> list[BrokerMetadata]:
    return [BrokerMetadata(i, (racks or {}).get(i)) for i in ids]


def test_seed_000_five_broker_table() -> None:
    # Seed 000: 5 brokers, 10 partitions, RF 3, startIndex = nextReplicaShift = 0.
    got = assign_replicas_to_brokers(brokers(0, 1, 2, 3, 4), 10, 3, start_index=0)
    assert got == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }  # fmt: skip
    # The seed's per-broker table, column by column (partition ids hosted by each broker).
    hosted = {b: sorted(p for p, r in got.items() if b in r) for b in range(5)}
    assert hosted == {
        0: [0, 3, 4, 5, 7, 8], 1: [0, 1, 4, 6, 8, 9], 2: [0, 1, 2, 5, 7, 9],
        3: [1, 2, 3, 5, 6, 8], 4: [2, 3, 4, 6, 7, 9],
    }  # fmt: skip


def test_seed_002_topic_test2_needs_start_2_shift_2() -> None:
    # `kafka-topics.sh --describe --topic topic-test2` in seed 002.
    got = assign_replicas_to_brokers(brokers(0, 1, 2), 6, 3, start_index=2, replica_shift=2)
    assert got == {0: [2, 0, 1], 1: [0, 1, 2], 2: [1, 2, 0], 3: [2, 1, 0], 4: [0, 2, 1], 5: [1, 0, 2]}


def test_seed_002_broker_array_not_starting_at_zero() -> None:
    # Seed 002: with brokerArray [2, 5, 8], partition 0 with start 2 / shift 2 is [8, 2, 5].
    got = assign_replicas_to_brokers(brokers(2, 5, 8), 1, 3, start_index=2, replica_shift=2)
    assert got == {0: [8, 2, 5]}


@pytest.mark.parametrize(
    ("rf", "expected"),
    [(1, {0: [3], 1: [1]}), (2, {0: [3, 1], 1: [1, 2]})],
)
def test_seed_004_cases(rf: int, expected: dict[int, list[int]]) -> None:
    # Seed 004: brokers (1, 2, 3), 2 partitions, startIndex = nextReplicaShift = 2.
    assert assign_replicas_to_brokers(brokers(1, 2, 3), 2, rf, start_index=2, replica_shift=2) == expected


def test_start_index_alone_fixes_the_shift_too() -> None:
    a = assign_replicas_to_brokers(brokers(0, 1, 2, 3, 4), 12, 3, start_index=3)
    b = assign_replicas_to_brokers(brokers(0, 1, 2, 3, 4), 12, 3, start_index=3, replica_shift=3)
    assert a == b


def test_shift_increments_every_n_partitions() -> None:
    # Partition 5 of 5 brokers uses shift+1: second replica two positions after the first.
    got = assign_replicas_to_brokers(brokers(0, 1, 2, 3, 4), 6, 2, start_index=0)
    assert got[4] == [4, 0] and got[5] == [0, 2]


def test_random_start_is_reproducible_with_a_seed() -> None:
    run = lambda s: assign_replicas_to_brokers(brokers(*range(7)), 20, 3, rng=random.Random(s))  # noqa: E731
    assert run(42) == run(42)
    assert any(run(42) != run(s) for s in range(43, 50))


def test_rack_alternated_broker_list_from_the_facts() -> None:
    racks = {0: "r1", 1: "r3", 2: "r3", 3: "r2", 4: "r2", 5: "r1"}
    assert rack_alternated_broker_list(racks) == [0, 3, 1, 5, 4, 2]


def test_rack_alternated_list_with_uneven_racks() -> None:
    # rack1 holds three brokers, rack2 one: the exhausted rack is skipped.
    assert rack_alternated_broker_list({0: "rack1", 1: "rack1", 2: "rack1", 3: "rack2"}) == [0, 3, 1, 2]


def test_rack_aware_nine_brokers_three_racks() -> None:
    # Seed 002's rack example: arranged list [0, 3, 6, 1, 4, 7, 2, 5, 8].
    racks = {i: f"rack{i // 3 + 1}" for i in range(9)}
    got = assign_replicas_to_brokers(brokers(*range(9), racks=racks), 9, 3, start_index=0)
    # Hand-computed: first replicas walk the arranged list; the rest at shift 0 * 3 = 0:
    # k=0 -> +1, k=1 -> +2 positions in the arranged list.
    assert got[0] == [0, 3, 6]
    assert got[1] == [3, 6, 1]
    assert got[8] == [8, 0, 3]
    for replicas in got.values():
        assert len({racks[b] for b in replicas}) == 3


def test_rack_aware_skips_a_broker_whose_rack_is_taken() -> None:
    # Racks a:[0, 1], b:[2] -> arranged [0, 2, 1]. Start at index 2 (broker 1, rack a), shift 0:
    # k=0 -> index (2 + 1 + 0 % 2) % 3 = 0 = broker 0, rack a already holds a replica while
    # rack b holds none: skipped. k=1 -> index (2 + 1 + 1 % 2) % 3 = 1 = broker 2 (b): taken.
    racks = {0: "a", 1: "a", 2: "b"}
    got = assign_replicas_to_brokers(brokers(0, 1, 2, racks=racks), 1, 2, start_index=2, replica_shift=0)
    assert got == {0: [1, 2]}
    # Without racks the same start gives the broker the rack-aware path skipped.
    assert assign_replicas_to_brokers(brokers(0, 1, 2), 1, 2, start_index=2, replica_shift=0) == {0: [2, 0]}


def test_rack_aware_rf_above_racks_fills_every_rack_first() -> None:
    racks = {0: "a", 1: "a", 2: "b", 3: "b"}
    got = assign_replicas_to_brokers(brokers(0, 1, 2, 3, racks=racks), 8, 3, start_index=0)
    for replicas in got.values():
        assert len(set(replicas)) == 3
        assert {racks[b] for b in replicas} == {"a", "b"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_partitions": 3, "replication_factor": 0}, "Replication factor must be larger than 0."),
        ({"n_partitions": 3, "replication_factor": -1}, "Replication factor must be larger than 0."),
        ({"n_partitions": 3, "replication_factor": 4}, "Replication factor: 4 larger than available brokers: 3."),
        ({"n_partitions": 0, "replication_factor": 1}, "Number of partitions must be larger than 0."),
    ],
)
def test_kafka_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(AssignmentError) as err:
        assign_replicas_to_brokers(brokers(0, 1, 2), **kwargs)
    assert str(err.value) == message


def test_mixed_rack_information_is_an_error() -> None:
    with pytest.raises(AssignmentError, match="Not all brokers have rack information"):
        assign_replicas_to_brokers(brokers(0, 1, 2, racks={0: "a", 1: "b"}), 3, 2)


def test_mixed_racks_allowed_when_rack_awareness_is_disabled() -> None:
    # --disable-rack-aware drops racks; the result equals the rack-unaware placement.
    got = assign_replicas_to_brokers(brokers(0, 1, 2), 3, 2, start_index=0)
    assert got == {0: [0, 1], 1: [1, 2], 2: [2, 0]}


def test_add_partitions_follows_create_new_partitions_assignment() -> None:
    existing = {0: [2, 0, 1], 1: [0, 1, 2], 2: [1, 2, 0]}
    # startIndex = index of first broker with id >= 2 (partition 0's first replica) = 2;
    # startPartitionId = 3: continuing topic-test2's own sequence gives partitions 3..5.
    got = create_new_partitions_assignment("topic-test2", existing, brokers(0, 1, 2), 6)
    assert got == {3: [2, 1, 0], 4: [0, 2, 1], 5: [1, 0, 2]}


def test_add_partitions_start_index_when_no_broker_id_is_large_enough() -> None:
    # Partition 0 starts on broker 9, which no longer exists: indexWhere gives -1 -> max(0, -1) = 0.
    got = create_new_partitions_assignment("t", {0: [9, 0]}, brokers(0, 1, 2), 2)
    assert got == assign_replicas_to_brokers(brokers(0, 1, 2), 1, 2, start_index=0, start_partition_id=1)


def test_add_partitions_cannot_shrink_or_stay() -> None:
    for n in (1, 2):
        with pytest.raises(AssignmentError) as err:
            create_new_partitions_assignment("orders", {0: [0], 1: [1]}, brokers(0, 1), n)
        assert str(err.value) == (
            f"The number of partitions for a topic can only be increased. Topic orders currently has 2 partitions, "
            f"{n} would not be an increase."
        )


def test_add_partitions_needs_partition_zero() -> None:
    with pytest.raises(AssignmentError, match="partition id 0 is missing"):
        create_new_partitions_assignment("orders", {1: [0]}, brokers(0, 1), 3)


def test_parse_replica_assignment() -> None:
    assert parse_replica_assignment("0:1:2,0:1:2,2:1:0") == {0: [0, 1, 2], 1: [0, 1, 2], 2: [2, 1, 0]}
    with pytest.raises(AssignmentError, match="may not contain duplicate entries: 1"):
        parse_replica_assignment("0:1:1")
    with pytest.raises(AssignmentError, match=r"Partition 1 has different replication factor: \[0, 1\]"):
        parse_replica_assignment("0:1:2,0:1")
    with pytest.raises(AssignmentError, match="'0:x' is not a ':'-separated list"):
        parse_replica_assignment("0:x")


def test_validate_replica_assignment_messages() -> None:
    with pytest.raises(AssignmentError, match="Cannot have replication factor of 0 for partition id 0"):
        validate_replica_assignment({0: []}, 3, {0, 1, 2})
    with pytest.raises(AssignmentError, match="Duplicate brokers not allowed in replica assignment: 0, 0 for partition id 1"):
        validate_replica_assignment({0: [0, 1], 1: [0, 0]}, 2, {0, 1, 2})
    with pytest.raises(AssignmentError, match="Specified brokers: 0, 7, available brokers: 0, 1, 2"):
        validate_replica_assignment({0: [0, 7]}, 2, {0, 1, 2})
    with pytest.raises(AssignmentError, match="partition 0 has 2 while partition 0 has 3 replicas"):
        validate_replica_assignment({0: [0, 1, 2]}, 2, {0, 1, 2})
    validate_replica_assignment({0: [0, 1], 1: [1, 2]}, 2, {0, 1, 2})  # valid: no exception


def test_the_shift_grows_by_one_at_every_wrap() -> None:
    # Four brokers, RF 2, start 0 and shift 0: the second replica sits 1 + shift % 3 after the first, and the
    # shift grows by one after every 4 partitions (1, then 2, then 3 positions).
    got = assign_replicas_to_brokers(brokers(0, 1, 2, 3), 12, 2, start_index=0)
    assert got == {0: [0, 1], 1: [1, 2], 2: [2, 3], 3: [3, 0], 4: [0, 2], 5: [1, 3], 6: [2, 0], 7: [3, 1],
                   8: [0, 3], 9: [1, 0], 10: [2, 1], 11: [3, 2]}
    # Continuing from partition 4 (adding partitions) starts on the grown shift.
    assert assign_replicas_to_brokers(brokers(0, 1, 2, 3), 2, 2, start_index=0, start_partition_id=4) == {4: [0, 2], 5: [1, 3]}


def test_an_explicit_shift_is_kept_even_zero_or_alongside_a_start() -> None:
    assert assign_replicas_to_brokers(brokers(0, 1, 2, 3), 1, 2, start_index=1, replica_shift=0) == {0: [1, 2]}
    assert assign_replicas_to_brokers(brokers(0, 1, 2, 3), 1, 2, start_index=0, replica_shift=1) == {0: [0, 2]}


def test_a_negative_start_or_shift_means_drawn_at_random_as_in_kafka() -> None:
    # Kafka's fixedStartIndex -1 is "random": the same draws as giving none at all.
    draws = random.Random(7)
    start, shift = draws.randrange(5), draws.randrange(5)
    fixed = assign_replicas_to_brokers(brokers(*range(5)), 10, 3, start_index=start, replica_shift=shift)
    assert assign_replicas_to_brokers(brokers(*range(5)), 10, 3, rng=random.Random(7)) == fixed
    assert assign_replicas_to_brokers(brokers(*range(5)), 10, 3, start_index=-1, replica_shift=-1, rng=random.Random(7)) == fixed
    # a negative shift beside a start: as if no shift were given, so the start fixes it too
    got = assign_replicas_to_brokers(brokers(*range(5)), 10, 3, start_index=2, replica_shift=-4)
    assert got == assign_replicas_to_brokers(brokers(*range(5)), 10, 3, start_index=2, replica_shift=2)
    assert got != assign_replicas_to_brokers(brokers(*range(5)), 10, 3, start_index=2, replica_shift=0)


def test_rack_aware_placement_worked_by_hand() -> None:
    # Racks a = {0, 1}, b = {2, 3}: the alternated list is [0, 2, 1, 3]. Start 0, shift 0, RF 2: each
    # partition's follower is the next broker of the list, which is always of the other rack. After 4
    # partitions the shift grows by the number of racks (2): the follower is 3 positions on.
    got = assign_replicas_to_brokers(brokers(0, 1, 2, 3, racks={0: "a", 1: "a", 2: "b", 3: "b"}), 5, 2, start_index=0)
    assert got == {0: [0, 2], 1: [2, 1], 2: [1, 3], 3: [3, 0], 4: [0, 3]}


def test_racks_are_ordered_as_java_orders_strings() -> None:
    # Java compares UTF-16 code units: U+1F600 (a surrogate pair starting 0xD83D) sorts before U+FFFD,
    # while Python's code-point order puts it after.
    assert rack_alternated_broker_list({0: "\ufffd", 1: "\U0001F600"}) == [1, 0]


def test_each_error_names_the_exception_kafka_would_throw() -> None:
    cases = [({"n_partitions": 0, "replication_factor": 1}, "InvalidPartitionsException"),
             ({"n_partitions": 1, "replication_factor": 0}, "InvalidReplicationFactorException"),
             ({"n_partitions": 1, "replication_factor": 4}, "InvalidReplicationFactorException")]
    for kwargs, exception in cases:
        with pytest.raises(AssignmentError) as err:
            assign_replicas_to_brokers(brokers(0, 1, 2), **kwargs)
        assert err.value.kafka_exception == exception
    with pytest.raises(AssignmentError) as err:
        create_new_partitions_assignment("orders", {0: [0], 1: [1]}, brokers(0, 1), 2)
    assert err.value.kafka_exception == "InvalidPartitionsException"


def test_adding_partitions_with_an_explicit_assignment_checks_it_against_partition_0_and_the_brokers() -> None:
    existing = {0: [2, 0]}
    got = create_new_partitions_assignment("t", existing, brokers(0, 1, 2), 3, {1: [1, 2], 2: [2, 1]})
    assert got == {1: [1, 2], 2: [2, 1]}
    with pytest.raises(AssignmentError, match=r"^Inconsistent replication factor between partitions, partition 0 has 2 "
                                              r"while partition 1 has 1 replicas\.$"):
        create_new_partitions_assignment("t", existing, brokers(0, 1, 2), 2, {1: [1]})
    with pytest.raises(AssignmentError, match=r"^Some brokers specified for partition id 1 are not available\. "
                                              r"Specified brokers: 1, 5, available brokers: 0, 1, 2\.$"):
        create_new_partitions_assignment("t", existing, brokers(0, 1, 2), 2, {1: [1, 5]})


def test_adding_partitions_starts_at_partition_0s_first_broker() -> None:
    # Partition 0 starts on broker 2 of 0..3: start index 2, and the shift is the start (2). Partition 1:
    # first (1 + 2) % 4 = 3, follower 1 + 2 % 3 = 3 positions on: broker 2. Partition 2: 0, then 3.
    assert create_new_partitions_assignment("t", {0: [2, 0]}, brokers(0, 1, 2, 3), 3) == {1: [3, 2], 2: [0, 3]}


def test_duplicate_entries_are_all_named_once() -> None:
    with pytest.raises(AssignmentError, match=r"^Partition replica lists may not contain duplicate entries: 1,2$"):
        parse_replica_assignment("2:1:1:2:3")


# ---------------------------------------------------------------- properties (hypothesis)


@st.composite
def rack_clusters(draw):
    n_racks = draw(st.integers(1, 5))
    per_rack = draw(st.integers(1, 5))
    # Rack names deliberately not in id order, so the interlacing is exercised.
    names = draw(st.permutations([f"rack-{chr(97 + i)}" for i in range(n_racks)]))
    ids = draw(st.permutations(range(n_racks * per_rack)))
    racks = {b: names[i % n_racks] for i, b in enumerate(ids)}
    rf = draw(st.integers(1, n_racks * per_rack))
    start = draw(st.integers(0, n_racks * per_rack - 1))
    shift = draw(st.integers(0, n_racks * per_rack - 1))
    return racks, rf, start, shift


@settings(max_examples=150, deadline=None)
@given(rack_clusters(), st.integers(1, 60))
def test_every_partition_spans_min_rf_racks(cluster, n_partitions: int) -> None:
    racks, rf, start, shift = cluster
    metas = [BrokerMetadata(b, racks[b]) for b in sorted(racks)]
    got = assign_replicas_to_brokers(metas, n_partitions, rf, start_index=start, replica_shift=shift)
    n_racks = len(set(racks.values()))
    for replicas in got.values():
        assert len(replicas) == rf == len(set(replicas))
        assert len({racks[b] for b in replicas}) == min(rf, n_racks)


@settings(max_examples=150, deadline=None)
@given(rack_clusters(), st.integers(1, 4))
def test_partitions_multiple_of_brokers_give_equal_counts(cluster, multiple: int) -> None:
    # Kafka's own AdminRackAwareTest asserts this for racks of equal size.
    racks, rf, start, shift = cluster
    metas = [BrokerMetadata(b, racks[b]) for b in sorted(racks)]
    n = len(metas) * multiple
    got = assign_replicas_to_brokers(metas, n, rf, start_index=start, replica_shift=shift)
    replica_counts = Counter(b for r in got.values() for b in r)
    leader_counts = Counter(r[0] for r in got.values())
    assert set(replica_counts.values()) == {rf * multiple}
    assert set(leader_counts.values()) == {multiple}


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 12), st.integers(1, 4), st.integers(0, 40), st.integers(0, 40))
def test_rack_unaware_partitions_multiple_of_brokers_give_equal_counts(n: int, multiple: int, start: int, shift: int) -> None:
    rf = min(n, 3)
    got = assign_replicas_to_brokers(brokers(*range(n)), n * multiple, rf, start_index=start % n, replica_shift=shift)
    assert set(Counter(b for r in got.values() for b in r).values()) == {rf * multiple}
    assert set(Counter(r[0] for r in got.values()).values()) == {multiple}
