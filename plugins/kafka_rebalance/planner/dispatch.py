"""The continuous schedule's dispatch, compiled (numba): which steps start when, and a whole plan simulated under it.

``schedule.Dispatcher`` (the executor's and the simulator's) documents the rule and keeps its state in the arrays
built here (``build``); the functions here are the rule. ``simulate_steps`` runs every step of a plan under it and
under the throttle model of ``schedule.simulate`` in one call: in Python that simulation was 17 s of the 400-broker
plan's 117 s with every goal on. The disk ledger's arithmetic is ``peaks.ledger_full``/``ledger_add``, the batcher's
too.

Brokers are dense indexes into ``Table.ids`` (sorted broker ids, with -1: the lane of steps that add nothing and an
unknown leader), so every order the rule reads (lanes by id, events by destination) stays the order of the ids.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Sequence
from itertools import compress
from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types
from numba.experimental import structref
from numba.typed import List

from kafka_rebalance.planner.peaks import ledger_add, ledger_full
from kafka_rebalance.planner.steps import ragged, step_fields
from kafka_rebalance.planner.structs import Fields, register

if TYPE_CHECKING:
    from kafka_rebalance.planner.peaks import DiskLedger
    from kafka_rebalance.planner.steps import Step

CANDIDATES = 8  # steps of a lane looked at before the lane waits for capacity elsewhere
NO_LANE = -1  # the lane (broker id) of steps that only drop replicas: nothing to copy

# What does not change while the steps run, per step (CSR lists: ``x_at[i]:x_at[i + 1]`` of ``x``), with the limits.
# ``check``/``add``/``free``: the disk ledger's resources of each step (``DiskLedger.entries``); ``lane_at``: where each
# lane's ready steps sit in ``Live.ready``; ``res_broker``: each ledger resource's broker.
Table = namedtuple("Table", [
    "ids", "lane", "size", "rate", "leader", "n_adds", "adds_at", "adds", "inv_at", "inv", "rem_at", "rem", "succ_at",
    "succ", "check_at", "check", "add_at", "add", "free_at", "free", "lane_at", "res_broker", "has_disk", "per_broker",
    "max_in_flight", "throttle",
])
# What does: per broker (moves in flight, produce rates in flight into it and out of it as leader, new replicas in flight
# into it, bytes its lane has not started); each lane's ready steps, highest index first; per step, whether it waits on
# its predecessor, is in flight, completed or abandoned; ``counts``: steps in flight and steps waiting on a predecessor;
# ``heap``: the lanes offered, by (new replicas in flight, -bytes left, lane); ``wait_on``/``wait_disk``:
# per broker, the lanes waiting for it to free a move or disk room (``waiting``/``waiting_disk``: set membership); the
# ledger's bytes and limits; ``woken``/``n_woken``/``seen``: the lanes a completion wakes.
Live = namedtuple("Live", [
    "busy", "inflow", "outflow", "receiving", "left", "ready", "n_ready", "waiting", "in_flight", "completed",
    "abandoned", "counts", "heap", "wait_on", "waiting_on", "wait_disk", "waiting_disk", "res_load", "res_limit",
    "woken", "n_woken", "seen",
])


# A min-heap of items by (x, a, b), each item at most once (a new key replaces its old one): the lanes by (new replicas in
# flight, -bytes left, lane), the simulation's events by (time, step, destination). Python's heapq kept stale entries beside the
# live ones and skipped them when popped; an item heap pops the live ones in the same order (their keys are distinct),
# and numba's heapq over a typed list of tuples was slower than Python's.
Heap = namedtuple("Heap", ["x", "a", "b", "heap", "pos", "n"])

# The kernels take these records as structs (planner/structs.py); Python reads the same arrays through the namedtuples
# ``build`` returns beside them, and the kernels' annotations name the namedtuples (the structs have their fields).


class TableType(Fields):
    pass


class LiveType(Fields):
    pass


class HeapType(Fields):
    pass


class TableRef(structref.StructRefProxy):
    pass


class LiveRef(structref.StructRefProxy):
    pass


class HeapRef(structref.StructRefProxy):
    pass


@njit(cache=True)
def new_heap(items: int) -> Heap:
    return HeapRef(np.zeros(items), np.zeros(items, np.int64), np.zeros(items, np.int64),  # type: ignore[return-value]
                   np.zeros(items, np.int64), np.full(items, -1, np.int64), np.zeros(1, np.int64))


@njit(cache=True, inline="always")
def _before(x: np.ndarray, a: np.ndarray, b: np.ndarray, u: int, v: int) -> bool:
    if x[u] != x[v]:
        return x[u] < x[v]
    if a[u] != a[v]:
        return a[u] < a[v]
    return b[u] < b[v]


@njit(cache=True, inline="always")
def _sift(x: np.ndarray, a: np.ndarray, b: np.ndarray, heap: np.ndarray, pos: np.ndarray, n: int, k: int) -> None:
    """Move the item at heap place k up or down to where its key belongs."""
    item = heap[k]
    while k > 0 and _before(x, a, b, item, heap[(k - 1) // 2]):
        parent = heap[(k - 1) // 2]
        heap[k], pos[parent] = parent, k
        k = (k - 1) // 2
    while True:
        c = 2 * k + 1
        if c >= n:
            break
        if c + 1 < n and _before(x, a, b, heap[c + 1], heap[c]):
            c += 1
        if not _before(x, a, b, heap[c], item):
            break
        heap[k], pos[heap[c]] = heap[c], k
        k = c
    heap[k], pos[item] = item, k


# The heap's operations on its arrays (``Heap``'s fields; ``count``: its ``n``), inlined where they are called: the
# simulation keeps its event heap as local arrays, since reading a struct's field (or passing an array to a function
# that is not inlined) takes and drops a reference to the array, and those were half of the simulation's time at 400
# brokers / 1M partitions.

@njit(cache=True, inline="always")
def _put(x: np.ndarray, a: np.ndarray, b: np.ndarray, heap: np.ndarray, pos: np.ndarray, count: np.ndarray, item: int,
         kx: float, ka: int, kb: int) -> None:  # fmt: skip
    x[item], a[item], b[item] = kx, ka, kb
    if pos[item] < 0:
        heap[count[0]] = item
        pos[item] = count[0]
        count[0] += 1
    _sift(x, a, b, heap, pos, count[0], pos[item])


@njit(cache=True, inline="always")
def _pop(x: np.ndarray, a: np.ndarray, b: np.ndarray, heap: np.ndarray, pos: np.ndarray, count: np.ndarray) -> int:
    if count[0] == 0:
        return -1
    top = heap[0]
    count[0] -= 1
    pos[top] = -1
    if count[0] > 0:
        heap[0] = heap[count[0]]
        pos[heap[0]] = 0
        _sift(x, a, b, heap, pos, count[0], 0)
    return top


@njit(cache=True)
def heap_put(h: Heap, item: int, x: float, a: int, b: int) -> None:
    _put(h.x, h.a, h.b, h.heap, h.pos, h.n, item, x, a, b)


@njit(cache=True)
def heap_pop(h: Heap) -> int:
    """The item with the lowest key, out of the heap; -1 when it is empty."""
    return _pop(h.x, h.a, h.b, h.heap, h.pos, h.n)


@njit(cache=True)
def _involved(adds_at: np.ndarray, adds: np.ndarray, rem_at: np.ndarray, rem: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per step, ``Step.involved``: its new replicas' destinations and as many leaving replicas' sources."""
    n = adds_at.shape[0] - 1
    at = np.zeros(n + 1, np.int64)
    for i in range(n):
        k = adds_at[i + 1] - adds_at[i]
        at[i + 1] = at[i] + k + min(k, rem_at[i + 1] - rem_at[i])
    out = np.empty(at[n], np.int64)
    for i in range(n):
        k = adds_at[i + 1] - adds_at[i]
        out[at[i]:at[i] + k] = adds[adds_at[i]:adds_at[i + 1]]
        m = at[i + 1] - at[i] - k
        out[at[i] + k:at[i + 1]] = rem[rem_at[i]:rem_at[i] + m]
    return at, out


