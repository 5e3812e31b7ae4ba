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


def test_each_move_holds_its_place_for_the_fixed_cost_after_its_bytes() -> None:
    # One move per broker at a time, 2 s of fixed cost per move. Broker 9 receives two 50 MiB moves:
    # the first copies 0-1 s and lands at 3 s; the second starts then, copies 3-4 s, lands at 6 s.
    # Broker 8's 100 MiB move shares nothing with them: 0-2 s copying, landed at 4 s.
    chains = [[step(0, [1], [9], 50)], [step(1, [2], [9], 50)], [step(2, [3], [8], 100)]]
    sched = simulate(chains, 1, 50, T, fixed_seconds=2.0)
    spans = sorted((round(s.start, 6), round(s.end, 6), s.step.adds) for s in sched.steps)
    assert spans == [(0.0, 3.0, (9,)), (0.0, 4.0, (8,)), (3.0, 6.0, (9,))]
    assert math.isclose(sched.seconds, 6.0)
    assert math.isclose(sched.bound_seconds, 2.0)  # bytes / throttle: the fixed cost is no bandwidth


def test_a_copied_move_gives_its_bandwidth_to_the_others_during_its_fixed_cost() -> None:
    # 50 + 100 MiB into broker 9 at 50 MiB/s, 1 s fixed cost: 25 MiB/s each until the small one's
    # bytes are in at 2 s (it lands at 3 s); meanwhile the large one has the whole 50 MiB/s for its
    # last 50 MiB: copied at 3 s, landed at 4 s.
    sched = simulate([[step(0, [1], [9], 100)], [step(1, [2], [9], 50)]], 5, 50, T, fixed_seconds=1.0)
    assert sorted(round(s.end, 6) for s in sched.steps) == [3.0, 4.0]


def test_a_move_that_only_drops_replicas_costs_the_fixed_cost() -> None:
    sched = simulate([[step(0, [1, 2], [1], 0)]], 5, 50, T, fixed_seconds=1.5)
    assert [(s.start, s.end) for s in sched.steps] == [(0.0, 1.5)] and sched.seconds == 1.5


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


# --------------------------------------------------------------------------- edge cases, bookkeeping, exact figures


def test_no_steps_is_an_empty_schedule_of_zero_seconds() -> None:
    sched = simulate([], 5, 50, T)
    assert (sched.steps, sched.seconds, sched.bound_seconds) == ([], 0.0, 0.0)
    assert (sched.max_moves_per_broker, sched.max_in_flight) == (5, 50)
    assert physical_bound([], T) == 0.0


def test_physical_bound_is_the_busiest_brokers_bytes_over_the_throttle_and_zero_without_a_throttle() -> None:
    # Broker 1 leads both: 100 + 50 MiB out; broker 9 receives 100 MiB: busiest 150 MiB at 50 MiB/s = 3 s.
    steps = [step(0, [1], [9], 100), step(1, [1], [8], 50)]
    assert math.isclose(physical_bound(steps, T), 3.0)
    assert physical_bound(steps, 0) == 0.0  # no throttle given: no bound to state
    # A step that only drops a replica copies nothing: no bound either.
    assert physical_bound([step(2, [1, 2], [1], 100)], T) == 0.0


def test_a_step_that_only_drops_a_replica_is_done_at_once_and_frees_the_next_dispatch() -> None:
    # p-1 drops broker 3 (no new replica: lane NO_LANE, metadata only). One move per broker:
    # broker 9 takes the 100 MiB move (2 s), then the 50 MiB one (1 s). The drop starts in the
    # first dispatch, between the two (lane 9 then has a move in flight, the drop's lane none),
    # and ends at once: the second move into 9 must still start at 2 s and end at 3 s.
    drop = step(1, [1, 3], [1], 10)
    big, small = step(0, [4], [9], 100), step(2, [5], [9], 50)
    order, after = priority_order([[big], [drop], [small]])
    d = Dispatcher(order, after, 1, 50, T)
    assert d.lane(order.index(drop)) == -1
    assert d.start() == [order.index(big), order.index(drop)]
    sched = simulate([[big], [drop], [small]], 1, 50, T)
    times = {s.step.p: (round(s.start, 6), round(s.end, 6)) for s in sched.steps}
    assert times == {0: (0.0, 2.0), 1: (0.0, 0.0), 2: (2.0, 3.0)}
    assert math.isclose(sched.seconds, 3.0)
    # With room for both moves at once, the drop sits between them in one dispatch: the later one must start too.
    sched = simulate([[big], [drop], [step(2, [5], [9], 50)]], 2, 50, T)
    times = {s.step.p: (round(s.start, 6), round(s.end, 6)) for s in sched.steps}
    # 100 + 50 MiB into 9 at 25 MiB/s each: the small one ends at 2 s, the big one's last 50 MiB at 50 MiB/s: 3 s.
    assert times == {0: (0.0, 3.0), 1: (0.0, 0.0), 2: (0.0, 2.0)}


