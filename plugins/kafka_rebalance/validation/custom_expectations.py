"""Our own GX expectation classes: checks GX has no built-in for, under names an operator reads.

Each class narrows a built-in GX expectation to one rebalance rule and a column the
row extraction (``rows.py``) prepares: e.g. ``racks_spanned`` / ``racks_required``
for rack spread, ``broker_moves`` per (batch, broker) for the batch limit. Being
subclasses, they are registered with GX under their snake-case name
(``ExpectPartitionSpreadOverMinRfRacks`` -> ``expect_partition_spread_over_min_rf_racks``),
run on the pandas and the Spark engine alike, and appear by that name in Data
Docs and in ``result.json``. Importing this module registers them; the suites in
``expectations/*.json`` refer to them by type.
"""

from __future__ import annotations

from typing import Any

import great_expectations.expectations as gxe

_TRUE: list[Any] = [True]


# --------------------------------------------------------------------------- snapshot rows


class ExpectReplicaListNonEmpty(gxe.ExpectColumnValuesToBeInSet):
    """Every partition has at least one replica."""

    column: str = "replicas_nonempty"
    value_set: Any = _TRUE
    description: str | None = "Every partition lists at least one replica."


class ExpectReplicaListWithoutRepeats(gxe.ExpectColumnValuesToBeInSet):
    """No broker appears twice in one replica list."""

    column: str = "replicas_distinct"
    value_set: Any = _TRUE
    description: str | None = "No broker appears twice in a partition's replica list."


class ExpectReplicasOnKnownBrokers(gxe.ExpectColumnValuesToBeInSet):
    """Every replica names a broker of the snapshot."""

    column: str = "replicas_known"
    value_set: Any = _TRUE
    description: str | None = "Every replica is on a broker the snapshot knows."


class ExpectLeaderAmongReplicas(gxe.ExpectColumnValuesToBeInSet):
    """The leader is one of the replicas, or -1 (no leader)."""

    column: str = "leader_ok"
    value_set: Any = _TRUE
    description: str | None = "A partition's leader is one of its replicas, or -1 when it has none."


class ExpectIsrSubsetOfReplicas(gxe.ExpectColumnValuesToBeInSet):
    """In-sync replicas are replicas."""

    column: str = "isr_subset"
    value_set: Any = _TRUE
    description: str | None = "The in-sync replica set holds only replicas of the partition, each once."


# --------------------------------------------------------------------------- plan rows


class ExpectPartitionInSnapshot(gxe.ExpectColumnValuesToBeInSet):
    """A reassignment only names partitions that exist."""

    column: str = "in_snapshot"
    value_set: Any = _TRUE
    description: str | None = "Every reassigned partition exists in the snapshot the plan was made from."


class ExpectScheduleMatchesBatches(gxe.ExpectColumnValuesToBeInSet):
    """schedule.json is the batches' data moves in another order, never other moves."""

    column: str = "schedule_consistent"
    value_set: Any = _TRUE
    description: str | None = (
        "schedule.json holds every data move of the batches exactly once, each as its batch writes it "
        "and after its partition's previous step."
    )


class ExpectReplicationFactorUnchanged(gxe.ExpectColumnPairValuesToBeEqual):
    """New replica list length == current RF (or the RF the plan's options asked for)."""

    column_A: str = "replica_count"
    column_B: str = "rf_expected"
    ignore_row_if: Any = "either_value_is_missing"
    description: str | None = "A reassignment keeps the replication factor unless the plan's options asked for another."


class ExpectTargetBrokersEligible(gxe.ExpectColumnValuesToBeInSet):
    """Targets are known, alive and not being decommissioned."""

    column: str = "targets_eligible"
    value_set: Any = _TRUE
    description: str | None = "Every target broker is known, alive and not being decommissioned."


class ExpectPartitionSpreadOverMinRfRacks(gxe.ExpectColumnPairValuesAToBeGreaterThanB):
    """racks_spanned >= min(RF, racks in the cluster)."""

    column_A: str = "racks_spanned"
    column_B: str = "racks_required"
    or_equal: Any = True
    ignore_row_if: Any = "either_value_is_missing"
    description: str | None = "Each partition's replicas span min(replication factor, racks) racks."


class ExpectBatchPartitionCountWithinLimit(gxe.ExpectColumnValuesToBeBetween):
    """Partitions per batch <= options.max_partitions_per_batch."""

    column: str = "batch_partitions"
    description: str | None = "No batch reassigns more partitions than the plan's max_partitions_per_batch."


class ExpectBrokerMovesPerBatchWithinLimit(gxe.ExpectColumnValuesToBeBetween):
    """Replica moves into or out of one broker in one batch <= options.max_moves_per_broker."""

    column: str = "broker_moves"
    description: str | None = "No broker sends or receives more replicas in one batch than the plan's max_moves_per_broker."


