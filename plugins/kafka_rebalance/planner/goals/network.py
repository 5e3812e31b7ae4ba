"""Network in and out: each eligible broker's traffic within ``--network-tolerance`` of its capacity-weighted share.

A broker's network in is the produce rate (``bytes_in_per_sec``) of every replica it hosts: the leader takes it
from producers, each follower from the leader. Its network out is what it sends as a leader: each partition's
produce rate to every follower (rate x (RF - 1)) plus the partition's consumer traffic (``bytes_out_per_sec``)
where the snapshot measured it (Prometheus; sampling cannot see consumers, and then out is replication
alone). The share: the eligible brokers' total in proportion to each one's configured network capacity in that
direction (``Capacity.network_in_bytes_per_sec`` / ``network_out_bytes_per_sec``) when every eligible broker
has one, else an even share. Partitions without a measured rate count as 0: a snapshot without rates has
nothing to balance and both goals hold.

* ``network-in`` moves replicas: from the broker furthest above its band, the replica whose rate comes closest
  to what it should shed, to the broker with the most room, alone where the earlier goals accept it (and,
  once the bytes goal ran, neither broker ends further outside the byte band), else swapped for a cooler
  replica of close size on the receiver. Its veto keeps later moves from pushing a broker above its band
  or a sender below it; its exact-model rows hold each broker's in within the band (where no assignment
  meets them with the other rows, ``auto`` keeps the heuristic's plan).
* ``network-out`` moves leadership only (metadata): once the preferred-leader goal chose the first replicas,
  it hands first replicas from brokers above the band to electable fellow replicas below it, within the
  preferred-leader bounds (a partition the receiver leads going back where the bounds would break). A
  broker whose own partitions' traffic exceeds its band cannot shed it this way: moving the replicas
  themselves is left to ``network-in`` and the bytes goals.

Both are opt-in (docs/PLANNER.md, "Network in and out"): their moves trade bytes for traffic, and most
snapshots carry no rates.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.byte_balance import ByteGuard
from kafka_rebalance.planner.goals.preferred_leader import LeaderChoice
from kafka_rebalance.planner.goals.view import BalanceView, BrokerView, GoalCheck
from kafka_rebalance.planner.state import ClusterState

if TYPE_CHECKING:
    from kafka_rebalance.planner.exact import ExactModel

SEARCH = 64  # replicas examined per (donor, receiver) pair
PARTNERS = 8  # receivers tried per donor
SLACK = 1e-6  # relative: the same traffic must compare equal whatever the float rounding

_rates: weakref.WeakKeyDictionary[ClusterState, tuple[np.ndarray, np.ndarray]] = weakref.WeakKeyDictionary()


# --------------------------------------------------------------------------- loads and shares (pure)


def traffic(rows: np.ndarray, leader: np.ndarray, rate_in: np.ndarray, rate_out: np.ndarray,
            n: int) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per broker index: (network in, network out) in bytes/s. ``rows``: partition x slot, broker index, -1
    padded; ``leader``: each partition's leader (broker index, -1 none: it sends nothing); ``rate_in`` each
    partition's produce rate, ``rate_out`` its consumer traffic (0 where unmeasured)."""
    valid = rows >= 0
    rf = valid.sum(axis=1)
    # A weighted bincount is float64 already: the astype(None) mutants here, in _setup and in lead are equivalent.
    weights = np.broadcast_to(rate_in[:, None], rows.shape)[valid]
    net_in = np.bincount(rows[valid], weights=weights, minlength=n).astype(np.float64)
    led = leader >= 0
    sent = rate_in * np.maximum(rf - 1, 0) + rate_out
    net_out = np.bincount(leader[led], weights=sent[led], minlength=n).astype(np.float64)
    return net_in, net_out


def shares(total: float, capacities: Sequence[float | None]) -> list[float]:
    """Each broker's share of ``total``: by capacity when every broker has one, else even."""
    if not capacities:
        return []
    if all(c is not None and c > 0 for c in capacities):
        whole = float(sum(c or 0 for c in capacities))  # every c > 0 here: `c or 1` (both lines) is equivalent
        return [total * float(c or 0) / whole for c in capacities]
    return [total / len(capacities)] * len(capacities)


