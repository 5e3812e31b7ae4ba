"""The cluster state and the vetoes as the compiled goals read them (numba): arrays built from ``ClusterState``.

``board_arrays`` and ``veto_arrays`` copy the state, the vetoes of the goals optimised so far and the log dirs' tally
(``DirTally``) into arrays; ``accepts`` is ``ClusterState.accepts`` on them, for the vetoes each owner keeps in arrays
(placement, rack safety, disk capacity with its log dirs, the replica counts, the move cap). A kernel that changes the
copies follows a move's log dirs with ``follow_dirs``. Vetoes it does not read are asked in Python (``F_PYTHON``).
Topic spread's search (topic_spread_moves.py) and the replica counts' (replica_count_moves.py) read these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit, objmode

from kafka_rebalance.planner.peaks import SLACK_BYTES

if TYPE_CHECKING:
    from kafka_rebalance.planner.goals.base import Goal
    from kafka_rebalance.planner.state import ClusterState

# Flags (``flags`` argument): which vetoes hold, and the rack facts rack safety reads.
F_PLACEMENT, F_RACK, F_DISK, F_COUNT, F_GUARD, F_CAP, F_KEPT, F_RACKS, F_N_RACKS, F_PYTHON = range(10)

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
def held_before(R: np.ndarray, rf: np.ndarray, p: int, b: int) -> int:
    """The slot of b in p's original row, -1 if it was not there."""
    for j in range(rf[p]):
        if R[p, j] == b:
            return j
    return -1


@njit(cache=True)
def new_replicas(now: np.ndarray, R: np.ndarray, rf: np.ndarray, touched: np.ndarray, p: int) -> int:
    if not touched[p]:
        return 0
    n = 0
    for j in range(row_width(now, p)):
        if held_before(R, rf, p, now[p, j]) < 0:
            n += 1
    return n


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
                 unmovable: np.ndarray, veto: tuple, dirs: tuple) -> bool:  # fmt: skip
    """The move cap and the vetoes read from arrays (placement, rack safety, disk capacity with its log dirs and the
    replicas ``--remove-log-dir`` keeps): ``accepts`` less the count goals' and those asked in Python. The arrays it
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
    return True


@njit(cache=True, inline="always")
def vetoes_accept(p: int, src: int, dst: int, flags: np.ndarray, board: tuple, veto: tuple, dirs: tuple) -> bool:
    """``vetoes_allow`` on the state's tuples."""
    return vetoes_allow(p, src, dst, flags, board[0], board[1], board[2], board[3], board[4], board[6], board[7],
                        board[8], board[9], veto, dirs)


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
    """``ClusterState.move``'s row, counts and bytes on the copies; the slot of p's row that changed."""
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


def board_arrays(state: ClusterState, topic: np.ndarray) -> tuple:
    """The state as the kernel reads it (copies where it changes them): rows now and before, each partition's
    original width, which the plan has changed, sizes, counts, bytes, which brokers are eligible, racks, which
    partitions may not move, topics, which are hot, and the eligible brokers' indexes."""
    return (state.now.astype(np.int64), state.R.astype(np.int64), state.rf.astype(np.int64), state.touched.copy(),
            state.sizes.astype(np.int64), state.counts.astype(np.int64), state.bytes.astype(np.int64),
            state.eligible_arr.copy(), np.asarray(state.rack, dtype=np.int64), (state.frozen | state.hot).copy(),
            topic.astype(np.int64), state.hot.copy(), state.eligible_index_arr.astype(np.int64))  # fmt: skip


def veto_flags(state: ClusterState) -> tuple[np.ndarray, list[Goal]]:
    """The flags (which vetoes hold, the rack facts) of the goals optimised so far, and the goals whose veto is not
    one a kernel reads from arrays."""
    from kafka_rebalance.planner.goals.base import Goal
    from kafka_rebalance.planner.goals.byte_balance import ByteGuard
    from kafka_rebalance.planner.goals.disk_capacity import DiskCapacityGoal
    from kafka_rebalance.planner.goals.placement import PlacementGoal, RackSafetyGoal
    from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal

    read = {Goal.accept_move: -1, PlacementGoal.accept_move: F_PLACEMENT, RackSafetyGoal.accept_move: F_RACK,
            DiskCapacityGoal.accept_move: F_DISK, ReplicaCountGoal.accept_move: F_COUNT}  # fmt: skip
    kinds = {read.get(type(g).accept_move) for g in state.vetoes}
    unknown = [g for g in state.vetoes if type(g).accept_move not in read]
    flags = np.zeros(10, dtype=np.int64)
    for kind in (F_PLACEMENT, F_RACK, F_DISK, F_COUNT):
        flags[kind] = kind in kinds
    flags[F_PYTHON] = bool(unknown)
    flags[F_GUARD] = ByteGuard(state).active
    flags[F_CAP] = state.move_cap is not None
    flags[F_KEPT] = bool(flags[F_DISK] and state.options.remove_log_dirs)
    flags[F_RACKS] = state.has_racks
    flags[F_N_RACKS] = state.n_racks
    return flags, unknown


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