# The steps' figures as arrays, brokers as dense indexes into ``ids`` (sorted broker ids, -1 first): what the dispatcher
# and the batcher (batching.py) read. CSR lists as in ``Table``; ``check``/``add``/``free``: the disk ledger's.
Columns = namedtuple("Columns", [
    "ids", "size", "rate", "leader", "adds_at", "adds", "rem_at", "rem", "inv_at", "inv", "check_at", "check", "add_at",
    "add", "free_at", "free", "res_broker",
])


def columns(steps: Sequence[Step], ledger: DiskLedger | None) -> Columns:
    """``steps`` as arrays (``Columns``)."""
    n = len(steps)
    f = step_fields(steps, "adds", "removes", "leader", "dirs", "size", "rate")
    adds_at, adds = ragged(f["adds"])
    rem_at, rem = ragged(f["removes"])
    leader = np.array(f["leader"], dtype=np.int64)
    # every broker the rules may name: -1 (the lane of steps adding nothing; an unknown leader) first
    within = [b for s in compress(steps, f["dirs"]) for b in s.within]
    named = [np.array([NO_LANE]), adds, rem, leader, np.array(within, dtype=np.int64)]
    if ledger is not None:
        named.append(np.array([b for b, _ in ledger.keys], dtype=np.int64))
    ids = np.unique(np.concatenate(named).astype(np.int64))
    adds, rem, leader = (np.searchsorted(ids, x).astype(np.int64) for x in (adds, rem, leader))
    inv_at, inv = _involved(adds_at, adds, rem_at, rem)
    if ledger is not None:
        entries = [ledger.entries(s) for s in steps]
        check_at, check = ragged([e[0] for e in entries])
        add_at, add = ragged([e[1] for e in entries])
        free_at, free = ragged([e[2] for e in entries])
        res_broker = np.searchsorted(ids, np.asarray([b for b, _ in ledger.keys], dtype=np.int64)).astype(np.int64)
    else:
        check_at = add_at = free_at = np.zeros(n + 1, dtype=np.int64)
        check = add = free = res_broker = np.zeros(0, dtype=np.int64)
    return Columns(ids, np.array(f["size"], dtype=np.int64), np.array(f["rate"], dtype=np.float64), leader, adds_at,
                   adds, rem_at, rem, inv_at, inv, check_at, check, add_at, add, free_at, free, res_broker)


