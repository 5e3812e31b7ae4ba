"""The planner's options, each defined once.

Every field of ``PlanOptions`` carries an ``Option``: its flag and help, its range or choices,
and where else an operator may set it. ``kafka-rebalance plan``'s flags (cli/plan.py),
clusters.yaml's ``defaults`` (orchestration/clusters_config.py), the DAG's trigger form
(orchestration/plan_params.py) and ``PlanOptions.check`` are all derived from these fields, so an
option, its default or a limit changes here and nowhere else (as topicmappr registers each flag
once).

An option's ``setting`` is its name in clusters.yaml and the trigger form. A size or rate
(``sized``) is written the same way everywhere: bytes, or a number with a unit (``50MiB/s``,
``50MB/s``), read by ``units.parse_bytes``. Nothing heavy is imported here; the DAG file and the
clusters file read it without loading the planner.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path
from types import NoneType, UnionType
from typing import Any

from kafka_rebalance.analysis.summary_file import cluster_entry
from kafka_rebalance.balance import DEFAULT_BYTE_TOLERANCE, DEFAULT_REPLICA_TOLERANCE
from kafka_rebalance.errors import PlanError
from kafka_rebalance.metrics import DEFAULT_THRESHOLD_PERCENTAGE, threshold_percentage
from kafka_rebalance.snapshot import THRESHOLD_CONFIG, Snapshot
from kafka_rebalance.snapshot.capacity import CapacityMap, read_capacity_map, with_capacity
from kafka_rebalance.throttle_model import (
    DEFAULT_MOVE_FIXED_SECONDS,
    DEFAULT_THROTTLE_EFFICIENCY,
    MAX_MOVE_FIXED_SECONDS,
    MIN_THROTTLE_BYTES_PER_SEC,
    MIN_THROTTLE_EFFICIENCY,
    delivered_rate,
)
from kafka_rebalance.units import MIB, SIZE_PATTERN, exact_rate, human_range, parse_bytes
from kafka_rebalance.userinput import INT32_MAX, INT64_MAX, finite_number, is_ascii_digits, is_int

ORDERINGS = ("small-first", "large-first", "under-replicated-first")

# How old a plan's snapshot (from its gather time, plan.json snapshot.captured_at) may be when the plan
# is approved. A plan moves replicas as the cluster stood when gathered; within a day topics are
# created, partitions grow and brokers come and go, and the executor's preflight refuses a plan whose
# partitions moved since, so an older plan is more likely to be refused mid-way than to run. A day
# also covers a plan gathered overnight and approved the next working morning.
DEFAULT_MAX_PLAN_AGE_HOURS = 24.0
MAX_PLAN_AGE_LIMIT_HOURS = 24.0 * 366  # a longer limit is no limit: say so by re-gathering instead
# The disk-capacity goal's limit (planner/goals/disk_capacity.py): a broker's disks at most this full
# after the plan. 85 % leaves room for a day's growth on a typical cluster and for the segments a
# move writes before the old replica is deleted; Cruise Control's DiskCapacityGoal uses 0.8 and
# kafka-kit's storage rebalance stops at a configurable free-space floor. Above it the operator
# relieves the broker (issue #32), not the balancer.
DEFAULT_MAX_DISK_USAGE = 0.85
# gather's --rate-window (and clusters.yaml's rate_window_seconds): seconds between the two samples of
# log-end offsets and log sizes from which gather measures each partition's produce rate. 0, the
# default, takes no samples: gather stays one quick round of metadata calls (seconds even at a
# million partitions), and a cron'd gather does not hold a worker slot for a window nobody asked
# for. A measured rate is an average over the window, so a window shorter than a producer's
# batching or a broker's flush makes it noisy; 60 s is the figure docs/KAFKA.md suggests. An hour is
# the upper limit: past it, retention and leader changes inside the window blur the figure more than
# the length smooths it.
DEFAULT_RATE_WINDOW_SECONDS = 0.0
MAX_RATE_WINDOW_SECONDS = 3600.0
# exact: the MILP (planner/exact.py); heuristic: the goals; auto: exact where the model is small enough.
OPTIMIZERS = ("auto", "exact", "heuristic")


@dataclass(frozen=True)
class Option:
    """One option's contract with the operator."""

    flag: str
    help: str
    minimum: int | float | None = None
    maximum: int | float | None = None
    choices: tuple[str, ...] = ()
    unit: str = ""  # after a limit in an error: "bytes/s"
    why: str = ""  # after the upper limit in an error: why it is what it is
    setting: str = ""  # its name in clusters.yaml and the trigger form, when not the field's
    in_clusters_file: bool = True  # a per-cluster default in clusters.yaml
    in_form: bool = False  # a field of the DAG's trigger form
    ordered: bool = False  # a list whose order means something (kept, not sorted)
    goal_list: bool = False  # a list of goal names (planner/goals/registry.py)
    sized: bool = False  # bytes or bytes/s: written with a unit or as bytes (units.parse_bytes), e.g. 50MiB/s
    repeatable: bool = False  # a list given as one flag per item (a path may hold a comma), not comma-separated


