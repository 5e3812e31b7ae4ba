"""The per-cluster DAG's trigger form: its Params (the DAG's ``params``), and the same form as the plugin's own
trigger page reads it back (report_app ``/trigger/{cluster}``).

Airflow's trigger form shows one "Bad Request" for a bad value and its API names only the first bad field;
the page instead checks every field with the product's own validators (the Param's schema, the planner
options' ranges through plan_params.planner_settings, the window parser) and gives each bad field its reason.
Nothing heavy is imported here: the DAG file imports it at every parse.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafka_rebalance.options import option_fields
from kafka_rebalance.orchestration.clusters_config import ClusterConfig, ClustersFile
from kafka_rebalance.orchestration.plan_params import planner_form, planner_settings

# A first check at trigger time; kafka_rebalance.executor.windows.policy gives the exact error for a bad interval.
WINDOW_PATTERN = r"^(now|configured|\d{4}-\d{2}-\d{2}T[^/]+/[^/]+)$"
MODES = ("dry-run", "execute")


def trigger_form(cfg: ClustersFile, cluster: ClusterConfig) -> dict[str, Any]:
    """The DAG's Params, each starting from the cluster's clusters.yaml default."""
    from airflow.sdk import Param

    d = cfg.effective_defaults(cluster)
    return {
        "mode": Param("dry-run", enum=list(MODES), description="dry-run stages a plan; execute runs it after approval"),
        **planner_form(d),
        "window": Param("configured", type="string", pattern=WINDOW_PATTERN,
                        description="Execute mode: when moves may start. 'configured' = this cluster's maintenance windows "
                                    "in clusters.yaml (none = any time), 'now' = any time, or one ISO 8601 interval "
                                    "START/END or START/DURATION with a time zone, e.g. 2026-11-25T01:00Z/PT4H"),
        "rearm": Param(False, type="boolean", description="Execute mode: run an identical, already executed plan again from its "
                       "first batch. Its ledger is archived as ledger.N.json (kept, with who and when), never deleted"),
    }  # fmt: skip


@dataclass(frozen=True)
class FormField:
    """One field of the trigger page: how it is shown, what it holds now, and what is wrong with it."""

    name: str
    help: str
    widget: str  # select | multi | text | list | checkbox
    text: str = ""  # a text or list widget's content (a list: comma-separated)
    selected: tuple[str, ...] = ()  # a select's or multi-select's chosen values
    choices: tuple[str, ...] = ()
    checked: bool = False
    required: bool = False
    error: str | None = None


@dataclass(frozen=True)
class Submission:
    """A submitted form read back: the run's conf (only when nothing is wrong) and each bad field's reason."""

    conf: dict[str, Any]
    errors: dict[str, str] = field(default_factory=dict)


def _schema_type(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type", "string")
    return set(kind) if isinstance(kind, list) else {kind}


def form_fields(params: Mapping[str, Any], *, brokers: Sequence[int] = (), topics: Sequence[str] = (),
                submitted: Mapping[str, list[str]] | None = None, errors: Mapping[str, str] | None = None) -> list[FormField]:
    """The page's fields, one per Param in the DAG's order: a list of brokers or topics is a multi-select of the
    last snapshot's (when there is one), any other list a comma-separated text; each shows what was ``submitted``
    (as typed, to be corrected), else the Param's default (the cluster's clusters.yaml value)."""
    out = []
    errors = errors or {}
    options = {f.setting: f for f in option_fields()}
    for name, param in params.items():
        schema = param.schema
        kinds = _schema_type(schema)
        raw = None if submitted is None else submitted.get(name, [])
        default = param.value
        common: dict[str, Any] = {"name": name, "help": param.description or "", "error": errors.get(name)}
        if "enum" in schema:
            chosen = raw[-1] if raw else str(default)
            out.append(FormField(**common, widget="select", choices=tuple(schema["enum"]), selected=(chosen,), required=True))
        elif "boolean" in kinds:
            out.append(FormField(**common, widget="checkbox", checked=bool(raw) if raw is not None else bool(default)))
        elif "array" in kinds:
            shown = list(raw) if raw is not None else [str(v) for v in default or ()]
            item = options[name].item if name in options else None
            choices: tuple[str, ...] = ()
            if item is int:
                choices = tuple(map(str, brokers))
            elif name == "exclude_topics":
                choices = tuple(topics)
            if choices:
                # A value the snapshot lacks (a broker since removed) stays visible, so it can be unselected.
                out.append(FormField(**common, widget="multi", choices=tuple(dict.fromkeys([*choices, *shown])),
                                     selected=tuple(shown)))
            else:
                items = schema.get("items", {})
                if isinstance(items, dict) and "enum" in items:  # goals: the registered names, in the help
                    common["help"] += f" (one or more of: {', '.join(items['enum'])})"
                out.append(FormField(**common, widget="list", text=", ".join(shown)))
        elif "object" in kinds:  # the capacity map: JSON text
            text = raw[-1] if raw else ("" if raw is not None or default is None else json.dumps(default))
            out.append(FormField(**common, widget="text", text=text, required="null" not in kinds))
        else:
            text = raw[-1] if raw else ("" if raw is not None or default is None else str(default))
            out.append(FormField(**common, widget="text", text=text, required="null" not in kinds))
    return out


def _typed(raw: list[str], schema: Mapping[str, Any], name: str) -> Any:
    """A field's submitted strings as the Param's type; ValueError with the reason when they are not that type."""
    kinds = _schema_type(schema)
    if "boolean" in kinds:
        return bool(raw) and raw[-1] in ("on", "true", "1")
    if "array" in kinds:
        items = [t.strip() for v in raw for t in v.split(",") if t.strip()]
        if schema.get("items", {}).get("type") == "integer":
            bad = [t for t in items if not (t.isascii() and t.isdigit())]
            if bad:
                raise ValueError(f"{name}: {', '.join(bad)} is not a broker id (expected e.g. 3, 7)")
            return [int(t) for t in items]
        return items
    text = raw[-1].strip() if raw else ""
    if text == "" and "null" in kinds:
        return None
    if "object" in kinds:
        try:
            value = json.loads(text)
        except ValueError:
            raise ValueError(f"{name}: not JSON, got {text[:60]!r}") from None
        if not isinstance(value, dict):
            raise ValueError(f"{name}: must be a JSON object, got {text[:60]!r}")
        return value
    if text == "":
        raise ValueError(f"{name}: required")
    if "integer" in kinds:
        if not (text.isascii() and text.lstrip("-").isdigit()):
            raise ValueError(f"{name}: expected a whole number, got {text!r}")
        return int(text)
    if "number" in kinds:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{name}: expected a number, got {text!r}") from None
    return text


def read_submission(params: Mapping[str, Any], form: Mapping[str, list[str]], cfg: ClustersFile,
                    cluster: ClusterConfig) -> Submission:
    """The run's conf from a submitted form, every field checked; each bad field's reason, all of them.

    Checks, per field: its type and the Param's own schema (the enum of ``mode``, ``window``'s pattern), the
    planner options' ranges (plan_params.planner_settings, the check the run's first task makes), and the window
    with executor.windows.policy (which refuses an interval without a time zone). A size is kept as written once
    valid (``50MiB/s``: the form's schema is text), so the run reads it as the CLI would.
    """
    from airflow.sdk import Param
    from airflow.sdk.definitions.param import ParamValidationError

    from kafka_rebalance.errors import RebalanceError
    from kafka_rebalance.orchestration.pipeline import window_policy

    conf: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name, param in params.items():
        try:
            conf[name] = _typed(form.get(name, []), param.schema, name)
        except ValueError as exc:
            errors[name] = str(exc)
            continue
        try:
            Param(conf[name], **param.schema).resolve(suppress_exception=False)
        except ParamValidationError as exc:
            errors[name] = f"{name}: {_schema_reason(exc, conf[name], param)}"
    # The product's own checks word a refusal better than a schema does (a size's spelling, a range, a window's
    # time zone): theirs replaces the schema's on the same field.
    _, problems = planner_settings(conf, cfg.effective_defaults(cluster))
    errors.update((name, problem) for name, problem in problems.items() if name in params)
    if "window" in conf:
        try:
            window_policy(cluster, conf["window"])
        except RebalanceError as exc:
            errors["window"] = str(exc)
    return Submission({} if errors else conf, errors)


def _schema_reason(exc: Exception, value: Any, param: Any) -> str:
    """The schema's refusal in the form's words: the choices or the pattern's meaning, not jsonschema's dump."""
    schema = param.schema
    if "enum" in schema:
        return f"must be one of {', '.join(map(str, schema['enum']))}, got {value!r}"
    items = schema.get("items", {})
    if isinstance(items, dict) and "enum" in items:
        bad = [v for v in value if v not in items["enum"]]
        return f"unknown {', '.join(map(str, bad))} (choose from {', '.join(items['enum'])})"
    if "pattern" in schema and param.description:
        return f"{value!r} is not valid: {param.description}"
    return str(exc).splitlines()[0]