def permuted(c: Columns, by: np.ndarray) -> Columns:
    """``c`` with its steps in the order ``by`` (step i of the result is step by[i] of ``c``)."""
    def rows(at: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        width = np.diff(at)[by]
        new_at = np.zeros(len(by) + 1, dtype=np.int64)
        np.cumsum(width, out=new_at[1:])
        return new_at, values[np.repeat(at[by] - new_at[:-1], width) + np.arange(new_at[-1], dtype=np.int64)]

    (adds_at, adds), (rem_at, rem), (inv_at, inv) = rows(c.adds_at, c.adds), rows(c.rem_at, c.rem), rows(c.inv_at, c.inv)
    (check_at, check), (add_at, add), (free_at, free) = (rows(c.check_at, c.check), rows(c.add_at, c.add),
                                                         rows(c.free_at, c.free))  # fmt: skip
    return Columns(c.ids, c.size[by], c.rate[by], c.leader[by], adds_at, adds, rem_at, rem, inv_at, inv, check_at, check,
                   add_at, add, free_at, free, c.res_broker)


def build(steps: Sequence[Step], after: Sequence[int | None], per_broker: int, max_in_flight: int, throttle: float,
          ledger: DiskLedger | None, done: Iterable[int], running: Iterable[int],
          made: tuple[Sequence[Step], np.ndarray] | None = None,
          made_columns: Columns | None = None) -> tuple[Table, Live, Table, Live]:  # fmt: skip
    """The dispatcher's arrays for ``steps`` (priority order) and their predecessors, as ``schedule.Dispatcher`` takes
    them; ``done``/``running`` as there; ``made``: as there. The records twice: as namedtuples for Python to read, and
    as the structs the kernels take (the same arrays)."""
    n = len(steps)
    if made is None:
        c = columns(steps, ledger)
    else:
        c = permuted(columns(made[0], ledger) if made_columns is None else made_columns, made[1])
    n_ids = len(c.ids)
    n_adds = np.diff(c.adds_at)
    lane = np.full(n, np.searchsorted(c.ids, NO_LANE), dtype=np.int64)
    lane[n_adds > 0] = c.adds[c.adds_at[:-1][n_adds > 0]]
    pred = np.fromiter((-1 if a is None else a for a in after), dtype=np.int64, count=n)
    # each step's successors (a partition's steps follow one another), by step
    follows = np.flatnonzero(pred >= 0)
    succ = follows[np.argsort(pred[follows], kind="stable")].astype(np.int64)
    succ_at = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(pred[follows], minlength=n), out=succ_at[1:])
    if ledger is not None:
        res_load, res_limit = ledger.res_load, ledger.res_limit
    else:
        res_load = res_limit = np.zeros(0, dtype=np.float64)
    lane_at = np.zeros(n_ids + 1, dtype=np.int64)
    np.cumsum(np.bincount(lane, minlength=n_ids), out=lane_at[1:])
    table = Table(
        c.ids, lane, c.size, c.rate, c.leader, n_adds, c.adds_at, c.adds, c.inv_at, c.inv, c.rem_at, c.rem, succ_at, succ,
        c.check_at, c.check, c.add_at, c.add, c.free_at, c.free, lane_at, c.res_broker, ledger is not None,
        int(per_broker), int(max_in_flight), float(throttle),
    )
    live = Live(
        np.zeros(n_ids, dtype=np.int64), np.zeros(n_ids), np.zeros(n_ids), np.zeros(n_ids, dtype=np.int64),
        np.zeros(n_ids, dtype=np.int64), np.zeros(n, dtype=np.int64),
        np.zeros(n_ids, dtype=np.int64), np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_),
        np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_), np.zeros(2, dtype=np.int64), new_heap(n_ids),
        _lists(n_ids), np.zeros((n_ids, n_ids), dtype=np.bool_), _lists(n_ids), np.zeros((n_ids, n_ids), dtype=np.bool_),
        res_load, res_limit, np.zeros(n_ids, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(n_ids, dtype=np.bool_),
    )
    completed = np.zeros(n, dtype=np.bool_)
    completed[np.fromiter(done, dtype=np.int64)] = True
    in_run = np.zeros(n, dtype=np.bool_)
    in_run[np.fromiter(running, dtype=np.int64)] = True
    refs = _structs(table, live)
    _init(*refs, pred, completed, in_run)
    return table, live, *refs


