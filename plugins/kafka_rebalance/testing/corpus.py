"""A cluster corpus that does not share the generator's habits (issue #31).

``kafka_rebalance.generate`` makes clusters the way a well-run fleet looks: racks handed out
round-robin, replicas on consecutive positions of the rack-interlaced broker list, broker ids
0..n-1, log-normal sizes, one replication factor. The planner's promises held on those and broke
on clusters it did not make. This module builds ``Snapshot`` objects directly, from its own
seeded ``numpy.random.Generator``, with none of that code:

* broker ids with gaps (``1001, 1004, 1009...``), racks of any sizes (4/4/3, 7/5, one broker
  alone in its rack) or none, with made-up rack names;
* replicas drawn by weight without replacement (skewed placement: some brokers far fuller,
  one broker with 3x the replicas of the others), most of them rack-aware but not all, so a
  cluster may start rack-unsafe, as drifted clusters do;
* heavy-tailed sizes (Pareto, alpha 1.1-1.5), a few partitions as big as a broker's share of
  the bytes, some empty partitions;
* replication factors 1..4 mixed per topic, hot topics with 10x the partitions of the others;
* a new empty broker, dead brokers (their replicas offline and out of the ISR; a partition
  with no live replica has no leader), a quarter of the brokers to decommission.

``MEMBERS`` names clusters from tiny to 400 brokers / 1M partitions: ``member(name)`` gives
``(snapshot, options)``, the options being ``PlanOptions`` keyword arguments (the brokers to
decommission). ``draw(seed, max_brokers=..., max_partitions=...)`` gives a random member for
property tests. Both are deterministic: the same name or seed gives the same snapshot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from kafka_rebalance.snapshot import Broker, Partition, Snapshot

MIB = 1 << 20
# One week of retention: a partition's produce rate is its size over this (so rates stay far
# below any throttle, and a partition's rate never stops it from moving).
RETENTION_SECONDS = 7 * 24 * 3600


@dataclass(frozen=True)
class Recipe:
    """What one corpus cluster is made of. Every feature combines with every other."""

    brokers: int  # existing brokers, including dead ones (the new empty ones come on top)
    partitions: int
    racks: tuple[int, ...] = ()  # rack sizes over the existing brokers (); () = no racks
    new_brokers: int = 0  # empty brokers, each put in the smallest rack
    rf: tuple[int, ...] = (3,)  # each topic's replication factor is drawn from these
    topics: int = 8
    hot_topics: int = 0  # topics with 10x the partitions of the others
    pareto_alpha: float | None = 1.3  # None: sizes spread log-normally (a mild tail)
    giants: int = 0  # partitions as big as one broker's share of the bytes
    empty_fraction: float = 0.03  # partitions holding no data
    skew: float = 0.0  # placement weights ~ exp(skew * normal): some brokers far fuller
    heavy_broker: bool = False  # one broker with about 3x the replicas of the others
    rack_unaware: float = 0.1  # fraction of partitions placed without regard to racks
    decommission: float = 0.0  # fraction of the existing live brokers to decommission
    dead: int = 0  # existing brokers that are dead
    not_preferred: float = 0.05  # fraction of partitions led by a follower
    out_of_sync: float = 0.01  # fraction of partitions with a live follower out of the ISR
    seed: int = 0

    @property
    def total_brokers(self) -> int:
        return self.brokers + self.new_brokers


class Member(NamedTuple):
    snapshot: Snapshot
    options: dict[str, Any]  # PlanOptions keyword arguments


@dataclass(frozen=True)
class Named:
    recipe: Recipe
    note: str

    @property
    def brokers(self) -> int:
        return self.recipe.total_brokers

    @property
    def partitions(self) -> int:
        return self.recipe.partitions


def _named(note: str, **recipe: Any) -> Named:
    return Named(Recipe(**recipe), note)


MEMBERS: dict[str, Named] = {
    # ---------------------------------------------------------------- tiny to small (the property test plans these)
    "tiny-3b-rf3": _named(brokers=3, partitions=24, rf=(3,), topics=3, racks=(1, 1, 1), seed=1,
                          note="3 brokers in 3 racks, every partition on all of them"),
    "no-racks-5b-rf-mixed": _named(brokers=5, partitions=90, rf=(1, 2, 3), topics=6, skew=1.0, seed=2,
                                   note="no racks, RF 1-3, skewed placement"),
    "uneven-4-4-3": _named(brokers=11, partitions=330, racks=(4, 4, 3), rf=(3,), topics=6, pareto_alpha=1.2, seed=3,
                           note="RF 3 over racks of 4, 4 and 3 brokers (the small rack's brokers must hold more)"),
    "uneven-7-5-newbroker": _named(brokers=12, partitions=240, racks=(7, 5), new_brokers=1, rf=(2, 3), topics=8,
                                   pareto_alpha=1.3, seed=4, note="racks of 7 and 5, a new empty broker in the small rack"),
    "one-broker-rack": _named(brokers=7, partitions=210, racks=(3, 3, 1), rf=(2, 3), topics=6, pareto_alpha=1.4,
                              seed=5, note="one broker alone in its rack: it must hold a replica of every RF 3 partition"),
    "one-broker-rack-rf4": _named(brokers=6, partitions=120, racks=(5, 1), rf=(4,), topics=4, pareto_alpha=1.4,
                                  seed=6, note="RF 4 over racks of 5 and 1: no placement is rack-safe"),
    "rf-mixed-3x-broker": _named(brokers=10, partitions=300, racks=(3, 3, 2, 2), rf=(1, 2, 3, 4), topics=10,
                                 heavy_broker=True, pareto_alpha=1.3, seed=7,
                                 note="RF 1, 2, 3 and 4 over 4 uneven racks, one broker with 3x the replicas"),
    "pareto-12b-433-decom25": _named(brokers=12, partitions=600, racks=(4, 4, 4), rf=(3,), topics=8, pareto_alpha=1.1,
                                     giants=2, decommission=0.25, skew=0.5, seed=8,
                                     note="Pareto 1.1 sizes, 2 partitions as big as a broker's share, 25 % decommissioned"),
    "hot-topics-40b": _named(brokers=40, partitions=2_000, racks=(14, 13, 13), rf=(2, 3), topics=20, hot_topics=3,
                             pareto_alpha=1.3, skew=0.8, seed=9, note="3 hot topics with 10x the partitions of the 17 others"),
    "dead-and-new-9b": _named(brokers=9, partitions=200, racks=(3, 3, 3), new_brokers=1, rf=(1, 2, 3), topics=6,
                              dead=1, pareto_alpha=1.5, seed=10,
                              note="a dead broker (RF 1 partitions on it have no leader) and a new one"),
    "giants-no-racks-8b": _named(brokers=8, partitions=160, rf=(2,), topics=4, pareto_alpha=1.2, giants=3, skew=1.5,
                                 seed=11, note="no racks, 3 giant partitions, strongly skewed placement"),
    "decom25-uneven-16b": _named(brokers=16, partitions=800, racks=(6, 6, 4), new_brokers=2, rf=(2, 3, 4), topics=12,
                                 hot_topics=1, decommission=0.25, heavy_broker=True, pareto_alpha=1.25, seed=12,
                                 note="every feature at once on 18 brokers"),
    # ---------------------------------------------------------------- medium and large (the benchmark plans these)
    "50b-20k-7-5": _named(brokers=48, partitions=20_000, racks=(28, 20), new_brokers=2, rf=(2, 3), topics=60,
                          hot_topics=4, pareto_alpha=1.2, giants=2, skew=0.7, seed=20,
                          note="racks of 28 and 20, 2 new brokers, Pareto 1.2"),
    "100b-50k-decom25": _named(brokers=100, partitions=50_000, racks=(34, 33, 33), rf=(3,), topics=120, hot_topics=6,
                               pareto_alpha=1.3, giants=4, decommission=0.25, skew=0.5, seed=21,
                               note="25 brokers to decommission out of 100"),
    "200b-200k-skewed-3r": _named(brokers=195, partitions=200_000, racks=(70, 65, 60), new_brokers=5, rf=(2, 3, 4),
                                  topics=400, hot_topics=20, pareto_alpha=1.3, giants=5, skew=1.0, heavy_broker=True,
                                  dead=2, seed=22, note="3 uneven racks, skewed placement, 2 dead and 5 new brokers"),
    "400b-1m": _named(brokers=390, partitions=1_000_000, racks=(100, 100, 100, 90), new_brokers=10, rf=(2, 3),
                      topics=1_000, hot_topics=40, pareto_alpha=1.4, giants=8, skew=0.5, seed=23,
                      note="400 brokers, a million partitions"),
}


def member(name: str) -> Member:
    """A named member: its snapshot and its planner options."""
    try:
        named = MEMBERS[name]
    except KeyError:
        raise KeyError(f"no corpus member {name!r}; members: {', '.join(MEMBERS)}") from None
    return build(named.recipe, name)


def small_members(max_brokers: int = 30, max_partitions: int = 1_000) -> list[str]:
    return [n for n, m in MEMBERS.items() if m.brokers <= max_brokers and m.partitions <= max_partitions]


# ---------------------------------------------------------------------------------------------------- random draws


def draw_recipe(seed: int, max_brokers: int = 30, max_partitions: int = 800, min_brokers: int = 3) -> Recipe:
    """A random combination of the corpus' features, always plannable: every replication factor fits
    the eligible brokers and can be rack-safe."""
    rng = np.random.default_rng([31, seed])
    total = int(rng.integers(min_brokers, max_brokers + 1))
    new = int(rng.integers(1, 3)) if total >= 5 and rng.random() < 0.3 else 0
    existing = total - new
    dead = 1 if existing >= 5 and rng.random() < 0.25 else 0
    shape = rng.choice(["none", "even", "uneven", "alone"])
    racks: tuple[int, ...] = ()
    if shape != "none" and existing >= 2:
        n_racks = int(rng.integers(2, min(existing, 5) + 1))
        if shape == "even":
            base = [existing // n_racks + (1 if i < existing % n_racks else 0) for i in range(n_racks)]
        elif shape == "alone" and existing >= 3:
            rest = _split(rng, existing - 1, max(1, n_racks - 1))
            base = [*rest, 1]
        else:
            base = _split(rng, existing, n_racks)
        racks = tuple(sorted(base, reverse=True))
    decommission = float(rng.choice([0.0, 0.0, 0.25]))
    rfs = tuple(sorted({int(x) for x in rng.choice([1, 2, 3, 4], size=int(rng.integers(1, 4)))}))
    partitions = int(rng.integers(max(4, existing), max_partitions + 1))
    topics = int(rng.integers(1, max(2, min(12, partitions // 4)) + 1))
    recipe = Recipe(
        brokers=existing, partitions=partitions, racks=racks, new_brokers=new, rf=rfs, topics=topics,
        hot_topics=int(rng.integers(0, 3)) if topics >= 4 else 0,
        pareto_alpha=None if rng.random() < 0.15 else round(float(rng.uniform(1.1, 1.5)), 2),
        giants=int(rng.integers(0, 3)), skew=float(rng.choice([0.0, 0.5, 1.0, 2.0])),
        heavy_broker=bool(rng.random() < 0.3), rack_unaware=float(rng.choice([0.0, 0.1, 0.5])),
        decommission=decommission, dead=dead, seed=seed,
    )
    return _plannable(recipe)


def draw(seed: int, max_brokers: int = 30, max_partitions: int = 800, min_brokers: int = 3) -> Member:
    """A random member for property tests (the same seed and limits give the same member)."""
    recipe = draw_recipe(seed, max_brokers, max_partitions, min_brokers)
    return build(recipe, f"draw-{seed}")


def _split(rng: np.random.Generator, n: int, parts: int) -> list[int]:
    """``n`` brokers over ``parts`` racks of random, uneven sizes (each at least 1)."""
    cuts = np.sort(rng.choice(np.arange(1, n), size=parts - 1, replace=False)) if parts > 1 else np.array([], int)
    return np.diff(np.concatenate(([0], cuts, [n]))).astype(int).tolist()


def _eligible_racks(recipe: Recipe) -> tuple[int, list[int]]:
    """The eligible brokers, and their count per rack, as ``build`` will choose them."""
    n_dec = _decommissioned_count(recipe)
    eligible = recipe.total_brokers - recipe.dead - n_dec
    if not recipe.racks:
        return eligible, []
    # build takes dead and decommissioned brokers from the largest racks first (see _roles)
    left = list(recipe.racks)  # existing brokers per rack: what _roles picks from
    sizes = list(recipe.racks)
    sizes[-1] += recipe.new_brokers
    for _ in range(recipe.dead + n_dec):
        g = int(np.argmax(left))
        left[g] -= 1
        sizes[g] -= 1
    return eligible, [s for s in sizes if s > 0]


def _decommissioned_count(recipe: Recipe) -> int:
    live_existing = recipe.brokers - recipe.dead
    return int(math.floor(recipe.decommission * live_existing + 0.5)) if recipe.decommission else 0


def _rack_room(rf: int, sizes: list[int]) -> int:
    """Most replicas of one partition a rack-safe placement over racks of these sizes holds."""
    if not sizes:
        return rf
    cap = -(-rf // len(sizes))
    return sum(min(cap, s) for s in sizes)


def _plannable(recipe: Recipe) -> Recipe:
    """Drop the replication factors no eligible brokers can hold (or hold rack-safely), the dead broker and
    the decommission when they leave too few."""
    for attempt in (recipe, replace(recipe, dead=0), replace(recipe, dead=0, decommission=0.0)):
        eligible, sizes = _eligible_racks(attempt)
        rfs = tuple(r for r in attempt.rf if r <= eligible and r <= attempt.brokers - attempt.dead
                    and _rack_room(r, sizes) >= r)
        if rfs and eligible >= 1:
            return replace(attempt, rf=rfs)
    return replace(recipe, dead=0, decommission=0.0, rf=(1,))


# ---------------------------------------------------------------------------------------------------- building


def _broker_ids(rng: np.random.Generator, n: int) -> np.ndarray:
    """Ids with gaps, from a random base: a fleet that grew and shrank, not 0..n-1."""
    base = int(rng.choice([0, 1, 100, 1000, 5000]))
    gaps = rng.choice([1, 1, 1, 2, 3, 7], size=n)
    return (base + np.cumsum(gaps)).astype(np.int64)


def _roles(rng: np.random.Generator, recipe: Recipe, rack_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which existing brokers are dead and which are to be decommissioned (indices), taken from the
    largest racks first so that every rack keeps eligible brokers as long as it can."""
    existing = recipe.brokers
    order = rng.permutation(existing)
    n_dec = _decommissioned_count(recipe)
    need = recipe.dead + n_dec
    if not recipe.racks:
        picked = order[:need]
    else:
        left = np.bincount(rack_of, minlength=len(recipe.racks)).astype(int)
        pools = {g: [int(b) for b in order if rack_of[b] == g and b < existing] for g in range(len(recipe.racks))}
        picked_list: list[int] = []
        for _ in range(need):
            g = int(np.argmax(left))
            picked_list.append(pools[g].pop(0))
            left[g] -= 1
        picked = np.asarray(picked_list, dtype=np.int64)
    return picked[: recipe.dead], picked[recipe.dead :]


