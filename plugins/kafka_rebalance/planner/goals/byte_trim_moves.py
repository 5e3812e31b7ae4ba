"""The byte trim's pass, compiled (numba): ``ByteTrimGoal._pass``.

The same swaps, in the same order, as the pass's Python loop: for each single move p (d -> r), largest first, the
smallest untouched replica q of d's ``DonorIndex`` within the room both brokers have, that every veto allows to go to
r in p's place (``ByteTrimGoal._smaller``), and the trade (``goals.base.trade_back``). d's index is searched as arrays
(donor_arrays.py) and left as the Python lists would be. At 400 brokers / 1M partitions the two trims of a plan
(after the bytes goal, and for followers after the leader keeper) looked at some 500,000 single moves: 4 s of Python.

The kernel reads the vetoes in arrays (``compiled_state``); where a veto it does not read holds, the pass runs in
Python (``byte_trim.compiled``). ``tests/planner/test_goals_byte_trim_moves.py`` holds the two
to the same swaps and the same indexes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types
from numba.typed import List

from kafka_rebalance.planner.goals.compiled_state import (
    F_DISK,
    accepts,
    at_original,
    board_arrays,
    holds,
    kernel_records,
    pick_dir,
    tallies_ok,
    veto_arrays,
)
from kafka_rebalance.planner.goals.donor_arrays import (
    COMPACT,
    MDEAD,
    MGONE,
    MN,
    MP,
    MS,
    compact,
    created,
    index_record,
    indexes_of,
    insert,
    leave_indexes,
    move_tracked,
    original_movable,
)

if TYPE_CHECKING:
    from kafka_rebalance.planner.state import ClusterState


@njit(cache=True)
def _any_between(ix: tuple, b: int, floor: float, below: int) -> bool:
    """``DonorIndex.any_between``: does b's main list hold a replica of size in [floor, below)? (Gone entries are
    not in the Python list.)"""
    sizes, gone, n = ix[MS][b], ix[MGONE][b], ix[MN][b]
    j = int(np.searchsorted(sizes[:n], floor))
    while j < n and gone[j]:
        j += 1
    return j < n and sizes[j] < below


@njit(cache=True)
def _smallest_untouched(ix: tuple, d: int, r: int, p: int, floor: float, below: int, limit: int, followers_only: bool,
                        leader: np.ndarray, flags: np.ndarray, board: tuple, veto: tuple, dirs: tuple,
                        aside: np.ndarray) -> int:  # fmt: skip
    """``ByteTrimGoal._smaller``: the smallest untouched replica q != p on d of size in [floor, below) that may move to
    r (``followers_only``: one d does not lead), -1 for none; it leaves d's index, and the touched ones passed on the
    way go to d's side list (``DonorIndex.smallest_untouched``)."""
    touched = board[3]
    parts, sizes, gone, n = ix[MP][d], ix[MS][d], ix[MGONE][d], ix[MN][d]
    if aside.shape[0] < n:  # (every entry could be set aside; numba checks no bounds)
        aside = np.empty(n, np.int64)
    j = int(np.searchsorted(sizes[:n], floor))
    checks = 0
    n_aside = 0
    found = -1
    while j < n and sizes[j] < below and checks < limit:
        if gone[j]:
            j += 1
            continue
        q = parts[j]
        if touched[q]:
            aside[n_aside] = j
            n_aside += 1
        else:
            checks += 1
            if q != p and not (followers_only and leader[q] == d) and accepts(q, d, r, True, flags, board, veto, dirs):
                found = j
                break
        j += 1
    for k in range(n_aside):
        insert(ix, True, d, sizes[aside[k]], parts[aside[k]])
        gone[aside[k]] = True
    q = -1
    if found >= 0:
        q = parts[found]
        gone[found] = True
    ix[MDEAD][d] += n_aside + (found >= 0)
    if ix[MDEAD][d] >= COMPACT:
        compact(ix, d)
    return q


@njit(cache=True)
def trade(p: int, q: int, d: int, r: int, board: tuple, dirs: tuple, ix: tuple, moves: List) -> None:
    """``goals.base.trade_back``: p, moved from d to r, stays on d after all (its row restored where it is its
    original again, ``ClusterState.restore``, and back in d's index), and q goes from d to r in its place."""
    move_tracked(p, r, d, board, dirs, ix, moves)
    if at_original(board[0], board[1], board[2], p):
        board[3][p] = False
    insert(ix, bool(board[3][p]), d, board[4][p], p)
    move_tracked(q, d, r, board, dirs, ix, moves)


