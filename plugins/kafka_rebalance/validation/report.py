"""From GX results to what an operator reads: one line per offending row.

GX tells which rows failed (by our ``row`` id); the row's own columns say why,
e.g. ``batch 002 orders-3: replicas [4, 4, 7] repeat broker 4``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Row = dict[str, Any]


def _ids(values: Any) -> str:
    return ", ".join(str(v) for v in values)


def _repeats(r: Row) -> str:
    reps = list(r["replicas"])
    dupes = sorted(b for b, n in Counter(reps).items() if n > 1)
    return f"replicas {reps} repeat broker {_ids(dupes)}"


def _rate(r: Row) -> str:
    v = r["throttle_rate"]
    return f"{r['throttle_field']} = {int(v) if v >= 0 else 'not a number'} B/s, outside [{1024}, {r['_p'].get('throttle_max_bytes_per_sec')}]"


MESSAGES: dict[str, Callable[[Row], str]] = {
    # snapshot
    "expect_compound_columns_to_be_unique": lambda r: (
        f"appears more than once in batch {r['batch']}" if r.get("batch") is not None else "appears more than once"
    ),
    "expect_replica_list_non_empty": lambda r: "replicas [] is empty",
    "expect_replica_list_without_repeats": _repeats,
    "expect_replicas_on_known_brokers": lambda r: (
        f"replicas {list(r['replicas'])}: broker {_ids(b for b in r['replicas'] if b not in r['_known'])} is not a known broker"
    ),
    "expect_leader_among_replicas": lambda r: f"leader {r['leader']} is not among replicas {list(r['replicas'])} (nor -1)",
    "expect_isr_subset_of_replicas": lambda r: f"isr {list(r['isr'])} is not a subset of replicas {list(r['replicas'])} (or repeats a broker)",
    "expect_column_values_to_be_between": lambda r: f"{r['_column']} {r[r['_column']]} is negative",
    "expect_column_values_to_be_unique": lambda r: f"broker id {r['broker_id']} is listed more than once",
    # plan
    "expect_partition_in_snapshot": lambda r: "is not a partition of the snapshot",
    "expect_replication_factor_unchanged": lambda r: (
        f"replicas {list(r['replicas'])} has {r['replica_count']} replicas, expected replication factor {r['rf_expected']}"
    ),
    "expect_target_brokers_eligible": lambda r: (
        f"replicas {list(r['replicas'])}: "
        + "; ".join(f"broker {b} is {r['_why'](b)} but gets a new replica" for b in r["replicas"]
                    if r["_why"](b) and b not in set(r.get("replicas_before") or ()))
    ),
    "expect_partition_spread_over_min_rf_racks": lambda r: (
        f"replicas {list(r['replicas'])} span {r['racks_spanned']} rack(s), need {r['racks_required']}"
    ),
    "expect_batch_partition_count_within_limit": lambda r: (
        f"{r['batch_partitions']} partitions, limit 1..{r['_p'].get('max_partitions_per_batch')}"
    ),
    "expect_broker_moves_per_batch_within_limit": lambda r: (
        f"{r['broker_moves']} replica moves in or out, limit {r['_p'].get('max_moves_per_broker')}"
    ),
    "expect_throttle_rate_within_bounds": _rate,
    "expect_excluded_topics_untouched": lambda r: f"topic {r['moved_topic']} is excluded by the plan's options but reassigned",
    "expect_schedule_matches_batches": lambda r: r["schedule_problem"],
    "expect_plan_files_match_manifest": lambda r: (
        f"sha256 {str(r['actual_sha256'])[:12] if r['actual_sha256'] else 'missing'}, "
        f"plan.json records {str(r['recorded_sha256'])[:12] if r['recorded_sha256'] else 'nothing'}"
    ),
    # projected balance
    "expect_broker_leader_imbalance_within_threshold": lambda r: (
        f"leader imbalance {r['imbalance_ratio_after']:.1%} after the election, threshold {r['_p']['threshold_ratio']:.1%}"
    ),
    "expect_broker_replica_count_within_bounds": lambda r: (
        f"{r['replicas_after']} replicas after the plan (was {r['replica_count_before']}), "
        f"bounds {r['replica_lo']}..{r['replica_hi']}"
    ),
    "expect_broker_preferred_leader_count_within_bounds": lambda r: (
        f"preferred leader of {r['preferred_after']} partitions after the plan (was {r['preferred_before']}), "
        f"bounds {r['_p']['preferred_floor']}..{r['_p']['preferred_ceil']}"
    ),
    "expect_broker_disk_within_limit": lambda r: (
        f"{r['size_after']:,} bytes after the plan, {r['disk_over_limit_bytes']:,.0f} above its disk limit of "
        f"{r['disk_limit']:,.0f} bytes (max_disk_usage of its log dirs' capacity)"
    ),
    "expect_leaving_brokers_emptied": lambda r: (
        f"still holds {r['movable_replicas_after']} replica(s) after the plan that it could have moved off"
    ),
    "expect_broker_network_in_not_worse_off": lambda r: (
        f"network in {r['network_in_after']:.1%} from its share after the plan (allowed {r['network_in_allowed']:.1%})"
    ),
    "expect_broker_network_out_not_worse_off": lambda r: (
        f"network out {r['network_out_after']:.1%} from its share after the plan (allowed {r['network_out_allowed']:.1%})"
    ),
    "expect_broker_topic_spread_not_worse_off": lambda r: (
        f"{r['topic_spread_after']:.0f} replicas and first replicas outside their topics' bands after the plan "
        f"(was {r['topic_spread_before']:.0f})"
    ),
    "expect_broker_bytes_not_worse_off": lambda r: (
        f"{r['size_after']:,} bytes after the plan, {r['byte_deviation_after']:.1%} from the mean "
        f"(was {r['byte_deviation_before']:.1%}; allowed {r['byte_deviation_allowed'] - 1e-9:.1%})"
    ),
}


@dataclass
class Failure:
    suite: str
    expectation: str
    description: str
    unexpected_count: int
    rows: list[str] = field(default_factory=list)


def row_message(expectation: str, row: Row) -> str:
    fmt = MESSAGES.get(expectation)
    try:
        detail = fmt(row) if fmt else "unexpected value"
    except (KeyError, TypeError, ValueError):
        detail = "unexpected value"
    return f"{row['where']}: {detail}"


def format_report(status: str, suites: list[dict[str, Any]], failures: list[Failure], limit: int = 10) -> str:
    lines = []
    for s in suites:
        lines.append(
            f"suite {s['suite']}: {'passed' if s['success'] else 'FAILED'} "
            f"({s['passed']}/{s['evaluated']} expectations hold)"
        )
    for f in failures:
        lines.append(f"FAILED {f.suite}.{f.expectation} ({f.unexpected_count} row(s)): {f.description}")
        for msg in f.rows[:limit]:
            lines.append(f"  {msg}")
        if len(f.rows) > limit:
            lines.append(f"  ... and {len(f.rows) - limit} more (see result.json)")
    lines.append(f"validation {status}")
    return "\n".join(lines)