@njit(cache=True)
def _structs(table: Table, live: Live) -> tuple[Table, Live]:
    """The records as the kernels' structs (built here, compiled once and cached: ``TableRef(...)`` called from Python
    compiles its constructor anew in every process)."""
    return TableRef(*table), LiveRef(*live)  # type: ignore[return-value]


@njit(cache=True)
def _lists(n: int) -> List:
    out = List()
    for _ in range(n):
        out.append(List.empty_list(types.int64))
    return out


@njit(cache=True)
def _init(t: Table, lv: Live, pred: np.ndarray, completed: np.ndarray, in_run: np.ndarray) -> None:
    n_lanes = lv.n_ready.shape[0]
    for i in range(pred.shape[0]):
        if completed[i]:
            lv.completed[i] = True
            if t.has_disk:
                ledger_add(lv.res_load, t.add[t.add_at[i]:t.add_at[i + 1]], float(t.size[i]))
                ledger_add(lv.res_load, t.free[t.free_at[i]:t.free_at[i + 1]], -float(t.size[i]))
            continue
        lane = t.lane[i]
        lv.left[lane] += t.size[i] * t.n_adds[i]
        if in_run[i]:
            _launch(t, lv, i)
            continue
        prev = pred[i]
        if prev < 0 or completed[prev]:
            lv.n_ready[lane] += 1
        else:
            lv.waiting[i] = True
            lv.counts[1] += 1
    # each lane's ready steps, highest index at the front of its segment (a start takes from the back)
    fill = t.lane_at[:-1] + lv.n_ready
    for i in range(pred.shape[0]):
        if not (lv.completed[i] or in_run[i] or lv.waiting[i]):
            fill[t.lane[i]] -= 1
            lv.ready[fill[t.lane[i]]] = i
    for lane in range(n_lanes):
        _offer(t, lv, lane)


@njit(cache=True)
def requeue(t: Table, lv: Live, lane: int) -> None:
    """A lane ``choose`` took off the heap goes back (its step was held)."""
    _offer(t, lv, lane)


@njit(cache=True)
def _offer(t: Table, lv: Live, lane: int) -> None:
    """(Re)queue a lane under its current key; older entries of it become stale."""
    if lv.n_ready[lane] == 0:
        return
    heap_put(lv.heap, lane, float(lv.receiving[lane]), -lv.left[lane], lane)


@njit(cache=True)
def _ready_insert(t: Table, lv: Live, lane: int, i: int) -> None:
    base, n = t.lane_at[lane], lv.n_ready[lane]
    lo, hi = 0, n
    while lo < hi:  # the first place holding a lower index (the segment runs from the highest down)
        mid = (lo + hi) // 2
        if lv.ready[base + mid] < i:
            hi = mid
        else:
            lo = mid + 1
    for y in range(n, lo, -1):
        lv.ready[base + y] = lv.ready[base + y - 1]
    lv.ready[base + lo] = i
    lv.n_ready[lane] = n + 1


