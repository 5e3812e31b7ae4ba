"""What "balanced" means: one definition shared by the analysis, the planner and the quality gate.

A cluster is balanced when
* no broker's leader imbalance ratio exceeds the threshold (Kafka's rule, ratio > pct/100);
* every eligible broker's replica count and preferred-leader count lies within
  [floor, ceil] of the ideal (total / eligible brokers), the tightest spread integers allow;
* every eligible broker's bytes lie within ``byte_tolerance`` (default 10 %) of the mean (its
  capacity-weighted share where the brokers' disks differ), or,
  where rack safety (or load no plan may move) forces a broker's share of the bytes beyond that,
  near its forced share (``byte_band``).

Eligible brokers are the live ones that are not being decommissioned.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

DEFAULT_BYTE_TOLERANCE = 0.10
# Where a broker's forced share (its rack's, or its unmovable load) lies beyond the mean's band, the
# band's edge on that side is the share widened by this fraction of the tolerance: the rack's brokers
# still need room to even out among themselves in whole partitions, but no more than that (widening by
# the whole tolerance let the fullest broker of 50 brokers end 1.145x the mean where the share forced
# 1.042x). Half: at every tolerance the share binds only once it is within half the tolerance of
# the mean's edge, and the edge moves continuously with the share (docs/PLANNER.md, "Byte band").
FORCED_SHARE_ROOM = 0.5
# Replica counts: floor..ceil of each broker's share widened by this fraction of it (docs/PLANNER.md,
# "Replica-count band", says why this default).
DEFAULT_REPLICA_TOLERANCE = 0.10


@dataclass(frozen=True, slots=True)
class Tolerances:
    byte_tolerance: float = DEFAULT_BYTE_TOLERANCE
    replica_tolerance: float = DEFAULT_REPLICA_TOLERANCE

    def __post_init__(self) -> None:
        if not 0 <= self.byte_tolerance <= 10:
            raise ValueError(f"byte_tolerance must be within 0..10 (a fraction of the mean), got {self.byte_tolerance}")
        if not 0 <= self.replica_tolerance <= 1:
            raise ValueError(f"replica_tolerance must be within 0..1 (a fraction of the share), got {self.replica_tolerance}")


def share_range(share: Fraction | int, tolerance: float = 0.0) -> tuple[int, int]:
    """The replica counts a broker whose share is ``share`` may hold: floor..ceil of the share, widened
    on each side by the whole replicas ``tolerance`` of it covers (exact arithmetic, so the same share
    and tolerance give the same range anywhere). Whole replicas only: a share of 1 stays 1..1 at 10 %,
    where rounding outward would let a broker of a small cluster sit empty."""
    s = Fraction(share)
    w = math.floor(s * Fraction(tolerance))
    return (max(0, math.floor(s) - w), math.ceil(s) + w)


def count_bounds(total: int, brokers: int, tolerance: float = 0.0) -> tuple[int, int]:
    """[floor, ceil] of the ideal per-broker count, widened by ``tolerance`` of it."""
    if brokers <= 0:
        return (0, 0)
    return share_range(Fraction(total, brokers), tolerance)


def count_spread(counts: Sequence[int]) -> dict[str, float]:
    """How far counts are from ideal: max/min, the ideal, and brokers outside [floor, ceil]."""
    total, n = sum(counts), len(counts)
    lo, hi = count_bounds(total, n)
    return {
        "ideal": total / n if n else 0.0,
        "min": min(counts) if counts else 0,
        "max": max(counts) if counts else 0,
        "floor": lo,
        "ceil": hi,
        "brokers_outside": sum(1 for c in counts if c < lo or c > hi),
    }


def byte_band(share: Any, mean: Any, tolerance: float, below: float | None = None) -> tuple[Any, Any]:
    """The bytes a broker may hold, [lo, hi]: its mean (``mean``: the cluster's, or its capacity-weighted
    share, ``byte_centres``) within ``tolerance`` (``below`` under the mean, where given), widened on
    a side only where the broker's forced share (``share``: its rack's level or its unmovable load,
    ``placement_targets``) lies beyond it, to that share within ``FORCED_SHARE_ROOM`` of that side's
    tolerance. Scalars or NumPy arrays (elementwise).

    A lower side wider than ``tolerance`` is a widening as a forced share's is: ``band_deviation`` stays at most
    ``tolerance`` inside the band."""
    low = tolerance if below is None else below
    return (np.minimum(mean * (1 - low), share * (1 - FORCED_SHARE_ROOM * low)),
            np.maximum(mean * (1 + tolerance), share * (1 + FORCED_SHARE_ROOM * tolerance)))


def band_deviation(size: Any, mean: Any, lo: Any, hi: Any, tolerance: float) -> Any:
    """How far ``size`` is from the mean, as a fraction of it, less whatever the band is widened by
    on that side (a forced share): at most ``tolerance`` exactly inside [lo, hi], ``|size - mean| /
    mean`` wherever the band is the mean's own, never negative. The byte goal's figure, and what the
    quality gate holds each broker to (no further off than before, beyond the tolerance). Scalars or
    NumPy arrays; 0 where the mean is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        safe = np.where(mean > 0, mean, 1.0)
        off = np.where(size >= mean, (size - hi) / safe, (lo - size) / safe) + tolerance
        dev = np.where(mean > 0, np.maximum(0.0, off), 0.0)
    return dev if isinstance(dev, np.ndarray) and dev.ndim else float(dev)


