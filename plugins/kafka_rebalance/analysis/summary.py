"""Per-broker rows and ``summary.json``, built on the driver from Spark's one small aggregate.

Spark returns one row per (cluster, broker that holds replicas); everything here is
arithmetic over those rows and the cluster headers, which the driver already has: the
per-cluster figures are sums of the per-broker ones, so no second Spark job is needed.
The arithmetic is the same as Spark SQL's (int64 counts, IEEE doubles), so the values
are what a Spark-side join and aggregation would give, to the bit.

The spreads use the planner's own definition of balanced (``kafka_rebalance.balance``),
over the eligible brokers = the live ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kafka_rebalance.analysis.imbalance import PROBLEM_FLAGS, RATE_SCALE
from kafka_rebalance.analysis.load import ClusterInfo
from kafka_rebalance.balance import Tolerances, byte_deviation, count_bounds, count_spread
from kafka_rebalance.planner.goals.preferred_leader import preferred_band
from kafka_rebalance.planner.goals.registry import goal_class, names
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView, GoalCheck
from kafka_rebalance.planner.judge import judge


def broker_metrics(info: ClusterInfo, aggregates: Mapping[int | None, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per broker of the cluster's header (idle and dead ones included), sorted by id.

    ``aggregates``: the cluster's per-broker aggregate rows by broker_id.
    """
    rows = []
    pct = float(info.threshold_percentage)
    for b in sorted(info.brokers, key=lambda b: b.id):
        agg = aggregates.get(b.id) or {}

        def n(name: str, agg: Mapping[str, Any] = agg) -> int:
            return int(agg.get(name) or 0)

        pp, pnl = n("preferred_partitions"), n("preferred_not_led")
        rows.append({
            "cluster_id": info.cluster_id,
            "broker_id": b.id,
            "rack": b.rack,
            "alive": b.alive,
            "preferred_partitions": pp,
            "preferred_not_led": pnl,
            "imbalance_ratio": float(pnl) / float(pp) if pp > 0 else None,
            "threshold_percentage": pct,
            "threshold_source": info.threshold_source,
            # ratio > pct/100, in exact arithmetic: at exactly the threshold it does not exceed.
            "exceeds_threshold": pp > 0 and float(pnl) * 100.0 > pct * float(pp),
            "replicas": n("replicas"),
            "leaders": n("leaders"),
            "size_bytes": n("size_bytes"),
            "leader_bytes_in_per_sec": float(n("leader_rate")) / float(RATE_SCALE),
            "under_replicated_partitions": n("under_replicated_partitions"),
            "could_lead_after_election": n("preferred_in_isr") if b.alive else 0,
        })  # fmt: skip
    return rows


def partition_stats(info: ClusterInfo, aggregates: Mapping[int | None, Mapping[str, Any]]) -> dict[str, Any]:
    """Per cluster: partition-level counts (each counted on its preferred replica's row), summed.

    ``electable`` (not led by the preferred replica, which is in the ISR) also needs the
    preferred broker alive: a preferred election only succeeds then. ``unknown_brokers``:
    replica entries naming a broker the header does not list (a malformed snapshot).
    """
    alive = {b.id: b.alive for b in info.brokers}
    names = {"p_partitions": "partitions", "p_offline": "offline", "p_under_replicated": "under_replicated",
             "p_not_led": "non_preferred_leaders", "p_rack_violation": "rack_violations",
             "p_long_replicas": "long_replicas",
             **{f"p_{flag}": flag for flag in PROBLEM_FLAGS}}  # fmt: skip
    stats: dict[str, Any] = {name: 0 for name in (*names.values(), "replicas", "electable")}
    stats["unknown_brokers"] = {}
    for broker_id, agg in aggregates.items():
        for column, name in names.items():
            stats[name] += int(agg[column])
        stats["replicas"] += int(agg["replicas"])
        if broker_id is not None and alive.get(broker_id):
            stats["electable"] += int(agg["p_electable"])
        if broker_id is not None and broker_id not in alive:
            stats["unknown_brokers"][broker_id] = int(agg["replicas"])
    return stats


def _spread(counts: Sequence[int], check: GoalCheck | None = None) -> dict[str, Any]:
    """A count spread; ``balanced`` is its goal's verdict, or (leaders, which no goal holds: they follow
    the preferred leaders once elected) whether every broker lies within floor..ceil."""
    spread = count_spread(counts)
    return {**spread, "balanced": check.reached if check is not None else spread["brokers_outside"] == 0}


def _byte_spread(sizes: Sequence[int], tolerances: Tolerances, check: GoalCheck) -> dict[str, Any]:
    return {
        "mean": sum(sizes) / len(sizes) if sizes else 0.0,
        "min": min(sizes) if sizes else 0,
        "max": max(sizes) if sizes else 0,
        "deviation": byte_deviation(sizes),
        "tolerance": tolerances.byte_tolerance,
        "balanced": check.reached,
    }