def test_broker_zero_receives_like_any_other_broker() -> None:
    # As test_moves_into_one_broker_share_its_throttle, into broker 0: when the 50 MiB move ends
    # at 2 s, the 100 MiB one must speed up to 50 MiB/s for its last 50 MiB: 3 s, not 4 s.
    sched = simulate([[step(0, [1], [0], 100)], [step(1, [2], [0], 50)]], 5, 50, T)
    assert sorted((round(s.start, 6), round(s.end, 6)) for s in sched.steps) == [(0.0, 2.0), (0.0, 3.0)]


def test_produce_rates_into_one_broker_add_up_and_leave_with_their_move() -> None:
    # Into broker 9 at 50 MiB/s: X 80 MiB producing 5 MiB/s (from 1), Y 35 MiB producing 10 MiB/s (from 2).
    # Both: (50 - 5 - 10) / 2 = 17.5 MiB/s each (their leaders offer 45 and 40). Y ends at 35 / 17.5 = 2 s;
    # X has 80 - 35 = 45 MiB left, now at min(50 - 5, 50 - 5) = 45 MiB/s: 1 s more, 3 s in all.
    x, y = step(0, [1], [9], 80, rate=5 * MiB), step(1, [2], [9], 35, rate=10 * MiB)
    ends = {s.step.p: s.end for s in simulate([[x], [y]], 5, 50, T).steps}
    assert math.isclose(ends[1], 2.0) and math.isclose(ends[0], 3.0)


def test_produce_rates_out_of_one_leader_add_up_and_leave_with_their_move() -> None:
    # The same figures on the sending side: leader 1 sends X (to 8) and Y (to 9).
    x, y = step(0, [1], [8], 80, rate=5 * MiB), step(1, [1], [9], 35, rate=10 * MiB)
    ends = {s.step.p: s.end for s in simulate([[x], [y]], 5, 50, T).steps}
    assert math.isclose(ends[1], 2.0) and math.isclose(ends[0], 3.0)


def test_every_move_a_freed_leader_serves_is_repriced_not_only_the_first() -> None:
    # Throttle 60 MiB/s. Leader 1 sends A (60 MiB to 5), D (50 MiB to 6), B (20 MiB to 9): 20 MiB/s each.
    # Broker 5 also receives E (36 MiB from 2, producing 30 MiB/s): (60 - 30) / 2 = 15 MiB/s for A and E.
    # Dispatch order A, D, B, E (lane 5 first, then lanes 6 and 9 before lane 5's second move).
    # t=1: B ends (20 / 20). Leader 1 now offers 30: A stays at 15 (broker 5 limits it), D goes to 30:
    #      its last 50 - 20 = 30 MiB end at t=2. E: 36 - 15 = 21 MiB left at 15: ends t=2.4.
    # t=2.4: broker 5 is A's alone, no produce: A at 60 MiB/s; 60 - 15 * 2.4 = 24 MiB left: ends t=2.8.
    throttle = 60 * MiB
    a, d, b = step(0, [1], [5], 60), step(1, [1], [6], 50), step(2, [1], [9], 20)
    e = step(3, [2], [5], 36, rate=30 * MiB)
    sched = simulate([[a], [d], [b], [e]], 5, 50, throttle)
    ends = {s.step.p: s.end for s in sched.steps}
    assert [round(ends[p], 6) for p in range(4)] == [2.8, 2.0, 1.0, 2.4]
    assert math.isclose(sched.seconds, 2.8)


