"""Leader imbalance and skew as DataFrame transformations.

Only Spark SQL expressions (no Python UDFs): executors run JVM code alone, so they
need neither this package nor a Python worker, and the work scales with the cluster.

The heavy part is ONE pass: each partition row is exploded into its replicas and
aggregated by (cluster_id, broker_id). Partition-level facts (offline, under-
replicated, rack violation, malformed) are counted on the preferred replica's row
(position 0), so the per-cluster figures are sums of that small aggregate and the
snapshot is scanned once.

Kafka's rule (KafkaController.checkAndTriggerAutoLeaderRebalance): the preferred
replica is the first of the replica list; for broker b,
``ratio = #(preferred on b and leader != b) / #(preferred on b)``, undefined when b
prefers nothing; b is imbalanced when ``ratio > percentage / 100``. No leader (-1)
is "not led by b".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column
from pyspark.sql import functions as F

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# Produce rates are summed as integer micro-bytes/s: exact, so the total does not depend on
# how Spark split the rows into tasks (a double sum does, in its last bits), and far
# cheaper than a decimal sum.
RATE_SCALE = 1_000_000
MAX_RATE = 1e12  # bytes/s per partition; beyond this the micro-unit sum could overflow

# Malformed-row counters carried in the aggregate; name -> what the operator is told.
PROBLEM_FLAGS = {
    "bad_key": "topic must be a non-empty string and partition a non-negative integer",
    "bad_replicas": "replicas must be a non-empty list of distinct broker ids",
    "bad_leader": "leader is neither -1 nor one of the replicas",
    "bad_isr": "isr must be distinct brokers among the replicas",
    "bad_size": "size_bytes must be >= 0 and bytes_in_per_sec a number within 0..1e12",
}


def _count(cond: Column) -> Column:
    return F.sum(F.when(cond, 1).otherwise(0)).cast("bigint")


def _rack_of(broker: Column) -> Column:
    dense = F.try_element_at(F.col("rack_index"), broker - F.col("rack_base") + 1)
    return F.when(F.col("rack_index").isNotNull(), dense).otherwise(F.try_element_at(F.col("rack_by_id"), broker))


def partition_flags(partitions: DataFrame, settings: DataFrame) -> DataFrame:
    """Per partition: preferred replica, normalised leader/ISR, and every flag the aggregate counts."""
    replicas, n = F.col("replicas"), F.size(F.col("replicas"))
    leader = F.coalesce(F.col("leader"), F.lit(-1))  # a missing leader is Kafka's -1
    isr = F.coalesce(F.col("isr"), F.array().cast("array<int>"))
    preferred = F.try_element_at(replicas, F.lit(1))
    racks = F.transform(replicas, _rack_of)
    with_settings = partitions.join(F.broadcast(settings.drop("threshold_percentage", "threshold_source")), "cluster_id")
    return with_settings.select(
        "cluster_id",
        "topic",
        "partition",
        "replicas",
        leader.alias("leader"),
        isr.alias("isr"),
        F.coalesce(F.col("size_bytes"), F.lit(0)).cast("bigint").alias("size"),
        F.round(F.coalesce(F.col("bytes_in_per_sec"), F.lit(0.0)) * RATE_SCALE).try_cast("bigint").alias("rate"),
        (leader != F.coalesce(preferred, F.lit(-2))).alias("not_led"),
        (leader == -1).alias("offline"),
        (F.size(isr) < n).alias("under_replicated"),
        F.coalesce(F.array_contains(isr, preferred), F.lit(False)).alias("preferred_in_isr"),
        ((F.col("rack_count") >= n) & (n > 1) & (F.size(F.array_distinct(racks)) < n)).alias("rack_violation"),
        (F.col("topic").isNull() | (F.col("topic") == "") | F.col("partition").isNull() | (F.col("partition") < 0)).alias(
            "bad_key"
        ),
        (
            replicas.isNull()
            | (n == 0)
            | (F.size(F.array_distinct(replicas)) != n)
            | F.exists(replicas, lambda r: r.isNull())
        ).alias("bad_replicas"),
        ((leader != -1) & ~F.coalesce(F.array_contains(replicas, leader), F.lit(False))).alias("bad_leader"),
        (
            (F.size(F.array_distinct(isr)) != F.size(isr))
            | (F.size(F.array_except(isr, F.coalesce(replicas, F.array().cast("array<int>")))) > 0)
        ).alias("bad_isr"),
        (
            (F.coalesce(F.col("size_bytes"), F.lit(0)) < 0)
            | F.isnan(F.coalesce(F.col("bytes_in_per_sec"), F.lit(0.0)))
            | (F.coalesce(F.col("bytes_in_per_sec"), F.lit(0.0)) < 0)
            | (F.coalesce(F.col("bytes_in_per_sec"), F.lit(0.0)) > MAX_RATE)
        ).alias("bad_size"),
    )


def broker_aggregates(flagged: DataFrame) -> DataFrame:
    """The single heavy pass: replica rows grouped by (cluster_id, broker_id).

    Columns prefixed ``p_`` count partitions once each (on their preferred replica's row).
    A partition without replicas yields one row with a null broker_id, so it is counted
    (as malformed) rather than silently dropped by the explode.
    """
    scalars = [c for c in flagged.columns if c not in ("topic", "partition", "replicas", "isr")]
    # Only scalar columns ride along the explode: copying the arrays per replica costs more than the rest.
    rows = flagged.select(*scalars, F.posexplode_outer("replicas").alias("pos", "broker_id"))
    is_leader = F.col("broker_id") == F.col("leader")
    first = F.coalesce(F.col("pos"), F.lit(0)) == 0
    preferred = F.col("pos") == 0
    return rows.groupBy("cluster_id", "broker_id").agg(
        F.count("broker_id").alias("replicas"),
        _count(is_leader).alias("leaders"),
        F.sum("size").cast("bigint").alias("size_bytes"),
        F.sum(F.when(is_leader, F.col("rate")).otherwise(F.lit(0))).cast("bigint").alias("leader_rate"),
        _count(preferred).alias("preferred_partitions"),
        _count(preferred & F.col("not_led")).alias("preferred_not_led"),
        _count(preferred & F.col("preferred_in_isr")).alias("preferred_in_isr"),
        _count(F.col("broker_id").isNotNull() & F.col("under_replicated")).alias("under_replicated_partitions"),
        _count(first).alias("p_partitions"),
        _count(first & F.col("offline")).alias("p_offline"),
        _count(first & F.col("under_replicated")).alias("p_under_replicated"),
        _count(first & F.col("not_led")).alias("p_non_preferred_leaders"),
        _count(first & F.col("not_led") & F.col("preferred_in_isr")).alias("p_electable"),
        _count(first & F.col("rack_violation")).alias("p_rack_violations"),
        *[_count(first & F.col(flag)).alias(f"p_{flag}") for flag in PROBLEM_FLAGS],
    )


def broker_metrics(aggregates: DataFrame, brokers: DataFrame, settings: DataFrame) -> DataFrame:
    """One row per (cluster_id, broker_id) of every known broker, idle and dead ones included."""
    zero = F.lit(0).cast("bigint")

    def n(name: str) -> Column:
        return F.coalesce(F.col(name), zero)

    pp, pnl = n("preferred_partitions"), n("preferred_not_led")
    pct = F.col("threshold_percentage")
    joined = brokers.join(aggregates, ["cluster_id", "broker_id"], "left").join(
        settings.select("cluster_id", "threshold_percentage", "threshold_source"), "cluster_id"
    )
    return joined.select(
        "cluster_id",
        "broker_id",
        "rack",
        "alive",
        pp.alias("preferred_partitions"),
        pnl.alias("preferred_not_led"),
        F.when(pp > 0, pnl.cast("double") / pp.cast("double")).alias("imbalance_ratio"),
        pct.alias("threshold_percentage"),
        "threshold_source",
        # ratio > pct/100, in exact arithmetic: at exactly the threshold it does not exceed.
        ((pp > 0) & (pnl.cast("double") * 100.0 > pct * pp.cast("double"))).alias("exceeds_threshold"),
        n("replicas").alias("replicas"),
        n("leaders").alias("leaders"),
        n("size_bytes").alias("size_bytes"),
        (F.coalesce(F.col("leader_rate"), zero).cast("double") / RATE_SCALE).alias("leader_bytes_in_per_sec"),
        n("under_replicated_partitions").alias("under_replicated_partitions"),
        F.when(F.col("alive"), n("preferred_in_isr")).otherwise(zero).alias("could_lead_after_election"),
    ).orderBy("cluster_id", "broker_id")


def cluster_partition_stats(aggregates: DataFrame, brokers: DataFrame) -> DataFrame:
    """Per cluster: partition-level counts, summed from the preferred-replica rows.

    ``electable`` (not led by the preferred replica, which is in the ISR) also needs the
    preferred broker alive: a preferred election only succeeds then.
    """
    sums = [c for c in aggregates.columns if c.startswith("p_") and c != "p_electable"]
    alive = F.coalesce(F.col("alive"), F.lit(False))
    return (
        aggregates.join(brokers.select("cluster_id", "broker_id", "alive"), ["cluster_id", "broker_id"], "left")
        .groupBy("cluster_id")
        .agg(
            F.sum("replicas").cast("bigint").alias("replicas"),
            F.sum(F.when(alive, F.col("p_electable")).otherwise(0)).cast("bigint").alias("electable"),
            # Replica entries naming a broker the header does not list (a malformed snapshot).
            F.sum(F.when(F.col("alive").isNull() & F.col("broker_id").isNotNull(), F.col("replicas")).otherwise(0))
            .cast("bigint")
            .alias("unknown_broker_replicas"),
            *[F.sum(c).cast("bigint").alias(c[2:]) for c in sums],
        )
        .orderBy("cluster_id")
    )


def unknown_brokers(aggregates: DataFrame, brokers: DataFrame) -> DataFrame:
    """(cluster_id, broker_id) that hold replicas but are not brokers of their cluster's header."""
    return (
        aggregates.where(F.col("broker_id").isNotNull())
        .join(brokers, ["cluster_id", "broker_id"], "left_anti")
        .select("cluster_id", "broker_id", "replicas")
        .orderBy("cluster_id", "broker_id")
    )


def duplicate_partitions(partitions: DataFrame) -> DataFrame:
    """(cluster_id, topic, partition) listed more than once. Costs a shuffle of the partition keys."""
    return (
        partitions.groupBy("cluster_id", "topic", "partition")
        .count()
        .where(F.col("count") > 1)
        .orderBy("cluster_id", "topic", "partition")
    )


def problem_examples(flagged: DataFrame, flag: str, limit: int = 3) -> DataFrame:
    """A few rows with a given flag, for the error message (only run when the flag was counted)."""
    return (
        flagged.where(F.col(flag))
        .select("cluster_id", "topic", "partition", "replicas", "leader", "isr")
        .orderBy("cluster_id", "topic", "partition")
        .limit(limit)
    )
