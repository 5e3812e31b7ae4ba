"""``plan``: snapshot in, plan directory out (see docs/PLANNER.md and docs/PLAN_FORMAT.md).

The planner's flags are not written out here: each is derived from its PlanOptions field
(kafka_rebalance.options), with the field's flag, help and default.
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from kafka_rebalance.cli._app import app, stderr
from kafka_rebalance.cli.meter import stages
from kafka_rebalance.estimates import plan_estimate
from kafka_rebalance.options import OptionField, PlanOptions, from_flags, option_fields, resolve_threshold
from kafka_rebalance.plan_approval import leader_changes_text
from kafka_rebalance.planner import make_plan, write_plan
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.snapshot.capacity import CapacityMap, read_capacity_file
from kafka_rebalance.units import human_bytes, human_rate, parse_bytes
from kafka_rebalance.userinput import check_output_dir


def plan(
    snapshot: Annotated[Path, typer.Option(help="Cluster snapshot (.json or .parquet)")],
    out: Annotated[Path, typer.Option(help="Plan directory to create (must be new, empty, or hold this same plan)")],
    analysis: Annotated[Path | None, typer.Option(help="Spark analysis output directory (reads summary.json)")] = None,
    capacity: Annotated[Path | None, typer.Option(
        help="Broker capacities (JSON or YAML): {default: {disk_bytes, network_in_bytes_per_sec, "
             "network_out_bytes_per_sec}, brokers: {ID: {...}}}, each a number of bytes (bytes/s) or a size such as "
             "2TiB or 125MB/s; over the snapshot's own (docs/PLAN_FORMAT.md, \"Broker capacity\")")] = None,
    **flags: Any,
) -> None:
    """Plan a minimal-movement, rack-safe, throttled rebalance in Kafka's own file formats."""
    started = time.perf_counter()
    check_output_dir(out, "--out")
    values = from_flags(flags)
    with stages("plan", ("loading the snapshot", "planning", "writing the plan directory")) as begin:
        begin("loading the snapshot")
        snap = load_snapshot(snapshot)
        loaded = time.perf_counter()
        threshold, source = resolve_threshold(snap, values.pop("threshold_percentage"), analysis)
        capacities = read_capacity_file(str(capacity)) if capacity is not None else CapacityMap()
        options = PlanOptions(**values, threshold_percentage=threshold, threshold_source=source, capacity=capacities)
        begin("planning")
        result = make_plan(snap, options)
        planned = time.perf_counter()
        begin("writing the plan directory")
        manifest, status = write_plan(result, out, str(snapshot))
    s = manifest["summary"]
    estimate = plan_estimate(manifest)  # the executor's default mode: `execute --mode` may choose the other
    ratio = s["ratio_to_lower_bound"]["replica_moves"]
    stderr.print(
        f"{status} {out}: plan {manifest['plan_hash'][:16]}, {len(manifest['batches'])} batches, "
        f"{s['replica_moves']} replica moves (lower bound {s['lower_bounds']['replica_moves']}, ratio {ratio}), "
        f"{human_bytes(s['bytes_moved'])} to copy (certified bound {human_bytes(s['optimizer']['bytes_bound'])}, "
        f"gap {s['optimizer']['gap_percent']} %, "
        f"{s['optimizer']['used']}), {s['reorders']} reorders, {s['leader_elections']} elections{leader_changes_text(s)}, "
        f"estimated {estimate.text('the default of execute')} (physical bound {s['continuous']['physical_bound_seconds']:,.0f}s) at "
        f"{human_rate(options.throttle_bytes_per_sec)}, {options.move_fixed_seconds:g}s fixed per move "
        f"(load {loaded - started:.2f}s, plan {planned - loaded:.2f}s, write {time.perf_counter() - planned:.2f}s)"
    )


def _flag(f: OptionField) -> inspect.Parameter:
    """One option's typer parameter: lists are comma-separated text, unset optional values are None."""
    kind: Any
    if f.option.repeatable:
        kind, default = list[str] | None, None
    elif f.item is not None:
        kind, default = str | None, None
    elif f.nullable:
        kind, default = f.kind | None, None
    else:
        kind, default = f.kind, f.default
    if f.option.sized:
        return inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[
            kind, typer.Option(f.flag, help=f.help_text(), parser=_sized(f.flag), metavar="SIZE")])
    return inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                             annotation=Annotated[kind, typer.Option(f.flag, help=f.help_text())])  # fmt: skip


def _sized(flag: str) -> Any:
    def parse(value: Any) -> int:
        if isinstance(value, int):  # the default, already in bytes
            return value
        try:
            return parse_bytes(str(value), flag)
        except ValueError as exc:
            raise typer.BadParameter(str(exc).removeprefix(f"{flag}: ")) from None

    return parse


_fixed = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in inspect.signature(plan, eval_str=True).parameters.values()
          if p.kind is not inspect.Parameter.VAR_KEYWORD]  # fmt: skip
_parameters = _fixed + [_flag(f) for f in option_fields()]
plan.__signature__ = inspect.Signature(_parameters, return_annotation=None)  # type: ignore[attr-defined]
plan.__annotations__ = {p.name: p.annotation for p in _parameters}
app.command()(plan)
