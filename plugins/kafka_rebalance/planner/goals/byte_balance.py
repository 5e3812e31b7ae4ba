"""Bytes: every eligible broker within ``byte_tolerance`` of the mean.

Runs after the count goal, which vetoes any single move that would push a broker
out of its count range; where counts leave no slack, a swap (a large replica one
way, a small one back) keeps both counts and evens the bytes. Every accepted
action strictly lowers the total deviation beyond the tolerance band, so it ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from kafka_rebalance.planner.goals.base import Goal, donor_index
from kafka_rebalance.planner.goals.byte_trim import ByteTrimGoal
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView, GoalCheck
from kafka_rebalance.planner.state import ClusterState

if TYPE_CHECKING:
    from kafka_rebalance.planner.exact import ExactModel

PARTNERS = 8  # lightest (or heaviest) brokers tried per step


class ByteBalanceGoal(Goal):
    name = "bytes"
    priority = 40
    target = ("every eligible broker's bytes within --byte-tolerance of its byte target (the mean, or its rack's "
              "share where rack safety forces rack totals apart); no broker further off than before")

    def optimize(self, state: ClusterState) -> None:
        elig = np.asarray(state.eligible_idx, dtype=np.int64)
        tol = state.options.byte_tolerance
        target = state.byte_target
        # First the tolerance band; then, for brokers it could not bring in, at least the band
        # the quality gate allows (no broker worse off than before).
        self._run(state, elig, target * (1 + tol), target * (1 - tol))
        self._run(state, elig, state.byte_allowed_hi, state.byte_allowed_lo)
        # Then the same balance for fewer bytes: the moves chosen above, made with smaller replicas.
        ByteTrimGoal().optimize(state)

    def exact_terms(self, model: ExactModel) -> None:
        state, elig, scale = model.state, model.elig, model.scale
        tol = state.options.byte_tolerance
        low_b, high_b = state.byte_target[elig] * (1 - tol), state.byte_target[elig] * (1 + tol)
        load = np.repeat(model.sizes, model.n_e) / scale
        x = model.var.ravel()
        if model.widen is not None:
            model.add(model.b_of, x, load, (low_b - model.widen - model.fixed_bytes) / scale,
                      (high_b + model.widen - model.fixed_bytes) / scale)
            return
        # one continuous w >= 0 widening every band: load - w <= high, load + w >= low; minimise w
        w = model.columns(1, upper=np.inf, integer=False, cost=1.0)[0]
        model.widening_col = int(w)
        n_e = model.n_e
        brokers = np.arange(n_e)
        wcol = np.full(n_e, w)
        model.add(np.concatenate([model.b_of, brokers]), np.concatenate([x, wcol]), np.concatenate([load, -np.ones(n_e)]),
                  np.full(n_e, -np.inf), (high_b - model.fixed_bytes) / scale)
        model.add(np.concatenate([model.b_of, brokers]), np.concatenate([x, wcol]), np.concatenate([load, np.ones(n_e)]),
                  (low_b - model.fixed_bytes) / scale, np.full(n_e, np.inf))

    @staticmethod
    def gate_allowance(deviation_before: Any, tolerance: float) -> Any:
        """The relative deviation a broker may end at and pass the gate: its tolerance, or, where it
        started further off, where it started (no broker worse off than before). Scalars or arrays."""
        return np.maximum(deviation_before, tolerance)

    def band_excess(self, state: ClusterState, load: np.ndarray) -> float:
        elig = np.asarray(state.eligible_idx, dtype=np.int64)
        target = state.byte_target[elig]
        excess = np.abs(load[elig] - target) - state.options.byte_tolerance * target
        return float(max(0.0, excess.max(initial=0.0)))

    def check(self, view: BalanceView) -> GoalCheck:
        tol = view.byte_tolerance

        def dev(b: BrokerView) -> float:
            return abs(b.bytes - b.byte_target) / b.byte_target if b.byte_target else 0.0

        # 1e-9: the same bytes must compare equal whatever the float rounding
        out = tuple(b.broker_id for b in view.brokers
                    if abs(b.bytes - b.byte_target) > tol * b.byte_target + view.byte_slack + 1e-6)  # fmt: skip
        return self.verdict(max((dev(b) for b in view.brokers), default=0.0), not out, out,
                            {b.broker_id: dev(b) for b in view.brokers})

    def _run(self, state: ClusterState, elig: np.ndarray, upper_all: np.ndarray, lower_all: np.ndarray) -> None:
        target = state.byte_target
        self.upper, self.lower = upper_all, lower_all
        upper, lower = upper_all[elig], lower_all[elig]
        stuck = np.zeros(state.n_brokers, dtype=bool)
        for _ in range(20 * len(elig) + 1000):
            b = state.bytes[elig].astype(np.float64)
            live = ~stuck[elig]
            hi = np.where(live, b - upper, 0.0)
            lo = np.where(live, lower - b, 0.0)
            ih, il = int(np.argmax(hi)), int(np.argmax(lo))
            if hi[ih] <= 0 and lo[il] <= 0:
                return
            rel = b - target[elig]  # above (+) or below (-) its own target
            if hi[ih] >= lo[il]:
                h = int(elig[ih])
                partners = elig[np.lexsort((elig, rel))][: PARTNERS + 1]
                if not self._improve(state, h, [int(x) for x in partners if x != h], heavy=True):
                    stuck[h] = True
            else:
                light = int(elig[il])
                partners = elig[np.lexsort((elig, -rel))][: PARTNERS + 1]
                if not self._improve(state, light, [int(x) for x in partners if x != light], heavy=False):
                    stuck[light] = True

    def _viol(self, b: int, x: float) -> float:
        return max(0.0, x - self.upper[b]) + max(0.0, self.lower[b] - x)

    def _improve(self, state: ClusterState, focus: int, partners: list[int], heavy: bool) -> bool:
        target = state.byte_target
        for other in partners:
            h, r = (focus, other) if heavy else (other, focus)
            bh, br = float(state.bytes[h]), float(state.bytes[r])
            th, tr = float(target[h]), float(target[r])
            if bh - th <= br - tr:
                continue
            before = self._viol(h, bh) + self._viol(r, br)
            desired = max(0.0, min(bh - th, tr - br)) or ((bh - th) - (br - tr)) / 2

            def better(s: float) -> bool:
                return self._viol(h, bh - s) + self._viol(r, br + s) < before - 1e-9  # noqa: B023 - called within this iteration

            if self._single(state, h, r, desired, better):
                return True
            if self._swap(state, h, r, desired, better):
                return True
        return False

    @staticmethod
    def _arrival(state: ClusterState, x: int, desired: float, ok) -> int | None:
        """A replica that moved ONTO x during planning: moving it on again changes its
        destination, not the number of moves (and moving it home cancels a move)."""
        lst = [p for p in dict.fromkeys(state.arrivals.get(x, ())) if x in state.row(p)]
        lst.sort(key=lambda p: (abs(float(state.sizes[p]) - desired), p))
        for p in lst[:64]:
            if ok(p):
                return p
        return None

    def _pick(self, state: ClusterState, x: int, desired: float, ok) -> int | None:
        idx = donor_index(state, x)
        p = idx.find(desired, ok, limit=64)
        if p is None:
            p = self._arrival(state, x, desired, ok)
        if p is None:
            p = idx.find(desired, ok, limit=64, allow_touched=True)
        return p

    def _single(self, state: ClusterState, h: int, r: int, desired: float, better) -> bool:
        p = self._pick(state, h, desired, lambda p: better(float(state.sizes[p])) and state.accepts(p, h, r))
        if p is None:
            return False
        state.move(p, h, r)
        return True

    def _swap(self, state: ClusterState, h: int, r: int, desired: float, better) -> bool:
        """Move a replica from h to r and a smaller one from r to h: counts unchanged."""
        q = self._pick(state, r, 0.0, lambda q: state.accepts(q, r, h, count_neutral=True))
        if q is None:
            return False
        sq = float(state.sizes[q])
        p = self._pick(
            state, h, desired + sq,
            lambda p: p != q and better(float(state.sizes[p]) - sq) and state.accepts(p, h, r, count_neutral=True),
        )
        if p is None:
            if not state.touched[q]:
                donor_index(state, r).put_back(q)  # the small one stays available for later searches
            return False
        state.move(p, h, r)
        state.move(q, r, h)
        return True
