"""Broker capacity as an operator writes it, read the same way everywhere.

One shape, four places: a snapshot's ``brokers[].capacity`` (one broker's ``Capacity``), and a capacity
*map* in ``plan --capacity FILE``, clusters.yaml's per-cluster ``capacity`` and the trigger form's
``capacity`` field::

    {"default": {"disk_bytes": "2TiB", "network_in_bytes_per_sec": "125MB/s"},
     "brokers": {"7": {"disk_bytes": "4TiB", "network_in_bytes_per_sec": "250MB/s"}}}

A figure is bytes (bytes/s for the network), or a number with a unit (``units.parse_bytes``); it must be
at least 1. ``default`` applies to every broker of the snapshot the map is used with, a broker's own entry
overrides it field by field, and the map overrides the snapshot's own figures field by field. A problem
is one line naming where, the field and the value (``CapacityError``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.snapshot.model import CAPACITY_FIELDS, Capacity, Snapshot
from kafka_rebalance.units import parse_bytes
from kafka_rebalance.userinput import INT32_MAX, INT64_MAX, is_ascii_digits, is_int


class CapacityError(RebalanceError):
    """A capacity figure, map or file that cannot be used, in one line."""


def capacity_problem(raw: Any, where: str) -> tuple[Capacity | None, str | None]:
    """One broker's capacity from its JSON/YAML object: (Capacity, None) or (None, the problem)."""
    if not isinstance(raw, Mapping):
        return None, f"{where}: must be an object with any of {', '.join(CAPACITY_FIELDS)}, got {json.dumps(raw, default=str)[:60]}"
    stray = sorted(str(k) for k in raw if k not in CAPACITY_FIELDS)
    if stray:
        return None, f"{where}.{stray[0]}: unknown field (fields: {', '.join(CAPACITY_FIELDS)})"
    values: dict[str, int | None] = {}
    for key in CAPACITY_FIELDS:
        v = raw.get(key)
        at = f"{where}.{key}"
        if v is None:
            values[key] = None
            continue
        if isinstance(v, str):
            try:
                v = parse_bytes(v, at)
            except ValueError as exc:
                return None, str(exc)
        if not is_int(v) or not 1 <= v <= INT64_MAX:
            unit = "byte/s" if "network" in key else "byte"
            return None, (f"{at}: must be at least 1 {unit} (a whole number, or a size such as 2TiB or 125MB/s), "
                          f"got {json.dumps(v, default=str)}")
        values[key] = int(v)
    return Capacity(**values), None


def read_capacity(raw: Any, where: str) -> Capacity:
    cap, problem = capacity_problem(raw, where)
    if problem is not None:
        raise CapacityError(problem)
    assert cap is not None
    return cap


@dataclass(frozen=True, slots=True)
class CapacityMap:
    """A capacity for every broker (``default``) and per broker id (overriding it field by field)."""

    default: Capacity | None = None
    brokers: tuple[tuple[int, Capacity], ...] = ()
    source: str = field(default="capacity", compare=False)  # where it was read, for messages


    @property
    def empty(self) -> bool:
        return self.default is None and not self.brokers

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.default is not None:
            out["default"] = self.default.to_dict()
        if self.brokers:
            out["brokers"] = {str(b): c.to_dict() for b, c in self.brokers}
        return out

    def resolve(self, broker_ids: Iterable[int]) -> dict[int, Capacity]:
        """Each of ``broker_ids``' capacity from this map (brokers it names nothing for: the default, or
        none). A broker the map names that is not among ``broker_ids`` is a CapacityError: a typo would
        otherwise leave the broker meant unconfigured."""
        ids = sorted(set(broker_ids))
        stray = [b for b, _ in self.brokers if b not in ids]
        if stray:
            raise CapacityError(f"{self.source}.brokers.{stray[0]}: broker {stray[0]} is not in the snapshot "
                                f"(brokers: {', '.join(map(str, ids))})")
        own = dict(self.brokers)
        out = {}
        for b in ids:
            cap = own[b].over(self.default) if b in own else self.default
            if cap is not None and not cap.empty:
                out[b] = cap
        return out


def read_capacity_map(raw: Any, where: str) -> CapacityMap:
    """A capacity map from its JSON/YAML form (module docstring); None or {} is the empty map."""
    if raw is None:
        return CapacityMap()
    if not isinstance(raw, Mapping):
        raise CapacityError(f"{where}: must be an object with 'default' and/or 'brokers', got {json.dumps(raw, default=str)[:60]}")
    stray = sorted(str(k) for k in raw if k not in ("default", "brokers"))
    if stray:
        raise CapacityError(f"{where}.{stray[0]}: unknown field (fields: default, brokers)")
    default = None if raw.get("default") is None else read_capacity(raw["default"], f"{where}.default")
    per = raw.get("brokers") or {}
    if not isinstance(per, Mapping):
        raise CapacityError(f"{where}.brokers: must be an object of broker id to capacity, got {json.dumps(per, default=str)[:60]}")
    brokers: dict[int, Capacity] = {}
    for key, spec in per.items():
        text = str(key)
        if not (is_int(key) or is_ascii_digits(text)) or int(text) > INT32_MAX:
            raise CapacityError(f"{where}.brokers.{text}: not a broker id (expected e.g. \"7\")")
        bid = int(text)
        if bid in brokers:
            raise CapacityError(f"{where}.brokers.{text}: broker {bid} is listed twice")
        brokers[bid] = read_capacity(spec, f"{where}.brokers.{text}")
    return CapacityMap(default, tuple(sorted(brokers.items())), where)


def read_capacity_file(path: str) -> CapacityMap:
    """``plan --capacity FILE``: a capacity map in JSON or YAML (YAML is a superset of JSON)."""
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            raw = yaml.safe_load(fh)
    except OSError as exc:
        raise CapacityError(f"--capacity {path}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {mark.line + 1})" if mark is not None else ""
        raise CapacityError(f"--capacity {path}: not JSON or YAML{at}") from None
    return read_capacity_map(raw, f"{path} capacity")


def with_capacity(snapshot: Snapshot, capacities: Mapping[int, Capacity]) -> Snapshot:
    """The snapshot with each named broker's capacity overriding its own figures field by field: what the
    planner (and the quality gate, from the plan's options) plans with. The snapshot's fingerprint is
    the file's: callers keep the original for it."""
    if not capacities:
        return snapshot
    brokers = tuple(replace(b, capacity=capacities[b.id].over(b.capacity)) if b.id in capacities else b
                    for b in snapshot.brokers)  # fmt: skip
    return replace(snapshot, brokers=brokers)
