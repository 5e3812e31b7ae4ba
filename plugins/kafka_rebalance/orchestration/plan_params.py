"""A run's planner options: the trigger form's values over the cluster's clusters.yaml defaults.

The form and clusters.yaml write a throttle as the CLI does (bytes/s, or with a unit: 50MiB/s,
50MB/s); the planner takes bytes/s. Both are derived from the options' one definition
(kafka_rebalance.options).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import PlanOptions, option_fields, resolve_threshold
from kafka_rebalance.orchestration.clusters_config import PlannerDefaults, with_legacy_settings
from kafka_rebalance.snapshot import Snapshot
from kafka_rebalance.snapshot.capacity import CapacityError, CapacityMap, read_capacity_map

CAPACITY = "capacity"  # the capacity map's setting: clusters.yaml and the form (snapshot/capacity.py)
CAPACITY_HELP = ("Broker capacities over the snapshot's, as JSON: {\"default\": {\"disk_bytes\": \"2TiB\", "
                 "\"network_in_bytes_per_sec\": \"125MB/s\", \"network_out_bytes_per_sec\": \"125MB/s\"}, "
                 "\"brokers\": {\"7\": {...}}}; empty: the snapshot's own")


def setting(params: Mapping[str, Any], defaults: PlannerDefaults | None, name: str) -> Any:
    """A planner setting by its setting name: the run's parameter (the trigger form), else the
    cluster's entry in clusters.yaml, else the option's default."""
    if name in params:
        return params[name]
    chosen = defaults or PlannerDefaults()
    if name in type(chosen).model_fields:
        return getattr(chosen, name)
    return next(f.setting_default for f in option_fields() if f.setting == name)


def capacity_map(params: Mapping[str, Any], defaults: PlannerDefaults | None) -> CapacityMap:
    """The run's capacity map: the form's, else the cluster's clusters.yaml ``capacity`` (CapacityError naming
    the field and value)."""
    return read_capacity_map(setting(params, defaults, CAPACITY), CAPACITY)


def planner_values(params: Mapping[str, Any], defaults: PlannerDefaults | None = None) -> dict[str, Any]:
    """Every planner option's value from the run's parameters over clusters.yaml's defaults.

    Raises PlanError naming every bad setting at once, each by its name in the form: the form's schema
    checks a size's spelling, not its range (a throttle of 0 reaches here and is refused, never clamped).
    """
    values, problems = planner_settings(params, defaults)
    if problems:
        raise PlanError("run parameters: " + "; ".join(problems.values()))
    return values


def planner_settings(params: Mapping[str, Any], defaults: PlannerDefaults | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """(the options' values that are usable, what is wrong with each other setting, by its name in the form).

    planner_values' one check, per setting: the trigger page puts each reason beside its own field.
    """
    # The form always holds every field (the new name among them, at its default): an older trigger's name wins.
    params = with_legacy_settings(dict(params), explicit_new=False)
    problems: dict[str, str] = {}
    values: dict[str, Any] = {}
    for f in option_fields():
        if not (f.option.in_form or f.option.in_clusters_file):
            continue
        try:
            values[f.name] = f.from_setting(setting(params, defaults, f.setting))
        except ValueError as exc:
            problems[f.setting] = str(exc)
            continue
        problem = f.problem(values[f.name], f.setting)
        if problem is not None:
            problems[f.setting] = problem
            del values[f.name]
    try:
        values[CAPACITY] = capacity_map(params, defaults)
    except CapacityError as exc:
        problems[CAPACITY] = str(exc)
    return values, problems


def plan_options(snapshot: Snapshot, params: Mapping[str, Any], analysis_dir: Path | None,
                 defaults: PlannerDefaults | None = None) -> PlanOptions:  # fmt: skip
    """PlanOptions from the run's parameters over the cluster's clusters.yaml defaults.

    Every option an operator may set outside the CLI reaches the planner this way; those the
    trigger form does not show (byte_tolerance, throttle_efficiency, ...) come from clusters.yaml alone.
    """
    values = planner_values(params, defaults)
    threshold, source = resolve_threshold(snapshot, values.pop("threshold_percentage"), analysis_dir)
    return PlanOptions(**values, threshold_percentage=threshold, threshold_source=source)


def planner_form(defaults: PlannerDefaults) -> dict[str, Any]:
    """The trigger form's planner fields, each an Airflow Param starting from the cluster's default."""
    from airflow.sdk import Param

    form = {f.setting: Param(f.form_value(setting({}, defaults, f.setting)), description=f.help_text(), **f.setting_schema())
            for f in option_fields() if f.option.in_form}  # fmt: skip
    form[CAPACITY] = Param(defaults.capacity, type=["null", "object"], description=CAPACITY_HELP)
    return form