def _option(default: Any, **spec: Any) -> Any:
    # Runs once, at import: mutation testing cannot observe a change here, the tests of what it builds do.
    return field(default=default, metadata={"option": Option(**spec)})  # pragma: no mutate


# gather's one measuring option; gather is not a plan, so it is no PlanOptions field. The CLI flag
# (cli/gather.py) and clusters.yaml's per-cluster rate_window_seconds (orchestration/clusters_config.py)
# both take their name, range and help from here.
RATE_WINDOW = Option(
    flag="--rate-window", setting="rate_window_seconds", minimum=0, maximum=MAX_RATE_WINDOW_SECONDS, unit="s",
    help="Seconds between two samples of each partition's log-end offset and log size, from which its produce "
         "rate (bytes_in_per_sec) is measured; 0: not measured")


@dataclass(frozen=True)
class PlanOptions:
    # 50 MiB/s, the figure the plan-format contract shows; kafka-reassign-partitions takes bytes/s.
    throttle_bytes_per_sec: int = _option(
        50 * MIB, flag="--throttle", help="Replication throttle per broker (KIP-73)",
        minimum=MIN_THROTTLE_BYTES_PER_SEC,
        maximum=INT64_MAX, unit="bytes/s", why="(a Java long)",  # Kafka's *.replication.throttled.rate
        setting="throttle", in_form=True, sized=True)
    max_partitions_per_batch: int = _option(
        50, flag="--max-partitions-per-batch", help="Partitions per reassignment batch", minimum=1, maximum=INT32_MAX,
        in_form=True)
    max_moves_per_broker: int = _option(
        5, flag="--max-moves-per-broker", help="Replica moves into or out of one broker per batch", minimum=1,
        maximum=INT32_MAX, in_form=True)
    max_new_replicas_per_partition: int = _option(
        1, flag="--max-new-replicas-per-partition", help="New replicas of one partition per batch", minimum=1,
        maximum=INT32_MAX)
    ordering: str = _option(
        "small-first", flag="--ordering", help="Which partitions move first", choices=ORDERINGS, in_form=True)
    exclude_topics: tuple[str, ...] = _option(
        (), flag="--exclude-topics", help="Topics never touched (comma-separated on the command line)", in_form=True)
    # A run's request, or a cluster's standing mark (its own entry in clusters.yaml: brokers marked for removal,
    # which every run empties; lift the mark once the broker has left, as a run naming a missing broker fails
    # saying so). Never the file-wide defaults': broker ids belong to one cluster.
    decommission_brokers: tuple[int, ...] = _option(
        (), flag="--decommission-brokers", help="Broker ids to empty (comma-separated on the command line)",
        minimum=0, maximum=INT32_MAX, in_form=True)
    # A one-off request (a disk about to be replaced), never a standing default: paths belong to one broker.
    remove_log_dirs: tuple[str, ...] = _option(
        (), flag="--remove-log-dir",
        help="Empty this log dir, BROKER:PATH as the snapshot records it, onto the broker's other log dirs (other "
             "brokers where they cannot hold it); repeat the flag for several",
        in_clusters_file=False, repeatable=True)
    # A one-off operator request, never a standing default of a cluster.
    replication_factor: int | None = _option(
        None, flag="--replication-factor", help="Change every non-excluded topic to this replication factor",
        minimum=1, maximum=INT32_MAX, in_clusters_file=False)
    byte_tolerance: float = _option(
        DEFAULT_BYTE_TOLERANCE, flag="--byte-tolerance", help="Allowed byte deviation from the mean, as a fraction",
        minimum=0, maximum=10, why="(a fraction of the mean)")
    # The band's lower side on its own (None: --byte-tolerance on both sides). The byte promise is the fullest
    # broker's (max/mean: disks fill from the top); a looser floor stops filling new or empty brokers to within the
    # top's tolerance of the mean, which is most of the bytes such a plan moves (docs/PLANNER.md "Byte band").
    byte_tolerance_below: float | None = _option(
        None, flag="--byte-tolerance-below",
        help="Allowed byte deviation below the mean, as a fraction, where it differs from --byte-tolerance (which "
             "then bounds only the side above the mean); none given: --byte-tolerance on both sides",
        minimum=0, maximum=1, why="(a fraction of the mean)")
    replica_tolerance: float = _option(
        DEFAULT_REPLICA_TOLERANCE, flag="--replica-tolerance",
        help="Allowed deviation of each broker's replica and preferred-leader counts from its share, as a fraction "
             "(whole replicas only; 0: floor..ceil of the share)",
        minimum=0, maximum=1, why="(a fraction of the share)")
    max_disk_usage: float = _option(
        DEFAULT_MAX_DISK_USAGE, flag="--max-disk-usage",
        help="No broker's disks filled past this fraction of their capacity by the plan (capacity: the log dirs' "
             "total bytes in the snapshot; brokers without one are unconstrained)",
        minimum=0.01, maximum=1, why="(a fraction of the disk)", in_form=True)
    # Relief mode (docs/PLANNER.md, "Relief mode"): the hard goals and fewest bytes, no balancing. A cluster may
    # stand in it (a team that only ever wants a full disk relieved) or a run may ask once, from the form.
    relieve: bool = _option(
        False, flag="--relieve",
        help="Move only what brings every broker and log dir under --max-disk-usage (and, with network-in selected "
             "and network capacities known, under its network band), fewest bytes first; no balancing goal runs, a "
             "broker under its limits is only ever a destination, and no leader changes but a moved leader's",
        in_form=True)
    network_tolerance: float = _option(
        0.10, flag="--network-tolerance",
        help="Allowed deviation of each broker's network in and out (bytes/s) from its capacity-weighted share, as a "
             "fraction (the opt-in network-in and network-out goals)",
        minimum=0, maximum=10, why="(a fraction of the share)")
    election_batch_size: int = _option(
        1000, flag="--election-batch-size", help="Partitions per preferred-leader election call", minimum=1,
        maximum=INT32_MAX)
    threshold_percentage: float | None = _option(
        None, flag="--threshold-percentage",
        help="leader.imbalance.per.broker.percentage to apply when the cluster does not report one (KRaft); "
             f"none given: {DEFAULT_THRESHOLD_PERCENTAGE}",
        minimum=0, maximum=100, in_form=True)
    threshold_source: str = "default"  # where threshold_percentage came from: not an option, a finding
    # Broker capacities over the snapshot's own (snapshot/capacity.py): ``plan --capacity FILE``, clusters.yaml's
    # ``capacity``, the trigger form's. Not a flag of its own shape: a map, read from a file.
    capacity: CapacityMap = CapacityMap()
    goals: tuple[str, ...] = _option(
        (), flag="--goals",
        help="Soft goals to optimise, highest priority first (comma-separated on the command line); the hard goals "
             "always apply; none given: every goal but the opt-in topic-spread, network-in and network-out",
        ordered=True, goal_list=True, in_form=True)
    optimizer: str = _option(
        "auto", flag="--optimizer",
        help="exact = fewest bytes moved (MILP), heuristic = the goals, auto = exact where the cluster is small enough",
        choices=OPTIMIZERS, in_form=True)
    throttle_efficiency: float = _option(
        DEFAULT_THROTTLE_EFFICIENCY, flag="--throttle-efficiency",
        help="Fraction of the throttle the brokers deliver, for the time estimates (execute prints the figure a "
             "cluster showed)",
        minimum=MIN_THROTTLE_EFFICIENCY, maximum=1, why="(the fraction of the throttle the brokers deliver)")
    move_fixed_seconds: float = _option(
        DEFAULT_MOVE_FIXED_SECONDS, flag="--move-fixed-seconds",
        help="Seconds each move takes besides copying its bytes (metadata propagation, fetcher start, ISR join, the "
             "executor seeing it land), for the time estimates (execute prints the figure a cluster showed)",
        minimum=0, maximum=MAX_MOVE_FIXED_SECONDS, unit="seconds", why="(seconds per move)")

    @property
    def byte_tolerance_low(self) -> float:
        """The byte band's tolerance below the mean: ``byte_tolerance_below`` where given, else ``byte_tolerance``."""
        return self.byte_tolerance if self.byte_tolerance_below is None else self.byte_tolerance_below

    @property
    def delivered_rate(self) -> float:
        """Bytes/s a broker is expected to move under the throttle: what every duration is computed with."""
        return delivered_rate(self.throttle_bytes_per_sec, self.throttle_efficiency)

    def rate_text(self) -> str:
        """The delivered rate for an error message: the throttle, and the efficiency when it is not 1."""
        if self.throttle_efficiency == 1:
            return f"the throttle {self.throttle_bytes_per_sec:,} B/s"
        return (f"the delivered rate {self.delivered_rate:,.0f} B/s ({self.throttle_efficiency:g} of the throttle "
                f"{self.throttle_bytes_per_sec:,} B/s)")

    def check(self) -> None:
        """Every option's range or choice at once, as one PlanError naming each flag and value."""
        problems = [p for f in option_fields() if (p := f.problem(getattr(self, f.name))) is not None]
        if problems:
            raise PlanError("plan: " + "; ".join(problems))

    def planned_snapshot(self, snapshot: Snapshot) -> Snapshot:
        """The snapshot as the plan sees it: ``capacity`` over its brokers' own figures (CapacityError naming a
        broker the map lists that the snapshot lacks). Its fingerprint stays the file's: callers keep both."""
        return with_capacity(snapshot, self.capacity.resolve(snapshot.broker_ids))

    def check_against(self, snapshot: Snapshot) -> None:
        known_topics = {p.topic for p in snapshot.partitions} | set(snapshot.topics)
        unknown = [t for t in self.exclude_topics if t not in known_topics]
        if unknown:
            raise PlanError(f"--exclude-topics: topic(s) {', '.join(unknown)} not in snapshot of {snapshot.cluster_id}")
        ids = set(snapshot.broker_ids)
        stray = [b for b in self.decommission_brokers if b not in ids]
        if stray:
            raise PlanError(
                f"--decommission-brokers: broker(s) {', '.join(map(str, stray))} not in snapshot of {snapshot.cluster_id} "
                f"(brokers: {', '.join(map(str, sorted(ids)))})"
            )
        for entry in self.remove_log_dirs:
            broker, path = removed_log_dir(entry)  # PlanError naming the entry when it is not BROKER:PATH
            if broker not in ids:
                raise PlanError(f"--remove-log-dir {entry}: broker {broker} not in snapshot of {snapshot.cluster_id} "
                                f"(brokers: {', '.join(map(str, sorted(ids)))})")
            dirs = [d.path for d in snapshot.broker(broker).log_dirs]
            if path not in dirs:
                raise PlanError(f"--remove-log-dir {entry}: broker {broker} has no log dir {path!r} in snapshot of "
                                f"{snapshot.cluster_id} (its log dirs: {', '.join(dirs) if dirs else 'none recorded'})")
            if len(dirs) < 2:
                raise PlanError(f"--remove-log-dir {entry}: {path!r} is broker {broker}'s only log dir; "
                                f"--decommission-brokers {broker} empties the whole broker")

    @classmethod
    def from_manifest(cls, block: Mapping[str, Any]) -> PlanOptions:
        """The options a plan was made with, from plan.json's (hash-verified) options block; a field
        the block lacks (a plan made before it existed) takes its default."""
        known = {f.name for f in fields(cls)} - {"capacity"}
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in block.items() if k in known}
        return cls(**values, capacity=read_capacity_map(block.get("capacity"), "plan.json options.capacity"))

    def manifest(self) -> dict[str, Any]:
        """The options block of plan.json (part of the plan hash): every field, lists sorted; ``remove_log_dirs``,
        ``relieve`` and ``capacity`` only when given, so plans without them are the plans they were before they existed."""
        ordered = {f.name for f in option_fields() if f.option.ordered}
        out = {f.name: (list(v) if f.name in ordered else sorted(v)) if isinstance(v := getattr(self, f.name), tuple)
               else v for f in fields(self)
               if f.name != "capacity" and (f.name not in _ONLY_WHEN_GIVEN or _given(getattr(self, f.name)))}  # fmt: skip
        if not self.capacity.empty:  # absent otherwise: plans without capacities hash as they did
            out["capacity"] = self.capacity.to_dict()
        return out


