"""The cluster state and the vetoes as the compiled goals read them (numba): arrays built from ``ClusterState``.

``board_arrays`` and ``veto_arrays`` copy the state, the vetoes of the goals optimised so far and the log dirs' tally
(``DirTally``) into arrays; ``accepts`` is ``ClusterState.accepts`` on them, for the vetoes each owner keeps in arrays
(placement, rack safety, disk capacity with its log dirs, the replica counts, the move cap, topic spread's and network
in's tallies). A kernel that changes the copies follows a move's log dirs with ``follow_dirs``, and the tallies with
``move_on_board``. Vetoes it does not read are asked in Python (``F_PYTHON``).
Topic spread's search (topic_spread_moves.py) and the replica counts' (replica_count_moves.py) read these.
"""

from __future__ import annotations

from collections import namedtuple
from typing import TYPE_CHECKING, Any

import numpy as np
from numba import njit, objmode
from numba.experimental import structref

from kafka_rebalance.planner.peaks import SLACK_BYTES
from kafka_rebalance.planner.structs import Fields, register_positional

if TYPE_CHECKING:
    from kafka_rebalance.planner.goals.base import Goal
    from kafka_rebalance.planner.state import ClusterState

# Flags (``flags`` argument): which vetoes hold, and the rack facts rack safety reads.
F_PLACEMENT, F_RACK, F_DISK, F_COUNT, F_GUARD, F_CAP, F_KEPT, F_RACKS, F_N_RACKS, F_PYTHON, F_SPREAD, F_NET, F_NET_TOP = range(13)
# ``board[13]``, the tallies the topic-spread and network-in vetoes keep, in one float64 array (every non-inlined call
# counts a reference to each array of the tuples it is passed: eight arrays cost the count goal's kernel a second at a
# million partitions). A header (T_SPREAD, T_NET: where each part starts, -1 where that goal does not veto; T_TOPICS:
# its topics), then topic spread's replicas per (topic, broker), band low and band high (topics x brokers each) and
# each partition's topic, then network in's load per broker, band low and band high, and each partition's rate. Counts
# are exact in float64; the loads are the goal's own floats. ``move_on_board`` keeps them current.
T_SPREAD, T_NET, T_TOPICS, T_HEAD = 0, 1, 2, 3

# Vetoes the kernel does not read (``F_PYTHON``: a goal ``--goals`` orders before topic spread, such as network in, or a
# test's) are asked in Python, on the state itself, which then makes every move as the kernel does. numba cannot hold
# Python objects: the kernel reaches them here, set for the length of one call (``spread``).
Asked = tuple["ClusterState", tuple["Goal", ...], tuple["Goal", ...]]  # the state, its other vetoes, its count vetoes
_ASKED: list[Asked] = []


def _python_accepts(p: int, src: int, dst: int) -> bool:
    state, others, _ = _ASKED[-1]
    return all(g.accept_move(state, p, src, dst) for g in others)


def _python_counts(src: int, dst: int) -> bool:
    state, _, counters = _ASKED[-1]
    return all(g.accept_move(state, -1, src, dst) for g in counters)


def _python_move(p: int, src: int, dst: int) -> None:
    _ASKED[-1][0].move(p, src, dst)


def _python_restore(p: int) -> None:
    _ASKED[-1][0].restore(p)


# The state's three records as the kernels take them: structs read by position as the tuples ``board_arrays`` and
# ``veto_arrays`` build (``kernel_records``). A tuple of arrays handed to a compiled function has each array's count
# of references raised on entry and lowered on exit: with the donor indexes' search (``donor_arrays.nearest``) and
# the vetoes (``accepts``) called millions of times, that was a fifth of planning at 400 brokers / 1M partitions.
Board = namedtuple("Board", ["now", "R", "rf", "touched", "sizes", "counts", "bytes", "eligible", "rack", "unmovable",
                             "topic", "hot", "eligible_index", "tally"])  # fmt: skip
