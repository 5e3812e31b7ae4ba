"""``config/clusters.yaml``: which clusters the pipeline manages, and how to reach them.

One Airflow DAG is generated per cluster. A cluster's ``source`` is either the id of
an Airflow connection of the Kafka provider's ``kafka`` type (a real cluster), or
``simulated:<snapshot>`` (the embedded simulator started from that snapshot file,
path relative to the clusters file). Planner defaults can be set once under
``defaults`` and overridden per cluster; the manual-trigger form starts from them.

Validation uses pydantic so a typo names the file, the cluster and the field.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, ValidationInfo, create_model, field_validator, model_validator

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.executor.windows import Window, WindowError, window_from_config
from kafka_rebalance.options import (
    DEFAULT_RATE_WINDOW_SECONDS,
    MAX_RATE_WINDOW_SECONDS,
    RATE_WINDOW,
    OptionField,
    option_fields,
)
from kafka_rebalance.orchestration.approval_policy import ApprovalPolicy
from kafka_rebalance.paths import PROJECT_ROOT
from kafka_rebalance.units import parse_bytes
from kafka_rebalance.userinput import cluster_id_problem, read_text

SIMULATED_PREFIX = "simulated:"


def clusters_file() -> Path:
    """``$KAFKA_REBALANCE_CLUSTERS``, else the project's ``config/clusters.yaml``."""
    return Path(os.environ.get("KAFKA_REBALANCE_CLUSTERS", PROJECT_ROOT / "config" / "clusters.yaml"))


def _setting_field(f: OptionField) -> tuple[Any, Any]:
    """An option as a clusters.yaml field: its setting's name, range and choices; a size in its own syntax."""
    if f.option.sized:
        return Annotated[int, BeforeValidator(_sized(f))], Field(default=f.setting_default)
    lo, hi = f.option.minimum, f.option.maximum
    if f.option.choices:
        annotation: Any = Literal[f.option.choices]
    elif f.item is not None:
        annotation = list[f.item]  # type: ignore[name-defined]
    else:
        annotation = f.kind
    if f.nullable:
        annotation = annotation | None
    limits: dict[str, Any] = {} if f.item is not None or f.kind is bool else {"ge": lo, "le": hi}
    if annotation in (float, float | None):
        limits["allow_inf_nan"] = False
    return annotation, Field(default=f.setting_default, **limits)


def _sized(f: OptionField) -> Any:
    """A size setting (``throttle: 50MiB/s``) read as the CLI reads the flag; pydantic names the field."""

    def read(value: Any) -> int:
        try:
            size = f.from_setting(value)
        except ValueError as exc:
            raise ValueError(str(exc).removeprefix(f"{f.setting}: ")) from None
        problem = f.problem(size, f.setting)
        if problem is not None:
            raise ValueError(problem.removeprefix(f"{f.setting} "))
        return size

    return read


# Settings an earlier version named otherwise, still read (existing clusters.yaml files and API triggers keep
# working): the old name, the new one, and how an old value is written in the new setting's terms.
LEGACY_SETTINGS: dict[str, tuple[str, Any]] = {
    # MB/s of 1,048,576 bytes, as the old setting counted them.
    "throttle_mb_per_sec": ("throttle", lambda v: f"{v}MiB/s" if isinstance(v, (int, float)) and not isinstance(v, bool) else v),
}


def with_legacy_settings(data: dict[str, Any], explicit_new: bool = True) -> dict[str, Any]:
    """``data`` with each legacy setting written under its new name; ValueError when both are given
    (``explicit_new``: the new name's presence is the user's, not a form default's)."""
    out = dict(data)
    for old, (new, convert) in LEGACY_SETTINGS.items():
        if old not in out:
            continue
        if explicit_new and new in out:
            raise ValueError(f"{old}: the older name of {new}; give one of them, not both")
        out[new] = convert(out.pop(old))
    return out


class _Defaults(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Broker capacities over the snapshot's (snapshot/capacity.py's map: {default: {...}, brokers: {ID: {...}}});
    # the trigger form's ``capacity`` field starts from it. Kept as written: the plan reads it as the CLI's file.
    capacity: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: Any) -> Any:
        return with_legacy_settings(data) if isinstance(data, dict) else data

    @field_validator("capacity")
    @classmethod
    def _capacity(cls, v: dict[str, Any] | None) -> dict[str, Any] | None:
        from kafka_rebalance.snapshot.capacity import CapacityError, read_capacity_map

        try:
            read_capacity_map(v, "capacity")
        except CapacityError as exc:
            raise ValueError(str(exc)) from None
        return v


# The planner options a cluster may set a default for (kafka_rebalance.options says which), under
# their setting names (throttle). The trigger form starts from them.
if TYPE_CHECKING:
    PlannerDefaults = _Defaults
else:
    PlannerDefaults = create_model("PlannerDefaults", __base__=_Defaults,
                                   **{f.setting: _setting_field(f) for f in option_fields() if f.option.in_clusters_file})