# Options plan.json records only when set: a plan made without them hashes as it did before they existed.
_ONLY_WHEN_GIVEN = ("remove_log_dirs", "relieve", "byte_tolerance_below")


def _given(value: Any) -> bool:
    """Set, for ``_ONLY_WHEN_GIVEN``: a list with entries, True, or a number (0.0 included: a floor of its own)."""
    return value is not None and value is not False and value != ()


def _number(x: int | float) -> str:
    """A limit as an operator would write it: 1024, 0.05, 0.0009765625 (never 1e+12 or 1.0)."""
    return str(int(x)) if isinstance(x, int) or x.is_integer() else repr(x)


@dataclass(frozen=True)
class OptionField:
    """A PlanOptions field with its Option and the shape of its value, read from the field's type."""

    name: str
    default: Any
    kind: type  # int, float, str or tuple
    item: type | None  # the element type of a tuple option
    nullable: bool
    option: Option

    @property
    def flag(self) -> str:
        return self.option.flag

    @property
    def setting(self) -> str:
        """The option's name in clusters.yaml and the trigger form."""
        return self.option.setting or self.name

    @property
    def setting_default(self) -> Any:
        return list(self.default) if self.item is not None else self.default

    def setting_schema(self) -> dict[str, Any]:
        """The JSON schema of the option's setting: the trigger form's field."""
        lo, hi = self.option.minimum, self.option.maximum
        limits = {k: v for k, v in (("minimum", lo), ("maximum", hi)) if v is not None}
        if self.option.choices:
            return {"enum": list(self.option.choices)}
        if self.option.sized:
            # Text, read by parse_bytes: a number field would take no unit, and the UI's number input
            # clamps a value below its minimum on blur (a throttle of 0 became 1 KiB/s unseen). The
            # pattern refuses what is no size at trigger time; the range is checked by the run's
            # first task, with the line problem() writes.
            return {"type": "string", "pattern": SIZE_PATTERN}
        if self.kind is bool:
            return {"type": "boolean"}
        if self.item is not None:
            items: dict[str, Any] = {"type": "integer", **limits} if self.item is int else {"type": "string"}
            if self.option.goal_list:
                items = {"type": "string", "enum": list(goal_names())}
            return {"type": "array", "items": items}
        kind = "integer" if self.kind is int else "number"
        return {"type": ["null", kind] if self.nullable else kind, **limits}

    def form_value(self, value: Any) -> Any:
        """A setting's value as the trigger form shows it: a size in the form's own syntax."""
        return exact_rate(value) if self.option.sized and is_int(value) else value

    def help_text(self) -> str:
        """The help, with the choices or the range; the same for the flag, clusters.yaml and the form."""
        o = self.option
        if o.choices:
            return f"{o.help} ({' | '.join(o.choices)})"
        lo, hi = o.minimum, o.maximum
        if o.sized and lo is not None and hi is not None:
            return f"{o.help} [{human_range(lo, hi)}]: bytes/s, or a number with a unit, e.g. 50MiB/s (50 x 1024^2) or 50MB/s (50 x 1000^2)"
        if lo is not None and hi is not None:
            return f"{o.help} [{_number(lo)}..{_number(hi)}{' ' + o.unit if o.unit else ''}]"
        return o.help

    def from_setting(self, value: Any) -> Any:
        """The option's value from clusters.yaml or the trigger form (already checked against its schema).

        A size is read by parse_bytes (ValueError naming the setting when it is none); its range is problem()'s.
        """
        if value is None and (self.nullable or self.item is not None):
            return None if self.nullable else ()
        if self.item is not None:
            if self.option.ordered:
                return tuple(dict.fromkeys(self.item(v) for v in value))
            return tuple(sorted({self.item(v) for v in value}))
        if self.option.sized:
            if is_int(value):
                return value
            if not isinstance(value, str):
                raise ValueError(f"{self.setting}: expected bytes/s or a size such as 50MiB/s, got {value!r}")
            return parse_bytes(value, self.setting)
        if self.kind is bool:
            return value  # problem() refuses anything but true or false: bool("false") would be True
        return self.kind(value)

    def problem(self, value: Any, name: str | None = None) -> str | None:
        """What is wrong with ``value`` for this option, named by ``name`` (its flag unless given); None when it is usable."""
        o = self.option
        flag = name or o.flag
        if value is None and self.nullable:
            return None
        if self.kind is bool:
            return None if isinstance(value, bool) else f"{flag} must be true or false, got {value!r}"
        if o.choices:
            return None if value in o.choices else f"{flag} must be one of {', '.join(o.choices)}, got {value!r}"
        if self.item is str and o.goal_list:
            bad = [v for v in value if v not in goal_names()]
            return f"{flag}: unknown goal(s) {', '.join(bad)} (goals: {', '.join(goal_names())})" if bad else None
        if self.item is str:  # topic names: check_against holds them to the snapshot
            return None
        lo, hi = o.minimum, o.maximum  # every numeric option has both (_option_fields checks)
        assert lo is not None and hi is not None
        if self.item is not None:
            bad = [v for v in value if not finite_number(v, lo, hi)]
            return f"{flag} must be within {_number(lo)}..{_number(hi)}, got {bad[0]}" if bad else None
        if self.kind is float:
            if finite_number(value, lo, hi):
                return None
            why = f" {o.why}" if o.why else ""
            return f"{flag} must be within {_number(lo)}..{_number(hi)}{why}, got {value}"
        if self.kind is int and o.sized and not lo <= value <= hi:
            # Never clamped: a throttle of 0 would stop replication, one past a long is no Kafka config.
            why = f"; {o.why.strip('()')}" if o.why else ""
            return f"{flag} must be within {human_range(lo, hi)} ({_number(lo)}..{_number(hi)} {o.unit}{why}), got {value}"
        if self.kind is int:
            unit = f" {o.unit}" if o.unit else ""
            if value < lo:
                return f"{flag} must be at least {_number(lo)}{unit}, got {value}"
            if value > hi:
                why = f" {o.why}" if o.why else ""
                return f"{flag} must be at most {_number(hi)}{unit}{why}, got {value}"
        return None


