"""Fewer leader changes for the same balance: move a follower instead of a partition's leader.

A move that takes a partition's replica off the broker leading it changes that partition's
leader (issue #42: every producer and consumer of it refreshes metadata and reconnects). The
replica goals choose replicas by size and count only, so about one in RF of their moves is a
leader's. This pass, run on the replica goals' final assignment, replaces such a move of
partition p from broker d to r by a move of a replica q that d holds as a follower, of close
size, from d to r: replica counts do not change, and every goal optimised before may still
veto q's move (rack safety, disk capacity, topic spread).

The replacement is the follower nearest p's size. Bytes moved may rise by the difference:
the goals leave donors at the top of the byte band and receivers at its bottom, so a smaller
replica rarely fits and the nearest larger one is the usual replacement (measured in
docs/PLANNER.md, "Leader changes": up to +8 % bytes, every plan still below Cruise Control's).
The balance does not get worse: neither broker ends further outside its byte band than it is,
nor above the fullest eligible broker, so byte max/mean does not rise, and counts are unchanged.

The swaps leave each donor lower than the byte goals did (a larger follower left in the leader's
place), so a follower-only byte trim follows (byte_trim.py, ``followers_only``): a moved follower
is swapped for a smaller follower of the same donor, where the donor stays at or under the fullest
eligible broker and the receiver in its band. Leaders and byte max/mean stay; bytes fall (12
brokers with 2 added: 99.9 -> 97.9 GiB, below Cruise Control's 98.0).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kafka_rebalance.planner.goals import byte_trim
from kafka_rebalance.planner.goals.base import donor_index, soft_vetoes, tallies_accept, trade_back
from kafka_rebalance.planner.goals.byte_trim import EDGE, ByteTrimGoal
from kafka_rebalance.planner.goals.leader_keep_moves import keep_compiled
from kafka_rebalance.planner.state import ClusterState

SEARCH = 64  # candidates examined per leader's move before it is left as it is


def _distance(x: float, lower: float, upper: float) -> float:
    return max(0.0, x - upper, lower - x)


def keep_leaders(state: ClusterState) -> int:
    """Swap leaders' moves for followers' (see the module's docstring); returns how many it swapped."""
    if not state.n_parts:
        return 0
    # The byte band (balance.byte_band) less byte-trim's edge: a swap keeps what the byte goals reached.
    edge = EDGE * state.options.byte_tolerance * state.byte_centre
    band = (state.byte_lo + edge, state.byte_hi - edge)
    todo = _leaders_moves(state)
    if byte_trim.compiled(state):  # (leader_keep_moves.py: the loop below, where the kernel reads every veto in force)
        swapped = keep_compiled(state, todo, *band, SEARCH)
    else:
        swapped = _keep(state, todo, band)
    if swapped:
        # The swaps leave donors below the fullest broker: the byte trim, for followers only, spends that room
        # on fewer bytes (every larger follower's cost or more back where it can) without raising the top.
        ByteTrimGoal(followers_only=True).optimize(state)
    return swapped


def _keep(state: ClusterState, todo: np.ndarray, band: tuple[np.ndarray, np.ndarray]) -> int:
    """The keeper's loop over the leaders' single moves ``todo`` (rows of p, d, r) read plainly; how many it swapped."""
    swapped = 0
    soft = soft_vetoes(state)  # (the vetoes do not change during the pass)
    for p, d, r in todo.tolist():
        # Unreachable: a replacement is untouched (``find`` without allow_touched) and every p still ahead in this list
        # is touched until its own turn, so no swap changes a later p. `and` for `or`, or `break` for `continue`, are
        # equivalent mutants; kept as a guard.
        now = state.row(p)
        if r not in now or d in now:
            continue  # changed by an earlier swap
        if not tallies_accept(state, p, r, d, soft):
            continue
        ok, window = _replacement_rule(state, p, d, r, band)
        q = donor_index(state, d).find(float(state.sizes[p]), ok, SEARCH, window=window)
        if q is None:
            continue
        trade_back(state, p, q, d, r)
        swapped += 1
    return swapped


def _replacement_rule(state: ClusterState, p: int, d: int, r: int,
                      band: tuple[np.ndarray, np.ndarray]) -> tuple[Callable[[int], bool], tuple[float, float]]:  # fmt: skip
    """Which replica q on d may move to r in place of p, and the sizes outside which none may: swapping
    moves g = size(p) - size(q) onto d and off r (g < 0: the other way). Neither broker may end further
    outside its byte band than it is, above the fullest eligible broker, or (d) above its disk limit."""
    lower, upper = band
    sp = int(state.sizes[p])
    bd, br = float(state.bytes[d]), float(state.bytes[r])
    top = float(state.bytes[state.eligible_index_arr].max())
    far_d, far_r = _distance(bd, lower[d], upper[d]), _distance(br, lower[r], upper[r])
    leader, sizes = state.leader, state.sizes

    def ok(q: int) -> bool:
        if q == p or leader[q] == d:
            return False
        g = float(sp - int(sizes[q]))
        if max(bd + g, br - g) > top or bd + g > state.disk_limit[d]:
            return False
        if _distance(bd + g, lower[d], upper[d]) > far_d or _distance(br - g, lower[r], upper[r]) > far_r:
            return False
        return state.accepts(q, d, r, count_neutral=True)

    # Bounds on g that ``ok`` implies (looser where a broker lies outside its band): they only end the search.
    gain = min(top - bd, state.disk_limit[d] - bd, max(0.0, upper[d] - bd), max(0.0, br - lower[r]))
    loss = min(top - br, max(0.0, upper[r] - br), max(0.0, bd - lower[d]))
    return ok, (sp - max(gain, 0.0) - 1.0, sp + max(loss, 0.0) + 1.0)


def _leaders_moves(state: ClusterState) -> np.ndarray:
    """Rows (p, d, r) for every partition that moved exactly one replica, from its leader d (eligible: a
    leaving broker's replicas all go), in partition order. As in the byte trim, a move that repaired
    a rack violation is not one (undoing it would restore the unsafe row)."""
    parts, d, r = state.single_moves()
    keep = (d == state.leader[parts]) & state.eligible_arr[d] & ~state.originally_unsafe()[parts]
    return np.stack([parts[keep], d[keep], r[keep]], axis=1).astype(np.int64)