@njit(cache=True)
def _ready_take(t: Table, lv: Live, lane: int, k: int) -> None:
    """Take the lane's k-th lowest ready step out of its list."""
    base, n = t.lane_at[lane], lv.n_ready[lane]
    for y in range(n - 1 - k, n - 1):
        lv.ready[base + y] = lv.ready[base + y + 1]
    lv.n_ready[lane] = n - 1


@njit(cache=True)
def _blocker(t: Table, lv: Live, i: int) -> int:
    """The first broker that keeps step i from starting now, else -1."""
    for x in range(t.inv_at[i], t.inv_at[i + 1]):
        if lv.busy[t.inv[x]] >= t.per_broker:
            return t.inv[x]
    rate = t.rate[i]
    if rate != 0.0 and t.n_adds[i] > 0:
        for x in range(t.adds_at[i], t.adds_at[i + 1]):
            if lv.inflow[t.adds[x]] + rate >= t.throttle:
                return t.adds[x]
        if lv.outflow[t.leader[i]] + rate * t.n_adds[i] >= t.throttle:
            return t.leader[i]
    return -1


@njit(cache=True)
def disk_full(t: Table, lv: Live, i: int) -> int:
    """The broker without disk room for step i now (on it, or in the dir it names), else -1."""
    if not t.has_disk:
        return -1
    r = ledger_full(lv.res_load, lv.res_limit, t.check[t.check_at[i]:t.check_at[i + 1]], float(t.size[i]))
    return -1 if r < 0 else t.res_broker[r]


@njit(cache=True)
def _wait(lists: List, member: np.ndarray, key: int, lane: int) -> None:
    if not member[key, lane]:
        member[key, lane] = True
        lists[key].append(lane)


@njit(cache=True)
def _wake_key(lv: Live, lists: List, member: np.ndarray, key: int) -> None:
    """Every lane waiting on ``key`` is woken (``Live.woken``), and waits there no more."""
    waiting = lists[key]
    if len(waiting) == 0:
        return
    for lane in waiting:
        member[key, lane] = False
        _mark(lv.seen, lv.woken, lv.n_woken, lane)
    waiting.clear()


@njit(cache=True, inline="always")
def _mark(seen: np.ndarray, items: np.ndarray, count: np.ndarray, x: int) -> None:
    """x joins the list ``items[:count[0]]`` unless ``seen`` says it is there: the lanes a completion wakes, the
    brokers an instant of the simulation touched."""
    if not seen[x]:
        seen[x] = True
        items[count[0]] = x
        count[0] += 1


@njit(cache=True)
def choose(t: Table, lv: Live) -> tuple[int, int, int]:
    """The next step to start: (step, its lane, its place among the lane's ready steps), the lane taken off the heap;
    (-1, -1, -1) when none may. Lanes that cannot start anything wait on the broker that blocked them."""
    while lv.counts[0] < t.max_in_flight and lv.heap.n[0] > 0:
        lane = heap_pop(lv.heap)
        n = lv.n_ready[lane]
        if n == 0:
            continue
        base = t.lane_at[lane]
        blocker, full = -1, -1
        for k in range(min(n, CANDIDATES)):
            i = lv.ready[base + n - 1 - k]
            b = _blocker(t, lv, i)
            # With nothing in flight a step starts even if it alone breaks a limit: it could never run otherwise.
            if b < 0 or lv.counts[0] == 0:
                d = disk_full(t, lv, i)
                if d < 0:
                    return i, lane, k
                if full < 0:
                    full = d
            elif blocker < 0:
                blocker = b
        if blocker < 0 and full >= 0:
            _wait(lv.wait_disk, lv.waiting_disk, full, lane)
        else:
            _wait(lv.wait_on, lv.waiting_on, blocker if blocker >= 0 else lane, lane)
    return -1, -1, -1


@njit(cache=True)
def take(t: Table, lv: Live, i: int, lane: int, k: int) -> None:
    """Start step i, the k-th lowest ready step of its lane (``choose``), and requeue the lane."""
    _ready_take(t, lv, lane, k)
    _launch(t, lv, i)
    _offer(t, lv, lane)