def byte_deviation(sizes: Sequence[int]) -> float:
    """Largest |bytes - mean| / mean over brokers; 0 for an empty or all-empty cluster."""
    if not sizes:
        return 0.0
    mean = sum(sizes) / len(sizes)
    if mean == 0:
        return 0.0
    return max(abs(s - mean) for s in sizes) / mean


# --------------------------------------------------------------------------- rack-aware targets
#
# Rack safety (at most ceil(RF / racks) replicas of a partition per rack, over min(RF, racks)
# racks) can force rack totals apart: RF 3 over 3 racks of 4, 4 and 3 brokers puts exactly one
# replica of every partition in each rack, so a broker of the small rack must hold 4/3 of what
# one of a big rack holds. The planner aims at, and the quality gate checks, the same targets:
# one common level for every broker, except that a rack whose total rack safety bounds is
# clamped to the bound and its brokers share that total evenly.


@dataclass(frozen=True, slots=True)
class PlacementTargets:
    replicas: dict[int, tuple[int, int]]  # eligible broker -> [lo, hi] replica count
    byte_mean: dict[int, float]  # eligible broker -> bytes it should hold
    # eligible broker -> the mean its byte band is centred on (``byte_centres``): the cluster's mean, or
    # its capacity-weighted share of the bytes where the brokers' capacities differ
    byte_centre: dict[int, float]
    clamped_racks: tuple[str, ...]  # racks rack safety holds off the common level (empty: even targets)


