"""Bytes: every eligible broker within ``byte_tolerance`` of the mean.

Runs after the count goal, which vetoes any single move that would push a broker
out of its count range; where counts leave no slack, a swap (a large replica one
way, a small one back) keeps both counts and evens the bytes. Every accepted
action strictly lowers the total deviation beyond the tolerance band, so it ends.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from kafka_rebalance.balance import band_deviation
from kafka_rebalance.planner.byte_misses import SLACK, out_of_reach
from kafka_rebalance.planner.goals.base import Goal, bound_for, donor_index, outward, rack_bound, slot
from kafka_rebalance.planner.goals.byte_balance_moves import balance_bytes, guard_each
from kafka_rebalance.planner.goals.byte_trim import ByteTrimGoal
from kafka_rebalance.planner.goals.donor_arrays import kernel_reads
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView, GoalCheck
from kafka_rebalance.planner.state import ClusterState

if TYPE_CHECKING:
    from kafka_rebalance.planner.exact import ExactModel

PARTNERS = 8  # lightest (or heaviest) brokers tried per step, and as many of the broker's own rack
SEARCH = 64  # candidates examined per search of one broker's replicas
# A swap copies both its replicas to shed their difference. One that copies more than SWAP_COPIES bytes per byte
# it sheds (near-equal replicas, all a count-neutral exchange has left) is costly: each broker takes part in at
# most COSTLY_SWAPS of them. On a small cluster a few dozen bring the last brokers into their band (8 brokers
# with giants: max/mean 1.28 instead of 1.47); at 200 brokers / 200,000 partitions, once the counts were fixed
# and the move cap had locked the large replicas, the byte goal made about 55,000 of them (median 0.25 MiB shed
# for 9 MiB copied): half the plan's replica moves and most of its planning time.
SWAP_COPIES = 3.0
COSTLY_SWAPS = 64


FEW = 16  # candidates ByteGuard.allowed judges one by one in Python: fewer than NumPy's fixed cost pays for


class ByteGuard:
    """The byte band a later goal keeps: no broker ends further outside it than it is (within half a byte).

    Bytes have no veto of their own. A goal that runs after the bytes goal keeps what it reached through this
    guard; one that runs before it needs none (the bytes goal balances what it leaves), so the guard is off.
    """

    def __init__(self, state: ClusterState) -> None:
        self.upper, self.lower = state.byte_hi, state.byte_lo  # the byte band (balance.byte_band)
        self.active = any(g.name == ByteBalanceGoal.name for g in state.vetoes)

    def _off(self, b: int, x: float) -> float:
        return max(0.0, x - self.upper[b], self.lower[b] - x)

    def allows(self, state: ClusterState, change: dict[int, float]) -> bool:
        """Each broker's bytes changed by ``change[b]`` end no further outside the band than they are."""
        if not self.active:
            return True
        return all(self._off(b, float(state.bytes[b]) + d) <= self._off(b, float(state.bytes[b])) + 0.5
                   for b, d in change.items())  # fmt: skip

    def allows_each(self, state: ClusterState, a: int, r: int, moved: np.ndarray) -> np.ndarray:
        """``allows(state, {a: -x, r: x})`` for every x in ``moved`` at once (the same floats): a swap's search
        asked it candidate by candidate, most of the topic-spread goal's time at 50 brokers."""
        if not self.active:
            return np.ones(len(moved), dtype=bool)
        now_a, now_r = float(state.bytes[a]), float(state.bytes[r])
        band = np.array([self.upper[a], self.lower[a], self.upper[r], self.lower[r]], dtype=np.float64)
        # (compiled: NumPy's fixed cost per operation, on the few dozen sizes of a search, was the network goal's
        # swaps' largest part)
        return guard_each(now_a, now_r, band, self._off(a, now_a) + 0.5, self._off(r, now_r) + 0.5,
                          np.ascontiguousarray(moved, dtype=np.float64))

    def allowed(self, state: ClusterState, a: int, r: int, parts: list[int]) -> list[int]:
        """The partitions of ``parts`` whose replica may move from a to r (``allows_each`` of their sizes), in order.
        A few are judged one by one in Python (the same float operations): NumPy's fixed cost per call was most of a
        single move's time in the topic-spread goal, whose candidates are one topic's few replicas on one broker."""
        if len(parts) > FEW:
            sizes = state.sizes[np.asarray(parts, dtype=np.int64)].astype(np.float64)
            return np.asarray(parts, dtype=np.int64)[self.allows_each(state, a, r, sizes)].tolist()
        if not self.active:
            return list(parts)
        now_a, now_r = float(state.bytes[a]), float(state.bytes[r])
        up_a, low_a, up_r, low_r = float(self.upper[a]), float(self.lower[a]), float(self.upper[r]), float(self.lower[r])
        limit_a, limit_r = self._off(a, now_a) + 0.5, self._off(r, now_r) + 0.5
        out = []
        for p in parts:
            x = float(state.sizes[p])
            on_a, on_r = now_a - x, now_r + x
            if max(0.0, on_a - up_a, low_a - on_a) <= limit_a and max(0.0, on_r - up_r, low_r - on_r) <= limit_r:
                out.append(p)
        return out

    def moved_span(self, state: ClusterState, a: int, r: int) -> tuple[float, float] | None:
        """Bytes moved from a to r (a swap's net) outside this span are never allowed (``allows_each`` says no):
        off(x) <= c holds exactly for x within [lower - c, upper + c], on each broker. The span is widened by a
        byte and a billionth so float rounding can only let more through; a search uses it to skip what cannot
        pass and asks ``allows_each`` for the rest. None: the guard is off, everything passes."""
        if not self.active:
            return None
        now_a, now_r = float(state.bytes[a]), float(state.bytes[r])
        c_a, c_r = self._off(a, now_a) + 0.5, self._off(r, now_r) + 0.5
        lo = max(now_a - self.upper[a] - c_a, self.lower[r] - c_r - now_r)
        hi = min(now_a - self.lower[a] + c_a, self.upper[r] + c_r - now_r)
        slack = 1.0 + 1e-9 * max(abs(now_a), abs(now_r), abs(float(self.upper[a])), abs(float(self.upper[r])))
        return lo - slack, hi + slack