@njit(cache=True)
def fit(t: Table, lv: Live) -> tuple[int, int, int]:
    """Where every lane waits for disk room and nothing runs to free it, a smaller step beyond a lane's first
    candidates may still fit: the first ready step (by lane, then step) with room, as ``choose`` returns it; else
    (-1, -1, -1). Looks at every ready step once (rare: the plan is nearly stuck)."""
    if not t.has_disk or lv.counts[0] > 0 or not lv.waiting_disk.any():
        return -1, -1, -1
    for lane in range(lv.n_ready.shape[0]):
        base, n = t.lane_at[lane], lv.n_ready[lane]
        for k in range(n):
            i = lv.ready[base + n - 1 - k]
            if disk_full(t, lv, i) < 0:
                return i, lane, k
    return -1, -1, -1


@njit(cache=True)
def start_steps(t: Table, lv: Live, out: np.ndarray) -> int:
    """The steps to submit now, started, into ``out`` (``schedule.Dispatcher.start`` without a hold); how many."""
    n = 0
    while True:
        i, lane, k = choose(t, lv)
        if i < 0:
            break
        take(t, lv, i, lane, k)
        out[n] = i
        n += 1
    if n == 0:
        i, lane, k = fit(t, lv)
        if i >= 0:
            take(t, lv, i, lane, k)
            out[n] = i
            n += 1
    return n


@njit(cache=True)
def _launch(t: Table, lv: Live, i: int) -> None:
    for x in range(t.inv_at[i], t.inv_at[i + 1]):
        lv.busy[t.inv[x]] += 1
    for x in range(t.adds_at[i], t.adds_at[i + 1]):
        lv.inflow[t.adds[x]] += t.rate[i]
        lv.receiving[t.adds[x]] += 1
    lv.outflow[t.leader[i]] += t.rate[i] * t.n_adds[i]
    lv.left[t.lane[i]] -= t.size[i] * t.n_adds[i]
    lv.in_flight[i] = True
    lv.counts[0] += 1
    if t.has_disk:
        ledger_add(lv.res_load, t.add[t.add_at[i]:t.add_at[i + 1]], float(t.size[i]))


@njit(cache=True)
def _land(t: Table, lv: Live, i: int) -> None:
    """Release what in-flight step i held; its lane and its destinations' lanes may now start something."""
    lv.in_flight[i] = False
    lv.counts[0] -= 1
    for x in range(t.inv_at[i], t.inv_at[i + 1]):
        lv.busy[t.inv[x]] -= 1
    for x in range(t.adds_at[i], t.adds_at[i + 1]):
        lv.inflow[t.adds[x]] -= t.rate[i]
        lv.receiving[t.adds[x]] -= 1
    lv.outflow[t.leader[i]] -= t.rate[i] * t.n_adds[i]
    _mark(lv.seen, lv.woken, lv.n_woken, t.lane[i])
    for x in range(t.adds_at[i], t.adds_at[i + 1]):
        _mark(lv.seen, lv.woken, lv.n_woken, t.adds[x])


@njit(cache=True)
def finish(t: Table, lv: Live, i: int) -> None:
    """In-flight step i completed: its partition's next step is ready."""
    _land(t, lv, i)
    lv.completed[i] = True
    if t.has_disk:
        ledger_add(lv.res_load, t.free[t.free_at[i]:t.free_at[i + 1]], -float(t.size[i]))
        for x in range(t.rem_at[i], t.rem_at[i + 1]):
            _wake_key(lv, lv.wait_disk, lv.waiting_disk, t.rem[x])
    for x in range(t.succ_at[i], t.succ_at[i + 1]):
        j = t.succ[x]
        if lv.waiting[j]:
            lv.waiting[j] = False
            lv.counts[1] -= 1
            _ready_insert(t, lv, t.lane[j], j)
            _mark(lv.seen, lv.woken, lv.n_woken, t.lane[j])
    _wake(t, lv, i)


@njit(cache=True)
def abandon(t: Table, lv: Live, i: int) -> None:
    """In-flight step i will not complete (cancelled, refused): it and its partition's later steps are dropped."""
    _land(t, lv, i)
    lv.abandoned[i] = True
    if t.has_disk:
        ledger_add(lv.res_load, t.add[t.add_at[i]:t.add_at[i + 1]], -float(t.size[i]))
        for x in range(t.adds_at[i], t.adds_at[i + 1]):
            _wake_key(lv, lv.wait_disk, lv.waiting_disk, t.adds[x])
    stack = [i]
    while len(stack) > 0:
        at = stack.pop()
        for x in range(t.succ_at[at], t.succ_at[at + 1]):
            j = t.succ[x]
            if lv.waiting[j]:
                lv.waiting[j] = False
                lv.counts[1] -= 1
                lv.abandoned[j] = True
                lv.left[t.lane[j]] -= t.size[j] * t.n_adds[j]
                stack.append(j)
    _wake(t, lv, i)