def partition_rates(state: ClusterState) -> tuple[np.ndarray, np.ndarray]:
    """Per partition: its produce rate and its consumer traffic, 0 where the snapshot has none."""
    got = _rates.get(state)
    if got is None:
        # Equivalent mutants: nan=0.0, the dtype and the count below are the defaults; skipping the cache recomputes.
        rate_in = np.nan_to_num(state.rates, nan=0.0)
        rate_out = np.fromiter((p.bytes_out_per_sec or 0.0 for p in state.parts), dtype=np.float64, count=state.n_parts)
        got = _rates[state] = (rate_in, rate_out)
    return got


def state_traffic(state: ClusterState, rows: np.ndarray, leader: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    rate_in, rate_out = partition_rates(state)
    return traffic(rows, leader.astype(np.int64), rate_in, rate_out, state.n_brokers)


def network_capacities(state: ClusterState) -> tuple[list[float | None], list[float | None]]:
    """Each broker's (index order) configured network in and out capacity, None where not configured."""
    caps = [b.capacity for b in state.snapshot.brokers]
    return ([None if c is None or c.network_in_bytes_per_sec is None else float(c.network_in_bytes_per_sec) for c in caps],
            [None if c is None or c.network_out_bytes_per_sec is None else float(c.network_out_bytes_per_sec) for c in caps])


def view_fields(net_in: Sequence[float], net_out: Sequence[float], cap_in: Sequence[float | None],
                cap_out: Sequence[float | None]) -> list[dict[str, float | None]]:  # fmt: skip
    """The ``BrokerView`` network fields of each eligible broker, from its loads and capacities (one order):
    what every builder of a view (the planner's, the gate's) fills in through here."""
    t_in, t_out = shares(float(sum(net_in)), cap_in), shares(float(sum(net_out)), cap_out)
    return [{"network_in": float(a), "network_in_target": ti, "network_in_capacity": ci,
             "network_out": float(b), "network_out_target": to, "network_out_capacity": co}
            for a, b, ti, to, ci, co in zip(net_in, net_out, t_in, t_out, cap_in, cap_out)]  # fmt: skip


# --------------------------------------------------------------------------- goals


class NetworkGoal(Goal):
    """One direction's rule: the check, the gate's allowance and the report's figure."""

    direction: ClassVar[str] = ""
    default = False  # opt-in: module docstring

    @classmethod
    def figures(cls, b: BrokerView) -> tuple[float, float, float | None]:
        """(traffic, target, capacity) of one broker in this goal's direction."""
        if cls.direction == "in":
            return b.network_in, b.network_in_target, b.network_in_capacity
        return b.network_out, b.network_out_target, b.network_out_capacity

    @classmethod
    def deviation(cls, b: BrokerView) -> float:
        load, target, _ = cls.figures(b)
        return abs(load - target) / target if target > 0 else 0.0

    @staticmethod
    def gate_allowance(deviation_before: float, tolerance: float) -> float:
        """What a broker may end at and pass the gate: the tolerance, or where it started (no broker worse off)."""
        return max(deviation_before, tolerance)

    def check(self, view: BalanceView) -> GoalCheck:
        """The largest relative deviation from the share; offenders: brokers beyond the tolerance."""
        tol = view.network_tolerance
        dev = {b.broker_id: self.deviation(b) for b in view.brokers}
        offenders = tuple(b for b, d in dev.items() if d > tol + SLACK)
        return self.verdict(max(dev.values(), default=0.0), not offenders, offenders, dev)

    def broker_figures(self, before: BalanceView, after: BalanceView) -> dict[str, Any]:
        """Per eligible broker (``ids`` order): its traffic before and after the plan, its share after and its
        configured capacity (None: not configured), bytes/s; the report's chart and the approval line read them."""
        def col(view: BalanceView, k: int) -> list[float | None]:
            return [None if (v := self.figures(b)[k]) is None else round(float(v), 3) for b in view.brokers]

        return {"ids": [b.broker_id for b in after.brokers], "before": col(before, 0), "after": col(after, 0),
                "share": col(after, 1), "capacity": col(after, 2)}

    @classmethod
    def _series(cls, entry: Mapping[str, Any]) -> list[tuple[int, float, float, float, float | None]] | None:
        b = entry.get("brokers")
        if not isinstance(b, Mapping):
            return None
        return list(zip(b["ids"], b["before"], b["after"], b["share"], b["capacity"], strict=True))

    @classmethod
    def approval_line(cls, entry: Mapping[str, Any]) -> str:
        """The busiest broker before and after, against its share and capacity, and the largest load / share."""
        rows = cls._series(entry)
        if not rows:
            return ""
        from kafka_rebalance.units import human_rate

        top_before = max(rows, key=lambda r: r[1])
        top_after = max(rows, key=lambda r: r[2])
        cap = f", capacity {human_rate(int(top_after[4]))}" if top_after[4] else ""

        def worst(loads: list[float]) -> float:
            return max((x / r[3] for x, r in zip(loads, rows) if r[3]), default=0.0)

        was, now = worst([r[1] for r in rows]), worst([r[2] for r in rows])
        return (f"network {cls.direction}: busiest broker {top_before[0]} at {human_rate(int(top_before[1]))} before, "
                f"busiest after {top_after[0]} at {human_rate(int(top_after[2]))} (its share "
                f"{human_rate(int(top_after[3]))}{cap}); the most loaded broker at {was:.2f} -> {now:.2f}x "
                "its share")

    @classmethod
    def report_charts(cls, entry: Mapping[str, Any], final: Any = None,
                      summary: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:  # fmt: skip
        """Per broker: before, projected and (after execution) final traffic, the share band and the capacity."""
        rows = cls._series(entry)
        if not rows:
            return []
        from kafka_rebalance.report import charts

        ids = [r[0] for r in rows]
        series = [charts.Series("before", [r[1] for r in rows]), charts.Series("projected", [r[2] for r in rows])]
        if final is not None:
            got = snapshot_traffic(final)[0 if cls.direction == "in" else 1]
            series.append(charts.Series("final", [got.get(b) for b in ids]))
        # top only picks the unit (from 1 KiB/s up): `c or 1` and a floor of 2.0 instead of 1.0 are equivalent.
        top = max([v for s in series for v in s.values if v is not None] + [c or 0 for *_, c in rows] + [1.0])
        divisor, unit = next(((float(1024**k), f"{u}/s") for k, u in ((3, "GiB"), (2, "MiB"), (1, "KiB"))
                              if top >= 1024**k), (1.0, "B/s"))  # fmt: skip
        chart_id = f"network-{cls.direction}"
        title = f"Network {cls.direction} per broker"
        svg = charts.broker_bars(chart_id, title, ids, series, unit_divisor=divisor, unit=unit,
                                 marks=[r[3] for r in rows], mark_label="share",
                                 limits=[r[4] for r in rows], limit_label="capacity")
        what = ("produce bytes/s of every replica it hosts" if cls.direction == "in"
                else "as leader: produce bytes/s x (RF - 1) plus consumer bytes/s where measured")
        return [{"id": chart_id, "title": title, "svg": svg,
                 "caption": f"Network {cls.direction} ({what}). Black ticks: each broker's share after the plan (by "
                            "configured capacity where every broker has one); red dashes: its configured capacity."}]


def snapshot_traffic(snapshot: Any) -> tuple[dict[int, float], dict[int, float]]:
    """Per broker id, (network in, network out) of a snapshot as it stands (its own rates and leaders)."""
    ids = [b.id for b in snapshot.brokers]
    index = {b: i for i, b in enumerate(ids)}
    parts = snapshot.partitions
    # Equivalent mutants here: the width's default and floor only pad (-1 slots, no replica), and with no partitions
    # the matrix is empty at any width; np.full of -1 and a list of floats give int64 and float64 without the dtypes;
    # any negative filler is "no replica" / "no leader" to ``traffic``, and every leader is set in the loop.
    width = max((len(p.replicas) for p in parts), default=1) or 1
    rows = np.full((len(parts), width), -1, dtype=np.int64)
    leader = np.full(len(parts), -1, dtype=np.int64)
    for i, p in enumerate(parts):
        rows[i, : len(p.replicas)] = [index[b] for b in p.replicas]
        leader[i] = index.get(p.leader, -1)
    rate_in = np.asarray([p.bytes_in_per_sec or 0.0 for p in parts], dtype=np.float64)
    rate_out = np.asarray([p.bytes_out_per_sec or 0.0 for p in parts], dtype=np.float64)
    net_in, net_out = traffic(rows, leader, rate_in, rate_out, len(ids))
    return ({b: float(net_in[i]) for b, i in index.items()}, {b: float(net_out[i]) for b, i in index.items()})


class NetworkInGoal(NetworkGoal):
    name = "network-in"
    direction = "in"
    relief = True  # relief mode brings every broker under its band's top, where network capacities are known
    priority = 46  # after the bytes (and topic spread): it trades within what they leave, before the leader goals
    target = ("every eligible broker's network in (produce bytes/s of every replica it hosts) within --network-tolerance "
              "of its share (by configured network_in capacity where every broker has one, else even)")

    def __init__(self) -> None:
        self.ready = False
        # (the state, its changes read, per (broker, hot_only) the candidates): see ``_candidates``
        self._listed: tuple[ClusterState, int, dict[tuple[int, bool], list[int]]] | None = None
        self._arrays: dict[tuple[int, bool], tuple[list[int], np.ndarray]] = {}  # see ``_candidate_array``
        self._sorted: dict[int, tuple[list[int], np.ndarray, np.ndarray, np.ndarray]] = {}  # see ``_by_size``

    def _setup(self, state: ClusterState) -> None:
        if self.ready:
            return
        self.rate, _ = partition_rates(state)
        rows = state.final_rows()
        valid = rows >= 0
        self.load = np.bincount(rows[valid], weights=np.broadcast_to(self.rate[:, None], rows.shape)[valid],
                                minlength=state.n_brokers).astype(np.float64)  # fmt: skip
        self.seen = len(state.changes)
        elig = state.eligible_idx
        cap_in, _ = network_capacities(state)
        total = float(self.load[elig].sum())
        self.share = np.zeros(state.n_brokers)
        self.share[elig] = shares(total, [cap_in[b] for b in elig])
        tol = state.options.network_tolerance
        self.hi = self.share * (1 + tol) * (1 + SLACK)
        self.lo = self.share * (1 - tol) * (1 - SLACK)
        self.capacities_known = bool(elig) and all(cap_in[b] for b in elig)
        self.ready = True  # False: recounted from the current rows each time, the same loads (equivalent)

    def _sync(self, state: ClusterState) -> None:
        for p, src, dst in state.changes[self.seen :]:
            if src >= 0:
                self.load[src] -= self.rate[p]
            if dst >= 0:
                self.load[dst] += self.rate[p]
        self.seen = len(state.changes)

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        """A later move may not take the receiver above its band, nor an eligible sender below it. In relief mode
        only the band's top binds, and only where every eligible broker's network-in capacity is known."""
        self._setup(state)
        self._sync(state)
        r = float(self.rate[p])
        if r <= 0:
            return True
        if state.options.relieve:
            return not self.capacities_known or self.load[dst] + r <= self.hi[dst]
        if self.load[dst] + r > self.hi[dst]:
            return False
        return not state.eligible[src] or self.load[src] - r >= self.lo[src]

    @staticmethod
    def relief_limits_known(view: BalanceView) -> bool:
        return bool(view.brokers) and all(b.network_in_capacity for b in view.brokers)

    def relief_left(self, view: BalanceView) -> dict[int, str]:
        """Brokers above the band's top (share x (1 + --network-tolerance)), where every capacity is known."""
        if not self.relief_limits_known(view):
            return {}
        from kafka_rebalance.units import human_rate

        top = 1 + view.network_tolerance
        return {b.broker_id: f"network in {human_rate(int(b.network_in))} after the plan against its limit "
                             f"{human_rate(int(b.network_in_target * top))} (its capacity-weighted share x {top:g})"
                for b in view.brokers if b.network_in > b.network_in_target * top * (1 + SLACK)}

    def _relieve(self, state: ClusterState) -> None:
        """Relief mode: each broker above its band's top sends the fewest bytes whose produce rates bring it under,
        each replica to the broker that stays furthest below its own top (planner/relief.py)."""
        if not self.capacities_known:
            return
        from kafka_rebalance.planner.relief import Donor, relieve

        elig = state.eligible_index_arr
        # `load >= hi` is equivalent: a broker exactly at its top sends nothing (need 0) and could take no replica
        # with traffic anyway (``fits``).
        over = [int(b) for b in elig[np.argsort(-(self.load[elig] - self.hi[elig]), kind="stable")]
                if self.load[b] > self.hi[b]]
        donors = [Donor(b, float(self.load[b] - self.hi[b]),
                        tuple(p for p in dict.fromkeys([*state.broker_parts(b).tolist(), *state.arrivals.get(b, [])])
                              if self.rate[p] > 0)) for b in over]  # `>= 0`: fewest_bytes never picks a gain of 0

        def fill(p: int, b: int) -> float:
            self._sync(state)
            return float((self.load[b] + self.rate[p]) / max(self.hi[b], 1e-9))

        def fits(p: int, b: int) -> bool:
            self._sync(state)
            return bool(self.load[b] + self.rate[p] <= self.hi[b])

        relieve(state, donors, lambda p: float(self.rate[p]), fill, fits)

    def exact_terms(self, model: ExactModel) -> None:
        """Per eligible broker: its fixed partitions' rates + the model's within the band."""
        state = model.state
        self._setup(state)
        rate = self.rate[model.parts]
        # Any positive scale divides a row and its bounds alike, the same constraint: its mutants are equivalent, as
        # is a pad of -2 (any negative is "no replica").
        scale = max(1.0, float(rate.max()) if rate.size else 1.0)
        fixed_rows = np.where(state.frozen[:, None], state.R, -1)
        on = fixed_rows >= 0
        fixed = np.bincount(fixed_rows[on], weights=np.broadcast_to(self.rate[:, None], fixed_rows.shape)[on],
                            minlength=state.n_brokers)[model.elig]  # fmt: skip
        load = np.repeat(rate, model.n_e) / scale
        lo = (self.lo[model.elig] - fixed) / scale
        hi = (self.hi[model.elig] - fixed) / scale
        model.add(model.b_of, model.var.ravel(), load, lo, hi)

    # ------------------------------------------------------------------ heuristic

    def optimize(self, state: ClusterState) -> None:
        self._setup(state)
        self._sync(state)
        if state.options.relieve:
            self._relieve(state)
            return
        elig = state.eligible_index_arr
        self.guard = ByteGuard(state)
        stuck: set[int] = set()
        for _ in range(4 * state.n_parts + 1):  # each transfer lowers the total distance outside the bands
            self._sync(state)
            over = self.load[elig] - self.hi[elig]
            under = self.lo[elig] - self.load[elig]
            order = elig[np.argsort(-over, kind="stable")]
            donors = [b for b in order[self.load[order] > self.hi[order]].tolist() if b not in stuck]
            if not donors:
                # none above: lift the brokers below from the ones with most to spare. Equivalent mutants: `under`
                # as lo + load, or `>= 0`, with nobody under (all within the band, where no transfer is ``better``).
                # A broker exactly at its share is no donor (`>=` is not equivalent: once those above are stuck, it
                # would be one).
                if not (under > 0).any():
                    return
                order = elig[np.argsort(-(self.load[elig] - self.share[elig]), kind="stable")]
                donors = [b for b in order[self.load[order] > self.share[order]].tolist() if b not in stuck]
                if not donors:
                    return
            a = donors[0]
            if not self._shed(state, a, elig):
                stuck.add(a)

    def _candidates(self, state: ClusterState, b: int, hot_only: bool = True) -> list[int]:
        """Partitions with a replica on b this goal may move, hottest first: untouched ones and ones the plan
        brings to b (sent on instead: no extra move), then, where the earlier goals changed most partitions,
        the others' replicas still on b (a second new replica for the partition: one more step, no more bytes
        than a move of its own). Kept per broker until a change touches a partition with a replica on it, now or
        at the start (every transfer's partitions are moved back or restored before the next reading); the list is
        the goal's own: read it, never change it."""
        # (A cache only: a list built afresh is the same list, slower. Dropping it (``cache``, ``_listed`` or ``got``
        # None), ``<=`` for ``<`` below, or ``is`` for ``is not`` (a goal instance serves one state:
        # registry.replica_goals makes fresh ones per plan) are equivalent mutants.)
        cache = self._listed
        if cache is None or cache[0] is not state:
            cache = self._listed = (state, len(state.changes), {})
        _, seen, lists = cache
        changes = state.changes
        if seen < len(changes):
            for p, src, dst in changes[seen:]:
                for x in (src, dst, *state.row(p), *state.original_row(p)):
                    lists.pop((x, True), None)
                    lists.pop((x, False), None)
            self._listed = (state, len(changes), lists)
        got = lists.get((b, hot_only))
        if got is None:
            got = lists[(b, hot_only)] = self._listing(state, b, hot_only)
        return got

    def _candidate_array(self, state: ClusterState, b: int, hot_only: bool = False) -> np.ndarray:
        """``_candidates(state, b, hot_only)`` as an array, kept while that list is."""
        listed = self._candidates(state, b, hot_only)
        got = self._arrays.get((b, hot_only))
        if got is None or got[0] is not listed:  # (a cache: built afresh each time, the same array)
            got = self._arrays[(b, hot_only)] = (listed, np.asarray(listed, dtype=np.int64))
        return got[1]

    def _listing(self, state: ClusterState, b: int, hot_only: bool) -> list[int]:
        ps = state.broker_parts(b)
        ps = ps[~state.frozen[ps] & ~state.hot[ps] & ((self.rate[ps] > 0) | (not hot_only))]
        fresh = ps[~state.touched[ps]]
        # The arrivals still on b, new there and not hot, each once, in the order they came (as arrays: a broker's
        # arrivals are thousands at a million partitions, read again after every change that touches it).
        came = np.fromiter(dict.fromkeys(state.arrivals.get(b, [])), dtype=np.int64)
        arrived = came[state.on(came, b) & ~(state.R[came] == b).any(axis=1) & ~state.hot[came]]
        # Without the dtypes (equivalent mutants) a list of ints is int64 all the same, and an empty one selects nothing.
        first = np.concatenate([fresh, arrived]).astype(np.int64)
        rest = ps[state.touched[ps]]
        rest = rest[state.on(rest, b)]
        return (first[np.argsort(-self.rate[first], kind="stable")].tolist()
                + rest[np.argsort(-self.rate[rest], kind="stable")].tolist())

    def _off(self, b: int, x: float) -> float:
        return max(0.0, x - self.hi[b], self.lo[b] - x)

    def _band(self, a: int, r: int) -> np.ndarray:
        """What ``network_search.better`` reads to judge moving traffic from a to r: a's load and band, r's, and the
        distance outside the bands (summed) a better move must fall below."""
        now = self._off(a, self.load[a]) + self._off(r, self.load[r])
        return np.array([self.load[a], self.lo[a], self.hi[a], self.load[r], self.lo[r], self.hi[r],
                         now - SLACK * max(1.0, now)], dtype=np.float64)

    def _shed(self, state: ClusterState, a: int, elig: np.ndarray) -> bool:
        """One transfer of traffic off ``a``: a replica alone, else swapped for a cooler one of close size."""
        room = self.share[elig] - self.load[elig]
        order = elig[np.argsort(-room, kind="stable")]
        receivers = [r for r in order[self.load[order] < self.share[order]].tolist() if r != a]
        cand = self._candidates(state, a)
        # (hot_only False alike: an idle replica moves no traffic, which is never better)
        arr = self._candidate_array(state, a, hot_only=True)
        from kafka_rebalance.planner.goals.network_search import closest_to_need  # (numba: where it is needed)

        rates = self.rate[arr].astype(np.float64)
        found = np.empty(SEARCH, dtype=np.int64)
        for r in receivers[:PARTNERS]:
            need = ((self.load[a] - self.share[a]) + (self.share[r] - self.load[r])) / 2
            # Those whose move alone is better, with no replica on r yet, the first SEARCH by (closeness to the need,
            # partition).
            top = found[: closest_to_need(arr, rates, state.on(arr, r), float(need), self._band(a, r), found)]
            # The byte guard for all of them at once (``allows_each``: the same floats as asking one by one; astype(None)
            # is float64 too).
            fine = self.guard.allows_each(state, a, r, state.sizes[top].astype(np.float64))
            for p in top[fine].tolist():
                if state.accepts(p, a, r):
                    state.move(p, a, r)
                    state.restore(p)
                    return True
            hot = list(islice((p for p in cand if r not in state.row(p) and self.rate[p] > 0), SEARCH))
            if self._swap(state, a, r, hot):
                return True
        return False

    def _by_size(self, state: ClusterState, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``_candidates(state, b, False)`` by (size, partition), with their sizes and rates as floats: a swap's
        partners, kept while that list is."""
        listed = self._candidates(state, b, False)
        got = self._sorted.get(b)
        if got is None or got[0] is not listed:  # (a cache: built afresh each time, the same arrays)
            parts = np.asarray(listed, dtype=np.int64)
            parts = parts[np.lexsort((parts, state.sizes[parts]))]
            got = self._sorted[b] = (listed, parts, state.sizes[parts].astype(np.float64),
                                     self.rate[parts].astype(np.float64))  # fmt: skip
        return got[1], got[2], got[3]

    def _swap(self, state: ClusterState, a: int, r: int, hot: list[int]) -> bool:
        """p (hot) a -> r and q (cooler, close in size) r -> a: counts unchanged, traffic moved by the difference.
        q: among r's replicas (untouched first: a swap of those costs no extra step, then the plan's others) with
        none on a, the nearest in size whose swap is better (``network_search.nearest_cooler``)."""
        from kafka_rebalance.planner.goals.network_search import nearest_cooler  # (numba: where it is needed)

        on_r, sizes, rates = self._by_size(state, r)
        if on_r.size == 0:
            return False
        # No replica on a (the rows now, as one array: row by row, at 400 brokers, it was a fifth of this goal's time).
        on_a = state.on(on_r, a)
        band = self._band(a, r)
        found = np.empty(SEARCH, dtype=np.int64)
        for p in hot:
            if not state.accepts(p, a, r, count_neutral=True):
                continue
            sp = float(state.sizes[p])
            near = found[: nearest_cooler(sp, float(self.rate[p]), on_r, sizes, rates, on_a, band, found)]
            fine = self.guard.allows_each(state, a, r, sp - state.sizes[near].astype(np.float64))
            for q in near[fine].tolist():
                # Never true as things stand (on_r holds no replica of a's, hot none on r, and nothing moves before the
                # return): its `and` and `break` mutants are equivalent.
                if a in state.row(q) or r in state.row(p):
                    continue
                if state.accepts(q, r, a, count_neutral=True):
                    state.move(p, a, r)
                    state.move(q, r, a)
                    state.restore(p)
                    state.restore(q)
                    return True
        return False


class NetworkOutGoal(NetworkGoal):
    name = "network-out"
    direction = "out"
    priority = 47  # a replica goal whose action is leadership (``lead``), after network-in's moves
    target = ("every eligible broker's network out (as leader: produce bytes/s x (RF - 1) to the followers, plus "
              "consumer bytes/s where measured) within --network-tolerance of its share (by configured "
              "network_out capacity where every broker has one, else even)")

    def optimize(self, state: ClusterState) -> None:
        """No replica moves: leadership decides network out, on the final replica sets (``lead``)."""

    def lead(self, state: ClusterState, choice: LeaderChoice) -> None:
        """Hand first replicas from brokers above the band to electable fellows below their share, hottest
        partitions that fit first, within the preferred-leader bounds; where the receiver is at its ceiling,
        a cooler partition it is first of goes back the other way."""
        rate_in, rate_out = partition_rates(state)
        rows, pref, col, electable = choice.final_rows, choice.preferred, choice.column, choice.electable
        rf = (rows >= 0).sum(axis=1)
        sent = rate_in * np.maximum(rf - 1, 0) + rate_out
        n = state.n_brokers
        elig = state.eligible_index_arr
        has = pref >= 0
        load = np.bincount(pref[has], weights=sent[has], minlength=n).astype(np.float64)  # astype(None): float64 all the same
        count = np.bincount(pref[has], minlength=n)
        _, cap_out = network_capacities(state)
        target = np.zeros(n)
        target[elig] = shares(float(load[elig].sum()), [cap_out[b] for b in elig.tolist()])
        tol = state.options.network_tolerance
        hi = target * (1 + tol) * (1 + SLACK)
        g_lo, g_hi = choice.bounds
        movable = has & ~state.frozen & (sent > 0)
        listed = np.flatnonzero(movable)[np.argsort(-sent[movable], kind="stable")]
        from kafka_rebalance.planner.goals.hand_overs import hand_overs  # (numba: imported where it is needed)

        made_p, made_j = hand_overs(elig.astype(np.int64), rows.astype(np.int64), electable.astype(bool),
                                    sent.astype(np.float64), state.eligible_arr.astype(bool), pref.astype(np.int64),
                                    listed.astype(np.int64), load, target, hi, count.astype(np.int64), int(g_lo), int(g_hi),
                                    4 * int(movable.sum()) + 1)  # fmt: skip
        for p, j in zip(made_p.tolist(), made_j.tolist()):
            pref[p], col[p] = rows[p, j], j