class ArrivalIndex:
    """The replicas that moved onto one broker during planning, sorted by (size, partition).

    Fed from ``state.arrivals`` as it grows; a replica that has since moved on leaves the
    lists when a search passes it. A search walks outward from the wanted size, as
    ``DonorIndex`` does, so it costs the replicas it looks at, not every arrival (at 50,000
    partitions re-sorting each broker's thousands of arrivals per search was most of the
    goal's time).
    """

    __slots__ = ("state", "broker", "seen", "fed", "sizes", "parts")

    def __init__(self, state: ClusterState, broker: int) -> None:
        self.state, self.broker = state, broker
        self.seen: set[int] = set()
        self.fed = 0
        self.sizes: list[int] = []
        self.parts: list[int] = []

    def _feed(self) -> None:
        new = self.state.arrivals.get(self.broker, [])
        for p in new[self.fed :]:
            if p not in self.seen:
                self.seen.add(p)
                size = int(self.state.sizes[p])
                k = slot(self.sizes, self.parts, size, p)  # (p is not listed yet, ``seen`` says)
                self.sizes.insert(k, size)
                self.parts.insert(k, p)
        self.fed = len(new)

    def find(self, desired: float, ok: Callable[[int], bool], limit: int = SEARCH,
             window: tuple[float, float] = (-math.inf, math.inf)) -> int | None:  # fmt: skip
        """The arrival still on the broker nearest ``desired`` in size that ``ok`` accepts, among
        the ``limit`` nearest; it stays listed (it may move on again and come back)."""
        self._feed()
        sizes, parts, row, broker = self.sizes, self.parts, self.state.row, self.broker
        checks = 0
        gone: list[int] = []
        found = None
        for j in outward(sizes, desired, *window):
            if checks >= limit:
                break
            p = parts[j]
            if broker not in row(p):
                gone.append(j)
                continue
            checks += 1
            if ok(p):
                found = p
                break
        for j in sorted(gone, reverse=True):
            self.seen.discard(parts[j])
            del parts[j]
            del sizes[j]
        return found