@cache
def _option_fields() -> tuple[OptionField, ...]:
    hints = typing.get_type_hints(PlanOptions)
    found = []
    for f in fields(PlanOptions):
        if "option" not in f.metadata:
            continue
        tp, nullable = hints[f.name], False
        if isinstance(tp, UnionType):  # X | None
            tp = next(a for a in typing.get_args(tp) if a is not NoneType)
            nullable = True
        origin = typing.get_origin(tp)
        item = typing.get_args(tp)[0] if origin is tuple else None
        found.append(OptionField(f.name, f.default, origin or tp, item, nullable, f.metadata["option"]))
        spec = found[-1].option
        if tp is not bool and not spec.choices and item is not str and (spec.minimum is None or spec.maximum is None):
            raise TypeError(f"PlanOptions.{f.name}: a numeric option needs a minimum and a maximum")
    return tuple(found)


def option_fields() -> Iterator[OptionField]:
    """Every option, in PlanOptions' order (threshold_source is a finding, not an option)."""
    return iter(_option_fields())


def goal_names() -> tuple[str, ...]:
    """The registered goals' names. Imported when asked: the registry loads the planner."""
    from kafka_rebalance.planner.goals.registry import names

    return names()


def parse_list(text: str | None, flag: str, as_int: bool = False, ordered: bool = False) -> tuple[Any, ...]:
    """``a,b,c`` -> sorted unique tuple (unique in the given order when ``ordered``); ints when ``as_int``."""
    if not text:
        return ()
    items = [t.strip() for t in text.split(",") if t.strip()]
    if ordered:
        return tuple(dict.fromkeys(items))
    if as_int:
        bad = [t for t in items if not (is_ascii_digits(t) and int(t) <= INT32_MAX)]
        if bad:
            raise PlanError(f"{flag}: {', '.join(bad)} is not a broker id (expected e.g. 3,7)")
        return tuple(sorted({int(t) for t in items}))
    return tuple(sorted(set(items)))