Veto = namedtuple("Veto", ["lo", "hi", "byte_hi", "byte_lo", "disk_limit", "cap", "eligible_racks", "kept"])
Dirs = namedtuple("Dirs", ["start", "receives", "load", "ceiling", "where", "home", "jbod", "slack"])


class BoardType(Fields):
    pass


class VetoType(Fields):
    pass


class DirsType(Fields):
    pass


class BoardRef(structref.StructRefProxy):
    pass


class VetoRef(structref.StructRefProxy):
    pass


class DirsRef(structref.StructRefProxy):
    pass


register_positional(Board, BoardType, BoardRef)
register_positional(Veto, VetoType, VetoRef)
register_positional(Dirs, DirsType, DirsRef)


def kernel_records(board: tuple, veto: tuple, dirs: tuple) -> tuple[Any, Any, Any]:
    """The tuples as the kernels' structs (``BoardRef``, ``VetoRef``, ``DirsRef``: the same arrays, what a kernel
    changes the tuples' readers see). Typed as the kernels' annotations take them: they read the structs as tuples."""
    return _records(board, veto, dirs)


@njit(cache=True)
def _records(board: tuple, veto: tuple, dirs: tuple) -> tuple:
    """(Built in a kernel, compiled once and cached: the structs' constructors called from Python compile anew in every
    process, 2.5 s of CPU.)"""
    return BoardRef(*board), VetoRef(*veto), DirsRef(*dirs)


# ---------------------------------------------------------------------------------------------------- rows


@njit(cache=True, inline="always")
def holds(now: np.ndarray, p: int, b: int) -> bool:
    for j in range(now.shape[1]):
        x = now[p, j]
        if x < 0:
            return False
        if x == b:
            return True
    return False


@njit(cache=True, inline="always")
def row_width(now: np.ndarray, p: int) -> int:
    for j in range(now.shape[1]):
        if now[p, j] < 0:
            return j
    return now.shape[1]


@njit(cache=True, inline="always")
def at_original(now: np.ndarray, R: np.ndarray, rf: np.ndarray, p: int) -> bool:
    """Is p's row its original one, order included (``ClusterState.restore``'s test)?"""
    if row_width(now, p) != rf[p]:
        return False
    for j in range(rf[p]):
        if now[p, j] != R[p, j]:
            return False
    return True


@njit(cache=True, inline="always")
def held_before(R: np.ndarray, rf: np.ndarray, p: int, b: int) -> int:
    """The slot of b in p's original row, -1 if it was not there."""
    for j in range(rf[p]):
        if R[p, j] == b:
            return j
    return -1


@njit(cache=True, inline="always")
def new_replicas(now: np.ndarray, R: np.ndarray, rf: np.ndarray, touched: np.ndarray, p: int) -> int:
    if not touched[p]:
        return 0
    n = 0
    for j in range(row_width(now, p)):
        if held_before(R, rf, p, now[p, j]) < 0:
            n += 1
    return n


@njit(cache=True, inline="always")
def _only_in(a: np.ndarray, b: np.ndarray, i: int) -> tuple[int, int, int]:
    """Row i of a against row i of b (-1 padded): its brokers, how many of them b lacks, and the first such (-1)."""
    n = n_only = 0
    first = -1
    for j in range(a.shape[1]):
        x = a[i, j]
        if x < 0:
            continue
        n += 1
        kept = False
        for jj in range(b.shape[1]):
            if b[i, jj] == x:
                kept = True
                break
        if not kept:
            n_only += 1
            if first < 0:
                first = x
    return n, n_only, first