def _topic_sizes(rng: np.random.Generator, recipe: Recipe) -> list[int]:
    """Partitions per topic: hot topics 10x the others, every topic at least one, summing to ``partitions``."""
    topics = max(1, min(recipe.topics, recipe.partitions))
    hot = min(recipe.hot_topics, topics - 1) if topics > 1 else 0
    weight = np.where(np.arange(topics) < hot, 10.0, 1.0) * rng.uniform(0.7, 1.3, size=topics)
    weight = weight[rng.permutation(topics)]
    counts = np.maximum(1, np.floor(weight / weight.sum() * recipe.partitions)).astype(np.int64)
    diff = recipe.partitions - int(counts.sum())
    i = 0
    while diff != 0:
        j = int(np.argmax(counts)) if diff < 0 else i % topics
        if diff < 0 and counts[j] <= 1:
            break
        counts[j] += 1 if diff > 0 else -1
        diff += -1 if diff > 0 else 1
        i += 1
    return counts.tolist()


def _sizes(rng: np.random.Generator, recipe: Recipe, n: int) -> np.ndarray:
    if recipe.pareto_alpha is not None:
        # Pareto (Lomax + 1) with a 4 MiB minimum: most partitions small, a few enormous.
        raw = (rng.pareto(recipe.pareto_alpha, size=n) + 1.0) * 4 * MIB
    else:
        raw = rng.lognormal(mean=math.log(64 * MIB), sigma=1.0, size=n)
    sizes = np.minimum(raw, 2.0**50).astype(np.int64)  # 1 PiB: no int64 overflow in any sum
    sizes[rng.random(n) < recipe.empty_fraction] = 0
    return sizes


