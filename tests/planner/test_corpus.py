"""The planner's promises on clusters our generator did not make (issue #31).

Every small named member of ``kafka_rebalance.testing.corpus`` and random draws from it are
planned, and each plan is held to what the planner promises. The expected values are computed
here from the snapshot and the plan's final assignment (the snapshot's replicas with every
batch's steps applied in order), never by the planner's own helpers:

* eligible: every replica of a movable partition ends on a live broker not being decommissioned;
  a frozen partition (no leader, excluded topic) is left as it was;
* rack safety: at most ceil(RF / racks) replicas of a partition per rack, over min(RF, racks)
  racks, for every movable partition whose RF the eligible brokers' racks can hold that way;
* replica counts: ``summary.targets.replicas`` are the even level [floor, ceil] of the replicas
  per eligible broker wherever rack safety allows it, and ``replicas_reached`` is true exactly
  when every eligible broker's final count is within its range;
* bytes: ``byte_targets`` are the even share wherever rack safety allows it and add up to the
  bytes the eligible brokers hold, and ``bytes_reached`` is true exactly when every eligible
  broker ends within its band: ``byte_tolerance`` of the mean, or of half of it around its target
  where that target lies beyond the mean's band;
* bytes moved: ``bytes_moved`` is the sum of the sizes of the replicas new on their broker and at
  least the bytes that must leave ineligible brokers; ``replica_moves`` counts those new replicas;
* lower bounds: on a rack-safe plan, ``bytes_moved`` and ``replica_moves`` are at least
  ``lower_bounds``, and ``optimizer.bytes_bound`` lies between ``lower_bounds.bytes_moved`` and
  ``bytes_moved``;
* the summary's projected loads are the final assignment's;
* determinism: planning again gives the same summary, batches, elections and throttles.

A promise the planner does not keep on a member is marked xfail(strict=True) for that member and
promise alone, with the measured failure, so it is neither hidden nor allowed to pass silently.
"""

from __future__ import annotations

import ast
import math
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner import PlanOptions, make_plan
from kafka_rebalance.planner.core import Plan
from kafka_rebalance.snapshot import Snapshot, snapshot_from_dict
from kafka_rebalance.testing import corpus

Key = tuple[str, int]


# --------------------------------------------------------------------------------------------- the cluster, independently