def analysis_view(info: ClusterInfo, brokers: Sequence[Mapping[str, Any]], stats: Mapping[str, Any],
                  tolerances: Tolerances) -> BalanceView:  # fmt: skip
    """The fleet's figures as the goals judge them: every live broker held to the even share of
    replicas, preferred leaderships and bytes (the analysis knows no operator request and no
    rack-aware targets; the planner's own view of one cluster does), and every replica on a dead
    broker one the placement goal wants moved."""
    live = [b for b in brokers if b["alive"]]
    n = len(live)
    rep_lo, rep_hi = count_bounds(sum(b["replicas"] for b in live), n, tolerances.replica_tolerance)
    mean = sum(b["size_bytes"] for b in live) / n if n else 0.0
    tol = tolerances.byte_tolerance
    return BalanceView(
        brokers=tuple(BrokerView(b["broker_id"], b["replicas"], rep_lo, rep_hi, float(b["size_bytes"]), mean, tol,
                                 b["preferred_partitions"], b["preferred_partitions"], b["preferred_not_led"])
                      for b in live),  # fmt: skip
        leaving=tuple(BrokerView(b["broker_id"], b["replicas"], 0, 0, float(b["size_bytes"]), 0.0, tol, 0, 0, 0,
                                 b["replicas"]) for b in brokers if not b["alive"]),  # fmt: skip
        byte_tolerance=tol,
        threshold_percentage=float(info.threshold_percentage),
        preferred_bounds=preferred_band(sum(b["preferred_partitions"] for b in live), n, tolerances.replica_tolerance),
        rack_violations=int(stats.get("rack_violations", 0)),
    )


def cluster_summary(
    info: ClusterInfo,
    brokers: Sequence[Mapping[str, Any]],
    stats: Mapping[str, Any] | None,
    tolerances: Tolerances = Tolerances(),
) -> dict[str, Any]:
    """One cluster's entry of summary.json. ``brokers`` are its broker_metrics rows."""
    stats = stats or {}
    live = [b for b in brokers if b["alive"]]
    over = [b["broker_id"] for b in brokers if b["exceeds_threshold"]]
    ratios = [b["imbalance_ratio"] for b in brokers if b["imbalance_ratio"] is not None]
    # "balanced" is every goal's verdict on these figures (planner/goals), not a rule of its own.
    # The job aggregates per broker: a goal judging per-topic loads (topic-spread) has nothing to read here, nor has
    # an opt-in goal over figures the job does not aggregate (network traffic): the planner and the quality gate
    # judge those when an operator selects them. A verdict on figures never read would only look like one.
    goals = [goal_class(n)() for n in names()
             if (goal_class(n).hard or goal_class(n).default) and not goal_class(n).view_topics]
    checks = {c.name: c for c in judge(goals, analysis_view(info, brokers, stats, tolerances))}
    replicas = _spread([b["replicas"] for b in live], checks["replica-count"])
    preferred = _spread([b["preferred_partitions"] for b in live], checks["preferred-leader"])
    byte_spread = _byte_spread([b["size_bytes"] for b in live], tolerances, checks["bytes"])
    return {
        "cluster_id": info.cluster_id,
        "source": info.source,
        "controller": info.controller,
        "brokers": len(brokers),
        "live_brokers": len(live),
        "dead_brokers": [b["broker_id"] for b in brokers if not b["alive"]],
        "racks": info.rack_count,
        "partitions": int(stats.get("partitions", 0)),
        "replicas": int(stats.get("replicas", 0)),
        "threshold_percentage": info.threshold_percentage,
        "threshold_source": info.threshold_source,
        "brokers_over_threshold": over,
        "max_imbalance_ratio": max(ratios) if ratios else None,
        "non_preferred_leaders": int(stats.get("non_preferred_leaders", 0)),
        "electable_non_preferred_leaders": int(stats.get("electable", 0)),
        "offline_partitions": int(stats.get("offline", 0)),
        "under_replicated_partitions": int(stats.get("under_replicated", 0)),
        "rack_violations": int(stats.get("rack_violations", 0)),
        "replica_spread": replicas,
        "leader_spread": _spread([b["leaders"] for b in live]),
        "preferred_leader_spread": preferred,
        "byte_spread": byte_spread,
        "goals": [{"name": c.name, "reached": c.reached, "offenders": list(c.offenders)} for c in checks.values()],
        "balanced": all(c.reached for c in checks.values()),
    }


def fleet_summary(
    clusters: Sequence[ClusterInfo],
    broker_rows: Sequence[Mapping[str, Any]],
    stats_rows: Sequence[Mapping[str, Any]],
    tolerances: Tolerances = Tolerances(),
) -> dict[str, Any]:
    by_cluster: dict[str, list[Mapping[str, Any]]] = {c.cluster_id: [] for c in clusters}
    for row in broker_rows:
        by_cluster[row["cluster_id"]].append(row)
    stats = {s["cluster_id"]: s for s in stats_rows}
    return {
        "clusters": [
            cluster_summary(c, by_cluster[c.cluster_id], stats.get(c.cluster_id), tolerances)
            for c in sorted(clusters, key=lambda c: c.cluster_id)
        ]
    }


def describe_cluster(entry: Mapping[str, Any]) -> str:
    """One line for stderr."""
    ratio = entry["max_imbalance_ratio"]
    over = entry["brokers_over_threshold"]
    parts = [
        f"{entry['cluster_id']}: {entry['brokers']} brokers ({entry['live_brokers']} live), "
        f"{entry['partitions']:,} partitions",
        f"threshold {entry['threshold_percentage']:g}% ({entry['threshold_source']})",
        f"max ratio {'-' if ratio is None else f'{ratio:.1%}'}",
        f"over threshold: {', '.join(map(str, over)) if over else 'none'}",
        f"non-preferred leaders {entry['non_preferred_leaders']:,}",
    ]
    if entry["offline_partitions"]:
        parts.append(f"OFFLINE {entry['offline_partitions']:,}")
    if entry["rack_violations"]:
        parts.append(f"rack violations {entry['rack_violations']:,}")
    parts.append("balanced" if entry["balanced"] else "NOT balanced")
    return "; ".join(parts)