@njit(cache=True)
def trim_pass(todo: np.ndarray, flags: np.ndarray, board: tuple, veto: tuple, dirs: tuple, ix: tuple, shape: tuple,
              upper: np.ndarray, lower: np.ndarray, limit: np.ndarray, followers_only: bool, leader: np.ndarray,
              search: int) -> tuple[np.ndarray, int]:  # fmt: skip
    """``ByteTrimGoal._pass`` over the single moves ``todo`` (rows of p, d, r, in the pass's order): the moves made, in
    order, as rows of (partition, from, to), and the bytes saved. ``shape``: each broker's original movable replicas
    (start, parts), from which an index is built on first use; ``ix``: the donor indexes (changed here)."""
    now, sizes, nbytes = board[0], board[4], board[6]
    moves = List.empty_list(types.int64)
    aside = np.empty(max(1, shape[1].shape[0]), np.int64)
    saved = 0
    for i in range(todo.shape[0]):
        p, d, r = todo[i, 0], todo[i, 1], todo[i, 2]
        if not holds(now, p, r) or holds(now, p, d):
            continue  # changed by an earlier swap of this pass
        sp = sizes[p]
        on_d = float(nbytes[d])
        slack = min(float(nbytes[r]) - lower[r], upper[d] - on_d, limit[d] - on_d)
        if slack <= 0:
            continue
        floor = sp - slack
        created(ix, d, shape[0], shape[1], sizes)
        if not _any_between(ix, d, floor, sp):
            continue
        if not tallies_ok(p, r, d, flags, board[7], board[13]):
            continue  # (p goes back to d: a goal keeping tallies of its own, topic spread, may refuse this half)
        if flags[F_DISK] and dirs[6][d] and pick_dir(p, d, float(sp), board[1], board[2], dirs) < 0:
            continue  # (``dir_fits``: p's log dir on d must hold it again)
        q = _smallest_untouched(ix, d, r, p, floor, sp, search, followers_only, leader, flags, board, veto, dirs, aside)
        if q < 0:
            continue
        trade(p, q, d, r, board, dirs, ix, moves)
        saved += sp - sizes[q]
    return move_rows(moves), saved


@njit(cache=True)
def move_rows(moves: List) -> np.ndarray:
    """``move_tracked``'s log as rows (partition, from, to), in the order made."""
    out = np.empty(len(moves), np.int64)
    for k in range(len(moves)):
        out[k] = moves[k]
    return out.reshape(-1, 3)


# ---------------------------------------------------------------------------------------------------- from Python


class CompiledSwaps:
    """The kernels' copies of ``state`` for passes of swaps (``trade``): the vetoes, the board, the donor indexes
    (read once, written back once by ``leave``: at a million partitions each costs a tenth of a second) and each
    partition's leader."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.flags, self.veto, self.dirs, _ = veto_arrays(state)
        self.board = board_arrays(state, np.zeros(state.n_parts, dtype=np.int64), self.flags)
        self.records = kernel_records(self.board, self.veto, self.dirs)  # (what the kernels take)
        self.ix = indexes_of(state, state.n_brokers)
        self.index = index_record(self.ix)  # (what the kernels take)
        self.shape = original_movable(state)
        self.leader = np.asarray(state.leader, dtype=np.int64)

    def made(self, out: np.ndarray) -> None:
        """A pass's moves (rows of partition, from, to) made on ``state`` too."""
        state = self.state
        # As ``balance_bytes``: the kernel released every parked replica its moves touched (``leave`` writes the
        # parked ones back).
        state.parked = {}
        state.move_all(out, self.board[0])
        for p in dict.fromkeys(out[:, 0].tolist()):
            state.restore(p)  # (a no-op unless the row is its original: each trade's p, as ``trade_back`` restores it)

    def leave(self) -> None:
        leave_indexes(self.state, self.ix)


class CompiledTrim(CompiledSwaps):
    """The kernel's copies of ``state`` for the passes of one ``ByteTrimGoal.optimize``: each ``run`` makes a pass's
    swaps on them and on ``state``; ``leave`` writes the donor indexes back to ``state.donor_indexes`` as the Python
    passes leave them."""

    def __init__(self, state: ClusterState, upper: np.ndarray, lower: np.ndarray, followers_only: bool,
                 search: int) -> None:  # fmt: skip
        super().__init__(state)
        self.bands = (np.broadcast_to(np.asarray(upper, dtype=np.float64), state.n_brokers).copy(),
                      np.broadcast_to(np.asarray(lower, dtype=np.float64), state.n_brokers).copy(),
                      np.asarray(state.disk_limit, dtype=np.float64))  # fmt: skip
        self.followers_only, self.search = followers_only, search

    def run(self, parts: np.ndarray, donors: np.ndarray, receivers: np.ndarray) -> int:
        """One pass over the single moves (p, d, r) in that order; the bytes it saved."""
        todo = np.stack([parts, donors, receivers], axis=1).astype(np.int64)
        out, saved = trim_pass(todo, self.flags, *self.records, self.index, self.shape, *self.bands,
                               self.followers_only, self.leader, self.search)  # fmt: skip
        self.made(out)
        return int(saved)