def partition_rack_bounds(rf: int, rack_sizes: Mapping[str, int]) -> dict[str, tuple[int, int]]:
    """Fewest and most replicas of one partition of ``rf`` replicas each rack may hold when rack-safe."""
    nr = len(rack_sizes)
    cap = -(-rf // nr)
    caps = {g: min(cap, n) for g, n in rack_sizes.items()}
    room = sum(caps.values())
    if rf > room:
        raise ValueError(
            f"replication factor {rf} cannot be rack-safe: eligible brokers over {nr} rack(s) "
            f"({', '.join(f'{g}: {n}' for g, n in sorted(rack_sizes.items()))}) allow at most {room} replicas "
            f"per partition with at most {cap} per rack"
        )
    least = {g: max(1 if rf >= nr else 0, rf - (room - caps[g])) for g in rack_sizes}
    floor_sum = sum(least.values())
    return {g: (least[g], min(caps[g], rf - (floor_sum - least[g]))) for g in rack_sizes}


def _fill(floors: list[int], v: Fraction, weights: list[Fraction] | None = None) -> Fraction:
    """The level y with sum(max(y * w, f) for f, w in zip(floors, weights)) == v (for v >= sum(floors));
    every weight 1 when ``weights`` is None (the brokers are alike)."""
    if weights is None:
        fs = sorted(floors, reverse=True)
        for k in range(len(fs)):  # the k highest floors stay above the level, the rest sit at it
            y = (v - sum(fs[:k])) / (len(fs) - k)
            if y >= fs[k]:
                return y
        return Fraction(fs[-1])
    # Weighted: a broker sits at its floor while y * w is below it, so order by the level f / w at which
    # it joins; the same walk, each broker at y * w once y passes its own f / w.
    pairs = sorted(zip(floors, weights), key=lambda fw: Fraction(fw[0]) / fw[1], reverse=True)
    for k in range(len(pairs)):
        rest = sum((w for _, w in pairs[k:]), Fraction(0))
        y = (v - sum(f for f, _ in pairs[:k])) / rest
        if y * pairs[k][1] >= pairs[k][0]:
            return y
    f, w = pairs[-1]
    return Fraction(f) / w


def _levels(
    floors: dict[str, list[int]], lo: dict[str, int], hi: dict[str, int], total: int,
    weights: dict[str, list[Fraction]] | None = None,
) -> tuple[dict[str, Fraction], list[str]]:
    """Per-rack level: brokers sit at max(level x weight, their fixed load); one common level x, except that
    a rack whose total leaves [lo, hi] is clamped there. ``weights``: per rack, its brokers' weights in
    ``floors`` order (None: all 1)."""
    # Alike brokers (no weights) sum max(x, f) without multiplying by 1, and a rack with no fixed load at all is its
    # size times max(x, 0): the same exact sums, without a Fraction per broker (per topic, for the topic-spread bands
    # of 400 brokers and a thousand topics, that was seconds).
    bare = {g: weights is None and not any(fs) for g, fs in floors.items()}

    def rack_total(g: str, x: Fraction) -> Fraction:
        if bare[g]:
            raw = len(floors[g]) * max(x, Fraction(0))
        elif weights is None:
            raw = sum((max(x, Fraction(f)) for f in floors[g]), Fraction(0))
        else:
            raw = sum((max(x * w, Fraction(f)) for f, w in zip(floors[g], weights[g])), Fraction(0))
        return min(max(raw, Fraction(lo[g])), Fraction(hi[g]))

    def filled(x: Fraction) -> Fraction:
        return sum((rack_total(g, x) for g in floors), Fraction(0))

    def fill(g: str, v: Fraction) -> Fraction:
        return _fill(floors[g], v, None if weights is None else weights[g])

    if weights is None:
        points = {Fraction(f) for fs in floors.values() for f in set(fs)}
    else:
        points = {Fraction(f) / w for g, fs in floors.items() for f, w in zip(fs, weights[g])}
    for g, fs in floors.items():
        for v in (lo[g], hi[g]):
            if v >= sum(fs):
                points.add(fill(g, Fraction(v)))
    pts = sorted(points)
    x = pts[-1]
    if filled(pts[0]) >= total:
        x = pts[0]
    else:
        for a, b in zip(pts, pts[1:]):
            fb = filled(b)
            if fb >= total:
                fa = filled(a)
                x = a + (total - fa) * (b - a) / (fb - fa) if fb > fa else a
                break
    levels = {g: fill(g, rack_total(g, x)) for g in floors}
    all_w = None if weights is None else [w for g in floors for w in weights[g]]
    even = _fill([f for fs in floors.values() for f in fs], Fraction(total), all_w)  # the level without racks
    return levels, sorted(g for g in floors if levels[g] != even)


def placement_targets(
    eligible: Mapping[int, str | None],
    by_rf: Mapping[int, tuple[int, int]],
    fixed: Mapping[int, tuple[int, int]] | None = None,
    replica_tolerance: float = 0.0,
    weights: Mapping[int, int] | None = None,
) -> PlacementTargets:
    """Rack-aware per-broker targets.

    ``eligible``: broker id -> rack (None: no rack information); ``by_rf``: replication
    factor -> (partitions that may move, their total bytes); ``fixed``: eligible broker ->
    (replicas, bytes) of partitions that stay where they are. Raises ValueError when a
    replication factor cannot be rack-safe (or exceeds the eligible brokers).

    ``weights``: eligible broker -> its capacity (``capacity_weights``); each broker's share is then in
    proportion to it (None: the brokers are alike, every share equal).
    """
    fixed = fixed or {}
    racked = any(r is not None for r in eligible.values())
    rack_of = {b: (r if r is not None else "") if racked else "" for b, r in eligible.items()}
    sizes: dict[str, int] = {}
    count_floor: dict[str, list[int]] = {}
    byte_floor: dict[str, list[int]] = {}
    rack_weights: dict[str, list[Fraction]] | None = None if weights is None else {}
    for b, g in sorted(rack_of.items()):
        sizes[g] = sizes.get(g, 0) + 1
        if rack_weights is not None and weights is not None:
            rack_weights.setdefault(g, []).append(Fraction(weights[b]))
        n, size = fixed.get(b, (0, 0))
        count_floor.setdefault(g, []).append(n)
        byte_floor.setdefault(g, []).append(size)
    count_lo = {g: sum(v) for g, v in count_floor.items()}
    byte_lo = {g: sum(v) for g, v in byte_floor.items()}
    count_hi, byte_hi = dict(count_lo), dict(byte_lo)
    total, byte_total = sum(count_lo.values()), sum(byte_lo.values())
    for rf, (n, size) in sorted(by_rf.items()):
        if not racked and rf > len(eligible):
            raise ValueError(f"replication factor {rf} needs {rf} eligible brokers, only {len(eligible)} are live and not decommissioned")
        for g, (least, most) in partition_rack_bounds(rf, sizes).items():
            count_lo[g] += n * least
            count_hi[g] += n * most
            byte_lo[g] += size * least
            byte_hi[g] += size * most
        total += n * rf
        byte_total += size * rf
    level, clamped = _levels(count_floor, count_lo, count_hi, total, rack_weights)
    byte_level, _ = _levels(byte_floor, byte_lo, byte_hi, byte_total, rack_weights)
    # A broker's share follows from its rack, weight and fixed load alone: worked out once per such kind (Fraction
    # arithmetic per broker was most of the topic-spread bands' time at 400 brokers and a thousand topics).
    kinds: dict[tuple[str, int, tuple[int, int]], tuple[tuple[int, int], float]] = {}
    of = {}
    for b, g in rack_of.items():
        kind = (g, 1 if weights is None else weights[b], fixed.get(b, (0, 0)))
        if kind not in kinds:
            w, (n, size) = Fraction(kind[1]), kind[2]
            kinds[kind] = (share_range(max(level[g] * w, Fraction(n)), replica_tolerance),
                           float(max(byte_level[g] * w, Fraction(size))))  # fmt: skip
        of[b] = kinds[kind]
    return PlacementTargets(
        replicas={b: of[b][0] for b in sorted(rack_of)},
        byte_mean={b: of[b][1] for b in sorted(rack_of)},
        byte_centre=byte_centres(float(byte_total), sorted(rack_of), weights),
        clamped_racks=tuple(clamped),
    )


def byte_centres(total: float, brokers: Sequence[int], weights: Mapping[int, int] | None = None) -> dict[int, float]:
    """Per broker, the mean its byte band is centred on (``byte_band``): ``total`` shared evenly, or in
    proportion to ``weights`` (``capacity_weights``), where a broker of twice the disk is at its mean with
    twice the bytes. Forced shares (racks, unmovable load) play no part: they only widen the band."""
    if not brokers:
        return {}
    if weights is None:
        return {b: total / len(brokers) for b in brokers}
    whole = sum(weights[b] for b in brokers)
    return {b: total * weights[b] / whole for b in brokers}


def configured_disk(broker: Any) -> int | None:
    """The disk capacity an operator configured for ``broker`` (``--capacity``, clusters.yaml, the snapshot's
    ``capacity``), which is what targets are weighed by. Not the log dirs' reported volume sizes: dirs that share
    a volume each report the whole volume, so a broker with two dirs on one disk would read as twice the disk
    (the disk-capacity goal still limits each broker and dir by what Kafka reports)."""
    capacity = getattr(broker, "capacity", None)
    return capacity.disk_bytes if capacity is not None else None


def capacity_weights(capacity: Mapping[int, int | None]) -> dict[int, int] | None:
    """The weights ``placement_targets`` shares replicas and bytes by: each eligible broker's disk capacity,
    when every one is known and they are not all equal; else None (alike brokers, even shares, exactly
    as without capacities). A broker of unknown capacity among known ones gives no basis to weigh it."""
    values = list(capacity.values())
    if not values or any(v is None or v <= 0 for v in values) or len(set(values)) == 1:
        return None
    whole = {b: int(v) for b, v in capacity.items() if v is not None}
    g = math.gcd(*whole.values())  # smaller Fractions downstream, the same proportions
    return {b: v // g for b, v in whole.items()}


def rack_unsafe(racks: Sequence[int], n_racks: int) -> bool:
    """The rack-safety rule for one partition: its replicas' racks (one code per replica, negative for a
    broker without a rack) break it when one rack holds more than ceil(RF / racks), or the replicas span
    fewer than min(RF, racks) racks. ``n_racks`` counts the racks of the eligible brokers (0: no racks).

    The planner's veto (``ClusterState.rack_safe``) and the quality gate's projection ask this function;
    ``RackSafetyGoal.violations`` (planner/goals/placement.py) is its vectorised form over the planner's
    whole state, tested equal to it.
    """
    if n_racks <= 0:
        return False
    # Counted by hand: the planner's searches ask this for every candidate (a Counter took 2.4x as long).
    cap = -(-len(racks) // n_racks)
    per: dict[int, int] = {}
    for g in racks:
        count = per.get(g, 0) + 1
        if count > cap:
            return True
        per[g] = count
    return sum(1 for g in per if g >= 0) < min(len(racks), n_racks)


def rack_unsafe_rows(F: np.ndarray, racks: Sequence[int], n_racks: int) -> np.ndarray:
    """``rack_unsafe`` for every row of a padded replica matrix at once (-1: no replica), as a bool per row;
    ``racks[b]`` is broker index b's rack code. Tested equal to the per-partition rule."""
    if n_racks <= 0:
        return np.zeros(len(F), dtype=bool)
    # (any padding rack alike: every use below masks padding cells out with F >= 0)
    rack_arr = np.asarray(list(racks) + [-2], dtype=np.int64)  # index -1 (padding) -> rack -2
    RK = rack_arr[F]
    width = F.shape[1]
    mult = np.zeros(F.shape, dtype=np.int64)
    for i in range(width):
        for j in range(width):
            mult[:, i] += (RK[:, i] == RK[:, j]) & (F[:, j] >= 0)
    rf = (F >= 0).sum(axis=1)
    caps = -(-rf // max(n_racks, 1))
    # (F > 0 alike: a crowded rack holds two or more of the row's brokers, so one besides index 0 flags it)
    bad = ((mult > caps[:, None]) & (F >= 0)).any(axis=1)
    # Under-spread (RF above the rack count, e.g. 4 replicas as 2+2 over 3 racks): count distinct racks.
    first = np.ones(F.shape, dtype=bool)
    for i in range(width):
        for j in range(i):
            first[:, i] &= ~((RK[:, i] == RK[:, j]) & (F[:, j] >= 0))
    spans = (first & (F >= 0) & (RK >= 0)).sum(axis=1)
    bad |= spans < np.minimum(rf, n_racks)
    return bad


def leader_changes(before: Iterable[int], after: Iterable[int]) -> int:
    """Partitions whose leader after a plan (its moves and its preferred-leader elections) differs from
    their leader before it, pairwise in one partition order (-1: no leader). Each one makes every
    producer and consumer of the partition refresh its metadata and reconnect. The planner's summary,
    the benchmarks and the tests count them with this one function."""
    return sum(1 for b, a in zip(before, after, strict=True) if int(b) != int(a))
