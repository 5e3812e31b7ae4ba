"""Replica counts: every eligible broker within its [lo, hi] target, in the fewest moves.

Each move goes from a broker above its range to one below it while both exist, so
every move shrinks both the excess and the deficit: the plan meets the
max(excess, deficit) lower bound unless rack safety blocks a pair. Which replica
moves is chosen by size, to bring bytes toward the mean at the same time.
"""

from __future__ import annotations

import numpy as np

from kafka_rebalance.planner.goals.base import Goal, donor_index
from kafka_rebalance.planner.state import ClusterState


def desired_size(state: ClusterState, d: int, r: int) -> float:
    """Replica size that moves both brokers' bytes toward the mean over their remaining moves."""
    mid_d = (state.lo[d] + state.hi[d]) / 2
    mid_r = (state.lo[r] + state.hi[r]) / 2
    want_d = (state.bytes[d] - state.byte_target[d]) / max(1.0, state.counts[d] - mid_d)
    want_r = (state.byte_target[r] - state.bytes[r]) / max(1.0, mid_r - state.counts[r])
    return max(0.0, (want_d + want_r) / 2)


class ReplicaCountGoal(Goal):
    name = "replica-count"
    count_goal = True

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        src_ok = not state.eligible[src] or state.counts[src] > state.lo[src]
        return src_ok and state.counts[dst] < state.hi[dst]

    def optimize(self, state: ClusterState) -> None:
        elig = np.asarray(state.eligible_idx, dtype=np.int64)
        rack = np.asarray(state.rack, dtype=np.int64)
        stuck = np.zeros(state.n_brokers, dtype=bool)
        while True:
            c = state.counts[elig]
            over = c - state.hi[elig]
            under = state.lo[elig] - c
            live = ~stuck[elig]
            ov = np.where(live, over, 0)
            un = np.where(live, under, 0)
            io, iu = int(np.argmax(ov)), int(np.argmax(un))
            if ov[io] <= 0 and un[iu] <= 0:
                return
            if ov[io] >= un[iu]:
                d = int(elig[io])
                if (under > 0).any():
                    mask, room = under > 0, under
                else:
                    mask, room = c < state.hi[elig], state.hi[elig] - c
                cand, cand_room = elig[mask], room[mask]
                order = np.lexsort((cand, -cand_room, rack[cand] != rack[d]))
                done = False
                for k in order.tolist():
                    r = int(cand[k])
                    if self._transfer(state, d, r, int(min(ov[io], cand_room[k]))):
                        done = True
                        break
                if not done:
                    stuck[d] = True
            else:
                r = int(elig[iu])
                if (over > 0).any():
                    mask, spare = over > 0, over
                else:
                    mask, spare = c > state.lo[elig], c - state.lo[elig]
                cand, cand_spare = elig[mask], spare[mask]
                order = np.lexsort((cand, -cand_spare, rack[cand] != rack[r]))
                done = False
                for k in order.tolist():
                    d = int(cand[k])
                    if self._transfer(state, d, r, int(min(un[iu], cand_spare[k]))):
                        done = True
                        break
                if not done:
                    stuck[r] = True

    def _transfer(self, state: ClusterState, d: int, r: int, amount: int) -> int:
        idx = donor_index(state, d)
        moved = 0
        hi_r, lo_d = state.byte_allowed_hi[r], state.byte_allowed_lo[d]

        def keeps_bytes(p: int) -> bool:  # neither broker ends worse off in bytes than it started
            size = state.sizes[p]
            return state.bytes[r] + size <= hi_r and (not state.eligible[d] or state.bytes[d] - size >= lo_d)

        while moved < amount:
            want = desired_size(state, d, r)
            p = None
            for ok in (lambda p: keeps_bytes(p) and state.accepts(p, d, r), lambda p: state.accepts(p, d, r)):
                p = idx.find(want, ok)
                if p is None:
                    p = idx.find(want, ok, allow_touched=True)
                if p is not None:
                    break
            if p is None:
                break
            state.move(p, d, r)
            moved += 1
        return moved
