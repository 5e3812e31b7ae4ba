"""The leader keeper's pass, compiled (numba): ``leader_keep.keep_leaders``' loop.

The same swaps, in the same order, as the Python loop: for each leader's single move p (d -> r), in partition order,
the replica q of d's ``DonorIndex`` nearest p's size that the keeper's rule (``donor_arrays.keeps``, the bands of
``leader_keep._replacement_rule``) and every veto allow to go to r in p's place, and the trade
(``byte_trim_moves.trade``). At 400 brokers / 1M partitions the loop looked at some 100,000 moves: 1.9 s of Python,
each search calling the rule's closure per candidate.

Where a veto the kernels do not read holds (``byte_trim.compiled``), the Python loop runs.
``tests/planner/test_goals_leader_keep_moves.py`` holds the two to the same swaps and the same indexes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from numba import njit, types
from numba.typed import List

from kafka_rebalance.planner.goals.byte_trim_moves import CompiledSwaps, move_rows, trade
from kafka_rebalance.planner.goals.compiled_state import holds, tallies_ok
from kafka_rebalance.planner.goals.donor_arrays import (
    FIT,
    K_BD,
    K_BR,
    K_FAR_D,
    K_FAR_R,
    K_HI_D,
    K_HI_R,
    K_LIMIT,
    K_LO_D,
    K_LO_R,
    K_TOP,
    O_EXCL,
    O_KEEP,
    O_NEUTRAL,
    created,
    far,
    find,
    search_params,
)

if TYPE_CHECKING:
    from kafka_rebalance.planner.state import ClusterState


@njit(cache=True)
def keep_pass(todo: np.ndarray, flags: np.ndarray, board: tuple, veto: tuple, dirs: tuple, ix: tuple, shape: tuple,
              lower: np.ndarray, upper: np.ndarray, limit: np.ndarray, leader: np.ndarray,
              search: int) -> np.ndarray:  # fmt: skip
    """``keep_leaders``' loop over the leaders' single moves ``todo`` (rows of p, d, r, in the loop's order): the moves
    made, in order, as rows of (partition, from, to). ``lower``/``upper``: the byte band less the trim's edge;
    ``limit``: each broker's disk limit; ``shape``: each broker's original movable replicas, from which an index is
    built on first use; ``ix``: the donor indexes (changed here)."""
    now, sizes, nbytes, elig = board[0], board[4], board[6], board[12]
    moves = List.empty_list(types.int64)
    scratch = np.empty(max(1, shape[1].shape[0]), np.int64)
    ctx = (flags, board, veto, dirs, np.zeros(0, np.bool_), (np.zeros(0, np.bool_), np.zeros(1), leader))
    fit = np.zeros(FIT)
    for i in range(todo.shape[0]):
        p, d, r = todo[i, 0], todo[i, 1], todo[i, 2]
        if not holds(now, p, r) or holds(now, p, d):
            continue  # changed by an earlier swap
        if not tallies_ok(p, r, d, flags, board[7], board[13]):
            continue
        sp = float(sizes[p])
        bd, br = float(nbytes[d]), float(nbytes[r])
        top = -np.inf
        for b in elig:
            top = max(top, float(nbytes[b]))
        fit[K_BD], fit[K_BR], fit[K_TOP], fit[K_LIMIT] = bd, br, top, limit[d]
        fit[K_LO_D], fit[K_HI_D], fit[K_LO_R], fit[K_HI_R] = lower[d], upper[d], lower[r], upper[r]
        fit[K_FAR_D], fit[K_FAR_R] = far(bd, lower[d], upper[d]), far(br, lower[r], upper[r])
        # Bounds on the size difference that the rule implies (looser where a broker lies outside its band): they only
        # end the search (``_replacement_rule``'s window).
        gain = min(top - bd, limit[d] - bd, max(0.0, upper[d] - bd), max(0.0, br - lower[r]))
        loss = min(top - br, max(0.0, upper[r] - br), max(0.0, bd - lower[d]))
        okp = search_params(d, r)
        okp[O_EXCL], okp[O_NEUTRAL], okp[O_KEEP] = p, 1, 1
        created(ix, d, shape[0], shape[1], sizes)
        q = find(ix, d, sp, sp - max(gain, 0.0) - 1.0, sp + max(loss, 0.0) + 1.0, search, False, okp, fit, ctx,
                 scratch)  # fmt: skip
        if q >= 0:
            trade(p, q, d, r, board, dirs, ix, moves)
    return move_rows(moves)


def keep_compiled(state: ClusterState, todo: np.ndarray, lower: np.ndarray, upper: np.ndarray, search: int) -> int:
    """The keeper's swaps over ``todo`` (rows of p, d, r) made on ``state`` by the kernel; how many it made."""
    arrays = CompiledSwaps(state)
    out = keep_pass(todo.astype(np.int64).reshape(-1, 3), arrays.flags, *arrays.records,
                    arrays.index, arrays.shape, np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64),
                    np.asarray(state.disk_limit, dtype=np.float64), arrays.leader, search)  # fmt: skip
    arrays.made(out)
    arrays.leave()
    return len(out) // 2