class ExecutorConfig(BaseModel):
    """How the executor watches a running plan on this cluster (``ExecSettings``)."""

    model_config = ConfigDict(extra="forbid")

    # continuous: moves start as capacity frees (schedule.json); batches: one wave per batch file.
    mode: Literal["continuous", "batches"] = "continuous"
    poll_interval_seconds: float = Field(default=10.0, gt=0, le=3600, allow_inf_nan=False)
    stall_seconds: float = Field(default=300.0, gt=0, le=7 * 24 * 3600, allow_inf_nan=False)
    # Inside a maintenance window a move starts only if its estimate ends this long before the window
    # closes; a move still running this long after the close is handled as a stall.
    window_margin_seconds: float = Field(default=300.0, ge=0, le=24 * 3600, allow_inf_nan=False)
    window_grace_seconds: float = Field(default=600.0, ge=0, le=7 * 24 * 3600, allow_inf_nan=False)
    # As execute's --batch-timeout, --on-stall and --additional: every setting the CLI has, the DAG has.
    batch_timeout_seconds: float | None = Field(default=None, gt=0, le=7 * 24 * 3600, allow_inf_nan=False)
    on_stall: Literal["continue", "stop"] = "continue"
    additional: bool = False
    # As execute's --throttle, --throttle-floor and --throttle-ceiling (executor/autothrottle.py): "auto" lets each
    # broker's rate follow its network headroom, never above the plan's approved throttle.
    throttle: Literal["plan", "auto"] = "plan"
    throttle_floor: str | None = None
    throttle_ceiling: str | None = None

    @field_validator("throttle_floor", "throttle_ceiling", mode="before")
    @classmethod
    def _rate(cls, v: Any, info: ValidationInfo) -> str | None:
        if v is None:
            return None
        text = str(v)
        parse_bytes(text, str(info.field_name))  # ValueError: one line naming the field and the value
        return text

    @model_validator(mode="after")
    def _auto_only(self) -> ExecutorConfig:
        if self.throttle != "auto" and (self.throttle_floor, self.throttle_ceiling) != (None, None):
            raise ValueError("throttle_floor and throttle_ceiling apply to throttle: auto")
        return self

    def auto_bounds(self) -> tuple[int | None, int | None] | None:
        """(floor, ceiling) in bytes/s for ``executor/autothrottle.auto_throttle``; None: the plan's fixed throttle."""
        if self.throttle != "auto":
            return None
        return (None if self.throttle_floor is None else parse_bytes(self.throttle_floor, "throttle_floor"),
                None if self.throttle_ceiling is None else parse_bytes(self.throttle_ceiling, "throttle_ceiling"))

    def settings(self) -> ExecSettings:
        """The executor's settings for this cluster: the one conversion, so no setting is dropped on the way."""
        return ExecSettings(poll_interval=self.poll_interval_seconds, stall_seconds=self.stall_seconds,
                            batch_timeout=self.batch_timeout_seconds, on_stall=self.on_stall, additional=self.additional,
                            mode=self.mode)


class WindowConfig(BaseModel):
    """One maintenance window: opens at each ``cron`` time in ``timezone`` for ``duration`` (4h, 90m, PT4H)."""

    model_config = ConfigDict(extra="forbid")

    cron: str
    duration: str
    timezone: str = "UTC"

    @model_validator(mode="after")
    def _valid(self) -> WindowConfig:
        try:
            self.window()
        except WindowError as exc:
            raise ValueError(str(exc).split(": ", 1)[-1]) from None
        return self

    def window(self) -> Window:
        return window_from_config(self.model_dump(), "window")


class ClusterConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cluster_id: str
    # Act on this cluster with plans whose snapshot records no Kafka cluster id (the ledger records it).
    allow_unidentified_cluster: bool = False
    source: str
    schedule: str | None = "*/30 * * * *"
    defaults: PlannerDefaults | None = None
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    # Maintenance windows: moves start only inside one (none listed: any time). docs/EXECUTION_WINDOWS.md
    windows: list[WindowConfig] = Field(default_factory=list)
    # gather's --rate-window for this cluster (options.RATE_WINDOW); a simulated cluster reports its own rates.
    rate_window_seconds: float = Field(default=DEFAULT_RATE_WINDOW_SECONDS, ge=0, le=MAX_RATE_WINDOW_SECONDS,
                                       allow_inf_nan=False, description=RATE_WINDOW.help)
    # Which staged plans approve themselves (orchestration/approval_policy.py). With one, a scheduled run that
    # finds a scale event (orchestration/scale.py) goes on to execute what the policy or a person approves;
    # without one, scheduled runs only stage.
    approval_policy: ApprovalPolicy | None = None

    @field_validator("cluster_id")
    @classmethod
    def _id(cls, v: str) -> str:
        problem = cluster_id_problem(v)
        if problem:
            raise ValueError(problem)
        # Beyond Kafka's characters: the id names a DAG (Airflow ids are at most 250 characters, with
        # the dag_id prefix) and a directory, which a leading '.' would hide and a leading '-' make an option.
        if not re.fullmatch(r"[A-Za-z0-9].{0,99}", v):
            raise ValueError(f"must start with a letter or digit and be at most 100 characters (it names a DAG and a "
                             f"directory), got {v!r}")
        return v

    @field_validator("source")
    @classmethod
    def _source(cls, v: str) -> str:
        if v.startswith(SIMULATED_PREFIX):
            if not v[len(SIMULATED_PREFIX) :].strip():
                raise ValueError("simulated: needs a snapshot path, e.g. simulated:samples/sample-cluster.json")
        elif not re.fullmatch(r"[A-Za-z0-9_.-]+", v):
            raise ValueError("must be an Airflow connection id or simulated:<snapshot path>")
        return v

    @model_validator(mode="after")
    def _rates_measurable(self) -> ClusterConfig:
        if self.rate_window_seconds and self.simulated:
            raise ValueError("rate_window_seconds: a simulated cluster reports its own produce rates; leave it 0")
        return self

    def configured_windows(self) -> tuple[Window, ...]:
        return tuple(w.window() for w in self.windows)

    @property
    def simulated(self) -> bool:
        return self.source.startswith(SIMULATED_PREFIX)

    @property
    def dag_id(self) -> str:
        return "kafka_rebalance_" + re.sub(r"[^A-Za-z0-9_]", "_", self.cluster_id)


class FleetConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schedule: str | None = "@daily"


class ClustersFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    defaults: PlannerDefaults = Field(default_factory=PlannerDefaults)
    fleet: FleetConfig = Field(default_factory=FleetConfig)
    clusters: list[ClusterConfig]
    path: Path | None = Field(default=None, exclude=True)

    @field_validator("defaults")
    @classmethod
    def _marks_are_per_cluster(cls, v: PlannerDefaults) -> PlannerDefaults:
        capacity = v.model_dump().get("capacity") or {}
        if capacity.get("brokers"):
            raise ValueError("capacity.brokers: broker ids belong to one cluster; give per-broker capacities in that "
                             "cluster's own defaults (a file-wide capacity.default is fine)")
        marked = v.model_dump().get("decommission_brokers")
        if marked:
            raise ValueError(f"decommission_brokers: {list(marked)} would mark the same broker ids for removal in "
                             "every cluster; mark them in that cluster's own defaults")
        return v

    def effective_defaults(self, cluster: ClusterConfig) -> PlannerDefaults:
        if cluster.defaults is None:
            return self.defaults
        merged = self.defaults.model_dump()
        merged.update(cluster.defaults.model_dump(exclude_unset=True))
        return PlannerDefaults(**merged)

    def simulated_snapshot(self, cluster: ClusterConfig) -> Path:
        if not cluster.simulated:
            raise RebalanceError(f"cluster {cluster.cluster_id} is not simulated (source {cluster.source})")
        raw = Path(cluster.source[len(SIMULATED_PREFIX) :].strip())
        base = self.path.parent if self.path else Path.cwd()
        return raw if raw.is_absolute() else (base / raw).resolve()


def _with_value(message: str, value: Any) -> str:
    """pydantic's message, with the value it refused when the message does not show it already (a one-line repr)."""
    if isinstance(value, (str, int, float)) and len(repr(value)) <= 80 and \
            not re.search(rf"(?<![\w.]){re.escape(repr(value))}(?![\w.])", message):
        return f"{message}, got {value!r}"
    return message


def load_clusters(path: str | Path) -> ClustersFile:
    p = Path(path)
    text = read_text(p, "clusters file")
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RebalanceError(f"{p}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise RebalanceError(f"{p}: must be a mapping with a 'clusters' list")
    try:
        parsed = ClustersFile(**raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = list(err["loc"])
            where = ".".join(str(x) for x in loc)
            # A bad cluster_id names its value itself; other fields say which cluster they belong to.
            if len(loc) >= 2 and loc[0] == "clusters" and isinstance(loc[1], int) and loc[2:3] != ["cluster_id"]:
                try:
                    cid = raw["clusters"][loc[1]].get("cluster_id", "?")
                    # An id that is wrong as well (a newline in it) must not split the error line.
                    where += f" (cluster {cid if isinstance(cid, str) and cid.isprintable() else repr(cid)})"
                except (AttributeError, IndexError, KeyError, TypeError):
                    pass
            problems.append(f"{where}: {_with_value(err['msg'], err.get('input'))}")
        raise RebalanceError(f"{p}: " + "; ".join(problems)) from None
    ids = [c.cluster_id for c in parsed.clusters]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise RebalanceError(f"{p}: cluster_id {', '.join(dupes)} listed more than once")
    parsed.path = p.resolve()
    return parsed