@njit(cache=True)
def _wake(t: Table, lv: Live, i: int) -> None:
    """Step i completed or was dropped: the lanes that waited on a broker it held may start something."""
    for x in range(t.inv_at[i], t.inv_at[i + 1]):
        _wake_key(lv, lv.wait_on, lv.waiting_on, t.inv[x])
    for x in range(t.adds_at[i], t.adds_at[i + 1]):
        _wake_key(lv, lv.wait_on, lv.waiting_on, t.adds[x])
    _wake_key(lv, lv.wait_on, lv.waiting_on, t.leader[i])
    if lv.counts[0] == 0:
        # Nothing runs: a step blocked by its own produce rate (at or above the throttle on its own) waits on a broker
        # that will never free. Alone, it may start (``choose``). Lanes waiting for disk room look once more (``fit``
        # then looks past their first candidates).
        for key in range(len(lv.wait_on)):
            _wake_key(lv, lv.wait_on, lv.waiting_on, key)
        for key in range(len(lv.wait_disk)):
            _wake_key(lv, lv.wait_disk, lv.waiting_disk, key)
    woken = lv.woken[:lv.n_woken[0]]
    woken.sort()
    lv.n_woken[0] = 0
    for lane in woken:
        lv.seen[lane] = False
        _offer(t, lv, lane)


# ------------------------------------------------------------------------------------------------ the simulation

@njit(cache=True, inline="always")
def _share(n: int, produce: float, throttle: float) -> float:
    return (throttle - produce) / n if n else throttle


INTO, OUT_OF = 0, 1  # the simulation's flow lists: per broker, the flows into it, and out of it as leader


@njit(cache=True)
def _grown(lists: np.ndarray) -> np.ndarray:
    """The flow lists with rows twice as long (a broker with more flows than a row holds)."""
    grown = np.empty((lists.shape[0], lists.shape[1], 2 * lists.shape[2]), np.int64)
    grown[:, :, :lists.shape[2]] = lists
    return grown