class ByteBalanceGoal(Goal):
    name = "bytes"
    priority = 40
    target = ("every eligible broker's bytes within --byte-tolerance of the mean (where rack safety or unmovable "
              "load forces its share beyond that, within half the tolerance of that share); no broker further off "
              "than before")

    def __init__(self, costly_swaps: int = COSTLY_SWAPS) -> None:
        # (_in_rack and _costly are placeholders: optimize sets both before anything reads them, so any length or dtype alike)
        self._arrivals: dict[int, ArrivalIndex] = {}
        self._in_rack = np.zeros(0, dtype=bool)
        self.costly_swaps = costly_swaps
        self._costly = np.zeros(0, dtype=np.int64)  # per broker, the costly swaps it took part in

    def optimize(self, state: ClusterState) -> None:
        # (a list of ints, never empty: ClusterState refuses a cluster without an eligible broker; int64 without the dtype too)
        elig = np.asarray(state.eligible_idx, dtype=np.int64)
        self._in_rack = self._rack_bound(state)
        self._costly = np.zeros(state.n_brokers, dtype=np.int64)  # (floats alike: whole numbers, compared only)
        # Brokers no plan brings into their band (byte_misses proves it, and the plan names the cause) are
        # held to what they can reach instead: one above its band (a partition too big for any host, or
        # load that may not move) is never searched for, its top where it stands (at 200 brokers with
        # giant partitions, shedding everything around a giant took most of the planning time and
        # thousands of swaps, for a broker that stays out whatever it sheds); one below its band at most
        # to the most it can hold. (The count goal already left such a host above its band holding the least it
        # may: ReplicaCountGoal._hold_least, the giant-host rule.)
        out = out_of_reach(state)
        raise_hi = np.zeros(state.n_brokers)
        cut_lo = np.full(state.n_brokers, np.inf)
        for b, why in out.items():
            if why.above:
                raise_hi[b] = float(state.bytes[b])
            else:
                cut_lo[b] = why.most
        # First the tolerance band; then, for brokers it could not bring in, at least the band
        # the quality gate allows (no broker worse off than before).
        upper, lower = np.maximum(state.byte_hi, raise_hi), np.minimum(state.byte_lo, cut_lo)
        run = self._run if not kernel_reads(state, cap=True) else self._compiled_run  # (the same moves)
        run(state, elig, upper, lower)
        if state.move_cap is not None and not out and self._short(state, elig, upper, lower):
            # The band over the cap (docs/PLANNER.md, "A partition moves once"): where the cap left a band
            # short in a cluster no proof keeps from reaching every band (the hard goals and the count goal
            # had moved most partitions already: a decommission, brokers added), the partitions they moved
            # may take one more new replica each; the byte goals still give any partition at most one
            # step of their own. Where some band is out of reach, no second copy buys every band.
            state.one_more_move()
            run(state, elig, upper, lower)
        run(state, elig, np.maximum(state.byte_allowed_hi, raise_hi), np.minimum(state.byte_allowed_lo, cut_lo))
        # Then the same balance for fewer bytes: the moves chosen above, made with smaller replicas.
        ByteTrimGoal().optimize(state)

    def exact_terms(self, model: ExactModel) -> None:
        state, elig, scale = model.state, model.elig, model.scale
        low_b, high_b = state.byte_lo[elig], state.byte_hi[elig]
        load = np.repeat(model.sizes, model.n_e) / scale
        x = model.var.ravel()
        if model.widen == 0.0:  # (the widening rows below with a budget of 0 would hold the same bands, slower)
            model.add(model.b_of, x, load, (low_b - model.fixed_bytes) / scale, (high_b - model.fixed_bytes) / scale)
            return
        # A continuous w_b >= 0 widening each broker's band: load - w_b <= high, load + w_b >= low.
        # Their sum is the total distance outside the bands, which every action of the heuristic
        # lowers: minimised (widen None), or held within the smallest sum found (a budget shared by
        # the brokers, so the bytes model may choose which brokers use it). One widening for every
        # band instead would let every broker drift as far as the one holding a partition larger
        # than its band must.
        n_e = model.n_e
        # (any positive cost alike where widen is None: the x columns cost nothing then, so only the widening is weighed)
        wcol = model.columns(n_e, upper=np.inf, integer=False, cost=1.0 if model.widen is None else 0.0)
        model.widening_cols = wcol
        if model.widen is not None:
            # (float row numbers would do the same: the model's coo_matrix casts its indices to int)
            model.add(np.zeros(n_e, dtype=np.int64), wcol, np.ones(n_e), np.array([-np.inf]), np.array([model.widen / scale]))
        brokers = np.arange(n_e)
        model.add(np.concatenate([model.b_of, brokers]), np.concatenate([x, wcol]), np.concatenate([load, -np.ones(n_e)]),
                  np.full(n_e, -np.inf), (high_b - model.fixed_bytes) / scale)
        model.add(np.concatenate([model.b_of, brokers]), np.concatenate([x, wcol]), np.concatenate([load, np.ones(n_e)]),
                  (low_b - model.fixed_bytes) / scale, np.full(n_e, np.inf))

    @staticmethod
    def gate_allowance(deviation_before: Any, tolerance: float) -> Any:
        """The relative deviation a broker may end at and pass the gate: its tolerance, or, where it
        started further off, where it started (no broker worse off than before). Scalars or arrays."""
        return np.maximum(deviation_before, tolerance)

    def band_excess(self, state: ClusterState, load: np.ndarray) -> np.ndarray:
        # (a list of ints, never empty: ClusterState refuses a cluster without an eligible broker; int64 without the dtype too)
        elig = np.asarray(state.eligible_idx, dtype=np.int64)
        return np.maximum(0.0, np.maximum(load[elig] - state.byte_hi[elig], state.byte_lo[elig] - load[elig]))

    @staticmethod
    def _short(state: ClusterState, elig: np.ndarray, upper: np.ndarray, lower: np.ndarray) -> bool:
        """Is some broker still outside the band (as far as the proofs leave it reachable)?"""
        b = state.bytes[elig].astype(np.float64)  # (astype(None) is float64 as well)
        return bool(((b > upper[elig] + SLACK) | (b < lower[elig] - SLACK)).any())

    def check(self, view: BalanceView) -> GoalCheck:
        tol = view.byte_tolerance

        def dev(b: BrokerView) -> float:
            lo, hi, mean = b.byte_band(tol)
            return float(band_deviation(b.bytes, mean, lo, hi, tol))

        def outside(b: BrokerView) -> bool:
            lo, hi, _ = b.byte_band(tol)
            # 1e-6: the same bytes must compare equal whatever the float rounding (>= or <= alike: they differ only
            # for bytes exactly 1e-6 past the slack, a rounding away from either answer)
            return b.bytes > hi + view.byte_slack + 1e-6 or b.bytes < lo - view.byte_slack - 1e-6

        out = tuple(b.broker_id for b in view.brokers if outside(b))
        return self.verdict(max((dev(b) for b in view.brokers), default=0.0), not out, out,
                            {b.broker_id: dev(b) for b in view.brokers})

    def _run(self, state: ClusterState, elig: np.ndarray, upper_all: np.ndarray, lower_all: np.ndarray) -> None:
        """Fix the broker furthest outside the band, again and again. A broker that no partner can
        improve is set aside, until some other broker's action changed the picture: then every
        broker set aside is tried again (a partner may have made room), so the goal stops only
        when no broker outside the band can be improved at all. Compiled in byte_balance_moves.py, which runs
        wherever it reads every veto in force (``_compiled_run``); this is the rule read plainly, and runs where it
        does not."""
        target = state.byte_target
        # As lists: ``_viol`` reads them half a million times per plan at 200 brokers (the same floats as the arrays')
        self.upper, self.lower = upper_all.tolist(), lower_all.tolist()
        upper, lower = upper_all[elig], lower_all[elig]
        held = upper_all > state.byte_hi  # brokers proven out of reach above their band, held where they stood
        stuck = np.zeros(state.n_brokers, dtype=bool)
        pinned = self._pinned(state, elig)
        # A retry round of brokers set aside while nothing changed fails as before: an extra round (``acted`` True
        # at first or after a reset) costs time, not a different plan.
        acted = False  # since brokers were last set aside (None alike: only its truth is read)
        from kafka_rebalance.planner.goals.byte_focus import next_focus  # (numba: imported where it is needed)

        rack = np.asarray(state.rack, dtype=np.int64)
        bands = (upper.astype(np.float64), lower.astype(np.float64))
        found = np.empty(2 * PARTNERS, dtype=np.int64)
        for _ in range(self._rounds(state, elig)):
            # The broker furthest outside its band (not set aside) and its partners, lowest in key (rel: above (+) or
            # below (-) its own target; -rel for a light broker).
            focus, heavy, n = next_focus(state.bytes, elig, *bands, target, stuck, rack, bool(state.has_racks), pinned,
                                         held, PARTNERS, found)  # fmt: skip
            if focus < 0:
                if not (acted and stuck.any()):
                    return
                stuck[:] = False  # (None alike: a bool array stores it as False)
                acted = False
                continue
            if self._improve(state, focus, found[:n].tolist(), heavy=heavy):
                acted = True
            else:
                stuck[focus] = True

    def _compiled_run(self, state: ClusterState, elig: np.ndarray, upper: np.ndarray, lower: np.ndarray) -> None:
        """``_run``, compiled (byte_balance_moves.py), where it reads every veto in force."""
        balance_bytes(state, [(upper, lower)], self._in_rack, self._pinned(state, elig), self._arrivals, self._costly,
                      SWAP_COPIES, (PARTNERS, SEARCH, self.costly_swaps, self._rounds(state, elig)))

    @staticmethod
    def _pinned(state: ClusterState, elig: np.ndarray) -> bool:
        """Can no movable replica change racks (every RF a multiple of the rack count, every eligible broker in one)?
        Then a broker's partners are of its own rack only (``byte_focus.partners``)."""
        movable = ~state.frozen
        # (max(n_racks, 2) alike: with one rack every partner is in ``me``'s rack, pinned or not, the same list)
        return bool(
            state.has_racks and min(state.rack[b] for b in elig.tolist()) >= 0
            and (state.rf_target[movable] % max(state.n_racks, 1) == 0).all()
        )

    @staticmethod
    def _rounds(state: ClusterState, elig: np.ndarray) -> int:
        """A guard only (every action strictly lowers the total deviation beyond the band): one action per replica.
        A cluster whose count goal left heavy brokers full of small replicas needs thousands of swaps; 20 per broker
        stopped 200 brokers / 200,000 partitions half-way."""
        return 20 * len(elig) + 1000 + int(state.rf_target.sum())

    _rack_bound = staticmethod(rack_bound)

    def _bound_for(self, state: ClusterState, src: int, dst: int) -> np.ndarray | None:
        return bound_for(self._in_rack, state, src, dst)

    def _viol(self, b: int, x: float) -> float:
        return max(0.0, x - self.upper[b]) + max(0.0, self.lower[b] - x)

    def _reach(self, h: int, r: int, bh: float, br: float) -> tuple[float, float] | None:
        """The sizes s (bytes moved from h to r) for which the two brokers' total distance outside
        their bands falls, as an open interval, or None when no move between them helps. That
        distance is convex and piecewise linear in s, its kinks where either broker crosses a band
        edge, so the interval is read off those kinks: searches then stop at its edges instead of
        walking thousands of replicas that cannot help (the byte goal's slowest loop at scale)."""
        before = self._viol(h, bh) + self._viol(r, br)
        goal = before - 1e-9

        def f(x: float) -> float:
            return self._viol(h, bh - x) + self._viol(r, br + x)

        # (x >= 0 alike: a kink at 0 only adds a segment of no length, which the loop below skips)
        kinks = sorted({x for x in (bh - self.upper[h], bh - self.lower[h], self.upper[r] - br, self.lower[r] - br)
                        if x > 0})  # fmt: skip
        points = [0.0, *kinks]
        values = [before, *(f(x) for x in kinks)]
        # beyond the last kink f is linear: extend it to where it climbs back to ``goal``. There both brokers are past
        # every edge they cross, so its slope is 2 whatever ``step`` (a max of 2.0 alike), and ``slope > 0`` always
        # holds (>= 0 or > 1 alike). Where f_last >= goal the added segment is skipped below whichever value closes it
        # (goal, f(last), f(last + step)), and wherever it ends: ending short of ``last`` (the first branch for any f_last,
        # ``or`` alike) at last - (f_last - goal) / 2, f there is still >= goal, f falling no faster than 2 before ``last``.
        # (f_last <= goal alike in either test: where f_last is goal exactly, the segment starts at goal and is skipped.)
        last, f_last = points[-1], values[-1]
        step = max(1.0, last)
        slope = (f(last + step) - f_last) / step
        points.append(last + ((goal - f_last) / slope if f_last < goal and slope > 0 else step))
        values.append(f(points[-1]) if not (f_last < goal and slope > 0) else goal)
        # f is convex: it falls from s = 0 when anything helps, so only the first segment starts at or above ``goal``
        # (s0 = 0: s1 - s0 and s1 + s0 alike) and ``a`` there is 1e-9 / slope from 0, less than the byte the
        # caller's window adds (any rounding of it alike); after the dip every segment stays above (break alike).
        # (> for f0 or f1 below, or f1 <= goal for b, differ only where f meets goal exactly, at an edge they read alike;
        # f0 <= goal for a gives s0 there either way)
        # (``/ (s1 - s0)`` for ``* (s1 - s0)`` in ``a`` alike: a segment crossing goal downwards is followed by one starting
        # below it at s1, so lo <= s1; the crossing begins within 1e-9 of 0, where f falls at 1 or 2 a byte, and that ``a``
        # exceeds the true one by over 1e-9 only where s1 - s0 < 1, so lo < 1 + 1e-9 and the window's bottom, lo - 1,
        # still admits every size that helps: a whole byte or more)
        lo, hi = math.inf, -math.inf
        for s0, s1, f0, f1 in zip(points, points[1:], values, values[1:], strict=False):  # (strict=False: zip's default)
            if f0 >= goal and f1 >= goal:
                continue
            a = s0 if f0 < goal else s0 + (f0 - goal) / (f0 - f1) * (s1 - s0)
            b = s1 if f1 < goal else s0 + (goal - f0) / (f1 - f0) * (s1 - s0)
            lo, hi = min(lo, a), max(hi, b)
        return (lo, hi) if lo < hi else None  # (<= alike: a segment below goal anywhere gives a < b)

    def _improve(self, state: ClusterState, focus: int, partners: list[int], heavy: bool) -> bool:
        target = state.byte_target
        for other in partners:
            h, r = (focus, other) if heavy else (other, focus)
            bh, br = float(state.bytes[h]), float(state.bytes[r])
            th, tr = float(target[h]), float(target[r])
            if bh - th <= br - tr:
                continue
            reach = self._reach(h, r, bh, br)
            if reach is None:
                continue
            before = self._viol(h, bh) + self._viol(r, br)
            desired = max(0.0, min(bh - th, tr - br)) or ((bh - th) - (br - tr)) / 2

            def better(s: float) -> bool:
                return self._viol(h, bh - s) + self._viol(r, br + s) < before - 1e-9  # noqa: B023 - called within this iteration

            # ``better`` stays the judge; the window (one byte wider, for rounding) only ends searches. No wider: sizes it
            # would add are ones ``better`` refuses, and walking them could use up a search's SEARCH checks.
            window = (reach[0] - 1.0, reach[1] + 1.0)
            if self._single(state, h, r, desired, better, window):
                return True
            if self._swap(state, h, r, desired, better, window):
                return True
        return False

    def _arrival(self, state: ClusterState, x: int, desired: float, ok: Callable[[int], bool],
                 window: tuple[float, float] = (-math.inf, math.inf)) -> int | None:  # fmt: skip
        """A replica that moved ONTO x during planning: moving it on again changes its
        destination, not the number of moves (and moving it home cancels a move)."""
        idx = self._arrivals.get(x)  # a cache: an index fed afresh from state.arrivals finds the same replicas
        if idx is None:
            idx = self._arrivals[x] = ArrivalIndex(state, x)
        return idx.find(desired, ok, window=window)

    def _pick(self, state: ClusterState, x: int, desired: float, ok, window: tuple[float, float]) -> int | None:
        idx = donor_index(state, x)
        p = idx.find(desired, ok, limit=SEARCH, window=window)
        if p is None:
            p = self._arrival(state, x, desired, ok, window)
        if p is None:
            p = idx.find(desired, ok, limit=SEARCH, allow_touched=True, window=window)
        return p

    def _single(self, state: ClusterState, h: int, r: int, desired: float, better, window: tuple[float, float]) -> bool:
        # No search when the count goals refuse every move between the two brokers.
        if not state.counts_accept(h, r):
            return False
        # the goals' vetoes first: across racks most candidates fail rack safety, and then need no arithmetic
        # a shortcut only: rack safety's veto refuses the same partitions (None alike: a hard goal, always a veto: core._balance)
        bound = self._bound_for(state, h, r)
        p = self._pick(state, h, desired,
                       lambda p: not (bound is not None and bound[p]) and state.accepts(p, h, r) and better(float(state.size_of[p])),
                       window)  # fmt: skip
        if p is None:
            return False
        state.move(p, h, r)
        return True

    def _swap(self, state: ClusterState, h: int, r: int, desired: float, better, window: tuple[float, float]) -> bool:
        """Move a replica from h to r and a smaller one from r to h: counts unchanged.

        The small one is r's smallest replica that may go to h, looked for as ``_pick`` does
        (untouched first, then arrivals, then any); where the one found first leaves no replica
        of h a useful partner, a smaller one found later is tried too (a broker that received
        large replicas has them first among its arrivals, while its own small ones are touched).
        """
        sizes = state.sizes
        bound, back = self._bound_for(state, h, r), self._bound_for(state, r, h)
        ok_q = lambda q: not (back is not None and back[q]) and state.accepts(q, r, h, count_neutral=True)  # noqa: E731
        idx = donor_index(state, r)
        taken: list[int] = []  # found in r's index, to return unless moved
        smalls: list[int] = []
        q = idx.find(0.0, ok_q, limit=SEARCH)
        if q is not None:
            taken.append(q)
            smalls.append(q)
        a = self._arrival(state, r, 0.0, ok_q)
        # (<= alike, for t below too: a small as large as one that failed runs the same search, sq the same, and fails)
        if a is not None and (not smalls or sizes[a] < sizes[smalls[-1]]):
            smalls.append(a)
        t = idx.find(0.0, lambda x: x not in smalls and ok_q(x), limit=SEARCH, allow_touched=True)
        if t is not None:
            taken.append(t)
            if not smalls or sizes[t] < min(sizes[x] for x in smalls):
                smalls.append(t)
        done = False
        for q in smalls:
            sq = float(sizes[q])
            # cheap: sizes[p] - sq >= (sizes[p] + sq) / SWAP_COPIES (the window is open: one byte wider)
            cheap = sq * (SWAP_COPIES + 1) / (SWAP_COPIES - 1) - 1.0
            costly_ok = self._costly[h] < self.costly_swaps and self._costly[r] < self.costly_swaps
            p = self._pick(
                state, h, desired + sq,
                lambda p: (p != q and not (bound is not None and bound[p]) and state.accepts(p, h, r, count_neutral=True)  # noqa: B023
                           and better(float(state.size_of[p]) - sq)),  # noqa: B023
                # (window[0] - sq alike inside the max: cheap = 2 sq - 1 is >= window[0] + sq, as window[0] is within 1e-9 of -1)
                (window[0] + sq if costly_ok else max(window[0] + sq, cheap), window[1] + sq),
            )
            if p is not None:
                if float(sizes[p]) <= cheap:
                    self._costly[[h, r]] += 1
                state.move(p, h, r)
                state.move(q, r, h)
                taken = [x for x in taken if x != q]
                done = True
                break
        for x in taken:
            idx.put_back(x)  # still on r: available to later searches
        return done
