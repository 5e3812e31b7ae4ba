"""Fewer bytes for the same balance: swap a moved replica for a smaller one from the same donor.

The count and byte goals fix where replicas go; this pass only makes their moves
cheaper. A move of partition p from broker d to broker r is replaced by a move of a
smaller replica q from d to r when both brokers stay inside the byte tolerance band:
counts do not change, r ends lighter and d heavier by the difference, and every
earlier goal may still veto q's move (rack safety, placement). Largest moves first,
so the biggest savings are taken before the band's slack is used up. Every swap
strictly lowers the bytes moved, so it ends.

Run again after the leader-keeping pass (``followers_only``, leader_keep.py) it takes back what that
pass spent: there only followers' moves are trimmed, for followers, and no broker ends above the
fullest eligible one, so leaders and byte max/mean stay as they are.
"""

from __future__ import annotations

import numpy as np

from kafka_rebalance.planner.goals.base import Goal, donor_index, soft_vetoes, tallies_accept, trade_back
from kafka_rebalance.planner.goals.byte_trim_moves import CompiledTrim
from kafka_rebalance.planner.goals.compiled_state import F_DISK, F_PYTHON, veto_flags
from kafka_rebalance.planner.goals.disk_capacity import dir_fits, dir_tally
from kafka_rebalance.planner.state import ClusterState

PASSES = 2
MIN_GAIN = 0.01  # a pass saving less than this fraction of the bytes moved is the last one
SEARCH = 32  # candidates examined per move before it is left as it is
# Stop this fraction of the tolerance short of the band's edge: the quality gate checks the
# band in exact fractions, and a plan must not pass or fail it on float rounding.
EDGE = 0.005


def compiled(state: ClusterState) -> bool:
    """Does the compiled pass read every veto in force (none asked in Python; the byte guard is not one the trim
    asks) and every log dir (the disk goal's tally is in its arrays, or no broker has several dirs)?"""
    flags, _ = veto_flags(state)
    return not flags[F_PYTHON] and (bool(flags[F_DISK]) or not dir_tally(state).paths)


class ByteTrimGoal(Goal):
    """The bytes goal's second phase (not a goal of its own: it changes no balance, only the cost)."""

    name = "byte-trim"

    def __init__(self, followers_only: bool = False) -> None:
        self.followers_only = followers_only

    def optimize(self, state: ClusterState) -> None:
        edge = EDGE * state.options.byte_tolerance * state.byte_centre
        self.upper = state.byte_hi - edge
        if self.followers_only and len(state.eligible_idx):
            # d takes bytes back: never above the fullest broker, so byte max/mean does not rise.
            self.upper = np.minimum(self.upper, float(state.bytes[state.eligible_index_arr].max()))
        self.lower = state.byte_lo + edge
        moved = state.moved_bytes()
        # Compiled (byte_trim_moves.py) wherever the kernel reads every veto in force; ``_pass`` is the rule read
        # plainly, and runs where it does not.
        trim = CompiledTrim(state, self.upper, self.lower, self.followers_only, SEARCH) if compiled(state) else None
        for _ in range(PASSES):
            saved = trim.run(*self._single_move_rows(state)) if trim is not None else self._pass(state)
            # Another pass only while they still pay: at a million partitions the second one
            # saved 0.004 % of the bytes for 1.5 s.
            if saved <= MIN_GAIN * moved:
                break
            moved -= saved  # (= or += alike while PASSES is 2: after the second pass the loop ends either way)
        if trim is not None:
            trim.leave()

    def _single_moves(self, state: ClusterState) -> list[tuple[int, int, int]]:
        """``_single_move_rows`` as (p, d, r) tuples, for the Python pass."""
        return list(zip(*(x.tolist() for x in self._single_move_rows(state)), strict=True))

    def _single_move_rows(self, state: ClusterState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(p, d, r) for every partition that moved exactly one replica, d eligible, largest first: three arrays.

        A move that repaired a rack violation is not one: undoing it would put the partition back
        in its unsafe rows (the swap's other half asks every veto; this half restores the original)."""
        parts, d, r = state.single_moves()
        keep = state.eligible_arr[d] & ~state.originally_unsafe()[parts]
        if self.followers_only:
            # p goes back to its original row, so that row must be led by its first replica (else p would count
            # against Kafka's leader-imbalance threshold and be elected).
            lead = state.leader[parts]
            keep &= (lead != d) & (lead == state.R[parts, 0])
        parts, d, r = parts[keep], d[keep], r[keep]
        order = np.lexsort((parts, -state.sizes[parts]))  # largest first (sizes are int64), ties by partition
        return parts[order], d[order], r[order]

    def _pass(self, state: ClusterState) -> int:
        """One sweep over the single moves, largest first; returns the bytes it saved."""
        saved = 0
        # As lists: this loop reads them for each of up to 100,000 single moves per pass (the same floats)
        sizes, upper, lower, limit = state.size_of, self.upper.tolist(), self.lower.tolist(), state.disk_limit.tolist()
        nbytes, row = state.bytes, state.row
        soft = soft_vetoes(state)  # (the vetoes do not change during a pass)
        for p, d, r in self._single_moves(state):
            now = row(p)
            # (and, or break, alike: a swap's q is untouched, so never a listed move, and no listed p is changed twice)
            if r not in now or d in now:
                continue  # changed by an earlier swap of this pass
            sp = sizes[p]
            # d takes p back and gives q: it must stay within its disk limit too (disk-capacity goal).
            on_d = float(nbytes[d])
            slack = min(float(nbytes[r]) - lower[r], upper[d] - on_d, limit[d] - on_d)
            if slack <= 0:  # (< alike: at 0 the sizes [sp, sp) _smaller searches are none)
                continue
            floor = sp - slack
            # No replica of d's in [floor, sp): no swap (most single moves at a million partitions, where the checks
            # below cost more than this one).
            if not donor_index(state, d).any_between(floor, sp):
                continue
            # p goes back to d: the hard goals allow that (its original, rack-safe row) and counts do not
            # change, but a goal keeping tallies of its own (topic spread) may refuse this half too.
            if not tallies_accept(state, p, r, d, soft):
                continue
            # ... and its log dir there (JBOD) must hold it again: others may have filled it since it left.
            if not dir_fits(state, p, d):
                continue

            q = self._smaller(state, d, r, p, floor, sp, self.followers_only)
            if q is None:
                continue
            trade_back(state, p, q, d, r)
            saved += sp - sizes[q]
        return saved

    @staticmethod
    def _smaller(state: ClusterState, d: int, r: int, p: int, floor: float, sp: int,
                 followers_only: bool = False) -> int | None:  # fmt: skip
        """The smallest untouched replica on d of size in [floor, sp) that may move to r (``followers_only``: one
        d does not lead); it leaves d's index. (The one caller passes ``followers_only``: any default alike.)"""
        return donor_index(state, d).smallest_untouched(
            floor, sp, lambda q: q != p and not (followers_only and state.leader[q] == d)
            and state.accepts(q, d, r, count_neutral=True), SEARCH
        )