def _place(rng: np.random.Generator, weights: np.ndarray, rf: np.ndarray, rack_of: np.ndarray | None,
           rack_aware: np.ndarray) -> np.ndarray:
    """Replica lists (padded with -1) drawn by weight without replacement: rows with a repeated broker
    are drawn again, and rack-aware rows also while a rack holds more than its share."""
    n, width = len(rf), int(rf.max()) if len(rf) else 1
    p = weights / weights.sum()
    out = np.full((n, width), -1, dtype=np.int64)
    cols = np.arange(width)[None, :]
    live = int((weights > 0).sum())
    n_racks = len(np.unique(rack_of[weights > 0])) if rack_of is not None else 0
    todo = np.arange(n)
    for attempt in range(60):
        if not len(todo):
            break
        rows = rng.choice(len(weights), size=(len(todo), width), p=p)
        rows = np.where(cols < rf[todo, None], rows, -1)
        srt = np.sort(rows, axis=1)
        dup = ((srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)).any(axis=1)
        bad = dup
        if rack_of is not None and n_racks:
            racks = np.where(rows >= 0, rack_of[np.maximum(rows, 0)], -1)
            cap = -(-rf[todo] // n_racks)
            worst = np.zeros(len(todo), dtype=np.int64)
            for g in range(int(rack_of.max()) + 1):
                worst = np.maximum(worst, (racks == g).sum(axis=1))
            # late attempts give up on rack safety (it may be impossible with these weights)
            bad = dup | (rack_aware[todo] & (worst > cap) & (attempt < 40))
        out[todo[~bad]] = rows[~bad]
        todo = todo[bad]
    for i in todo.tolist():  # what rejection did not place: a plain draw without replacement
        r = int(rf[i])
        k = min(r, live)
        out[i, :k] = rng.choice(len(weights), size=k, replace=False, p=p)
    return out


def build(recipe: Recipe, name: str) -> Member:
    """The snapshot a recipe describes, and its planner options."""
    rng = np.random.default_rng([3_1, recipe.seed, recipe.brokers, recipe.partitions])
    n_total = recipe.total_brokers
    ids = _broker_ids(rng, n_total)
    rack_names: list[str] = []
    rack_of: np.ndarray | None = None
    if recipe.racks:
        if sum(recipe.racks) != recipe.brokers:
            raise ValueError(f"{name}: racks {recipe.racks} do not add up to {recipe.brokers} brokers")
        zone = str(rng.choice(["eu-west-1", "us-east-2", "dc"]))
        rack_names = [f"{zone}{chr(ord('a') + g)}" for g in range(len(recipe.racks))]
        # existing brokers land in racks in a shuffled order (not round-robin); new ones in the smallest rack
        rack_of = np.concatenate([
            rng.permutation(np.repeat(np.arange(len(recipe.racks)), recipe.racks)),
            np.full(recipe.new_brokers, len(recipe.racks) - 1),
        ]).astype(np.int64)
    dead_idx, dec_idx = _roles(rng, recipe, rack_of[: recipe.brokers] if rack_of is not None else np.zeros(0, int))
    alive = np.ones(n_total, dtype=bool)
    alive[dead_idx] = False

    # Placement weights over the existing brokers (new ones get nothing).
    weights = np.exp(recipe.skew * rng.standard_normal(n_total)) if recipe.skew else np.ones(n_total)
    weights[recipe.brokers :] = 0.0
    if recipe.heavy_broker and recipe.brokers >= 4:
        candidates = [b for b in range(recipe.brokers) if alive[b] and b not in set(dec_idx.tolist())]
        heavy = int(rng.choice(candidates)) if candidates else 0
        others = np.delete(np.arange(recipe.brokers), heavy)
        weights[others] = np.minimum(weights[others], np.median(weights[others]))  # no other broker rivals it
        weights[heavy] = 4.0 * weights[others].mean()  # 4x the weight: about 3x the replicas, as no row holds it twice

    per_topic = _topic_sizes(rng, recipe)
    topic_rf = [int(rng.choice(recipe.rf)) for _ in per_topic]
    prefix = str(rng.choice(["orders", "clicks", "payments", "logs", "metrics", "events"]))
    topic_names = [f"{prefix}.{t:04d}-{str(rng.choice(['raw', 'v2', 'dlq', 'compacted', 'x']))}" for t in range(len(per_topic))]
    n = recipe.partitions
    topic_idx = np.repeat(np.arange(len(per_topic)), per_topic)
    part_no = np.concatenate([np.arange(c) for c in per_topic]) if per_topic else np.zeros(0, int)
    rf = np.asarray(topic_rf, dtype=np.int64)[topic_idx]
    rf = np.minimum(rf, int((weights > 0).sum()))
    rack_aware = rng.random(n) >= recipe.rack_unaware
    rows = _place(rng, weights, rf, rack_of, rack_aware)

    sizes = _sizes(rng, recipe, n)
    if recipe.giants:
        share = int((sizes * rf).sum() // max(1, n_total - len(dead_idx) - len(dec_idx)))
        for i in rng.choice(n, size=min(recipe.giants, n), replace=False).tolist():
            sizes[i] = share
    rates = np.round(sizes / RETENTION_SECONDS * rng.uniform(0.2, 1.5, size=n), 1)

    not_preferred = rng.random(n) < recipe.not_preferred
    out_of_sync = rng.random(n) < recipe.out_of_sync
    id_list = ids.tolist()
    alive_list = alive.tolist()
    partitions = []
    rows_l, rf_l, sizes_l, rates_l = rows.tolist(), rf.tolist(), sizes.tolist(), rates.tolist()
    np_l, oos_l, pick = not_preferred.tolist(), out_of_sync.tolist(), rng.integers(0, 1 << 30, size=n).tolist()
    for i in range(n):
        idx = rows_l[i][: rf_l[i]]
        replicas = tuple(id_list[b] for b in idx)
        live = [id_list[b] for b in idx if alive_list[b]]
        offline = tuple(id_list[b] for b in idx if not alive_list[b])
        if not live:
            leader, isr = -1, ()
        else:
            leader = live[pick[i] % len(live)] if np_l[i] and len(live) > 1 else live[0]
            isr_l = list(live)
            if oos_l[i] and len(isr_l) > 1:
                isr_l.remove(next(b for b in reversed(isr_l) if b != leader))
            isr = tuple(isr_l)
        partitions.append(Partition(topic_names[int(topic_idx[i])], int(part_no[i]), replicas, leader, isr,
                                    sizes_l[i], rates_l[i], offline))
    partitions.sort(key=lambda p: (p.topic, p.partition))
    brokers = tuple(
        Broker(id_list[b], rack_names[int(rack_of[b])] if rack_of is not None else None, alive_list[b])
        for b in range(n_total)
    )
    snapshot = Snapshot(cluster_id=name, brokers=brokers, partitions=tuple(partitions),
                        captured_at="2026-11-26T00:00:00Z")
    options: dict[str, Any] = {}
    if len(dec_idx):
        options["decommission_brokers"] = tuple(sorted(id_list[b] for b in dec_idx.tolist()))
    return Member(snapshot, options)
