"""The continuous schedule: its dispatch rules and its simulated duration, on cases worked out by hand."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rebalance.planner.schedule import Dispatcher, physical_bound, priority_order, simulate
from kafka_rebalance.planner.steps import Step

MiB = 1024**2
T = 50 * MiB  # throttle, bytes/s


def step(p: int, before: list[int], after: list[int], size_mib: float, leader: int | None = None, seq: int = 0,
         rate: float = 0.0) -> Step:
    adds = tuple(b for b in after if b not in before)
    removes = tuple(b for b in before if b not in after)
    return Step(p, "t", p, tuple(before), tuple(after), adds, removes, seq, before[0] if leader is None else leader,
                int(size_mib * MiB), rate)


def test_moves_into_one_broker_share_its_throttle() -> None:
    # 100 + 50 MiB into broker 9 at 50 MiB/s: 25 MiB/s each until the small one ends at 2 s,
    # then the large one's last 50 MiB alone at 50 MiB/s: 3 s, the physical bound.
    sched = simulate([[step(0, [1], [9], 100)], [step(1, [2], [9], 50)]], 5, 50, T)
    assert math.isclose(sched.seconds, 3.0)
    assert math.isclose(sched.bound_seconds, 3.0)
    ends = sorted(s.end for s in sched.steps)
    assert [round(e, 6) for e in ends] == [2.0, 3.0]


def test_a_free_slot_is_refilled_at_once_instead_of_waiting_for_a_wave() -> None:
    # One move per broker at a time. Broker 8 receives 100 MiB (2 s); broker 9 four moves of
    # 25 MiB (0.5 s each). In waves, every wave waits for the 2 s move; continuously broker 9's
    # moves follow each other while broker 8's runs: 2 s in all, the bound.
    chains = [[step(0, [1], [8], 100)]] + [[step(p, [p + 1], [9], 25)] for p in range(1, 5)]
    sched = simulate(chains, 1, 50, T)
    assert math.isclose(sched.seconds, 2.0)
    into_9 = sorted((round(s.start, 6), round(s.end, 6)) for s in sched.steps if s.step.adds == (9,))
    assert into_9 == [(0.0, 0.5), (0.5, 1.0), (1.0, 1.5), (1.5, 2.0)]


def test_one_leader_sends_at_its_throttle_too() -> None:
    # Broker 1 leads both partitions: 50 MiB to broker 8 and 50 MiB to broker 9 share its
    # leader throttle, 25 MiB/s each: 2 s, and the bound is broker 1's 100 MiB out.
    sched = simulate([[step(0, [1, 2], [8, 2], 50)], [step(1, [1, 3], [9, 3], 50)]], 5, 50, T)
    assert math.isclose(sched.seconds, 2.0)
    assert math.isclose(sched.bound_seconds, 2.0)


def test_produce_traffic_is_subtracted_from_the_throttle() -> None:
    # 100 MiB while the partition takes 10 MiB/s of produce: 40 MiB/s left, 2.5 s.
    sched = simulate([[step(0, [1], [9], 100, rate=10 * MiB)]], 5, 50, T)
    assert math.isclose(sched.seconds, 2.5)


def test_a_partitions_next_step_waits_for_its_previous_one() -> None:
    first = step(0, [1, 2], [3, 2], 50, seq=0)
    second = step(0, [3, 2], [3, 4], 50, seq=1, leader=3)
    sched = simulate([[first, second]], 5, 50, T)
    by_seq = {s.step.seq: s for s in sched.steps}
    assert math.isclose(by_seq[0].end, 1.0)
    assert math.isclose(by_seq[1].start, 1.0) and math.isclose(by_seq[1].end, 2.0)
    assert by_seq[1].after == sched.steps.index(by_seq[0])


def test_the_dispatcher_keeps_the_caps_and_never_restarts_finished_steps() -> None:
    chains = [[step(p, [1], [9], 10 + p)] for p in range(4)]
    order, after = priority_order(chains)
    assert [s.size for s in order] == sorted((s.size for s in order), reverse=True)  # largest first
    d = Dispatcher(order, after, max_moves_per_broker=2, max_in_flight=50, throttle=T)
    assert d.start() == [0, 1]  # broker 9 (and broker 1, every move's source) take two at a time
    assert d.start() == []
    d.finish(1)
    assert d.start() == [2]
    # After a restart with steps 0 and 1 recorded as done, only 2 and 3 remain.
    resumed = Dispatcher(order, after, 2, 50, T, done={0, 1})
    assert resumed.start() == [2, 3]


def test_a_resumed_dispatcher_counts_moves_still_in_flight_and_never_starts_them_again() -> None:
    chains = [[step(p, [1], [9], 10 + p)] for p in range(4)]
    order, after = priority_order(chains)
    d = Dispatcher(order, after, 2, 50, T, done={0}, running={1})
    assert d.in_flight == {1}
    assert d.start() == [2]  # broker 9 holds step 1 and now step 2: the cap of two is full
    d.finish(1)
    assert d.start() == [3]
    d.finish(2)
    d.finish(3)
    assert d.start() == [] and d.finished


def test_an_abandoned_step_drops_its_partitions_later_steps_and_frees_its_brokers() -> None:
    first = step(0, [1, 2], [3, 2], 50, seq=0)
    second = step(0, [3, 2], [3, 4], 50, seq=1, leader=3)
    other = step(1, [1, 5], [6, 5], 10)
    order, after = priority_order([[first, second], [other]])
    d = Dispatcher(order, after, 1, 50, T)
    started = d.start()
    assert {order[i].p for i in started} == {0} and len(started) == 1  # broker 1 is the source of both first steps
    d.abandon(started[0])
    assert d.start() == [order.index(other)]  # broker 1 is free again; partition 0's second step is gone
    d.finish(order.index(other))
    assert d.finished and d.abandoned == {order.index(first), order.index(second)}


def test_the_lane_with_the_most_bytes_still_to_receive_goes_first_and_dropped_steps_leave_it() -> None:
    # Lane 9 (the broker receiving) waits for 50 MiB of p-0's second step and holds two 5 MiB steps ready:
    # 60 MiB to receive. Lane 8: p-0's first step (50 MiB); lane 7: one of 25 MiB. Two moves at a time.
    first = step(0, [1], [8], 50, seq=0)
    second = step(0, [8], [9], 50, seq=1, leader=8)
    small = [step(1, [2], [9], 5), step(2, [3], [9], 5)]
    other = step(3, [4], [7], 25)
    order, after = priority_order([[first, second], [small[0]], [small[1]], [other]])
    ix = {id(s): i for i, s in enumerate(order)}
    d = Dispatcher(order, after, 5, max_in_flight=2, throttle=T)
    started = d.start()
    # lane 9 first (60 MiB), then lane 8 (50 MiB) over lane 7 (25 MiB): 9 already has a move in flight
    assert [order[i].p for i in started] == [1, 0]
    assert d.left == {9: 55 * MiB, 8: 0, 7: 25 * MiB}
    d.abandon(ix[id(first)])  # p-0's second step is dropped: lane 9 has 5 MiB left to receive
    assert d.left[9] == 5 * MiB and d.abandoned == {ix[id(first)], ix[id(second)]}
    d.finish(started[0])
    assert [order[i].p for i in d.start()] == [3, 2]  # now lane 7 (25 MiB) before lane 9 (5 MiB)


def test_a_refused_start_keeps_the_step_for_the_next_dispatch() -> None:
    chains = [[step(p, [1], [9], 10 + p)] for p in range(2)]
    order, after = priority_order(chains)
    d = Dispatcher(order, after, 5, 50, T)
    assert d.start(allow=lambda i: False) == []
    assert d.start(allow=lambda i: i == 0) == [0]
    assert d.start() == [1]


def test_a_global_cap_on_partitions_in_flight() -> None:
    chains = [[step(p, [p + 10], [p + 20], 10)] for p in range(6)]
    order, after = priority_order(chains)
    d = Dispatcher(order, after, 5, max_in_flight=4, throttle=T)
    assert len(d.start()) == 4


@st.composite
def chains(draw: st.DrawFn) -> list[list[Step]]:
    out = []
    for p in range(draw(st.integers(1, 25))):
        src, dst = draw(st.sampled_from([(a, b) for a in range(5) for b in range(5) if a != b]))
        other = next(b for b in range(5) if b not in (src, dst))
        size = draw(st.integers(1, 200))
        first = step(p, [src, other], [dst, other], size, rate=draw(st.sampled_from([0.0, MiB])))
        chain = [first]
        if draw(st.booleans()):
            nxt = next(b for b in range(5) if b not in (dst, other))
            chain.append(Step(p, "t", p, first.after, (dst, nxt), (nxt,), (other,), 1, dst, first.size, first.rate))
        out.append(chain)
    return out


@settings(max_examples=60, deadline=None)
@given(chains(), st.integers(1, 3), st.integers(1, 10))
def test_every_schedule_respects_order_caps_and_physics(cs: list[list[Step]], per_broker: int, in_flight: int) -> None:
    sched = simulate(cs, per_broker, in_flight, T)
    steps = sched.steps
    assert sorted((s.step.p, s.step.seq) for s in steps) == sorted((s.p, s.seq) for c in cs for s in c)
    assert sched.seconds >= physical_bound([s for c in cs for s in c], T) * (1 - 1e-9)
    for s in steps:
        if s.after is not None:
            assert s.start >= steps[s.after].end - 1e-9
    events = sorted({s.start for s in steps})
    for t in events:  # at every start, the caps hold among the steps running then
        running = [s for s in steps if s.start <= t < s.end or (s.start == t == s.end)]
        assert len(running) <= in_flight or len(running) == 1
        for b in range(5):
            assert sum(b in s.step.involved for s in running) <= per_broker or len(running) == 1


def test_a_step_over_the_throttle_on_its_own_never_stalls_the_schedule() -> None:
    # The planner refuses such moves (see test_rules); the dispatcher must still never wait forever
    # on one: blocked by its own produce rate, it starts once nothing else is in flight, and the
    # moves that produce into the same broker wait for it.
    chains = [[step(0, [1], [9], 10, rate=60 * MiB)], [step(1, [2], [9], 10, rate=MiB)], [step(2, [3], [9], 10, rate=MiB)]]
    order, after = priority_order(chains)
    d = Dispatcher(order, after, 5, 50, T)
    first = d.start()
    assert [order[i].p for i in first] == [0]
    d.finish(first[0])
    assert sorted(order[i].p for i in d.start()) == [1, 2]
    sched = simulate(chains, 5, 50, T)
    assert len(sched.steps) == 3 and math.isfinite(sched.seconds)
    # Blocked while an unrelated move (into broker 8, preferred: more bytes) runs, it waits on a
    # broker that never frees; it must start when that move ends.
    sched = simulate([[step(0, [1], [9], 10, rate=60 * MiB)], [step(1, [2], [8], 100)]], 5, 50, T)
    hot = next(s for s in sched.steps if s.step.p == 0)
    assert math.isclose(hot.start, 2.0)  # 100 MiB at 50 MiB/s