def test_the_dispatchers_counters_follow_every_start_and_completion() -> None:
    # A: leader 1 to 5 and 6 (3 MiB/s produce); B: leader 1 to 5 (2 MiB/s); C: leader 4 to 6 (1 MiB/s).
    a = step(0, [1, 2], [5, 6], 40, rate=3 * MiB)
    b = step(1, [1, 3], [5, 3], 30, rate=2 * MiB)
    c = step(2, [4], [6], 20, rate=1 * MiB)
    order, after = priority_order([[a], [b], [c]])
    assert order == [a, b, c]
    d = Dispatcher(order, after, 5, 50, T)
    # lane 5 (80 + 30 MiB) then lane 6 (20 MiB, nothing in flight) before lane 5 again.
    assert d.start() == [0, 2, 1]

    def counters() -> tuple[dict, dict, dict, dict]:
        return ({k: d.inflow[k] / MiB for k in (5, 6)}, {k: d.outflow[k] / MiB for k in (1, 4)},
                {k: d.receiving[k] for k in (5, 6)}, {k: d.busy[k] for k in (1, 2, 4, 5, 6)})

    # inflow 5: 3 + 2, 6: 3 + 1; outflow 1: 3 x 2 replicas + 2, 4: 1. Busy: A involves 5, 6 and its
    # leavers 1, 2; B 5 and 1 (broker 3 stays); C 6 and 4.
    assert counters() == ({5: 5, 6: 4}, {1: 8, 4: 1}, {5: 2, 6: 2}, {1: 2, 2: 1, 4: 1, 5: 2, 6: 2})
    d.finish(0)
    assert counters() == ({5: 2, 6: 1}, {1: 2, 4: 1}, {5: 1, 6: 1}, {1: 1, 2: 0, 4: 1, 5: 1, 6: 1})
    d.finish(1)
    d.finish(2)
    assert counters() == ({5: 0, 6: 0}, {1: 0, 4: 0}, {5: 0, 6: 0}, dict.fromkeys((1, 2, 4, 5, 6), 0))
    assert d.finished


def test_produce_headroom_into_a_broker_is_full_at_exactly_the_throttle() -> None:
    # A produces 25 MiB/s into 9; B would add 25: 50 MiB/s, the whole throttle, nothing left to copy with.
    # C (no produce traffic) needs no headroom and starts beside them.
    a = step(0, [1], [9], 30, rate=25 * MiB)
    b = step(1, [2], [9], 20, rate=25 * MiB)
    c = step(2, [3], [9], 10)
    order, after = priority_order([[a], [b], [c]])
    d = Dispatcher(order, after, 5, 50, T)
    assert d.start() == [0, 2]
    assert dict(d.waiting_on) == {9: {9}}
    d.finish(0)
    assert d.start() == [1]


def test_produce_headroom_adds_up_over_the_moves_in_flight() -> None:
    # A and B produce 20 MiB/s each into 9: 40 in flight; C's 20 more would make 60 >= 50.
    steps = [step(p, [p + 1], [9], 30 - p, rate=20 * MiB) for p in range(3)]
    order, after = priority_order([[s] for s in steps])
    d = Dispatcher(order, after, 5, 50, T)
    assert d.start() == [0, 1]


def test_leader_headroom_counts_every_new_replica_of_a_move() -> None:
    # Leader 1 sends A (10 MiB/s produce) to 8; B (20 MiB/s) would go to 6 and 7: 10 + 20 x 2 = 50 MiB/s out
    # of broker 1, the whole throttle: B waits, on broker 1, though each receiver alone has room.
    # A's lane (50 MiB to receive) goes before B's (20 MiB x 2).
    a = step(0, [1], [8], 50, rate=10 * MiB)
    b = step(1, [1, 2, 3], [1, 6, 7], 20, rate=20 * MiB)
    order, after = priority_order([[a], [b]])
    d = Dispatcher(order, after, 5, 50, T)
    assert d.start() == [0]
    assert dict(d.waiting_on) == {1: {6}}
    d.finish(0)
    assert d.start() == [1]


def test_a_lane_looks_at_eight_candidates_before_it_waits() -> None:
    # H (40 MiB/s produce into 9) runs; the next eight into 9 (20 MiB/s each) do not fit beside it.
    # The ninth (no produce) would, but a lane looks at CANDIDATES = 8 steps, then waits on broker 9.
    hot = step(0, [1], [9], 100, rate=40 * MiB)
    blocked = [step(p, [p + 10], [9], 50, rate=20 * MiB) for p in range(1, 9)]
    ninth = step(9, [30], [9], 10)
    order, after = priority_order([[hot], *[[s] for s in blocked], [ninth]])
    d = Dispatcher(order, after, 20, 50, T)
    assert d.start() == [0]
    assert dict(d.waiting_on) == {9: {9}}
    assert sorted(d.lane_ready[9]) == list(range(1, 10))  # every step looked at is kept