@njit(cache=True)
def simulate_steps(t: Table, lv: Live, fixed_seconds: float) -> tuple[np.ndarray, np.ndarray]:
    """Every step run under the dispatch rule, each new replica (a flow) copied at the smaller of its destination's
    share of the follower throttle and its leader's share of the leader throttle, after the produce traffic in flight
    there (``schedule.simulate``); each step's start and end, in seconds. Steps left unfinished (``Live``) end at 0.

    A flow is one new replica being copied: a step's k-th destination, numbered ``adds_at[i] + k``. What the simulation
    keeps is local arrays, written out here: reading a struct's field, or passing an array to a function, takes and
    drops a reference to the array, and those were half of the simulation's time at 400 brokers / 1M partitions."""
    n, n_ids, n_flows = t.size.shape[0], t.lane_at.shape[0] - 1, t.adds.shape[0]
    adds_at, adds, leaders, rates, sizes, n_adds, throttle = t.adds_at, t.adds, t.leader, t.rate, t.size, t.n_adds, \
        t.throttle
    step = np.empty(n_flows, np.int64)  # each flow's step
    for i in range(n):
        step[adds_at[i]:adds_at[i + 1]] = i
    remaining, rate, since = np.zeros(n_flows), np.zeros(n_flows), np.zeros(n_flows)
    still = np.zeros(n, np.int64)  # per step, its flows not yet copied
    # per side (INTO, OUT_OF) and broker, its flows (unordered: a flow's rate does not depend on the order) and how many;
    # per side and flow, where it sits in its row
    lists, count, pos = np.empty((2, n_ids, 4), np.int64), np.zeros((2, n_ids), np.int64), np.zeros((2, n_flows), np.int64)
    produce = np.zeros((2, n_ids))  # per side and broker, the produce traffic of the flows
    # the events by (time, step, destination): flow f < n_flows copied, n_flows + i step i's fixed cost passed
    m = n_flows + n
    ev_x, ev_a, ev_b, ev_heap = np.zeros(m), np.zeros(m, np.int64), np.zeros(m, np.int64), np.zeros(m, np.int64)
    ev_pos, ev_n = np.full(m, -1, np.int64), np.zeros(1, np.int64)
    # the brokers whose flows are repriced at this instant (each once)
    touched, touch, n_touch = np.zeros(n_ids, np.bool_), np.zeros(n_ids, np.int64), np.zeros(1, np.int64)
    started = np.zeros(max(t.max_in_flight, 0) + 1, np.int64)
    start, end = np.zeros(n), np.zeros(n)
    now, first = 0.0, True
    while first or ev_n[0] > 0:
        starting, copied = True, -1  # copied: a step whose flows are all copied, its fixed cost still to come
        if not first:
            f = _pop(ev_x, ev_a, ev_b, ev_heap, ev_pos, ev_n)
            now = ev_x[f]
            if f >= n_flows:  # a step's fixed cost has passed
                i, f, dst = f - n_flows, -1, 0
            else:  # a flow's last byte is copied
                i, dst = step[f], adds[f]
            if f >= 0:
                leader = leaders[i]
                for side, b in ((INTO, dst), (OUT_OF, leader)):
                    last = lists[side, b, count[side, b] - 1]
                    lists[side, b, pos[side, f]] = last
                    pos[side, last] = pos[side, f]
                    count[side, b] -= 1
                    produce[side, b] -= rates[i]
                still[i] -= 1
                if still[i] or fixed_seconds:
                    # only the flows of its two brokers change rate; the step ends (finishes) after its fixed cost
                    starting = False
                    touch[0], touch[1], n_touch[0] = dst, leader, 2
                    if not still[i]:
                        copied = i
                else:
                    _mark(touched, touch, n_touch, dst)
                    _mark(touched, touch, n_touch, leader)
            if starting:
                end[i] = now
                finish(t, lv, i)
        first = False
        if starting:
            # Start what may start now and let it begin copying; then every flow of a broker touched at this instant
            # is repriced (once per instant: completions and starts at the same time share it).
            for x in range(start_steps(t, lv, started)):
                i = started[x]
                start[i] = now
                if n_adds[i] == 0:  # leaves only: nothing to copy, only the fixed cost
                    end[i] = now + fixed_seconds
                    _put(ev_x, ev_a, ev_b, ev_heap, ev_pos, ev_n, n_flows + i, now + fixed_seconds, i, 0)
                    continue
                still[i] = n_adds[i]
                leader = leaders[i]
                for f in range(adds_at[i], adds_at[i + 1]):
                    dst = adds[f]
                    remaining[f], rate[f], since[f] = float(sizes[i]), 0.0, now  # 0: never a real rate, so priced below
                    if count[INTO, dst] == lists.shape[2] or count[OUT_OF, leader] == lists.shape[2]:
                        lists = _grown(lists)
                    for side, b in ((INTO, dst), (OUT_OF, leader)):
                        lists[side, b, count[side, b]] = f
                        pos[side, f] = count[side, b]
                        count[side, b] += 1
                        produce[side, b] += rates[i]
                    _mark(touched, touch, n_touch, dst)
                    _mark(touched, touch, n_touch, leader)
        for x in range(n_touch[0]):
            b = touch[x]
            for side in (INTO, OUT_OF):
                # the flows of b at their rates now; a flow whose rate changed gets a new completion event
                for k in range(count[side, b]):
                    f = lists[side, b, k]
                    i = step[f]
                    dst, leader = adds[f], leaders[i]
                    r = _share(count[INTO, dst], produce[INTO, dst], throttle)
                    o = _share(count[OUT_OF, leader], produce[OUT_OF, leader], throttle)
                    new = max(min(r, o), throttle * 1e-9)  # a move alone above the throttle still ends (``choose``)
                    if new == rate[f]:
                        continue  # its completion event still stands
                    remaining[f] -= rate[f] * (now - since[f])
                    rate[f], since[f] = new, now
                    _put(ev_x, ev_a, ev_b, ev_heap, ev_pos, ev_n, f, now + max(remaining[f], 0.0) / new, i, dst)
            touched[b] = False
        n_touch[0] = 0
        if copied >= 0:  # its bandwidth went to the others above; its place in flight after the fixed cost
            _put(ev_x, ev_a, ev_b, ev_heap, ev_pos, ev_n, n_flows + copied, now + fixed_seconds, copied, 0)
    return start, end


register(Table, TableType, TableRef)
register(Live, LiveType, LiveRef)
register(Heap, HeapType, HeapRef)