class ExpectThrottleRateWithinBounds(gxe.ExpectColumnValuesToBeBetween):
    """Every throttle rate in throttles.json lies within [1 KiB/s, options.throttle_bytes_per_sec]."""

    column: str = "throttle_rate"
    description: str | None = "Every replication throttle is at least 1 KiB/s and at most the plan's throttle_bytes_per_sec."


class ExpectExcludedTopicsUntouched(gxe.ExpectColumnValuesToNotBeInSet):
    """No reassignment of a topic the plan's options excluded."""

    column: str = "moved_topic"
    description: str | None = "Topics the plan's options exclude are not reassigned."


class ExpectPlanFilesMatchManifest(gxe.ExpectColumnPairValuesToBeEqual):
    """File bytes (and the plan hash, and the snapshot fingerprint) equal what plan.json recorded."""

    column_A: str = "recorded_sha256"
    column_B: str = "actual_sha256"
    ignore_row_if: Any = "both_values_are_missing"
    description: str | None = "Every staged file, the plan hash and the snapshot fingerprint equal what plan.json records."


# --------------------------------------------------------------------------- projected balance


class ExpectBrokerLeaderImbalanceWithinThreshold(gxe.ExpectColumnValuesToBeBetween):
    """Kafka's leader imbalance ratio after the election <= threshold."""

    column: str = "imbalance_ratio_after"
    description: str | None = "After the plan and its election no broker's leader imbalance ratio exceeds the threshold."


class ExpectBrokerReplicaCountWithinBounds(gxe.ExpectColumnValuesToBeBetween):
    """Replica count after the plan within the broker's rack-aware [lo, hi] (0 replicas off target)."""

    column: str = "replicas_off_target"
    description: str | None = "After the plan every eligible broker holds floor..ceil of the ideal replica count."


class ExpectBrokerPreferredLeaderCountWithinBounds(gxe.ExpectColumnValuesToBeBetween):
    """Preferred-leader count after the plan within [floor, ceil] of the ideal."""

    column: str = "preferred_after"
    description: str | None = "After the plan every eligible broker is the preferred leader of floor..ceil of the ideal partitions."


class ExpectBrokerDiskWithinLimit(gxe.ExpectColumnValuesToBeBetween):
    """Bytes above the broker's disk limit after the plan == 0 (brokers without a known capacity: empty)."""

    column: str = "disk_over_limit_bytes"
    description: str | None = "After the plan no broker's disks are above max_disk_usage of their capacity."


class ExpectLeavingBrokersEmptied(gxe.ExpectColumnValuesToBeBetween):
    """Movable replicas left on a dead or decommissioned broker after the plan == 0."""

    column: str = "movable_replicas_after"
    description: str | None = "After the plan no dead or decommissioned broker holds a replica the plan could have moved."


class ExpectPartitionsAtTargetReplicationFactor(gxe.ExpectColumnValuesToBeBetween):
    """Movable partitions not at the plan's target replication factor after the plan == 0."""

    column: str = "rf_off_target_after"
    description: str | None = "After the plan every partition it may move has its target replication factor."


class ExpectPartitionsRackSafe(gxe.ExpectColumnValuesToBeBetween):
    """Movable partitions breaking rack safety after the plan == 0."""

    column: str = "rack_violations_after"
    description: str | None = "After the plan no partition it may move crowds a rack or spans too few racks."


class ExpectBrokerTopicSpreadNotWorseOff(gxe.ExpectColumnPairValuesAToBeGreaterThanB):
    """Replicas and first replicas outside their topics' bands after <= before, per broker."""

    column_A: str = "topic_spread_before"
    column_B: str = "topic_spread_after"
    or_equal: Any = True
    ignore_row_if: Any = "either_value_is_missing"
    description: str | None = "No broker ends with more replicas or first replicas outside its topics' bands than before."


class ExpectBrokerBytesNotWorseOff(gxe.ExpectColumnPairValuesAToBeGreaterThanB):
    """byte deviation after <= max(byte deviation before, tolerance)."""

    column_A: str = "byte_deviation_allowed"
    column_B: str = "byte_deviation_after"
    or_equal: Any = True
    ignore_row_if: Any = "either_value_is_missing"
    description: str | None = "No broker's bytes end further from the mean than before, beyond the byte tolerance."




class ExpectBrokerNetworkInNotWorseOff(gxe.ExpectColumnPairValuesAToBeGreaterThanB):
    """network-in deviation from the share after <= max(deviation before, network tolerance)."""

    column_A: str = "network_in_allowed"
    column_B: str = "network_in_after"
    or_equal: Any = True
    ignore_row_if: Any = "either_value_is_missing"
    description: str | None = "No broker's network in ends further from its share than before, beyond the network tolerance."


class ExpectBrokerNetworkOutNotWorseOff(gxe.ExpectColumnPairValuesAToBeGreaterThanB):
    """network-out deviation from the share after <= max(deviation before, network tolerance)."""

    column_A: str = "network_out_allowed"
    column_B: str = "network_out_after"
    or_equal: Any = True
    ignore_row_if: Any = "either_value_is_missing"
    description: str | None = "No broker's network out ends further from its share than before, beyond the network tolerance."