def test_a_lane_that_cannot_start_waits_on_the_broker_that_blocked_it_and_others_go_on() -> None:
    # One move per broker. A (broker 1 to 8) runs; B (broker 1 to 9) is blocked by broker 1, its source;
    # lanes 6 and 7 still start in the same dispatch.
    a, b = step(0, [1], [8], 100), step(1, [1], [9], 50)
    dd, c = step(2, [4], [6], 20), step(3, [2], [7], 10)
    order, after = priority_order([[a], [b], [dd], [c]])
    d = Dispatcher(order, after, 1, 50, T)
    assert d.start() == [0, 2, 3]
    assert dict(d.waiting_on) == {1: {9}}
    d.finish(3)  # brokers 7 and 2: nothing waits on them
    assert d.start() == []
    d.finish(0)  # broker 1 is free: lane 9 wakes though D still runs
    assert d.start() == [1]


def test_a_lane_waits_on_the_broker_that_blocked_its_first_candidate() -> None:
    # One move per broker; A (1 to 8) and E (2 to 7) run. Lane 9's B1 is blocked by broker 1, B2 by
    # broker 2: the lane waits on broker 1, the blocker of its preferred (largest) step.
    a, e = step(0, [1], [8], 100), step(1, [2], [7], 95)
    b1, b2 = step(2, [1], [9], 50), step(3, [2], [9], 40)
    order, after = priority_order([[a], [e], [b1], [b2]])
    d = Dispatcher(order, after, 1, 50, T)
    assert d.start() == [0, 1]
    assert dict(d.waiting_on) == {1: {9}}


def test_a_queued_lane_is_ranked_by_its_latest_count_of_moves_in_flight() -> None:
    # Two at a time. X (to 5 and 9) and Z (to 6 and 9) start first: broker 9 receives two. When Z ends,
    # broker 9 still receives X's replica, so lane 8 (nothing in flight) goes before lane 9, though
    # lane 9 has more bytes to receive (50 MiB to 40) and was queued when it received nothing.
    x = step(0, [1, 2], [5, 9], 100)
    z = step(1, [3, 4], [6, 9], 90)
    w, v = step(2, [10], [9], 50), step(3, [11], [8], 40)
    order, after = priority_order([[x], [z], [w], [v]])
    d = Dispatcher(order, after, 5, 2, T)
    assert d.start() == [0, 1]
    d.finish(1)
    assert d.start() == [3]


def test_abandoning_a_step_with_no_later_steps() -> None:
    order, after = priority_order([[step(0, [1], [9], 10)]])
    d = Dispatcher(order, after, 5, 50, T)
    assert d.start() == [0]
    d.abandon(0)
    assert d.abandoned == {0} and d.finished and d.start() == []


def test_when_nothing_runs_every_waiting_lane_wakes_and_so_do_the_finished_steps_lanes() -> None:
    # One move per broker. A (to 8) runs; A2 (to 8) waits on broker 8; H (to 9, 60 MiB/s produce: over
    # the throttle on its own) waits on broker 9. When A ends nothing runs: lane 8 wakes (its broker
    # freed) and lane 9 too (its step may now start alone). Lane 8 (90 MiB) goes first, so H waits again.
    a, a2 = step(0, [1], [8], 100), step(1, [2], [8], 90)
    h = step(2, [3], [9], 10, rate=60 * MiB)
    order, after = priority_order([[a], [a2], [h]])
    d = Dispatcher(order, after, 1, 50, T)
    assert d.start() == [0]
    assert dict(d.waiting_on) == {9: {9}, 8: {8}}
    d.finish(0)
    assert d.start() == [1]
    d.finish(1)
    assert d.start() == [2]


def test_the_simulator_refuses_to_return_a_schedule_with_steps_never_run(monkeypatch) -> None:
    import pytest

    from kafka_rebalance.planner import schedule

    class Stalled(schedule.Dispatcher):
        finished = False  # as if a dispatcher bug left a step waiting forever

    monkeypatch.setattr(schedule, "Dispatcher", Stalled)
    with pytest.raises(RuntimeError, match="^continuous schedule stalled with steps left$"):
        simulate([[step(0, [1], [9], 10)]], 5, 50, T)


def test_a_move_without_produce_traffic_needs_no_throttle_headroom() -> None:
    # H alone produces 60 MiB/s into 9, over the 50 MiB/s throttle (it starts because nothing runs);
    # C produces nothing into 9, so it adds no produce load there and starts beside H at once.
    hot, cold = step(0, [1], [9], 20, rate=60 * MiB), step(1, [2], [9], 10)
    order, after = priority_order([[hot], [cold]])
    d = Dispatcher(order, after, 5, 50, T)
    assert d.start() == [0, 1]