def from_flags(flags: Mapping[str, Any]) -> dict[str, Any]:
    """PlanOptions' values from ``plan``'s flags (list options arrive comma-separated, repeatable ones as a list)."""
    return {f.name: (tuple(sorted(set(flags[f.name] or ()))) if f.option.repeatable
                     else parse_list(flags[f.name], f.flag, as_int=f.item is int, ordered=f.option.ordered))
            if f.item is not None else flags[f.name]
            for f in option_fields()}  # fmt: skip


def removed_log_dir(entry: str) -> tuple[int, str]:
    """``--remove-log-dir``'s BROKER:PATH as (broker id, path); PlanError naming the entry when it is not one."""
    broker, sep, path = entry.partition(":")
    if not sep or not is_ascii_digits(broker) or int(broker) > INT32_MAX or not path.startswith("/"):
        raise PlanError(f"--remove-log-dir {entry}: expected BROKER:PATH, a broker id and an absolute log dir path "
                        "(e.g. 3:/var/lib/kafka/data-2)")
    return int(broker), path


def resolve_threshold(snapshot: Snapshot, setting: float | None, analysis_dir: Path | None) -> tuple[float, str]:
    """The leader-imbalance threshold: the cluster's config, else the Spark analysis, else the setting/default."""
    if THRESHOLD_CONFIG in snapshot.configs or analysis_dir is None:
        return threshold_percentage(snapshot, setting)
    entry, where = cluster_entry(analysis_dir, snapshot.cluster_id)
    value = entry.get("threshold_percentage")
    if not finite_number(value, 0, 100):
        raise PlanError(f"{where}.threshold_percentage must be 0..100, got {value!r}")
    return float(value), "analysis"
