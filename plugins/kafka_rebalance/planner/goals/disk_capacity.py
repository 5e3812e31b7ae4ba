"""Hard goal: the plan fills no broker's disks past ``--max-disk-usage`` of their capacity.

A broker's capacity is the total size of its log dirs as the snapshot records them (gather reads
it from DescribeLogDirs on Kafka 3.3+); its limit is that fraction of the capacity less what its
disks hold besides the partitions (``state.disk_limits``). A broker whose capacity is unknown (an
older Kafka, a hand-written or simulated snapshot) has no limit: this goal cannot see its disk and
says so in its target, rather than guess one.

Hard: ``--goals`` cannot drop it. Its veto keeps every later move off a broker it would fill past
its limit, its exact-model rows hold the solver to the same, and its own actions relieve a broker
that is over its limit already, moving what comes closest to the excess first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kafka_rebalance.planner.goals.base import Goal, donor_index
from kafka_rebalance.planner.goals.view import BalanceView, GoalCheck
from kafka_rebalance.planner.state import ClusterState

if TYPE_CHECKING:
    from kafka_rebalance.planner.exact import ExactModel

SEARCH = 256  # replicas examined per relief move before the broker is left as it is
SLACK_BYTES = 0.5  # whole bytes: a broker at its limit to the byte is within it


class DiskCapacityGoal(Goal):
    name = "disk-capacity"
    hard = True
    priority = 25  # after placement and rack safety (they decide where a replica may live at all)
    target = ("no broker's disks above --max-disk-usage of their capacity (the log dirs' total bytes) after the plan; "
              "brokers whose capacity the snapshot does not record are unconstrained")

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        return float(state.bytes[dst]) + float(state.sizes[p]) <= state.disk_limit[dst] + SLACK_BYTES

    def exact_terms(self, model: ExactModel) -> None:
        # Per eligible broker with a limit: its movable partitions' bytes + its frozen ones' <= its limit.
        limit = model.state.disk_limit[model.elig]
        known = np.isfinite(limit)
        if not known.any():
            return
        keep = known[model.b_of]
        rows = np.cumsum(known) - 1  # the limited brokers numbered 0..k-1
        load = np.repeat(model.sizes, model.n_e) / model.scale
        model.add(rows[model.b_of[keep]], model.var.ravel()[keep], load[keep], np.full(int(known.sum()), -np.inf),
                  (limit[known] - model.fixed_bytes[known] + SLACK_BYTES) / model.scale)

    def check(self, view: BalanceView) -> GoalCheck:
        """The bytes by which brokers lie above their limits, summed; the offenders are those brokers.
        A broker without a known capacity is in no figure: nothing is known to hold it to."""
        over = {b.broker_id: b.bytes - b.disk_limit for b in view.brokers if b.disk_limit is not None}
        offenders = tuple(sorted(b for b, x in over.items() if x > SLACK_BYTES))
        value = sum(max(0.0, over[b]) for b in offenders)
        return self.verdict(value, not offenders, offenders, {b: x if b in offenders else 0.0 for b, x in over.items()})

    def optimize(self, state: ClusterState) -> None:
        """Move replicas off each broker above its limit, the one furthest above first, each time the
        replica closest in size to what is left of its excess, to the broker that will be least full
        (by the fraction of its limit; brokers without one rank by bytes after every limited one)."""
        self.unrelieved: list[int] = []
        limit = state.disk_limit
        elig = np.asarray(state.eligible_idx, dtype=np.int64)
        excess = state.bytes[elig] - limit[elig]
        for b in elig[np.argsort(-excess, kind="stable")].tolist():
            while float(state.bytes[b]) > limit[b] + SLACK_BYTES:
                chosen: dict[int, int] = {}

                def ok(p: int, b: int = b, chosen: dict[int, int] = chosen) -> bool:
                    dst = self._destination(state, p, b)
                    if dst is not None:
                        chosen[p] = dst
                    return dst is not None

                p = donor_index(state, b).find(float(state.bytes[b]) - limit[b], ok, SEARCH, allow_touched=True)
                if p is None:
                    self.unrelieved.append(state.bid(b))
                    break
                state.move(p, b, chosen[p])

    @staticmethod
    def _destination(state: ClusterState, p: int, src: int) -> int | None:
        elig = state.eligible_index_arr
        limit = state.disk_limit[elig]
        fill = np.where(np.isfinite(limit), state.bytes[elig] / np.maximum(limit, 1.0), np.inf)
        order = elig[np.lexsort((elig, state.bytes[elig], fill))]
        row = state.row(p)
        for dst in order.tolist():
            if dst != src and dst not in row and state.accepts(p, src, dst):
                return dst
        return None
