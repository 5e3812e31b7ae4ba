"""The topic-spread goal (planner/goals/topic_spread.py): each topic's replicas and first replicas within
floor..ceil of its share on every eligible broker. Clusters small enough to work out by hand; brokers
0..n-1 are their own indexes. Every expected figure below is computed in the comment beside it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kafka_rebalance.balance import count_bounds
from kafka_rebalance.generate import generate
from kafka_rebalance.options import PlanOptions
from kafka_rebalance.planner import make_plan, write_plan
from kafka_rebalance.planner.goals.preferred_leader import PreferredLeaderGoal
from kafka_rebalance.planner.goals.registry import selected
from kafka_rebalance.planner.goals.topic_spread import TopicSpreadGoal, replica_bands
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView, TopicLoad
from kafka_rebalance.planner.targets import set_targets
from kafka_rebalance.snapshot import Snapshot, load_snapshot
from kafka_rebalance.testing import corpus
from kafka_rebalance.validation import validate_plan
from tests.planner.test_plans_pass_the_gate import CASES, SAMPLE
from tests.support.clusters import GiB, MiB, drawn_cluster, part, planner_state, snapshot, state_before
from tests.support.plans import final_rows

WITH_SPREAD = ("replica-count", "bytes", "topic-spread", "preferred-leader", "leader-imbalance")
# Topic spread first: it moves before the count and byte goals touch a partition (which it then may not
# move again), and they keep its bands through its veto.
SPREAD_FIRST = ("topic-spread", "replica-count", "bytes", "preferred-leader", "leader-imbalance")


def spread(plan_summary: dict[str, Any]) -> dict[str, Any]:
    return next(g for g in plan_summary["goals"] if g["name"] == TopicSpreadGoal.name)


def view(brokers: list[int], topics: list[TopicLoad], racks: dict[int, str | None] | None = None) -> BalanceView:
    views = tuple(BrokerView(b, 0, 0, 0, 0.0, 0.0, 0.1, 0, 0, 0) for b in brokers)
    rack_of = racks or dict.fromkeys(brokers)
    return BalanceView(views, (), 0.1, 10.0, (0, 0), topics=tuple(topics),
                       racks=tuple((b, rack_of[b]) for b in brokers))


# ------------------------------------------------------------------------------------------- the band and the figure


def test_the_band_is_floor_to_ceil_of_the_even_share_without_racks() -> None:
    # 7 partitions of RF 2 over 4 brokers: 14 / 4 = 3.5 replicas each, so 3..4.
    assert replica_bands(((2, 7),), (), ((0, None), (1, None), (2, None), (3, None))) == {b: (3, 4) for b in range(4)}


def test_the_band_is_the_racks_share_where_rack_safety_forces_it() -> None:
    # RF 3 over racks a = {0, 1}, b = {2, 3}, c = {4}: rack safety puts one replica of each of the 4
    # partitions in every rack, so broker 4 holds all 4 of rack c's and the others 4 / 2 = 2 each.
    racks = ((0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c"))
    assert replica_bands(((3, 4),), (), racks) == {0: (2, 2), 1: (2, 2), 2: (2, 2), 3: (2, 2), 4: (4, 4)}


def test_replicas_no_plan_may_move_stay_in_the_share_of_the_broker_holding_them() -> None:
    # 2 movable partitions of RF 1 and 3 frozen replicas on broker 0, 2 brokers: 5 replicas, 2.5 each,
    # but broker 0 keeps its 3, so its share is 3 and broker 1's the remaining 2.
    assert replica_bands(((1, 2),), ((0, 3),), ((0, None), (1, None))) == {0: (3, 3), 1: (2, 2)}


def test_the_figure_sums_replicas_and_first_replicas_outside_their_bands() -> None:
    # Topic t: 10 partitions of RF 2 on 4 brokers, share 5 each (band 5..5). Broker 0 holds 7 (2 over),
    # broker 1 holds 3 (2 under). First replicas 10 / 4 = 2.5 (band 2..3): broker 0 first of 4 (1 over),
    # broker 1 of 1 (1 under). Per broker 3, 3, 0, 0; the figure 6.
    t = TopicLoad("t", ((2, 10),), (), ((0, 7), (1, 3), (2, 5), (3, 5)), ((0, 4), (1, 1), (2, 3), (3, 2)))
    check = TopicSpreadGoal().check(view([0, 1, 2, 3], [t]))
    assert (check.value, check.reached, check.offenders) == (6.0, False, (0, 1))
    assert check.per_broker == {0: 3.0, 1: 3.0, 2: 0.0, 3: 0.0}


def _drawn_pairs(rng: np.random.Generator, brokers: list[int], hi: int) -> tuple[tuple[int, int], ...]:
    """(broker, count) for the brokers drawn a count of 1..hi - 1 (the others hold none)."""
    return tuple((b, int(x)) for b in brokers if (x := rng.integers(hi)) > 0)


def test_the_figure_on_drawn_views_is_the_bands_read_plainly() -> None:
    # Views drawn at random (racks or none, fixed replicas, brokers holding none of a topic): per broker, each topic's
    # replicas outside replica_bands plus its first replicas outside floor..ceil of them over the brokers, counted
    # one by one.
    rng = np.random.default_rng(3)
    for case in range(40):
        brokers = sorted(rng.choice(40, size=int(rng.integers(2, 9)), replace=False).tolist())
        racks = {b: (None if case % 2 else f"r{int(rng.integers(3))}") for b in brokers}
        topics = []
        for k in range(int(rng.integers(1, 6))):
            rf, n = int(rng.integers(1, 4)), int(rng.integers(1, 12))
            fixed, held, first = (_drawn_pairs(rng, brokers, hi) for hi in (2, 2 * n, n))
            topics.append(TopicLoad(f"t{k}", ((rf, n),), fixed if k % 2 else (), held, first))
        check = TopicSpreadGoal().check(view(brokers, topics, racks))
        want = dict.fromkeys(brokers, 0)
        for load in topics:
            bands = replica_bands(load.by_rf, load.fixed, tuple(racks.items()))
            lead = count_bounds(sum(x for _, x in load.preferred), len(brokers))
            for b in brokers:
                held, first = dict(load.replicas).get(b, 0), dict(load.preferred).get(b, 0)
                want[b] += max(0, bands[b][0] - held, held - bands[b][1]) + max(0, lead[0] - first, first - lead[1])
        assert check.per_broker == {b: float(x) for b, x in want.items()}, case
        assert (check.value, check.offenders) == (float(sum(want.values())), tuple(b for b in brokers if want[b]))


def test_a_spread_topic_reaches_the_goal() -> None:
    # 4 partitions of RF 1 on 2 brokers, 2 each and first replica of 2 each: inside 2..2 everywhere.
    t = TopicLoad("t", ((1, 4),), (), ((0, 2), (1, 2)), ((0, 2), (1, 2)))
    check = TopicSpreadGoal().check(view([0, 1], [t]))
    assert (check.value, check.reached, check.offenders) == (0.0, True, ())


def test_the_goal_is_opt_in() -> None:
    assert TopicSpreadGoal.name not in selected(())
    assert TopicSpreadGoal.name in selected(WITH_SPREAD)


# ------------------------------------------------------------------------------------------- the veto


def test_the_veto_keeps_later_moves_inside_every_topics_band() -> None:
    # Topic a: 4 partitions of RF 1, 2 on broker 0 and 2 on broker 1 (band 2..2 each); broker 2 is new.
    # 4 replicas over 3 brokers: share 4/3, band 1..2. Broker 0 may give one of a (2 -> 1 >= 1) to
    # broker 2 (0 -> 1 <= 2); after two such moves broker 0 would sit at 0 < 1: refused.
    s = planner_state([0, 1, 2], [part("a", i, [i // 2]) for i in range(4)], targets=True, goals=WITH_SPREAD)
    goal = TopicSpreadGoal()
    assert goal.accept_move(s, 0, 0, 2)
    s.move(0, 0, 2)
    assert not goal.accept_move(s, 1, 0, 2)  # broker 0 would drop to 0 of topic a, below 1
    assert goal.accept_move(s, 2, 1, 2)      # broker 1 from 2 to 1, broker 2 from 1 to 2: both inside 1..2
    s.move(2, 1, 2)
    assert not goal.accept_move(s, 3, 1, 2)  # broker 2 would hold 3 of a, above 2


# ------------------------------------------------------------------------------------------- the heuristic and the model


def segregated() -> Snapshot:
    """Topic a (8 partitions of RF 1, 1 GiB each) all on brokers 0 and 1, topic b likewise on 2 and 3.
    Counts (4 each) and bytes (4 GiB each) are even already; each topic's share is 8 / 4 = 2 per broker.
    Figure before: a is 2 over on 0 and 1 and 2 under on 2 and 3 (8), b the mirror (8), and first replicas
    the same again (RF 1): 32. Each broker must receive 2 replicas of the other topic: at least 8 moves."""
    parts = [part("a", i, [i % 2]) for i in range(8)] + [part("b", i, [2 + i % 2]) for i in range(8)]
    return snapshot([0, 1, 2, 3], parts)


@pytest.mark.parametrize("optimizer", ["heuristic", "exact"])
def test_a_segregated_cluster_is_spread_with_the_fewest_moves(optimizer: str) -> None:
    plan = make_plan(segregated(), PlanOptions(goals=WITH_SPREAD, optimizer=optimizer))
    s = plan.summary
    entry = spread(s)
    assert entry["before"]["value"] == 32 and entry["after"] == {"value": 0.0, "reached": True, "offenders": []}
    assert s["replica_moves"] == 8 and s["bytes_moved"] == 8 * GiB
    rows = final_rows(plan)
    for b in range(4):
        for topic in "ab":
            assert sum(b in r for (t, _), r in rows.items() if t == topic) == 2


def test_without_the_goal_the_segregated_cluster_stays_as_it_is() -> None:
    s = make_plan(segregated(), PlanOptions(optimizer="heuristic")).summary
    assert s["replica_moves"] == 0 and TopicSpreadGoal.name not in [g["name"] for g in s["goals"]]


def test_the_smallest_replicas_of_the_topic_move() -> None:
    # Topic a: a0 (10 MiB) and a1 (1 MiB) on broker 0; topic b: b0 (10 MiB) and b1 (1 MiB) on broker 1.
    # Counts 2 / 2 and bytes 11 / 11 MiB are even; each topic's band is 1..1 per broker. The cheapest fix
    # swaps the two 1 MiB replicas: 2 moves, 2 MiB (the 10 MiB pair would cost 20 MiB).
    parts = [part("a", 0, [0], size_bytes=10 * MiB), part("a", 1, [0], size_bytes=MiB),
             part("b", 0, [1], size_bytes=10 * MiB), part("b", 1, [1], size_bytes=MiB)]
    for optimizer in ("heuristic", "exact"):
        plan = make_plan(snapshot([0, 1], parts), PlanOptions(goals=WITH_SPREAD, optimizer=optimizer))
        assert (plan.summary["replica_moves"], plan.summary["bytes_moved"]) == (2, 2 * MiB), optimizer
        assert final_rows(plan)[("a", 1)] == (1,) and final_rows(plan)[("b", 1)] == (0,)
        assert spread(plan.summary)["after"]["value"] == 0


def test_first_replicas_spread_by_reordering_without_moves() -> None:
    # Topic t: 4 partitions of RF 2, every one on brokers 0 and 1 (share 8 / 2 = 4 each: inside), all led
    # by and first on broker 0: first replicas 4 / 0 against 2..2, figure 2 + 2 = 4. Two partitions get
    # broker 1 first: a reorder each, no data moves, figure 0.
    parts = [part("t", i, [0, 1]) for i in range(4)]
    plan = make_plan(snapshot([0, 1], parts), PlanOptions(goals=WITH_SPREAD, optimizer="heuristic"))
    s = plan.summary
    assert spread(s)["before"]["value"] == 4 and spread(s)["after"]["value"] == 0
    assert s["replica_moves"] == 0 and s["reorders"] == 2
    assert sorted(r[0] for r in final_rows(plan).values()) == [0, 0, 1, 1]


def test_the_same_snapshot_and_options_give_the_same_plan() -> None:
    snap, options = corpus.member("uneven-4-4-3")
    opts = PlanOptions(**options, goals=WITH_SPREAD, optimizer="heuristic")
    one, two = make_plan(snap, opts), make_plan(snap, opts)
    assert one.summary == two.summary and final_rows(one) == final_rows(two)


def test_its_exact_rows_hold_the_solver_to_the_bands() -> None:
    s = planner_state([0, 1, 2, 3], [part("a", i, [i % 2]) for i in range(8)] + [part("b", i, [2 + i % 2]) for i in range(8)],
                      goals=WITH_SPREAD)
    set_targets(s)
    from kafka_rebalance.planner.exact import ExactModel

    model = ExactModel(s, 0.0)
    before = model.n_rows
    TopicSpreadGoal().exact_terms(model)
    # one row per topic and eligible broker: 2 topics x 4 brokers, each 2 <= x <= 2 (no fixed replicas)
    assert model.n_rows - before == 8
    assert model._lo[-1].tolist() == [2.0] * 8 and model._hi[-1].tolist() == [2.0] * 8


# ------------------------------------------------------------------------------------------- a property over corpus draws


def reachable(seed: int) -> tuple[Snapshot, int]:
    """A corpus draw made provably spreadable: its brokers (all alive, no racks) and its topics, each cut to a
    multiple of the broker count n of partitions of one RF, every partition 1 MiB. Partition i of a topic
    sits on brokers i, i+1, ..., i+RF-1 (mod n): every broker holds exactly RF x partitions / n of the
    topic's replicas and partitions / n of its first replicas, so every count and byte total is even.
    Then each partition whose draw placed it elsewhere has one replica moved to the draw's broker (the
    draw's skew: its heavy brokers, its crowded racks): putting those back moves each partition once and
    reaches every band, so a plan moving no partition twice brings the goal's figure to 0."""
    snap, _ = corpus.draw(seed, max_brokers=12, max_partitions=240)
    ids = [b.id for b in snap.brokers]
    n = len(ids)
    by_topic: dict[str, list[Any]] = {}
    for p in snap.partitions:
        by_topic.setdefault(p.topic, []).append(p)
    parts = []
    for topic, ps in sorted(by_topic.items()):
        rf = min(len(ps[0].replicas), n)
        for i in range(max(n, len(ps) // n * n)):
            row = [ids[(i + k) % n] for k in range(rf)]
            skew = next((b for b in ps[i % len(ps)].replicas if b not in row), None)
            if skew is not None:
                row[i % rf] = skew
            parts.append(part(topic, i, row, size_bytes=MiB))
    return snapshot(ids, parts, cluster_id=f"spreadable-{seed}"), n


@settings(max_examples=4, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(seed=st.integers(0, 2**31 - 1))
def test_where_a_spread_plan_provably_exists_the_goal_reaches_it(seed: int) -> None:
    snap, _ = reachable(seed)
    plan = make_plan(snap, PlanOptions(goals=SPREAD_FIRST, optimizer="heuristic"))
    entry = spread(plan.summary)
    assert entry["after"]["value"] == 0, (seed, entry)
    # and the goals after it still reach theirs: the even assignment meets every one
    assert all(g["reached"] for g in plan.summary["goals"]), (seed, plan.summary["goals"])
    # No partition moves twice: one step per changed partition, one new replica in it at most per step.
    moved = [s for b in plan.batches for s in b.steps if s.adds]
    assert len({s.p for s in moved}) == len(moved)


# ------------------------------------------------------------------------------------------- real plans pass the gate


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spread-gate")


@pytest.mark.slow  # a whole plan through the GX quality gate: seconds each
@pytest.mark.parametrize(("name", "goals"), [
    # a dead broker, a decommission and an excluded topic; spread first (it once tripped the byte goal's
    # index over a replica this goal had sent back where it came from)
    ("9b-2r-rf2-dead-decommission-exclude", SPREAD_FIRST),
    ("6b-2r-rf2-rf3", WITH_SPREAD),  # the replication factor raised from 2 to 3
])
def test_plans_with_the_goal_pass_the_gate(sweep: Path, name: str, goals: tuple[str, ...]) -> None:
    _, cluster, options = next(c for c in CASES if c[0] == name)
    path = SAMPLE if cluster is None else generate(cluster, sweep / f"{name}.json")
    plan = make_plan(load_snapshot(path), PlanOptions(**options, goals=goals))
    write_plan(plan, sweep / name, str(path))
    outcome = validate_plan(sweep / name, path)
    assert outcome.status == "passed", outcome.report()
    entry = spread(plan.summary)
    assert entry["after"]["value"] <= entry["before"]["value"] and plan.summary["replica_moves"] > 0


# ------------------------------------------------------------------------------------------- first replicas, per topic


def spread_leaders(partitions: list[dict[str, Any]], brokers: int, bounds: tuple[int, int] | None = None) -> tuple[list[int], list[int]]:
    """(each partition's first replica, its slot) after the topic spread's hand-over of first replicas, from
    the rows as they are (the preferred-leader goal's first step only), under the preferred-leader goal's
    bounds or ``bounds`` set by hand."""
    s = planner_state(list(range(brokers)), partitions)
    leaders = PreferredLeaderGoal(balance=False)
    leaders.optimize(s)
    choice = leaders.choice() if bounds is None else replace(leaders.choice(), bounds=bounds)
    TopicSpreadGoal().lead(s, choice)
    return choice.preferred.tolist(), choice.column.tolist()


def test_a_topics_first_replicas_go_first_where_the_leader_is_already() -> None:
    # t: four partitions on 0 and 1, all first on 0 (4 / 0 against a band of 2..2). 1 leads t-2 already: it
    # becomes t-2's first replica with no election; then t-0, the first in order, makes 2 / 2.
    parts = [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("t", 2, [0, 1], leader=1), part("t", 3, [0, 1])]
    assert spread_leaders(parts, 2) == ([1, 0, 1, 0], [1, 0, 1, 0])


def test_where_a_hand_over_would_break_the_brokers_bounds_a_partition_of_another_topic_goes_back() -> None:
    # t-0, t-1 first on 0 (band 1..1: 2 / 0); u-0, u-1 first on 1 and u-2 on 0 (band 1..2: 1 / 2, inside).
    # Spread freely, t-0 goes to 1: 2 / 3 first replicas, outside the bounds of 2..2 set here. So it starts
    # again within them: t-0 goes 0 -> 1 and u-0 (first on 1, which 0 can lead, u keeps 1..2) 1 -> 0: 3 / 2
    # stays as it was.
    parts = [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("u", 0, [1, 0]), part("u", 1, [1, 0]), part("u", 2, [0, 1])]
    assert spread_leaders(parts, 2, bounds=(2, 2)) == ([1, 0, 0, 1, 0], [1, 0, 1, 0, 0])
    # Left free (bounds 0..5), the first spread is kept: t-0 to 1, u as it was.
    assert spread_leaders(parts, 2, bounds=(0, 5)) == ([1, 0, 1, 1, 0], [1, 0, 0, 0, 0])


def test_a_topics_first_replicas_move_along_a_chain_where_no_partition_links_its_ends() -> None:
    # t over 3 brokers, band 1..1: t-0 and t-1 first on 0 ([0, 1]), t-2 first on 1 ([1, 2]); 2 has none. No
    # partition of t has 0 and 2: t-2 goes 1 -> 2, then t-0 0 -> 1.
    parts = [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("t", 2, [1, 2])]
    assert spread_leaders(parts, 3) == ([1, 0, 2], [1, 0, 1])


def test_with_nobody_below_the_floor_a_chain_starts_at_a_broker_above_the_ceil() -> None:
    # t over 4 brokers, 7 first replicas: band 1..2. Counts 3 / 2 / 1 / 1: nobody below 1, 0 above 2. 0's
    # partitions (t-0..2) link only to 1, at the ceil: t-3 goes 1 -> 2, then t-0 0 -> 1 (each the first listed).
    parts = [part("t", i, [0, 1]) for i in range(3)] + [part("t", i, [1, 2]) for i in (3, 4)]
    parts += [part("t", 5, [2, 3]), part("t", 6, [3, 0])]
    assert spread_leaders(parts, 4) == ([1, 0, 0, 2, 1, 2, 3], [1, 0, 0, 1, 0, 0, 0])


def test_the_veto_follows_the_plans_moves_and_binds_an_eligible_sender_only() -> None:
    from tests.support.clusters import planner_state

    # t: four partitions, t-0..t-2 on broker 0 and t-3 on broker 3, which leaves: 4 over brokers 0..2, a band of 1..2.
    s = planner_state([0, 1, 2, 3], [part("t", 0, [0]), part("t", 1, [0]), part("t", 2, [0]), part("t", 3, [3])],
                      decommission_brokers=(3,))
    goal = TopicSpreadGoal()
    assert goal.accept_move(s, 0, 0, 1)  # 0: 3 -> 2, 1: 0 -> 1
    s.move(0, 0, 1)
    assert goal.accept_move(s, 3, 3, 1)  # a leaving broker may fall below any band
    s.move(3, 3, 1)
    assert not goal.accept_move(s, 1, 0, 1)  # 1 holds 2, its ceiling
    assert goal.accept_move(s, 1, 0, 2)
    s.move(1, 0, 2)
    assert not goal.accept_move(s, 2, 0, 2)  # 0 would fall to 0, below its floor (2 could take it)


# ------------------------------------------------------------------------------------------- tallies and bands, by hand


def test_an_empty_cluster_has_no_bands() -> None:
    from kafka_rebalance.planner.goals.topic_spread import band_matrices

    lo, hi = band_matrices(planner_state([0, 1], []))
    assert lo.shape == hi.shape == (0, 2)


def test_on_an_empty_cluster_the_heuristic_has_nothing_to_do() -> None:
    s = planner_state([0, 1], [])
    TopicSpreadGoal().optimize(s)
    assert s.changes == []


def test_each_topics_loads_are_its_name_replication_factors_replicas_and_first_replicas() -> None:
    from kafka_rebalance.planner.goals.topic_spread import topic_loads

    # a: two partitions of RF 2 ([0, 1], [1, 2]); b: one of RF 1 on 2 (a lower RF than the widest, last in order).
    s = planner_state([0, 1, 2], [part("a", 0, [0, 1]), part("a", 1, [1, 2]), part("b", 0, [2])])
    assert topic_loads(s, s.R, s.R[:, 0].astype("int64")) == (
        TopicLoad("a", ((2, 2),), (), ((0, 1), (1, 2), (2, 1)), ((0, 1), (1, 1))),
        TopicLoad("b", ((1, 1),), (), ((2, 1),), ((2, 1),)),
    )


def test_the_goals_bands_are_the_racks_share_where_rack_safety_forces_it() -> None:
    from kafka_rebalance.planner.goals.topic_spread import band_matrices

    # As in the rack test above, read from a cluster: 4 partitions of RF 3 over racks a = {0, 1}, b = {2, 3},
    # c = {4}: broker 4 holds all 4 of rack c's, the others 2 each.
    s = planner_state([(0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c")], [part("t", i, [i % 2, 2 + i % 2, 4]) for i in range(4)])
    lo, hi = band_matrices(s)
    assert lo.tolist() == hi.tolist() == [[2, 2, 2, 2, 4]]


def test_its_exact_rows_leave_out_the_replicas_no_plan_may_move() -> None:
    from kafka_rebalance.planner.exact import ExactModel

    # As in the test above, with a leaderless a-8 on broker 0 (frozen): a has 9 replicas over 4 brokers, band
    # 2..3; the model holds broker 0 to 2 - 1 .. 3 - 1 of a's movable replicas. b: 8 over 4, 2..2.
    s = planner_state([0, 1, 2, 3], [part("a", i, [i % 2]) for i in range(8)] + [part("a", 8, [0], leader=-1)]
                      + [part("b", i, [2 + i % 2]) for i in range(8)], goals=WITH_SPREAD)  # fmt: skip
    set_targets(s)
    model = ExactModel(s, 0.0)
    TopicSpreadGoal().exact_terms(model)
    assert model._lo[-1].tolist() == [1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]
    assert model._hi[-1].tolist() == [2.0, 3.0, 3.0, 3.0, 2.0, 2.0, 2.0, 2.0]


# ------------------------------------------------------------------------------------------- which replica goes where


def spread_rows(counts: list[int], **options: Any) -> dict[int, list[int]]:
    """Topic t of RF 1, ``counts[b]`` partitions on broker b, sizes 1, 2, ... MiB in broker order (so each broker's
    smallest comes first); the goal's heuristic run alone (no other goal vetoes). Returns the partitions it moved:
    index -> row."""
    parts, k = [], 0
    for b, n in enumerate(counts):
        for _ in range(n):
            parts.append(part("t", k, [b], size_bytes=(k + 1) * MiB))
            k += 1
    s = planner_state(list(range(len(counts))), parts, targets=True, **options)
    TopicSpreadGoal().optimize(s)
    return {p: s.row(p) for p in range(s.n_parts) if s.row(p) != s.original_row(p)}


def test_with_nobody_over_its_band_a_broker_under_it_takes_from_one_above_its_floor() -> None:
    # 5 over 4 brokers: band 1..2. Counts 2, 2, 1, 0: nobody over; 3 under. Donors above the floor (0 and 1, by id):
    # t-0, 0's smallest, goes to 3 (not to 2, at its floor already).
    assert spread_rows([2, 2, 1, 0]) == {0: [3]}


def test_a_broker_one_over_its_band_gives_to_one_with_room_when_nobody_is_under() -> None:
    # 5 over 3 brokers: band 1..2. Counts 3, 1, 1: 0 is 1 over, nobody under; 1 and 2 have room: t-0 to 1.
    assert spread_rows([3, 1, 1]) == {0: [1]}


def test_the_most_over_gives_first_to_the_most_under() -> None:
    # 8 over 4 brokers: band 2..2. Counts 4, 3, 1, 0 (t-0..3 on 0, t-4..6 on 1, t-7 on 2). 0 (2 over) gives its
    # smallest, t-0, to 3 (2 under); then 0 and 1 are 1 over, 2 and 3 1 under: 0 (by id) gives t-1 to 2 (by id);
    # then 1 gives t-4 to 3.
    assert spread_rows([4, 3, 1, 0]) == {0: [3], 1: [2], 4: [3]}


def test_the_spread_keeps_the_byte_band_where_the_bytes_goal_ran_before_it() -> None:
    from kafka_rebalance.planner.goals.base import Goal
    from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal

    class BytesRan(Goal):  # the bytes goal optimised earlier: its band holds (ByteGuard), and it vetoes nothing here
        name = ByteBalanceGoal.name

    # t (RF 1, 1 MiB each): t-0..2 on 0, t-3 on 1, t-4 on 2: band 1..2, 0 is 1 over. x (one 1-replica partition per
    # broker, band 1..1, inside) fills the bytes: 0 holds 110 GiB - 0.5 MiB, 1 125 GiB, 2 65 GiB + 0.5 MiB (mean 100,
    # byte band 90..110 GiB). t-0 to 1 (first by id) would take 1 further above the band: refused. To 2 (below,
    # coming nearer) it goes, 0 ending 1.5 MiB under its top.
    loads = [110 * GiB - MiB // 2, 125 * GiB, 65 * GiB + MiB // 2]
    held = [3, 1, 1]
    parts = [part("t", k, [b], size_bytes=MiB) for k, b in enumerate([0, 0, 0, 1, 2])]
    parts += [part("x", b, [b], size_bytes=loads[b] - held[b] * MiB) for b in range(3)]
    s = planner_state([0, 1, 2], parts, targets=True)
    s.vetoes = [BytesRan()]
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(5)] == [[2], [0], [0], [1], [2]]
    assert s.bytes.tolist() == [110 * GiB - 3 * MiB // 2, 125 * GiB, 65 * GiB + 3 * MiB // 2]


def test_a_broker_with_no_first_replica_is_counted_in_the_bounds_check() -> None:
    # Broker 2 holds nothing: t's two first replicas over 3 brokers, band 0..1. t-0, the first in order, goes to 1
    # (1 / 1 / 0, within the preferred-leader goal's bounds of 0..1 too: kept).
    assert spread_leaders([part("t", 0, [0, 1]), part("t", 1, [0, 1])], 3) == ([1, 0], [1, 0])


def _refusing(parts: set[int] = frozenset(), moves: set[tuple[int, int]] = frozenset(), counts: bool = False) -> Any:
    """A goal optimised earlier that refuses moves of the partitions ``parts``, moves src -> dst in ``moves``, and,
    as a count goal (``counts``), every move (a count-neutral swap does not ask it)."""
    from kafka_rebalance.planner.goals.base import Goal

    class Refusing(Goal):
        count_goal = counts

        def accept_move(self, state, p, src, dst):
            return not counts and p not in parts and (src, dst) not in moves

    return Refusing()


@pytest.mark.parametrize(("refused", "rows"), [
    # a-0 (10 MiB) for the nearest b on 1: b-1 (2 MiB; b-4, 10 MiB, is touched: the plan moved it to 0 already).
    # Then a-1 (20 MiB) for b-2 (19 MiB): a and b both at 2 / 2 (b's band 2..3).
    (set(), [1, 1, 0, 0, 1, 0, 0, 1, 0]),
    # a-0 and b-2 refused by an earlier goal: a-1 for b-3 (22 MiB), then a-2 (30 MiB) for b-1 (2 MiB, nearer than b-0).
    ({0, 6}, [0, 1, 1, 0, 1, 0, 1, 0, 0]),
])
def test_where_counts_allow_no_single_move_a_topic_swaps_its_smallest_for_the_nearest_of_a_topic_with_slack(
        refused: set[int], rows: list[int]) -> None:  # fmt: skip
    # a: a-0..3 (10, 20, 30, 40 MiB) on 0, band 2..2. b: b-0..3 (1, 2, 19, 22 MiB) on 1, and b-4 (10 MiB), which the
    # plan moved from 1 to 0 before: b holds 1 / 4 of band 2..3, so it has slack both ways. A count goal optimised
    # earlier refuses every single move.
    sizes = {"a": [10, 20, 30, 40], "b": [1, 2, 19, 22, 10]}
    s = planner_state([0, 1], [part(t, i, [0 if t == "a" else 1], size_bytes=m * MiB)
                               for t in "ab" for i, m in enumerate(sizes[t])], targets=True)  # fmt: skip
    s.move(8, 1, 0)
    s.vetoes = [_refusing(counts=True), _refusing(parts=refused)]
    TopicSpreadGoal().optimize(s)
    assert [s.row(p)[0] for p in range(9)] == rows


@pytest.mark.parametrize(("refused", "rows"), [
    # t: t-0..3 (1..4 MiB) on 0, t-4, t-5 (5, 6 MiB) on 2; band 2..2, so 0 is 2 over and 1 2 under. No move
    # from 0 to 1 is allowed, and no other topic offers a swap: t-4 goes 2 -> 1 and t-0 0 -> 2 (2 keeps 2), then
    # t-0, brought to 2, is sent on to 1 and t-1 takes its place.
    (set(), [1, 2, 0, 0, 1, 2]),
    # t-4 may not move: t-5 goes instead.
    ({4}, [1, 2, 0, 0, 2, 1]),
])
def test_where_no_move_or_swap_links_a_donor_to_a_receiver_a_chain_through_a_third_broker_does(
        refused: set[int], rows: list[int]) -> None:  # fmt: skip
    s = planner_state([0, 1, 2], [part("t", i, [0 if i < 4 else 2], size_bytes=(i + 1) * MiB) for i in range(6)], targets=True)
    s.vetoes = [_refusing(parts=refused, moves={(0, 1)})]
    TopicSpreadGoal().optimize(s)
    assert [s.row(p)[0] for p in range(6)] == rows


def test_first_replicas_go_to_the_fellow_replica_first_of_the_fewest() -> None:
    # t: six partitions of RF 3 on 0, 1, 2, all first on 0 (band 2..2). Each of the four 0 gives goes to whichever of
    # 1 and 2 is first of fewer so far (of two alike, the lower id): 1, 2, 1, 2.
    parts = [part("t", i, [0, 1, 2]) for i in range(6)]
    assert spread_leaders(parts, 3)[0] == [1, 2, 1, 2, 0, 0]


def test_a_donor_gives_to_a_receiver_in_its_own_rack_first() -> None:
    # Racks A = {0, 2}, B = {1, 3}; t (RF 1, no rack rule binds it): 6 over 4 brokers, band 1..2. Counts 3, 1, 1, 1:
    # 0 is 1 over, nobody under, 1, 2 and 3 have room alike: 2, in 0's rack, takes t-0 (0's smallest).
    s = planner_state([(0, "A"), (1, "B"), (2, "A"), (3, "B")],
                      [part("t", i, [b], size_bytes=(i + 1) * MiB) for i, b in enumerate([0, 0, 0, 1, 2, 3])], targets=True)
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(6)] == [[2], [0], [0], [1], [2], [3]]


def test_a_partition_no_plan_may_move_is_never_the_one_given() -> None:
    # t: t-0 (1 MiB, leaderless: frozen), t-1, t-2 on 0, t-3 on 1, t-4 on 2: band 1..2, 0 is 1 over. t-1, the
    # smallest movable, goes to 1.
    parts = [part("t", 0, [0], leader=-1, size_bytes=MiB)]
    parts += [part("t", i, [b], size_bytes=(i + 1) * MiB) for i, b in [(1, 0), (2, 0), (3, 1), (4, 2)]]
    s = planner_state([0, 1, 2], parts, targets=True)
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(5)] == [[0], [1], [0], [1], [2]]


def test_a_replica_the_plan_brought_to_the_donor_is_sent_on_first() -> None:
    # t: t-0..2 (1..3 MiB) on 0, t-3 on 1, t-4 on 2, and t-5 (6 MiB) on 1, which the plan moved to 0: 4 / 1 / 1 of
    # band 2..2. t-5 goes on from 0 to 1 (back where it was: no move at all), then t-0 to 2.
    s = planner_state([0, 1, 2], [part("t", i, [b], size_bytes=(i + 1) * MiB) for i, b in enumerate([0, 0, 0, 1, 2, 1])],
                      targets=True)
    s.move(5, 1, 0)
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(6)] == [[2], [0], [0], [1], [2], [1]] and not s.touched[5]


# Firsts 3: 2 (t-0, t-1 on [3, 2]), 2: 2 (t-2, t-3 on [2, 1]), 1: 1 (t-4 on [1, 0]), 0: none; 5 over 4, band 1..2.
# Nobody is over; 0 is under. No partition first on 2 or 3 has 0: a chain, t-4 1 -> 0 then t-2 2 -> 1.
CHAIN_TO_0 = [part("t", 0, [3, 2]), part("t", 1, [3, 2]), part("t", 2, [2, 1]), part("t", 3, [2, 1]), part("t", 4, [1, 0])]


@pytest.mark.parametrize(("bounds", "firsts"), [
    (None, [3, 3, 1, 2, 0]),  # the preferred-leader goal's bounds, 1..2: the chain ends inside them
    ((1, 2), [3, 3, 1, 2, 0]),  # the chain's ends: 2 gives one (2 - 1 >= 1), 0 takes one (0 + 1 <= 2)
    ((1, 1), [3, 3, 1, 2, 0]),  # 0 takes one: 0 + 1 <= 1 still
    ((2, 3), [3, 3, 2, 2, 1]),  # no broker may drop to 1 first replica: no chain
])
def test_a_chain_of_first_replicas_ends_at_broker_0_within_the_bounds(bounds: tuple[int, int] | None, firsts: list[int]) -> None:
    assert spread_leaders(CHAIN_TO_0, 4, bounds=bounds)[0] == firsts


def test_a_first_replica_goes_to_broker_0_where_it_leads_already() -> None:
    # The mirror of the first test above: all first on 1, t-2 led by 0: t-2 goes to 0 with no election, then t-0.
    parts = [part("t", 0, [1, 0]), part("t", 1, [1, 0]), part("t", 2, [1, 0], leader=0), part("t", 3, [1, 0])]
    assert spread_leaders(parts, 2) == ([0, 1, 0, 1], [1, 0, 1, 0])


def test_a_giver_at_the_lower_bound_hands_over_only_with_a_partner_back() -> None:
    # As the partner test above, with bounds 3..5: free, t-0 goes to 1 (2 / 3: 0 under 3), so it starts again within
    # them: 0 is first of 3 and may not give alone; u-0 comes back from 1 (u keeps its band 1..2).
    parts = [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("u", 0, [1, 0]), part("u", 1, [1, 0]), part("u", 2, [0, 1])]
    assert spread_leaders(parts, 2, bounds=(3, 5))[0] == [1, 0, 0, 1, 0]


def test_a_broker_under_the_band_takes_first_the_partition_it_leads_already() -> None:
    # t: t-0 and t-1 first on 0 ([0, 2]; 2 leads t-1), t-2 and t-3 on 1 ([1, 0]): 2 / 2 / 0 of band 1..2, nobody over,
    # 2 under. 2 becomes t-1's first replica (no election), not t-0's (the first in order, which a chain would take).
    parts = [part("t", 0, [0, 2]), part("t", 1, [0, 2], leader=2), part("t", 2, [1, 0]), part("t", 3, [1, 0])]
    assert spread_leaders(parts, 3) == ([0, 2, 1, 1], [0, 1, 0, 0])


def test_within_the_bounds_a_hand_over_may_end_exactly_at_them() -> None:
    # t-0, t-1 first on 0 ([0, 1]; 1 leads t-1), u-0, u-1 first on 2 ([2, 1]); 2 first replicas of each over 3
    # brokers: bands 0..1. Free: t-1 goes to 1 (no election), then u-0: 1 / 2 / 1, outside the bounds 1..1 set here.
    # Within them: t-1 to 1 leaves 0 at 1 and brings 1 to 1, both exactly at the bounds: allowed. u-0 would bring 1
    # to 2 and no partition of 1's goes back to 2: u stays.
    parts = [part("t", 0, [0, 1]), part("t", 1, [0, 1], leader=1), part("u", 0, [2, 1]), part("u", 1, [2, 1])]
    assert spread_leaders(parts, 3, bounds=(1, 1))[0] == [0, 1, 2, 2]


def test_a_partner_sent_back_must_hold_a_replica_on_the_giver_and_keep_its_topics_band() -> None:
    # s-0 first on 1 ([1, 2]); t-0, t-1 first on 0 ([0, 1]); u-0, u-1 first on 1 ([1, 0]), u-2 on 0 ([0, 1]). Free,
    # t-0 goes to 1 (t's band 0..1), u cannot move (1 holds 2 of band 1..1, 0 is at 1): 2 / 4 / 0, outside the
    # bounds 1..3 set here. Within them 1 may not take t-0 without giving one back to 0: not s-0 (no replica on 0),
    # not u-0 or u-1 (0 would hold 2 of u's band 1..1). Nothing changes.
    parts = [part("s", 0, [1, 2]), part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("u", 0, [1, 0]), part("u", 1, [1, 0]),
             part("u", 2, [0, 1])]
    assert spread_leaders(parts, 3, bounds=(1, 3))[0] == [1, 0, 0, 1, 1, 0]


def test_a_swap_may_send_back_a_replica_the_plan_brought_to_the_receiver() -> None:
    # a: a-0 (10 MiB), a-1 (20) on 0, a-2 (5) on 2: band 1..1, 0 over, 1 under. b (1, 2, 10, 10 MiB): b-0, b-1 on 1;
    # the plan moved b-2 from 2 to 1 and on to 0, and b-3 from 2 to 1: b holds 1 / 3 / 0 of band 1..2, slack both
    # ways. A count goal refuses every single move. a-0 swaps with the nearest in size of 1's b replicas that may go
    # to 0: b-3, brought to 1 by the plan (b-2, as near, is no longer on 1). b-3 ends on 0: still one move.
    sizes = [("a", 10), ("a", 20), ("a", 5), ("b", 1), ("b", 2), ("b", 10), ("b", 10)]
    where = [0, 0, 2, 1, 1, 2, 2]
    counts: dict[str, int] = {}
    parts = []
    for (t, mib), b in zip(sizes, where):
        parts.append(part(t, counts.setdefault(t, 0), [b], size_bytes=mib * MiB))
        counts[t] += 1
    s = planner_state([0, 1, 2], parts, targets=True)
    for p, src, dst in [(5, 2, 1), (5, 1, 0), (6, 2, 1)]:
        s.move(p, src, dst)
    s.vetoes = [_refusing(counts=True)]
    TopicSpreadGoal().optimize(s)
    assert [s.row(p)[0] for p in range(7)] == [1, 0, 2, 1, 1, 0, 0]


def test_with_nobody_over_the_most_under_receives_first() -> None:
    # 13 over 6 brokers: band 2..3. Counts 3, 3, 3, 3, 1, 0 (t-0..2 on 0, t-3..5 on 1, t-6..8 on 2, t-9..11 on 3, t-12
    # on 4): nobody over, 4 is 1 under and 5 2 under. 5 first: t-0 (0's smallest) to 5; then 4 and 5 are 1 under
    # each: t-3 (1's) to 4; then t-6 (2's) to 5.
    assert spread_rows([3, 3, 3, 3, 1, 0]) == {0: [5], 3: [4], 6: [5]}


def test_a_broker_over_the_band_gives_first_the_partition_whose_leader_is_already_below_it() -> None:
    # 7 first replicas over 4 brokers: band 1..2. t-0 first on 3 ([3, 0]); t-1, t-2, t-3 on 0 ([0, 2], [0, 2] led by
    # 2, [0, 1]); t-4, t-5 on 1; t-6 on 2: 0 holds 3 (over), 1 2, 2 and 3 1 each. t-0 (3 is within)
    # is passed over; t-2 goes to 2, which leads it (no election), not t-1, the first of 0's in order.
    parts = [part("t", 0, [3, 0]), part("t", 1, [0, 2]), part("t", 2, [0, 2], leader=2), part("t", 3, [0, 1]),
             part("t", 4, [1, 3]), part("t", 5, [1, 0]), part("t", 6, [2, 0])]
    assert spread_leaders(parts, 4) == ([3, 0, 2, 0, 1, 1, 2], [0, 0, 1, 0, 0, 0, 0])


def test_a_swap_with_the_only_replica_on_offer() -> None:
    # a: a-0 (10 MiB), a-1 (20) on 0, band 1..1; b: b-0 (5 MiB) on 1, band 0..1, slack both ways. A count goal refuses
    # every single move: a-0 swaps with b-0, the one replica 1 offers.
    s = planner_state([0, 1], [part("a", 0, [0], size_bytes=10 * MiB), part("a", 1, [0], size_bytes=20 * MiB),
                               part("b", 0, [1], size_bytes=5 * MiB)], targets=True)  # fmt: skip
    s.vetoes = [_refusing(counts=True)]
    TopicSpreadGoal().optimize(s)
    assert [s.row(p)[0] for p in range(3)] == [1, 0, 0]


# ------------------------------------------------------------------------------------------- receivers, donors and swaps, by hand


def test_a_broker_under_the_band_receives_before_one_only_with_room_even_in_the_donors_rack() -> None:
    # Racks A = {0, 2}, B = {1, 3}; t (RF 1): 6 over 4 brokers, band 1..2. Counts 3, 0, 1, 2 (t-0..2 on 0, t-3 on 2,
    # t-4, t-5 on 3): 0 is 1 over, 1 is 1 under. Only the broker under the band receives: 1 takes t-0 (0's smallest),
    # not 2 (at its floor with room, in 0's rack). All are inside 1..2 after it.
    s = planner_state([(0, "A"), (1, "B"), (2, "A"), (3, "B")],
                      [part("t", i, [b], size_bytes=(i + 1) * MiB) for i, b in enumerate([0, 0, 0, 2, 3, 3])], targets=True)
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(6)] == [[1], [0], [0], [2], [3], [3]]


def test_with_nobody_under_a_broker_at_its_ceiling_has_no_room_even_in_the_donors_rack() -> None:
    # Racks A = {0, 2}, B = {1, 3, 4}; t (RF 1): 8 over 5 brokers, band 1..2. Counts 3, 1, 2, 1, 1: 0 is 1 over, nobody
    # under. 2 (in 0's rack) is at its ceiling 2: no room. Of 1, 3 and 4 (room 1 each, none in rack A) 1, the lowest
    # id, takes t-0.
    s = planner_state([(0, "A"), (1, "B"), (2, "A"), (3, "B"), (4, "B")],
                      [part("t", i, [b], size_bytes=(i + 1) * MiB) for i, b in enumerate([0, 0, 0, 1, 2, 2, 3, 4])],
                      targets=True)  # fmt: skip
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(8)] == [[1], [0], [0], [1], [2], [2], [3], [4]]


def test_with_nobody_over_a_broker_at_its_floor_gives_nothing() -> None:
    # t (RF 1): 5 over 4 brokers, band 1..2. Counts 2, 2, 1, 0 (t-0, t-1 on 0, t-2, t-3 on 1, t-4 on 2): 3 is under.
    # The donors are 0 and 1 (above the floor); an earlier goal refuses every move of their replicas, so no single
    # move, no swap (no other topic) and no chain (its second move is one of theirs too) is left. 2, at its floor 1,
    # may not give t-4: nothing moves.
    s = planner_state([0, 1, 2, 3], [part("t", i, [b], size_bytes=(i + 1) * MiB) for i, b in enumerate([0, 0, 1, 1, 2])],
                      targets=True)  # fmt: skip
    s.vetoes = [_refusing(parts={0, 1, 2, 3})]
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(5)] == [[0], [0], [1], [1], [2]]


def test_a_donor_gives_its_smallest_replica_whatever_the_order_of_the_other_brokers_replicas() -> None:
    # t (RF 1): t-0, t-1 (1, 2 MiB) on 1, t-2, t-3 (3, 4 MiB) on 0, none on 2: 4 over 3 brokers, band 1..2. Nobody
    # over, 2 under; 0 and 1 are above the floor alike, 0 (by id) gives its smallest, t-2, to 2.
    s = planner_state([0, 1, 2], [part("t", i, [b], size_bytes=(i + 1) * MiB) for i, b in enumerate([1, 1, 0, 0])],
                      targets=True)  # fmt: skip
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(4)] == [[1], [1], [2], [0]]