@njit(cache=True)
def single_moved(new: np.ndarray, old: np.ndarray, parts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ClusterState.single_moves`` of the changed partitions ``parts``, their rows now (``new``) and before
    (``old``), -1 padded: (p, removed, added) for each whose row has as many replicas as before and differs by one
    broker out (the first in the old row's order) and one in (the first in the new row's order)."""
    n = parts.shape[0]
    out_p, out_r, out_a = np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64)
    k = 0
    for i in range(n):
        n_new, n_in, added = _only_in(new, old, i)
        n_old, n_out, removed = _only_in(old, new, i)
        if n_new == n_old and n_in == 1 and n_out == 1:
            out_p[k], out_r[k], out_a[k] = parts[i], removed, added
            k += 1
    return out_p[:k].copy(), out_r[:k].copy(), out_a[:k].copy()


# ---------------------------------------------------------------------------------------------------- vetoes


@njit(cache=True, inline="always")
def rack_ok(now: np.ndarray, p: int, src: int, dst: int, rack: np.ndarray, flags: np.ndarray,
             elig_racks: np.ndarray) -> bool:  # fmt: skip
    """``ClusterState.rack_ok`` of p's row now, dst in place of src."""
    if not flags[F_RACKS]:
        return True
    target = rack[dst]
    if rack[src] == target:
        return True
    rf = row_width(now, p)
    same = 0
    for j in range(rf):
        b = now[p, j]
        if b != src and rack[b] == target:
            same += 1
    n_racks = flags[F_N_RACKS]
    cap = rf if n_racks == 0 else -(-rf // n_racks)
    if same >= cap:
        return False
    if rf > n_racks and elig_racks[rack[src] + 1]:
        for j in range(rf):
            b = now[p, j]
            if b != src and rack[b] == rack[src]:
                return True
        return False
    return True


@njit(cache=True)
def roomiest(d0: int, d1: int, receives: np.ndarray, load: np.ndarray, ceiling: np.ndarray, slack: float) -> int:
    """The receiving dir of the range with the most room, the later (by path) of equals; -1 for none."""
    best, room = -1, -np.inf
    for d in range(d0, d1):
        if receives[d]:
            x = ceiling[d] - load[d] + slack
            if best < 0 or x >= room:
                best, room = d, x
    return best


@njit(cache=True)
def pick_dir(p: int, b: int, size: float, R: np.ndarray, rf: np.ndarray, dirs: tuple) -> int:
    """``DirTally.pick``: the dir of JBOD broker b a replica of p arriving would be in, -1 where none holds it."""
    d_start, receives, load, ceiling, home, slack = dirs[0], dirs[1], dirs[2], dirs[3], dirs[5], dirs[7][0]
    j = held_before(R, rf, p, b)
    h = home[p, j] if j >= 0 else -1
    if h >= 0 and receives[h]:
        return h if ceiling[h] - load[h] + slack >= size else -1
    best = roomiest(d_start[b], d_start[b + 1], receives, load, ceiling, slack)
    return best if best >= 0 and ceiling[best] - load[best] + slack >= size else -1


@njit(cache=True)
def kept_pair(keys: np.ndarray, key: int) -> bool:
    i = np.searchsorted(keys, key)
    return i < keys.shape[0] and keys[i] == key


@njit(cache=True, inline="always")
def counts_within(src: int, dst: int, flags: np.ndarray, board: tuple, veto: tuple) -> bool:
    """The replica counts' veto (when it holds) on any move src -> dst, read from the arrays."""
    counts, eligible, lo, hi = board[5], board[7], veto[0], veto[1]
    return not flags[F_COUNT] or ((not eligible[src] or counts[src] > lo[src]) and counts[dst] < hi[dst])


@njit(cache=True)
def counts_ok(src: int, dst: int, flags: np.ndarray, board: tuple, veto: tuple) -> bool:
    """The count goals' vetoes on any move src -> dst (``ClusterState.counts_accept``)."""
    if not counts_within(src, dst, flags, board, veto):
        return False
    ok = True
    if flags[F_PYTHON]:
        with objmode(ok="boolean"):
            ok = _python_counts(src, dst)
    return ok


@njit(cache=True, inline="always")
def vetoes_allow(p: int, src: int, dst: int, flags: np.ndarray, now: np.ndarray, R: np.ndarray, rf: np.ndarray,
                 touched: np.ndarray, sizes: np.ndarray, nbytes: np.ndarray, eligible: np.ndarray, rack: np.ndarray,
                 unmovable: np.ndarray, tally: np.ndarray, veto: tuple, dirs: tuple) -> bool:  # fmt: skip
    """The move cap and the vetoes read from arrays (placement, rack safety, disk capacity with its log dirs and the
    replicas ``--remove-log-dir`` keeps, topic spread's and network in's tallies): ``accepts`` less the count goals'
    and those asked in Python. The arrays it
    reads on every call come one by one, inlined: a search calling it per candidate with the state's tuples spent
    most of its time counting references to the arrays it took out of them (``veto`` and ``dirs`` are opened only
    where a rule needs them)."""
    if flags[F_CAP] and touched[p] and held_before(R, rf, p, dst) < 0:
        # the cap: a move out of an original replica adds a copy; refused where p's new replicas are at the cap
        if held_before(R, rf, p, src) >= 0 and new_replicas(now, R, rf, touched, p) >= veto[5][p]:
            return False
    if flags[F_PLACEMENT] and (not eligible[dst] or unmovable[p] or holds(now, p, dst)):
        return False
    if flags[F_RACK] and not rack_ok(now, p, src, dst, rack, flags, veto[6]):
        return False
    if flags[F_DISK]:
        size = float(sizes[p])
        if not float(nbytes[dst]) + size <= veto[4][dst] + dirs[7][0]:
            return False
        if dirs[6][dst] and pick_dir(p, dst, size, R, rf, dirs) < 0:
            return False
        if flags[F_KEPT] and kept_pair(veto[7], p * eligible.shape[0] + src):
            return False
    return not (flags[F_SPREAD] or flags[F_NET]) or tallies_ok(p, src, dst, flags, eligible, tally)


@njit(cache=True, inline="always")
def tallies_ok(p: int, src: int, dst: int, flags: np.ndarray, eligible: np.ndarray, tally: np.ndarray) -> bool:
    """``goals.base.tallies_accept``: the goals keeping tallies of their own that ``tally`` (``board[13]``) holds,
    topic spread and network in, allow p from src to dst."""
    if flags[F_SPREAD] and not spread_ok(p, src, dst, eligible, tally):
        return False
    return not flags[F_NET] or network_ok(p, src, dst, eligible, bool(flags[F_NET_TOP]), tally)


@njit(cache=True, inline="always")
def spread_ok(p: int, src: int, dst: int, eligible: np.ndarray, tally: np.ndarray) -> bool:
    """``TopicSpreadGoal.accept_move``: p's topic not above its band on dst, nor below it on an eligible src."""
    at, n_b = int(tally[T_SPREAD]), eligible.shape[0]
    cells = int(tally[T_TOPICS]) * n_b
    t = int(tally[at + 3 * cells + p])
    if tally[at + t * n_b + dst] + 1 > tally[at + 2 * cells + t * n_b + dst]:
        return False
    return not eligible[src] or tally[at + t * n_b + src] - 1 >= tally[at + cells + t * n_b + src]


@njit(cache=True, inline="always")
def network_ok(p: int, src: int, dst: int, eligible: np.ndarray, top_only: bool, tally: np.ndarray) -> bool:
    """``NetworkInGoal.accept_move``: dst not above its band, nor an eligible src below it (``top_only``, relief
    mode: the top alone), the same float operations."""
    at, n_b = int(tally[T_NET]), eligible.shape[0]
    r = tally[at + 3 * n_b + p]
    if r <= 0:
        return True
    if tally[at + dst] + r > tally[at + 2 * n_b + dst]:
        return False
    return top_only or not eligible[src] or tally[at + src] - r >= tally[at + n_b + src]


@njit(cache=True, inline="always")
def vetoes_accept(p: int, src: int, dst: int, flags: np.ndarray, board: tuple, veto: tuple, dirs: tuple) -> bool:
    """``vetoes_allow`` on the state's tuples."""
    return vetoes_allow(p, src, dst, flags, board[0], board[1], board[2], board[3], board[4], board[6], board[7],
                        board[8], board[9], board[13], veto, dirs)


@njit(cache=True)
def accepts(p: int, src: int, dst: int, neutral: bool, flags: np.ndarray, board: tuple, veto: tuple,
            dirs: tuple) -> bool:  # fmt: skip
    """``ClusterState.accepts``: the move cap, then every veto ``flags`` holds."""
    if not vetoes_accept(p, src, dst, flags, board, veto, dirs):
        return False
    if flags[F_PYTHON]:
        ok = True
        with objmode(ok="boolean"):
            ok = _python_accepts(p, src, dst)
        if not ok:
            return False
    return neutral or counts_ok(src, dst, flags, board, veto)


@njit(cache=True, inline="always")
def move_on_board(p: int, src: int, dst: int, board: tuple) -> int:
    """``ClusterState.move``'s row, counts and bytes on the copies, and the vetoes' tallies (``board[13]``, as the
    goals' ``_sync`` follows the move); the slot of p's row that changed."""
    now, sizes, counts, nbytes = board[0], board[4], board[5], board[6]
    j = 0
    while now[p, j] != src:
        j += 1
    now[p, j] = dst
    size = sizes[p]
    counts[src] -= 1
    counts[dst] += 1
    nbytes[src] -= size
    nbytes[dst] += size
    tally, n_b = board[13], nbytes.shape[0]
    if tally[T_SPREAD] >= 0:
        at = int(tally[T_SPREAD])
        t = int(tally[at + 3 * int(tally[T_TOPICS]) * n_b + p])
        tally[at + t * n_b + src] -= 1
        tally[at + t * n_b + dst] += 1
    if tally[T_NET] >= 0:
        at = int(tally[T_NET])
        r = tally[at + 3 * n_b + p]
        tally[at + src] -= r
        tally[at + dst] += r
    return j


@njit(cache=True)
def follow_dirs(p: int, j: int, src: int, dst: int, size: int, R: np.ndarray, rf: np.ndarray, dirs: tuple) -> None:
    """The log dirs' tally after p's replica in slot j of its row moved from src to dst (``DirTally.catch_up``):
    it leaves src's dir, and takes dst's dir it would be in, forced where none has room (its home dir on the broker,
    else the roomiest)."""
    d_start, load, ceiling, where, jbod = dirs[0], dirs[2], dirs[3], dirs[4], dirs[6]
    if jbod[src]:
        if where[p, j] >= 0:
            load[where[p, j]] -= size
        where[p, j] = -1
    if jbod[dst]:
        d = pick_dir(p, dst, float(size), R, rf, dirs)
        if d < 0:
            k = held_before(R, rf, p, dst)
            d = dirs[5][p, k] if k >= 0 and dirs[5][p, k] >= 0 else roomiest(
                d_start[dst], d_start[dst + 1], dirs[1], load, ceiling, dirs[7][0])
        where[p, j] = d
        if d >= 0:
            load[d] += size


# ---------------------------------------------------------------------------------------------------- from Python


def board_arrays(state: ClusterState, topic: np.ndarray, flags: np.ndarray) -> tuple:
    """The state as the kernel reads it (copies where it changes them): rows now and before, each partition's
    original width, which the plan has changed, sizes, counts, bytes, which brokers are eligible, racks, which
    partitions may not move, topics, which are hot, the eligible brokers' indexes, and the vetoes' tallies (``flags``:
    ``veto_arrays``' flags, which say which goals veto)."""
    return (state.now.astype(np.int64), state.R.astype(np.int64), state.rf.astype(np.int64), state.touched.copy(),
            state.sizes.astype(np.int64), state.counts.astype(np.int64), state.bytes.astype(np.int64),
            state.eligible_arr.copy(), np.asarray(state.rack, dtype=np.int64), (state.frozen | state.hot).copy(),
            topic.astype(np.int64), state.hot.copy(), state.eligible_index_arr.astype(np.int64),
            _tallies(state, flags))  # fmt: skip


def veto_flags(state: ClusterState) -> tuple[np.ndarray, list[Goal]]:
    """The flags (which vetoes hold, the rack facts) of the goals optimised so far, and the goals whose veto is not
    one a kernel reads from arrays."""
    from kafka_rebalance.planner.goals.base import Goal
    from kafka_rebalance.planner.goals.byte_balance import ByteGuard
    from kafka_rebalance.planner.goals.disk_capacity import DiskCapacityGoal
    from kafka_rebalance.planner.goals.network import NetworkInGoal
    from kafka_rebalance.planner.goals.placement import PlacementGoal, RackSafetyGoal
    from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal
    from kafka_rebalance.planner.goals.topic_spread import TopicSpreadGoal

    read = {Goal.accept_move: -1, PlacementGoal.accept_move: F_PLACEMENT, RackSafetyGoal.accept_move: F_RACK,
            DiskCapacityGoal.accept_move: F_DISK, ReplicaCountGoal.accept_move: F_COUNT,
            TopicSpreadGoal.accept_move: F_SPREAD, NetworkInGoal.accept_move: F_NET}  # fmt: skip
    kinds = {read.get(type(g).accept_move) for g in state.vetoes}
    unknown = [g for g in state.vetoes if type(g).accept_move not in read]
    flags = np.zeros(13, dtype=np.int64)
    for kind in (F_PLACEMENT, F_RACK, F_DISK, F_COUNT, F_SPREAD, F_NET):
        flags[kind] = kind in kinds
    flags[F_NET_TOP] = state.options.relieve
    if flags[F_NET] and not _network_vetoes(state):
        flags[F_NET] = 0  # (its veto accepts every move: nothing to read)
    flags[F_PYTHON] = bool(unknown)
    flags[F_GUARD] = ByteGuard(state).active
    flags[F_CAP] = state.move_cap is not None
    flags[F_KEPT] = bool(flags[F_DISK] and state.options.remove_log_dirs)
    flags[F_RACKS] = state.has_racks
    flags[F_N_RACKS] = state.n_racks
    return flags, unknown


def _tallies(state: ClusterState, flags: np.ndarray) -> np.ndarray:
    """``board[13]``: copies of the topic-spread and network-in goals' tallies, caught up with the state's changes, for
    the goals ``flags`` says veto (``veto_arrays`` leaves network in's flag off where its veto accepts every move)."""
    from kafka_rebalance.planner.goals.network import NetworkInGoal
    from kafka_rebalance.planner.goals.topic_spread import TopicSpreadGoal

    head = np.array([-1.0, -1.0, 0.0])
    parts = [head]
    at = T_HEAD
    for g in state.vetoes:
        if flags[F_SPREAD] and isinstance(g, TopicSpreadGoal):
            g._setup(state)
            g._sync(state)
            head[T_SPREAD], head[T_TOPICS] = at, g.held.shape[0]
            parts += [g.held.ravel(), g.lo.ravel(), g.hi.ravel(), g.topic]
            at += 3 * g.held.size + state.n_parts
        if flags[F_NET] and isinstance(g, NetworkInGoal):
            g._setup(state)
            g._sync(state)
            head[T_NET] = at
            parts += [g.load, g.lo, g.hi, g.rate]
            at += 3 * state.n_brokers + state.n_parts
    return np.concatenate(parts).astype(np.float64)


def tally_views(board: tuple) -> dict[str, np.ndarray]:
    """``board[13]``'s parts by name (views): for a reader in Python, such as a test."""
    tally, n_b, n_p = board[13], board[6].shape[0], board[0].shape[0]
    out: dict[str, np.ndarray] = {}
    if tally[T_SPREAD] >= 0:
        at, n_t = int(tally[T_SPREAD]), int(tally[T_TOPICS])
        cells = n_t * n_b
        out["held"] = tally[at : at + cells].reshape(n_t, n_b)
        out["topic"] = tally[at + 3 * cells : at + 3 * cells + n_p]
    if tally[T_NET] >= 0:
        at = int(tally[T_NET])
        out["load"] = tally[at : at + n_b]
        out["rate"] = tally[at + 3 * n_b : at + 3 * n_b + n_p]
    return out


def _network_vetoes(state: ClusterState) -> bool:
    """Does network in's veto refuse any move? Not in relief mode without every network-in capacity known."""
    from kafka_rebalance.planner.goals.network import NetworkInGoal

    for g in state.vetoes:
        if isinstance(g, NetworkInGoal):
            g._setup(state)
            return not (state.options.relieve and not g.capacities_known)
    return False


def veto_arrays(state: ClusterState) -> tuple[np.ndarray, tuple, tuple, Asked | None]:
    """The flags, the vetoes' arrays and the log dirs' tally (``DirTally``, as arrays) of the goals optimised so far,
    and where a goal's veto is not one the kernel reads, what it asks in Python (``_ASKED``)."""
    from kafka_rebalance.planner.goals.disk_capacity import dir_tally, kept_replicas

    flags, unknown = veto_flags(state)
    n_b = state.n_brokers
    codes = np.asarray(state.rack, dtype=np.int64)
    elig_racks = np.zeros(int(codes.max(initial=-1)) + 2, dtype=bool)
    for x in state.eligible_racks:
        elig_racks[x + 1] = True
    kept = np.zeros(0, dtype=np.int64)
    if flags[F_KEPT]:
        kept = np.sort(np.fromiter((p * n_b + b for p, b in kept_replicas(state)), dtype=np.int64))
    cap = state.move_cap.astype(np.int64) if state.move_cap is not None else np.zeros(0, dtype=np.int64)
    veto = (state.lo.astype(np.int64), state.hi.astype(np.int64), np.asarray(state.byte_hi, dtype=np.float64),
            np.asarray(state.byte_lo, dtype=np.float64), np.asarray(state.disk_limit, dtype=np.float64), cap,
            elig_racks, kept)  # fmt: skip
    # The log dirs (JBOD brokers only, and only where the disk goal vetoes): each broker's dirs by path.
    jbod = np.zeros(n_b, dtype=bool)
    d_start = np.zeros(n_b + 1, dtype=np.int64)
    keys: list[tuple[int, str]] = []
    tally = dir_tally(state) if flags[F_DISK] else None
    if tally is not None and tally.paths:
        keys = sorted(tally.load)
        for b in tally.paths:
            jbod[b] = True
        d_start[1:] = np.cumsum(np.bincount(np.asarray([b for b, _ in keys], dtype=np.int64), minlength=n_b))
    index = {k: i for i, k in enumerate(keys)}
    receives = np.asarray([d in tally.paths.get(b, ()) for b, d in keys] if tally else [], dtype=bool)
    load = np.asarray([tally.load[k] for k in keys] if tally else [], dtype=np.float64)
    ceiling = np.asarray([tally.ceiling[k] for k in keys] if tally else [], dtype=np.float64)
    where = np.full(state.now.shape if keys else (0, 0), -1, dtype=np.int64)
    home = np.full(state.R.shape if keys else (0, 0), -1, dtype=np.int64)
    if tally is not None and keys:
        for (p, b), d in tally.where.items():
            where[p, state.row(p).index(b)] = index[(b, d)]
        for (p, b), d in tally.home.items():
            home[p, state.original_row(p).index(b)] = index[(b, d)]
    asked = (state, tuple(g for g in unknown if not g.count_goal), tuple(g for g in unknown if g.count_goal))
    # (the slack passed, not read as a global: numba would keep a global's value in its cache)
    dirs = (d_start, receives, load, ceiling, where, home, jbod, np.array([SLACK_BYTES], dtype=np.float64))
    return flags, veto, dirs, asked if unknown else None