class Cluster:
    """What the test knows of one planned member, computed from the snapshot and the plan alone."""

    def __init__(self, snapshot: Snapshot, options: dict[str, Any], plan: Plan) -> None:
        self.snapshot, self.options, self.plan, self.summary = snapshot, options, plan, plan.summary
        decommission = set(options.get("decommission_brokers", ()))
        excluded = set(options.get("exclude_topics", ()))
        self.rack = {b.id: b.rack for b in snapshot.brokers}
        self.eligible = sorted(b.id for b in snapshot.brokers if b.alive and b.id not in decommission)
        self.original: dict[Key, tuple[int, ...]] = {(p.topic, p.partition): tuple(p.replicas) for p in snapshot.partitions}
        self.size = {(p.topic, p.partition): p.size_bytes or 0 for p in snapshot.partitions}
        self.frozen = {(p.topic, p.partition) for p in snapshot.partitions if p.leader < 0 or p.topic in excluded}
        self.final = dict(self.original)
        self.chain_errors: list[str] = []
        for batch in plan.batches:
            for step in batch.steps:
                key = (step.topic, step.partition)
                if tuple(step.before) != self.final[key]:
                    self.chain_errors.append(f"{step.topic}-{step.partition}: step from {list(step.before)}, "
                                             f"but the partition is at {list(self.final[key])}")
                self.final[key] = tuple(step.after)
        self.counts = Counter(b for row in self.final.values() for b in row)
        self.bytes = Counter()
        for key, row in self.final.items():
            for b in row:
                self.bytes[b] += self.size[key]
        # racks of the eligible brokers (no racks: every broker's rack is None)
        self.rack_sizes = Counter(self.rack[b] for b in self.eligible if self.rack[b] is not None)
        self.movable = [k for k in self.original if k not in self.frozen]

    def rf_target(self, key: Key) -> int:
        rf = self.options.get("replication_factor")
        return len(self.original[key]) if rf is None or key in self.frozen else rf

    def rack_feasible(self, rf: int) -> bool:
        """Can ``rf`` replicas sit on the eligible brokers' racks, at most ceil(rf / racks) per rack?"""
        nr = len(self.rack_sizes)
        cap = -(-rf // nr)
        return sum(min(cap, n) for n in self.rack_sizes.values()) >= rf

    def rack_bounds(self, rf: int) -> dict[str, tuple[int, int]]:
        """Fewest and most replicas of one rack-safe partition of ``rf`` replicas each rack can hold."""
        nr = len(self.rack_sizes)
        cap = -(-rf // nr)
        most = {g: min(cap, n) for g, n in self.rack_sizes.items()}
        least = {g: max(1 if rf >= nr else 0, rf - (sum(most.values()) - most[g])) for g in most}
        return {g: (least[g], min(most[g], rf - (sum(least.values()) - least[g]))) for g in most}

    def even_levels_allowed(self, weight: Callable[[Key], int]) -> tuple[bool, dict[str, tuple[int, int]]]:
        """Does the even level (total / eligible brokers) fit every rack's rack-safety bounds, for a load
        where partition ``key`` counts ``weight(key)`` per replica? Also each rack's [fewest, most]."""
        bounds = {g: [0, 0] for g in self.rack_sizes}
        total = 0
        for key in self.movable:
            rf = self.rf_target(key)
            total += rf * weight(key)
            if self.rack_sizes:
                for g, (lo, hi) in self.rack_bounds(rf).items():
                    bounds[g][0] += lo * weight(key)
                    bounds[g][1] += hi * weight(key)
        level = total / len(self.eligible)
        fits = all(lo <= level * self.rack_sizes[g] + 1e-6 * max(1, lo) and level * self.rack_sizes[g] <= hi * (1 + 1e-9) + 1e-6
                   for g, (lo, hi) in bounds.items())
        return fits, {g: (lo, hi) for g, (lo, hi) in bounds.items()}

    def rack_unsafe(self) -> list[str]:
        """Movable partitions that end rack-unsafe although their RF can be rack-safe on the eligible racks."""
        if not self.rack_sizes:
            return []
        nr = len(self.rack_sizes)
        unsafe = []
        for key in self.movable:
            rf = self.rf_target(key)
            if not self.rack_feasible(rf):
                continue
            per = Counter(self.rack[b] for b in self.final[key])
            if max(per.values()) > -(-rf // nr) or len(per) < min(rf, nr):
                unsafe.append(f"{key[0]}-{key[1]} {list(self.final[key])} racks {dict(per)}")
        return unsafe

    def frozen_on_eligible(self) -> bool:
        eligible = set(self.eligible)
        return any(b in eligible for k in self.frozen for b in self.original[k])


# --------------------------------------------------------------------------------------------- the promises


def promise_eligible(c: Cluster) -> None:
    assert not c.chain_errors, f"{len(c.chain_errors)} steps do not start where the partition is: {c.chain_errors[:3]}"
    eligible = set(c.eligible)
    stranded = []
    for key, row in c.final.items():
        if key in c.frozen:
            assert row == c.original[key], f"frozen {key} changed: {c.original[key]} -> {row}"
            continue
        assert len(set(row)) == len(row) == c.rf_target(key), f"{key}: final replicas {row}"
        if not set(row) <= eligible:
            stranded.append(f"{key[0]}-{key[1]} on {sorted(set(row) - eligible)}")
    assert not stranded, f"{len(stranded)} partitions keep replicas on ineligible brokers, e.g. {stranded[:5]}"


def promise_rack_safety(c: Cluster) -> None:
    unsafe = c.rack_unsafe()
    assert not unsafe, f"{len(unsafe)} of {len(c.movable)} movable partitions end rack-unsafe, e.g. {unsafe[:3]}"


def promise_replica_counts(c: Cluster) -> None:
    targets = {int(b): tuple(r) for b, r in c.summary["targets"]["replicas"].items()}
    assert sorted(targets) == c.eligible, "replica targets name exactly the eligible brokers"
    # floor..ceil of a share, widened on each side by the whole replicas --replica-tolerance of it covers
    tol = c.plan.options.replica_tolerance
    assert all(0 <= lo <= hi for lo, hi in targets.values()), targets
    total = sum(c.counts[b] for b in c.eligible)
    assert sum(lo for lo, _ in targets.values()) <= total <= sum(hi for _, hi in targets.values())
    if not c.frozen_on_eligible():
        fits, bounds = c.even_levels_allowed(lambda _k: 1)
        clamped = c.summary["targets"]["clamped_racks"]
        assert bool(clamped) == (not fits), f"clamped_racks {clamped}, but the even level fits every rack: {fits}"
        if fits:
            level = total / len(c.eligible)
            widen = math.floor(level * tol + 1e-9)
            expected = (math.floor(level + 1e-9) - widen, math.ceil(level - 1e-9) + widen)
            off = {b: t for b, t in targets.items() if t != expected}
            assert not off, f"even level {level:.3f} -> {expected} allowed by every rack, but targets {off}"
        else:
            for g, (lo, hi) in bounds.items():
                members = [targets[b] for b in c.eligible if c.rack[b] == g]
                assert len(set(members)) == 1, f"rack {g}: brokers of one rack share one target, got {members}"
                assert len(members) * members[0][0] <= hi and len(members) * members[0][1] >= lo, (g, members[0], lo, hi)
    outside = {b: (c.counts[b], targets[b]) for b in c.eligible if not targets[b][0] <= c.counts[b] <= targets[b][1]}
    claim = c.summary["targets"]["replicas_reached"]
    assert claim == (not outside), f"replicas_reached says {claim}; brokers outside their range: {outside}"


def promise_byte_claim(c: Cluster) -> None:
    t = c.summary["targets"]
    targets = {int(b): float(v) for b, v in t["byte_targets"].items()}
    tol = t["byte_tolerance"]
    assert tol == c.plan.options.byte_tolerance
    below = t.get("byte_tolerance_below", tol)  # the lower side's own figure (--byte-tolerance-below), where given
    assert below == c.plan.options.byte_tolerance_low
    assert sorted(targets) == c.eligible
    held = sum(c.bytes[b] for b in c.eligible)
    assert math.isclose(sum(targets.values()), held, rel_tol=1e-9, abs_tol=len(targets)), (sum(targets.values()), held)
    if not c.frozen_on_eligible():
        fits, bounds = c.even_levels_allowed(lambda k: c.size[k])
        if fits:
            mean = held / len(c.eligible)
            off = {b: v for b, v in targets.items() if not math.isclose(v, mean, rel_tol=1e-9, abs_tol=0.1)}
            assert not off, f"even share {mean:,.1f} allowed by every rack, but targets {off}"
        else:
            for g, (lo, hi) in bounds.items():
                share = sum(targets[b] for b in c.eligible if c.rack[b] == g)
                assert lo * (1 - 1e-9) - 1 <= share <= hi * (1 + 1e-9) + 1, (g, share, lo, hi)
    # The band: the mean within the tolerance, widened on a side only where the broker's share, within
    # half the tolerance, lies beyond it (docs/PLANNER.md, "Byte band").
    mean = sum(targets.values()) / len(targets)
    band = {b: (min(mean * (1 - below), v * (1 - below / 2)), max(mean * (1 + tol), v * (1 + tol / 2))) for b, v in targets.items()}
    reported = {int(b): tuple(v) for b, v in t["byte_bands"].items()}
    assert all(abs(reported[b][i] - band[b][i]) <= 0.1 for b in band for i in (0, 1)), (reported, band)
    # margin > 0: outside the band by that many bytes
    margin = {b: max(c.bytes[b] - band[b][1], band[b][0] - c.bytes[b]) for b in c.eligible}
    worst = max(margin, key=lambda b: margin[b])
    claim = t["bytes_reached"]
    if claim:
        assert margin[worst] <= 1, f"bytes_reached, but broker {worst} holds {c.bytes[worst]:,} against {targets[worst]:,.1f}"
    else:
        outside = {b: f"{c.bytes[b]:,} vs {targets[b]:,.0f}" for b in c.eligible if margin[b] > -1}
        assert outside, "bytes_reached is false, but every eligible broker is within the tolerance"


def promise_bytes_moved(c: Cluster) -> None:
    s = c.summary
    new = {k: set(c.final[k]) - set(c.original[k]) for k in c.final}
    copied = sum(len(v) * c.size[k] for k, v in new.items())
    assert s["bytes_moved"] == copied, f"bytes_moved {s['bytes_moved']:,}, replicas new on their broker {copied:,}"
    assert s["replica_moves"] == sum(len(v) for v in new.values())
    if c.options.get("replication_factor") is None:
        eligible = set(c.eligible)
        leaving = sum(c.size[k] for k in c.movable for b in c.original[k] if b not in eligible)
        assert s["bytes_moved"] >= leaving, f"{leaving:,} bytes sit on ineligible brokers, only {s['bytes_moved']:,} copied"


def promise_lower_bounds(c: Cluster) -> None:
    """The bounds hold for every plan reaching what this plan reaches, rack safety included (their forced
    copies repair rack violations): a plan left rack-unsafe is outside them, and fails rack_safety instead."""
    if c.rack_unsafe():
        return
    s = c.summary
    assert s["bytes_moved"] >= s["lower_bounds"]["bytes_moved"], (s["bytes_moved"], s["lower_bounds"])
    assert s["replica_moves"] >= s["lower_bounds"]["replica_moves"], (s["replica_moves"], s["lower_bounds"])
    assert s["lower_bounds"]["bytes_moved"] <= s["optimizer"]["bytes_bound"] <= s["bytes_moved"], s["optimizer"]


def promise_projection(c: Cluster) -> None:
    projected = {r["broker_id"]: (r["replicas"], r["size_bytes"]) for r in c.summary["projected"]}
    actual = {b.id: (c.counts[b.id], c.bytes[b.id]) for b in c.snapshot.brokers}
    assert projected == actual


def promise_determinism(c: Cluster) -> None:
    again = make_plan(c.snapshot, PlanOptions(**c.options))
    # Under SciPy's HiGHS, 2 of 5 exact plans of pareto-12b-433-decom25 differed from the others; the
    # solver now runs on one thread with a fixed seed, bounded by nodes (planner/exact.py).
    first, second = c.summary, again.summary
    assert second == first
    assert [(b.kind, b.steps, b.seconds) for b in again.batches] == [(b.kind, b.steps, b.seconds) for b in c.plan.batches]
    assert again.elections == c.plan.elections
    assert again.throttles == c.plan.throttles


PROMISES: dict[str, Callable[[Cluster], None]] = {
    "eligible": promise_eligible,
    "rack_safety": promise_rack_safety,
    "replica_counts": promise_replica_counts,
    "byte_claim": promise_byte_claim,
    "bytes_moved": promise_bytes_moved,
    "lower_bounds": promise_lower_bounds,
    "projection": promise_projection,
    "determinism": promise_determinism,
}


# --------------------------------------------------------------------------------------------- named members


SMALL = corpus.small_members(max_brokers=40, max_partitions=2_000)
# Members the planner refuses, and the reason it gives.
REFUSED = {
    "one-broker-rack-rf4": "replication factor 4 cannot be rack-safe",
}
# (member, promise) -> the measured failure: promises the planner does not keep today.
# None today. hot-topics-40b ended with 2 of 2000 partitions rack-unsafe (events.0008-v2-27 and
# events.0009-v2-35) until the byte-trim pass stopped undoing rack repairs.
BROKEN: dict[tuple[str, str], str] = {}


@cache
def planned(name: str) -> Cluster:
    snapshot, options = corpus.member(name)
    return Cluster(snapshot, options, make_plan(snapshot, PlanOptions(**options)))


def _cases() -> list[Any]:
    cases = []
    for name in SMALL:
        if name in REFUSED:
            continue
        for promise in PROMISES:
            why = BROKEN.get((name, promise))
            marks = [pytest.mark.xfail(strict=True, reason=f"{name}: {why}")] if why else []
            cases.append(pytest.param(name, promise, marks=marks, id=f"{name}-{promise}"))
    return cases


@pytest.mark.parametrize(("name", "promise"), _cases())
def test_named_member_keeps_the_promise(name: str, promise: str) -> None:
    PROMISES[promise](planned(name))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_members_the_planner_refuses(name: str) -> None:
    """Kept honest: if the planner starts planning these, their promises join the table above."""
    snapshot, options = corpus.member(name)
    with pytest.raises(PlanError, match=REFUSED[name]):
        make_plan(snapshot, PlanOptions(**options))


# --------------------------------------------------------------------------------------------- random draws


# The draws are planned with the heuristic: under ``auto`` most of them would go to the exact model,
# 1-40 s each on this machine; the named members above cover ``auto`` and the exact plans.
DRAW_OPTIONS = {"optimizer": "heuristic"}
def planned_draw(seed: int) -> Cluster:
    snapshot, options = corpus.draw(seed, max_brokers=30, max_partitions=800)
    options = {**options, **DRAW_OPTIONS}
    return Cluster(snapshot, options, make_plan(snapshot, PlanOptions(**options)))


@pytest.mark.parametrize("seed", [14, 17, 61])
def test_a_looser_floor_keeps_every_promise(seed: int) -> None:
    """--byte-tolerance-below: the band's lower side on its own, read alike by the goals, the bounds and the summary."""
    snapshot, options = corpus.draw(seed, max_brokers=30, max_partitions=800)
    options = {**options, **DRAW_OPTIONS, "byte_tolerance_below": 0.3}
    c = Cluster(snapshot, options, make_plan(snapshot, PlanOptions(**options)))
    for promise in PROMISES.values():
        promise(c)


# No shrinking: a smaller seed is not a simpler cluster, and the failing seed is the whole
# reproduction (corpus.draw(seed, max_brokers=30, max_partitions=800)).
draws = settings(max_examples=15, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
                 suppress_health_check=[HealthCheck.too_slow])


@draws
@given(seed=st.integers(0, 2**31 - 1))
# Seeds 14, 17 and 748 ended with 14, 3 and 3 partitions rack-unsafe, unreported, until the byte-trim
# pass stopped undoing rack repairs; 61 then planned fewer bytes than its lower bound (the skipped repairs).
@example(seed=14)
@example(seed=17)
@example(seed=748)
@example(seed=61)
def test_random_members_keep_every_promise(seed: int) -> None:
    cluster = planned_draw(seed)
    for check in PROMISES.values():
        check(cluster)


# --------------------------------------------------------------------------------------------- the corpus itself


@pytest.mark.parametrize("name", SMALL)
def test_members_are_valid_deterministic_snapshots(name: str) -> None:
    snapshot, options = corpus.member(name)
    again, options_again = corpus.member(name)
    assert snapshot.fingerprint() == again.fingerprint() and options == options_again
    # the strict loader accepts what the corpus builds, and reads back the same cluster
    assert snapshot_from_dict(snapshot.to_dict()).fingerprint() == snapshot.fingerprint()


def test_draws_are_deterministic_and_within_their_limits() -> None:
    for seed in range(30):
        snapshot, options = corpus.draw(seed, max_brokers=12, max_partitions=300)
        assert 3 <= len(snapshot.brokers) <= 12 and len(snapshot.partitions) <= 300
        assert snapshot.fingerprint() == corpus.draw(seed, max_brokers=12, max_partitions=300).snapshot.fingerprint()
        assert set(options.get("decommission_brokers", ())) <= set(snapshot.broker_ids)


def test_members_have_the_features_their_names_promise() -> None:
    def replicas(snap: Snapshot) -> Counter[int]:
        return Counter(b for p in snap.partitions for b in p.replicas)

    snap, options = corpus.member("pareto-12b-433-decom25")
    assert len(options["decommission_brokers"]) == 3 == len(snap.brokers) // 4
    assert sorted(Counter(b.rack for b in snap.brokers).values()) == [4, 4, 4]
    sizes = sorted((p.size_bytes or 0 for p in snap.partitions), reverse=True)
    assert sizes[0] > 50 * sizes[len(sizes) // 2]  # a heavy tail
    snap, _ = corpus.member("uneven-7-5-newbroker")
    assert sorted(Counter(b.rack for b in snap.brokers).values()) == [6, 7]
    assert sum(1 for b in snap.broker_ids if replicas(snap)[b] == 0) == 1
    snap, _ = corpus.member("one-broker-rack")
    assert min(Counter(b.rack for b in snap.brokers).values()) == 1
    snap, _ = corpus.member("rf-mixed-3x-broker")
    assert {len(p.replicas) for p in snap.partitions} == {1, 2, 3, 4}
    counts = sorted(replicas(snap).values())
    assert counts[-1] >= 2.5 * sum(counts[:-1]) / len(counts[:-1])
    snap, _ = corpus.member("hot-topics-40b")
    per_topic = sorted(Counter(p.topic for p in snap.partitions).values())
    assert per_topic[-1] >= 7 * per_topic[len(per_topic) // 2]
    snap, _ = corpus.member("dead-and-new-9b")
    assert sum(not b.alive for b in snap.brokers) == 1 and any(p.leader < 0 for p in snap.partitions)
    snap, _ = corpus.member("no-racks-5b-rf-mixed")
    assert not snap.has_racks
    # broker ids are not 0..n-1
    assert any(corpus.member(n).snapshot.broker_ids != list(range(corpus.MEMBERS[n].brokers)) for n in SMALL)


def test_the_corpus_does_not_use_the_generator() -> None:
    source = Path(corpus.__file__).read_text(encoding="utf-8")
    imported = {n.module for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Import) for a in n.names}
    assert not any("generate" in (m or "") for m in imported), imported