def test_a_chain_leaves_no_broker_further_outside_the_byte_band() -> None:
    from kafka_rebalance.planner.goals.base import Goal
    from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal

    class BytesRan(Goal):  # the bytes goal optimised earlier: its band holds (ByteGuard), and it vetoes nothing here
        name = ByteBalanceGoal.name

    # t: t-0..3 (1..4 MiB) on 0, t-4, t-5 (5, 6 MiB) on 2: band 2..2, 0 2 over, 1 2 under; no move from 0 to 1 is
    # allowed, so only chains through 2 are left (q 2 -> 1, then p 0 -> 2). x (one replica per broker, band 1..1) fills
    # the bytes: 0 holds 110 GiB - 0.25 MiB, 1 100 GiB - 3.25 MiB, 2 90 GiB + 3.5 MiB (mean 100, byte band 90..110).
    # 0 only loses, 1 only gains, 2 gains p and loses q:
    # - q = t-4 (5 MiB): p = t-0 would take 2 down 4 MiB, 0.5 MiB below 90 GiB: refused; p = t-1 (2 down 3 MiB) goes.
    # - 0 holds t-0, t-2, t-3, 2 holds t-1 (brought there) and t-5: q = t-1 (2 MiB) is sent on to 1; p = t-0 would take
    #   2 (90 GiB + 0.5 MiB) down 1 MiB: refused; p = t-2 (3 MiB, 2 up 1 MiB) goes. 2 / 2 / 2: done.
    loads = [110 * GiB - MiB // 4, 100 * GiB - 13 * MiB // 4, 90 * GiB + 7 * MiB // 2]
    t_bytes = [10 * MiB, 0, 11 * MiB]
    parts = [part("t", i, [0 if i < 4 else 2], size_bytes=(i + 1) * MiB) for i in range(6)]
    parts += [part("x", b, [b], size_bytes=loads[b] - t_bytes[b]) for b in range(3)]
    s = planner_state([0, 1, 2], parts, targets=True)
    assert s.byte_lo.tolist() == pytest.approx([90 * GiB] * 3, abs=1) and s.byte_hi.tolist() == pytest.approx([110 * GiB] * 3, abs=1)
    s.vetoes = [BytesRan(), _refusing(moves={(0, 1)})]
    TopicSpreadGoal().optimize(s)
    assert [s.row(p)[0] for p in range(6)] == [0, 1, 2, 0, 1, 2]
    assert s.bytes.tolist() == [110 * GiB - 21 * MiB // 4, 100 * GiB + 15 * MiB // 4, 90 * GiB + 3 * MiB // 2]


def _swap_case(other: list[tuple[list[int], dict[str, Any]]], moves: tuple[tuple[int, int, int], ...] = ()) -> list[list[int]]:
    """t: t-0 (10 MiB), t-1 (20 MiB) on 0, t-2 (5 MiB) on 2: band 1..1, 0 one over, 1 one under. A count goal refuses
    every single move, so neither a move from 0 to 1 nor a chain through 2 (its moves are single moves) is left: only
    a swap with a replica of u on 1. u: one partition per row of ``other`` (row, part fields), 1 MiB each, u-i being
    partition 3 + i; ``moves`` (partition, from, to): the plan's moves before the goal runs."""
    parts = [part("t", 0, [0], size_bytes=10 * MiB), part("t", 1, [0], size_bytes=20 * MiB),
             part("t", 2, [2], size_bytes=5 * MiB)]  # fmt: skip
    parts += [part("u", i, row, size_bytes=MiB, **fields) for i, (row, fields) in enumerate(other)]
    s = planner_state([0, 1, 2], parts, targets=True)
    for p, src, dst in moves:
        s.move(p, src, dst)
    s.vetoes = [_refusing(counts=True)]
    TopicSpreadGoal().optimize(s)
    return [s.row(p) for p in range(s.n_parts)]


@pytest.mark.parametrize("u_rows", [
    # u: 4 over 3 brokers, band 1..2, counts 1 / 1 / 2: the receiver 1 is at u's floor, so it may not give one of u
    [[0], [1], [2], [2]],
    # u: 5 over 3, band 1..2, counts 2 / 2 / 1: the donor 0 is at u's ceiling, so it may not take one of u
    [[0], [0], [1], [1], [2]],
])
def test_no_swap_takes_the_other_topic_outside_its_band(u_rows: list[list[int]]) -> None:
    rows = _swap_case([(r, {}) for r in u_rows])
    assert rows == [[0], [0], [2]] + u_rows


def test_no_swap_where_the_other_topics_replicas_on_the_receiver_may_not_move() -> None:
    # u: one partition on 1 (band 0..1: 1 may give it, 0 may take it), but its produce rate is above the delivered
    # rate (it could never catch up): no replica to swap, and nothing moves.
    assert _swap_case([([1], {"bytes_in_per_sec": 1e15})]) == [[0], [0], [2], [1]]


def test_a_swap_never_takes_a_replica_the_donor_holds_already() -> None:
    # u: u-0 (10 MiB) on [2, 0], which the plan changed to [1, 0] before; u-1 (1 MiB) on 1; u-2 on 2: counts 1 / 2 / 1
    # of band 1..2, slack both ways. u-0, as near t-0's 10 MiB as can be, was brought to 1 by the plan, but 0 holds
    # it too: t-0 swaps with u-1.
    parts = [part("t", 0, [0], size_bytes=10 * MiB), part("t", 1, [0], size_bytes=20 * MiB),
             part("t", 2, [2], size_bytes=5 * MiB), part("u", 0, [2, 0], size_bytes=10 * MiB),
             part("u", 1, [1], size_bytes=MiB), part("u", 2, [2], size_bytes=MiB)]  # fmt: skip
    s = planner_state([0, 1, 2], parts, targets=True)
    s.move(3, 2, 1)
    s.vetoes = [_refusing(counts=True)]
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(6)] == [[1], [0], [2], [1, 0], [0], [2]]


@pytest.mark.parametrize("moves", [
    (),  # u-0 on [1, 0] and u-1 on 1 as they were
    ((3, 2, 1), (4, 2, 1)),  # u-0 on [2, 0] and u-1 on 2, both brought to 1 by the plan: sent on from there
])
def test_a_swap_passes_over_only_the_receivers_replicas_the_donor_holds_too(moves: tuple[tuple[int, int, int], ...]) -> None:
    # u (1 MiB each): u-0 on [1, 0], u-1 on 1, u-2 and u-3 on 2: 5 over 3 brokers, band 1..2, counts 1 / 2 / 2, slack both
    # ways. Of 1's replicas of u, u-0 is on 0 as well and is passed over; u-1 is not, and t-0 swaps with it.
    first = [[2, 0], [2]] if moves else [[1, 0], [1]]
    assert _swap_case([(r, {}) for r in first + [[2], [2]]], moves) == [[1], [0], [2], [1, 0], [0], [2], [2]]


def _byte_swap_case(u: list[tuple[int, int]], loads: list[int]) -> list[list[int]]:
    """t as in ``_swap_case`` (only a swap is left), with the bytes goal optimised before it: its band holds (ByteGuard).
    u: one partition of RF 1 per (broker, MiB); x: one partition per broker (band 1..1: no slack) filling broker b to
    ``loads[b]`` bytes. The rows of t and u after the goal."""
    from kafka_rebalance.planner.goals.base import Goal
    from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal

    class BytesRan(Goal):  # the bytes goal optimised earlier: its band holds (ByteGuard), and it vetoes nothing here
        name = ByteBalanceGoal.name

    parts = [part("t", 0, [0], size_bytes=10 * MiB), part("t", 1, [0], size_bytes=20 * MiB),
             part("t", 2, [2], size_bytes=5 * MiB)]  # fmt: skip
    parts += [part("u", i, [b], size_bytes=mib * MiB) for i, (b, mib) in enumerate(u)]
    held = [sum(p["size_bytes"] for p in parts if p["replicas"] == [b]) for b in range(3)]
    parts += [part("x", b, [b], size_bytes=loads[b] - held[b]) for b in range(3)]
    s = planner_state([0, 1, 2], parts, targets=True)
    assert s.byte_lo.tolist() == pytest.approx([90 * GiB] * 3, abs=1) and s.byte_hi.tolist() == pytest.approx([110 * GiB] * 3, abs=1)
    s.vetoes = [BytesRan(), _refusing(counts=True)]
    TopicSpreadGoal().optimize(s)
    return [s.row(p) for p in range(3 + len(u))]


def test_under_the_byte_guard_a_swap_finds_the_receivers_replica_that_keeps_the_band_listed_before_a_smaller_one() -> None:
    # u: u-0 (9 MiB) and u-1 (1 MiB) on 1, u-2 on 0, u-3 on 2 (1 MiB each): 4 over 3 brokers, band 1..2, counts 1 / 2 / 1.
    # Bytes: 0 holds 100 GiB, 1 110 GiB - 2 MiB, 2 90 GiB + 2 MiB (mean 100, band 90..110 GiB): 1 may gain 2 MiB. t-0
    # (10 MiB) for u-0 brings 1 MiB to 1: allowed; for u-1, 9 MiB: refused. t-0 swaps with u-0, the first of 1's replicas
    # in partition order, though the larger.
    rows = _byte_swap_case([(1, 9), (1, 1), (0, 1), (2, 1)], [100 * GiB, 110 * GiB - 2 * MiB, 90 * GiB + 2 * MiB])
    assert rows == [[1], [0], [2], [0], [1], [0], [2]]


def test_under_the_byte_guard_a_donors_replica_with_no_partner_in_reach_is_passed_over_for_the_next() -> None:
    # u: u-0 (19 MiB) on 1: 1 over 3 brokers, band 0..1, slack both ways. Bytes: 0 holds 110 GiB - 1.5 MiB, 1 100 GiB, 2
    # 90 GiB + 1.5 MiB: 0 may gain 1.5 MiB. t-0 (10 MiB) for u-0 would bring 0 9 MiB: no replica of 1's is within reach,
    # and t-0 is passed over; t-1 (20 MiB) for u-0 brings 1 MiB to 1: they swap.
    rows = _byte_swap_case([(1, 19)], [110 * GiB - 3 * MiB // 2, 100 * GiB, 90 * GiB + 3 * MiB // 2])
    assert rows == [[0], [1], [2], [0]]


def test_a_donor_tries_8_receivers_its_own_rack_first_and_no_9th() -> None:
    # Racks A = {0..8}, B = {9}; t (RF 1, 1..12 MiB): t-0..t-2 on 0, t-3..t-11 one on each of 1..9: 12 over 10 brokers,
    # band 1..2. 0 is 1 over and nobody under: 1..9 all have room, and 0 pairs with 8 of them, its own rack's 1..8. An
    # earlier goal refuses every move but 0 -> 9, so these pairs leave no single move, no chain (its first move is a
    # third broker's) and no swap (no other topic), and 9, the 9th, is not tried: nothing moves.
    rows = [[max(0, i - 2)] for i in range(12)]
    s = planner_state([(b, "A" if b < 9 else "B") for b in range(10)],
                      [part("t", i, row, size_bytes=(i + 1) * MiB) for i, row in enumerate(rows)], targets=True)  # fmt: skip
    s.vetoes = [_refusing(moves={(x, y) for x in range(10) for y in range(10)} - {(0, 9)})]
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(12)] == rows


# ------------------------------------------------------------------------------------------- first replicas: bounds, partners, chains


def test_a_free_spread_ending_exactly_at_the_bounds_is_kept() -> None:
    # t-0, t-1 first on 0 ([0, 1]), t band 1..1; u-0, u-1 first on 1 ([1, 0]; 0 leads u-1), u band 1..1. Free: t-0 goes
    # to 1, u-1 to 0 (no election): 2 / 2 first replicas, exactly the bounds 2..2 set here, so that is kept. (Within
    # them from the start, t-0 could go only with a partner back, u-0, the first listed on 1: not what is kept.)
    parts = [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("u", 0, [1, 0]), part("u", 1, [1, 0], leader=0)]
    assert spread_leaders(parts, 2, bounds=(2, 2))[0] == [1, 0, 1, 0]


def test_a_leaderless_partition_keeps_its_first_replica() -> None:
    # t-0..t-3 first on 0 ([0, 1]), band 2..2, t-0 leaderless: it keeps 0; t-1 and t-2 go to 1.
    parts = [part("t", 0, [0, 1], leader=-1)] + [part("t", i, [0, 1]) for i in range(1, 4)]
    assert spread_leaders(parts, 2)[0] == [0, 1, 1, 0]


def test_a_chain_never_runs_through_a_leaderless_partition() -> None:
    # t-0, t-1 first on 0 ([0, 1]), t-2 (leaderless) first on 1 ([1, 2]), 2 none; band 1..1. Only a chain through t-2
    # reaches 2: nothing changes.
    parts = [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("t", 2, [1, 2], leader=-1)]
    assert spread_leaders(parts, 3)[0] == [0, 0, 1]


def test_a_leaderless_partition_is_never_the_partner_sent_back() -> None:
    # As the partner test above (bounds 2..2: t-0 0 -> 1 needs a partition of u first on 1 back), with u-0
    # leaderless: u-1 goes back instead.
    parts = [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("u", 0, [1, 0], leader=-1), part("u", 1, [1, 0]),
             part("u", 2, [0, 1])]  # fmt: skip
    assert spread_leaders(parts, 2, bounds=(2, 2))[0] == [1, 0, 1, 0, 0]


def test_a_giver_hands_over_only_down_to_the_lower_bound() -> None:
    # t: six partitions of RF 3 on 0, 1, 2, all first on 0 (band 2..2); u-0 (RF 1) first on 1. Free, 0 gives four, to
    # the fewest first: 2 (0 < 1), 1 (1 = 1, lower id), 2, 1: 2 / 3 / 2, outside the bounds 3..3 set here. Within them,
    # from 6 / 1 / 0: t-0 to 2 (0 at 5), t-1 to 1 (0 at 4), t-2 to 2 (0 at 3); 0 may give no more (3 - 1 < 3) and no
    # partner can come back (u-0 has no replica on 0).
    parts = [part("t", i, [0, 1, 2]) for i in range(6)] + [part("u", 0, [1])]
    assert spread_leaders(parts, 3, bounds=(3, 3))[0] == [2, 1, 2, 0, 0, 0, 1]


def test_first_replicas_go_to_the_broker_first_of_the_fewest_of_all_topics() -> None:
    # As the test above, u-0 and u-1 first on 1: 1 is first of 2, 2 of none. t-0 to 2 (0 < 2), t-1 to 2 (1 < 2), then 2
    # holds t's ceiling 2: t-2 and t-3 to 1. 2 / 4 / 2 is within the bounds 0..8 set here: kept.
    parts = [part("t", i, [0, 1, 2]) for i in range(6)] + [part("u", 0, [1]), part("u", 1, [1])]
    assert spread_leaders(parts, 3, bounds=(0, 8))[0] == [2, 2, 1, 1, 0, 0, 1, 1]


def test_a_partner_sent_back_never_takes_its_topic_below_the_floor_on_the_receiver() -> None:
    # t-0, t-1 first on 0 ([0, 1]): band 0..1 over 3 brokers. u: u-0 first on 1 ([1, 0]), u-1 on 0 ([0, 2]), u-2 and
    # u-3 on 2 ([2, 0], [2, 1]): 1 / 1 / 2 of band 1..2. Free, t-0 goes to 1: 2 / 2 / 2, outside the bounds 1..1 set
    # here. Within them 1 may take t-0 only giving one back to 0; u-0 would leave 1 with no u, below its floor 1. No
    # chain either (t's partitions on 0 reach only 1, at the bound). Nothing changes.
    parts = [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("u", 0, [1, 0]), part("u", 1, [0, 2]), part("u", 2, [2, 0]),
             part("u", 3, [2, 1])]  # fmt: skip
    assert spread_leaders(parts, 3, bounds=(1, 1))[0] == [0, 0, 1, 0, 2, 2]


def test_partners_are_looked_for_past_the_topics_own_partitions_and_every_topic_is_spread() -> None:
    # t-0..t-2 first on 0 ([0, 1]), t-3 on 1 ([1, 0]): band 2..2. u-0, u-1 on 1 ([1, 0]), u-2 on 0 ([0, 1]): band 1..2.
    # v-0, v-1 on 1 ([1, 0]): band 1..1. First replicas 4 / 5. Free: t-0 and v-0 change sides: 4 / 5 again, outside
    # the bounds 4..4 set here. Within them:
    # - t-0 to 1 leaves 0 at 3 < 4: a partner goes back. First on 1: t-3 (t itself: passed over), then u-0 (u 1 / 2 ->
    #   2 / 1, inside 1..2): t-0 to 1, u-0 to 0.
    # - v-0 to 0 takes 0 to 5 > 4: first on 0, t-0 (now first on 1: passed over), t-1 and t-2 (t would fall to 1 on 0,
    #   below 2), then u-2 (u 2 / 1 -> 1 / 2): v-0 to 0, u-2 to 1.
    parts = [part("t", i, [0, 1]) for i in range(3)] + [part("t", 3, [1, 0]), part("u", 0, [1, 0]), part("u", 1, [1, 0]),
                                                        part("u", 2, [0, 1]), part("v", 0, [1, 0]), part("v", 1, [1, 0])]
    assert spread_leaders(parts, 2, bounds=(4, 4))[0] == [1, 0, 0, 1, 0, 1, 1, 0, 1]


def test_first_replicas_move_along_a_chain_again_while_a_broker_is_under() -> None:
    # Two copies of the chain test above on brokers 0..5 (t-0, t-1 [0, 1], t-2 [1, 2]; t-3, t-4 [3, 4], t-5 [4, 5]):
    # 6 first replicas, band 1..1; 2 and 5 are under and no partition links 0 to 2 or 3 to 5. Two chains: t-2 to 2 and
    # t-0 to 1, then t-5 to 5 and t-3 to 4.
    parts = [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("t", 2, [1, 2]), part("t", 3, [3, 4]), part("t", 4, [3, 4]),
             part("t", 5, [4, 5])]  # fmt: skip
    assert spread_leaders(parts, 6)[0] == [1, 0, 2, 4, 3, 5]


def test_a_chain_changes_every_link_at_once_through_a_broker_above_the_upper_bound() -> None:
    # t: t-0..t-2 first on 0 ([0, 1]), t-3, t-4 on 1 ([1, 2]), t-5 on 2 ([2, 3]), t-6 on 3 ([3, 0]): 3 / 2 / 1 / 1 of
    # band 1..2. u-0..u-2 (RF 1) first on 1: 1 is first of 5, above the bounds 0..3 set here (and stays so: u cannot
    # move), so the free spread is put back. Within the bounds: 0 is over, and its partitions reach only 1 (at t's
    # ceiling): the chain t-3 1 -> 2, t-0 0 -> 1, 1's count as it was; t is 2 / 2 / 2 / 1.
    parts = [part("t", i, [0, 1]) for i in range(3)] + [part("t", i, [1, 2]) for i in (3, 4)]
    parts += [part("t", 5, [2, 3]), part("t", 6, [3, 0])] + [part("u", i, [1]) for i in range(3)]
    assert spread_leaders(parts, 4, bounds=(0, 3))[0] == [1, 0, 0, 2, 1, 2, 3, 1, 1, 1]


def test_a_partition_handed_over_already_is_no_partner_from_where_it_was_first() -> None:
    # s-0 first on 1 ([1, 2, 0]), s-1 first on 1 ([1, 2]): band 0..1 over 3 brokers. t-0, t-1 first on 0 ([0, 1]):
    # band 0..1. First replicas 2 / 2 / 0; bounds 1..1 set here. Free: s-0 to 2 (first of fewer than 0), t-0 to 1:
    # 1 / 2 / 1, outside them. Within them: s-0 to 2 (2 - 1 >= 1, 0 + 1 <= 1). t-0 to 1 takes 1 to 2: a partner must
    # go back from 1 to 0. s-0 is first on 2 now, not 1; s-1 has no replica on 0: none. t stays.
    parts = [part("s", 0, [1, 2, 0]), part("s", 1, [1, 2]), part("t", 0, [0, 1]), part("t", 1, [0, 1])]
    assert spread_leaders(parts, 3, bounds=(1, 1))[0] == [2, 1, 0, 0]


def test_a_partner_is_looked_for_among_the_first_256_partitions_first_on_the_receiver() -> None:
    # f: 256 partitions (RF 1) first on 1. t-0, t-1 first on 0 ([0, 1]): band 1..1. u-0, u-1 first on 1 ([1, 0]), u-2
    # on 0 ([0, 1]): band 1..2. First replicas 3 / 258; bounds 3..300 set here. Free: t-0 to 1 leaves 0 at 2, below 3;
    # within the bounds t-0 needs a partner back from 1, and the search stops after f's 256 (none has a replica on 0),
    # before u-0 (which would do). Nothing changes.
    parts = [part("f", i, [1]) for i in range(256)] + [part("t", 0, [0, 1]), part("t", 1, [0, 1]), part("u", 0, [1, 0]),
                                                       part("u", 1, [1, 0]), part("u", 2, [0, 1])]  # fmt: skip
    assert spread_leaders(parts, 2, bounds=(3, 300))[0][256:] == [0, 0, 1, 1, 0]


# --------------------------------------------------------------------------- replica moves (compiled)


@pytest.mark.parametrize(("allowed", "swapped"), [(63, True), (64, False)])
def test_a_swap_reads_the_receivers_64_nearest_partitions_and_no_65th(allowed: int, swapped: bool) -> None:
    # t: t-0 and t-1 (both empty) on 0, none on 1: band 1..1. u: u-0..u-69 on 1 (1..70 MiB): slack both ways. A count
    # goal refuses every single move, and another every u but u-<allowed>: the 64th nearest (u-63) swaps with t-0, the
    # 65th (u-64) is never read.
    parts = [part("t", i, [0], size_bytes=0) for i in range(2)]
    parts += [part("u", i, [1], size_bytes=(i + 1) * MiB) for i in range(70)]
    s = planner_state([0, 1], parts, targets=True)
    s.vetoes = [_refusing(counts=True), _refusing(parts={2 + i for i in range(70) if i != allowed})]
    TopicSpreadGoal().optimize(s)
    assert (s.row(2 + allowed) == [0]) is swapped
    assert s.row(0) == ([1] if swapped else [0])


def test_of_two_partners_equally_near_the_lower_partition_swaps() -> None:
    # t: t-0 (10 MiB) and t-1 (12 MiB) on 0, none on 1: band 1..1. u: u-0 (15 MiB) and u-1 (5 MiB) on 1, slack both
    # ways. Every single move refused: t-0 swaps with the nearer of u-0 and u-1, 5 MiB either way: u-0, the lower.
    parts = [part("t", 0, [0], size_bytes=10 * MiB), part("t", 1, [0], size_bytes=12 * MiB),
             part("u", 0, [1], size_bytes=15 * MiB), part("u", 1, [1], size_bytes=5 * MiB)]  # fmt: skip
    s = planner_state([0, 1], parts, targets=True)
    s.vetoes = [_refusing(counts=True)]
    TopicSpreadGoal().optimize(s)
    assert [s.row(p) for p in range(4)] == [[1], [0], [0], [1]]


def plain_spread(state: Any) -> None:
    """Topic spread's replica moves (``TopicSpreadGoal.optimize``'s rule, ``topic_spread_moves``) read plainly: every
    count recounted from the rows, every list built afresh from every partition, every pair tried every time, and
    every veto asked through ``ClusterState.accepts`` and ``ByteGuard``. Moves ``state`` in place."""
    from kafka_rebalance.planner.goals.byte_balance import ByteGuard
    from kafka_rebalance.planner.goals.topic_spread import band_matrices, topic_codes, topic_matrix

    names, topic = topic_codes(state)
    lo, hi = band_matrices(state)
    elig = state.eligible_idx
    guard = ByteGuard(state)
    size = [float(x) for x in state.sizes]

    def held() -> Any:
        return topic_matrix(state, state.now)

    def movable(t: int, b: int) -> list[int]:
        ps = sorted((p for p in range(state.n_parts) if topic[p] == t and not state.frozen[p] and not state.hot[p]),
                    key=lambda p: (state.sizes[p], p))  # fmt: skip
        arrived = [p for p in ps if state.touched[p] and b in state.row(p) and b not in state.original_row(p)]
        return arrived + [p for p in ps if not state.touched[p] and b in state.row(p)]

    def single(cand: list[int], a: int, r: int) -> bool:
        if not cand or not state.counts_accept(a, r):
            return False
        for p in cand:
            if guard.allows(state, {a: -size[p], r: size[p]}) and state.accepts(p, a, r):
                state.move(p, a, r)
                state.restore(p)
                return True
        return False

    def swap(t: int, cand: list[int], a: int, r: int) -> bool:
        now = held()
        pool = [q for q in range(state.n_parts) if r in state.row(q) and not state.hot[q] and topic[q] != t
                and now[topic[q], r] > lo[topic[q], r] and now[topic[q], a] < hi[topic[q], a] and a not in state.row(q)
                and (not (state.touched[q] or state.frozen[q])
                     or (r not in state.original_row(q) and q in state.arrivals.get(r, ())))]  # fmt: skip
        for p in cand:
            if not state.accepts(p, a, r, count_neutral=True):
                continue
            for q in sorted(pool, key=lambda q: (abs(size[q] - size[p]), q))[:64]:
                m = size[p] - size[q]
                if guard.allows(state, {a: -m, r: m}) and state.accepts(q, r, a, count_neutral=True):
                    state.move(p, a, r)
                    state.move(q, r, a)
                    state.restore(p)
                    state.restore(q)
                    return True
        return False

    def chain(t: int, a: int, r: int) -> bool:
        from_a = movable(t, a)
        a_ok = {p: guard.allows(state, {a: -size[p]}) for p in from_a}
        if not any(a_ok.values()):
            return False
        for x in elig:
            if x in (a, r) or not state.counts_accept(x, r):
                continue
            inward = [p for p in [p for p in from_a if x not in state.row(p)][:16] if a_ok[p]]
            for q in [q for q in movable(t, x) if r not in state.row(q)][:16] if inward else []:
                if not guard.allows(state, {r: size[q]}) or not state.accepts(q, x, r):
                    continue
                for p in inward:
                    if p == q or not guard.allows(state, {x: size[p] - size[q]}):
                        continue
                    state.move(q, x, r)
                    if state.accepts(p, a, x):
                        state.move(p, a, x)
                        state.restore(p)
                        state.restore(q)
                        return True
                    state.move(q, r, x)
                    state.restore(q)
                    break
        return False

    def neediest(need: dict[int, int]) -> list[int]:
        return sorted(need, key=lambda b: -need[b])  # (stable: ties in broker order)

    start = held()
    for t in [t for t in range(len(names)) if any(not lo[t, b] <= start[t, b] <= hi[t, b] for b in elig)]:
        while True:
            c = {b: int(held()[t, b]) for b in elig}
            over = {b: c[b] - hi[t, b] for b in elig if c[b] > hi[t, b]}
            under = {b: lo[t, b] - c[b] for b in elig if c[b] < lo[t, b]}
            if over:
                donors = neediest(over)
                receivers = neediest({b: hi[t, b] - c[b] for b in elig if (b in under if under else c[b] < hi[t, b])})
            elif under:
                receivers = neediest(under)
                donors = neediest({b: c[b] - lo[t, b] for b in elig if c[b] > lo[t, b]})
            else:
                break
            pairs = []
            for a in donors[:8]:
                rack = state.rack[a]
                near = [r for r in receivers if state.rack[r] == rack][:8]
                pairs += [(a, r) for r in near + [r for r in receivers if state.rack[r] != rack][: 8 - len(near)]]
            if not any(single(cand, a, r) or swap(t, cand[:16], a, r)
                       for a, r in pairs for cand in [[p for p in movable(t, a) if r not in state.row(p)]]) and \
                    not any(chain(t, a, r) for a, r in pairs[:4]):  # fmt: skip
                break


def _before_topic_spread(snap: Snapshot, options: PlanOptions) -> Any:
    """The planner's state as topic spread receives it (``state_before``), with the move cap set, and a copy."""
    import copy

    state = state_before(snap, options, TopicSpreadGoal.name)
    if state.move_cap is None:
        state.cap_moves()
    return state, copy.deepcopy(state)


@pytest.mark.parametrize("big", [False, True])
def test_compiled_replica_moves_are_the_ones_the_rule_read_plainly_makes(big: bool) -> None:
    # Drawn clusters (150 small, 30 big; 15 s in all): the compiled search and the rule read plainly make the same
    # moves, in the same order (trial moves of chains put back included), on states the earlier goals left as a plan
    # leaves them. Every third draw, and every big one, with the counts held where they are (the count goal's range
    # closed on them): no replica moves alone, so swaps and chains do the spreading.
    from kafka_rebalance.errors import PlanError

    planned = moved = 0
    for seed in range(1000, 1030) if big else range(150):
        snap, options = drawn_cluster(seed, big)
        try:
            compiled, plain = _before_topic_spread(snap, options)
        except PlanError:
            continue  # (a drawn cluster no plan fits: nothing to spread)
        if big or seed % 3 == 0:
            for state in (compiled, plain):
                state.lo[:], state.hi[:] = state.counts, state.counts
        seen = len(compiled.changes)
        TopicSpreadGoal().optimize(compiled)
        plain_spread(plain)
        assert compiled.changes == plain.changes, f"seed {seed}"
        assert compiled.now.tolist() == plain.now.tolist() and compiled.touched.tolist() == plain.touched.tolist()
        planned += 1
        moved += len(compiled.changes) > seen
    assert (planned, moved) >= ((20, 12) if big else (100, 50)), (planned, moved)


# --------------------------------------------------------------------------- first replicas (compiled hand-overs)


def plain_spread_leaders(topic: list[int], orders: list[list[int]], rows: list[list[int]], electable: list[list[bool]],
                         frozen: list[bool], eligible: list[bool], leader: list[int], pref: list[int], col: list[int],
                         bounds: tuple[int, int]) -> tuple[list[int], list[int]]:  # fmt: skip
    """Topic spread's hand-overs of first replicas (``TopicSpreadGoal.lead``'s rule for one set of bounds) read
    plainly: every band read afresh, every broker's lists listed afresh. Returns the first replicas and their slots."""
    n = len(eligible)
    g_lo, g_hi = bounds
    pref, col = list(pref), list(col)
    elig = [b for b in range(n) if eligible[b]]
    per = [[0] * n for _ in orders]
    total = [0] * n
    listed: dict[int, list[int]] = {}
    for p, b in enumerate(pref):
        if b >= 0:
            per[topic[p]][b] += 1
            total[b] += 1
            if not frozen[p]:
                listed.setdefault(b, []).append(p)
    floor = [sum(per[t][b] for b in elig) // len(elig) for t in range(len(orders))]
    ceil = [-(-sum(per[t][b] for b in elig) // len(elig)) for t in range(len(orders))]

    def switch(p: int, j: int) -> None:
        a, b, u = pref[p], rows[p][j], topic[p]
        pref[p], col[p] = b, j
        per[u][a] -= 1
        per[u][b] += 1
        total[a] -= 1
        total[b] += 1
        listed.setdefault(b, []).append(p)

    def partner(t: int, a: int, b: int) -> tuple[int, int] | None:
        for q in listed.get(b, [])[:256]:
            u = topic[q]
            if pref[q] != b or u == t or per[u][b] - 1 < floor[u] or per[u][a] + 1 > ceil[u]:
                continue
            if a in rows[q] and electable[q][rows[q].index(a)]:
                return q, rows[q].index(a)
        return None

    def outside(t: int) -> tuple[bool, bool]:
        return any(per[t][b] < floor[t] for b in elig), any(per[t][b] > ceil[t] for b in elig)

    def chain(t: int) -> bool:
        under, over = outside(t)
        if not under and not over:
            return False
        bound = floor[t] if under else ceil[t]
        first_on = {x: [p for p in orders[t] if not frozen[p] and pref[p] == x] for x in range(n)}
        frontier = [b for b in elig if per[t][b] > bound and total[b] - 1 >= g_lo]
        seen, via = set(frontier), {}
        while frontier:
            following = []
            for x in frontier:
                for p in first_on[x]:
                    for j, y in enumerate(rows[p]):
                        if y < 0 or y in seen or not electable[p][j]:
                            continue
                        seen.add(y)
                        via[y] = (x, p, j)
                        if per[t][y] < bound and total[y] + 1 <= g_hi:
                            while y in via:
                                x, p, j = via[y]
                                switch(p, j)
                                y = x
                            return True
                        following.append(y)
            frontier = following
        return False

    for t in range(len(orders)):
        for no_election in (True, False):
            for p in orders[t]:
                under, over = outside(t)
                if not under and not over:
                    break
                a = pref[p]
                bound = floor[t] if under else ceil[t]
                if frozen[p] or a < 0 or per[t][a] <= bound:
                    continue
                options = sorted((total[b], b, j) for j, b in enumerate(rows[p])
                                 if b >= 0 and b != a and electable[p][j] and per[t][b] < bound
                                 and (not no_election or leader[p] == b))  # fmt: skip
                for _, b, j in options:
                    if (not eligible[a] or total[a] - 1 >= g_lo) and total[b] + 1 <= g_hi:
                        switch(p, j)
                        break
                    back = partner(t, a, b)
                    if back is not None:
                        switch(p, j)
                        switch(*back)
                        break
        while chain(t):
            pass
    return pref, col


def test_compiled_first_replica_hand_overs_are_the_ones_the_rule_read_plainly_makes() -> None:
    import numpy as np

    from kafka_rebalance.planner.goals.topic_spread_leaders import spread_leaders

    # Random clusters from a seed (NumPy draws the cluster: Hypothesis's own draws favour the smallest and seldom
    # reach a partner or a chain): topics of a few partitions each, some frozen, some first on a broker leaving, rows
    # of 1 to 3 replicas, some not electable, leaders anywhere in the row, bounds from none at all to tight ones.
    @settings(max_examples=500, deadline=None)
    @given(st.integers(0, 2**32 - 1))
    def check(seed: int) -> None:
        rng = np.random.default_rng(seed)
        n, n_t, m = int(rng.integers(3, 6)), int(rng.integers(1, 4)), int(rng.integers(4, 40))
        topic = rng.integers(0, n_t, m).tolist()
        rows = []
        for _ in range(m):
            rf = int(rng.integers(1, 4))
            rows.append(rng.permutation(n)[:rf].tolist() + [-1] * (3 - rf))
        electable = [[True] + (rng.random(2) < 0.8).tolist() for _ in range(m)]
        frozen = (rng.random(m) < 0.1).tolist()
        eligible = [True] * n
        out = int(rng.integers(-1, n))  # a broker leaving (-1: none)
        if out >= 0:
            eligible[out] = False
        col = [int(rng.integers(0, sum(b >= 0 for b in row))) for row in rows]
        pref = [rows[p][col[p]] for p in range(m)]
        leader = [rows[p][int(rng.integers(0, sum(b >= 0 for b in rows[p])))] for p in range(m)]
        perm = rng.permutation(m).tolist()
        orders = [[p for p in perm if topic[p] == t] for t in range(n_t)]
        counts = [pref.count(b) for b in range(n)]
        slack = [None, 0, 0, 1][int(rng.integers(0, 4))]
        bounds = (-1, 1 << 62) if slack is None else (min(counts) - slack, max(counts) + slack)
        want = plain_spread_leaders(topic, orders, rows, electable, frozen, eligible, leader, pref, col, bounds)
        got_pref, got_col = np.asarray(pref, dtype=np.int64), np.asarray(col, dtype=np.int64)
        spread_leaders(np.asarray(topic, dtype=np.int64), np.asarray([p for o in orders for p in o], dtype=np.int64),
                       np.cumsum([0] + [len(o) for o in orders]).astype(np.int64), np.asarray(rows, dtype=np.int64),
                       np.asarray(electable), np.asarray(frozen), np.asarray(eligible),
                       np.flatnonzero(eligible).astype(np.int64), np.asarray(leader, dtype=np.int64), got_pref, got_col,
                       n_t, bounds[0], bounds[1])  # fmt: skip
        assert (got_pref.tolist(), got_col.tolist()) == want

    check()


def test_the_kernels_moves_made_at_once_leave_the_state_that_move_and_restore_one_by_one_leave(
        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # ``spread`` makes the kernel's moves with ``move_all`` and restores each moved partition after; the rule is
    # ``move`` then ``restore`` per move (a swap back, or a chain put back, is no change).
    from kafka_rebalance.errors import PlanError
    from kafka_rebalance.planner.goals import topic_spread_moves
    from tests.support.clusters import same_state

    made: list[Any] = []
    kernel = topic_spread_moves.spread_replicas
    monkeypatch.setattr(topic_spread_moves, "spread_replicas", lambda *a: made.append(kernel(*a)) or made[-1])
    fits = moved = put_back = 0
    for seed in range(80):
        snap, options = drawn_cluster(seed)
        try:
            at_once, one_by_one = (state_before(snap, options, TopicSpreadGoal.name) for _ in range(2))
        except PlanError:
            continue
        fits += 1
        made.clear()
        TopicSpreadGoal().optimize(at_once)
        for moves in made:
            for p, src, dst in moves.tolist():
                one_by_one.move(p, src, dst)
                one_by_one.restore(p)
        assert same_state(at_once, one_by_one, cur_order=False), seed
        moved += sum(len(m) for m in made) > 0
        parts = [p for m in made for p in m[:, 0].tolist()]
        put_back += len(parts) > len(set(parts))
    # enough clusters that the kernel moved in, some with a partition moved twice (a swap or a chain, put back or not)
    assert (moved > 20, put_back > 5) == (True, True), (fits, moved, put_back)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.booleans()), max_size=30), st.integers(1, 10))
def test_the_first_donors_are_the_first_of_the_whole_ranking(entries: list[tuple[int, bool]], m: int) -> None:
    # Few distinct needs, so that ties (kept in the brokers' order) fall across the cut at m.
    import numpy as np

    from kafka_rebalance.planner.goals.topic_spread_moves import _neediest, _neediest_first

    elig = np.arange(100, 100 + 2 * len(entries), 2, dtype=np.int64)
    need = np.asarray([x for x, _ in entries], dtype=np.int64)
    among = np.asarray([y for _, y in entries], dtype=np.bool_)
    whole, first = np.empty(len(entries), np.int64), np.empty(len(entries), np.int64)
    n = _neediest(elig, need, among, whole, np.zeros(2, np.int64))
    k = _neediest_first(elig, need, among, first, m)
    assert first[:k].tolist() == whole[: min(n, m)].tolist()
