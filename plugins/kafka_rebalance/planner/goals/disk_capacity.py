"""Hard goal: the plan fills no broker's disks past ``--max-disk-usage`` of their capacity.

A broker's capacity is the total size of its log dirs as the snapshot records them (gather reads
it from DescribeLogDirs on Kafka 3.3+); its limit is that fraction of the capacity less what its
disks hold besides the partitions (``state.disk_limits``). A broker whose capacity is unknown (an
older Kafka, a hand-written or simulated snapshot) has no limit: this goal cannot see its disk and
says so in its target, rather than guess one.

Hard: ``--goals`` cannot drop it. Its veto keeps every later move off a broker it would fill past
its limit, or none of whose log dirs could hold the replica (``DirTally``); its exact-model rows hold
the solver to the broker's limit, and its own actions relieve a broker (and a log dir) that is over its
limit already, moving what comes closest to the excess first.
"""

from __future__ import annotations

import math
import weakref
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from kafka_rebalance.cluster.admin import LOG_DIR_RATE
from kafka_rebalance.errors import PlanError
from kafka_rebalance.options import PlanOptions, removed_log_dir
from kafka_rebalance.planner.goals.base import Goal, donor_index
from kafka_rebalance.planner.goals.view import BalanceView, GoalCheck
from kafka_rebalance.planner.peaks import SLACK_BYTES, DiskRoom
from kafka_rebalance.planner.relief import Donor, disk_fill, fewest_bytes, relieve
from kafka_rebalance.planner.state import ClusterState
from kafka_rebalance.planner.steps import ANY_LOG_DIR, Step
from kafka_rebalance.snapshot import LogDir, Snapshot
from kafka_rebalance.units import human_bytes

if TYPE_CHECKING:
    from kafka_rebalance.planner.exact import ExactModel

SEARCH = 256  # replicas examined per relief move before the broker is left as it is


class DiskCapacityGoal(Goal):
    name = "disk-capacity"
    hard = True
    priority = 25  # after placement and rack safety (they decide where a replica may live at all)
    target = ("no broker's disks above --max-disk-usage of their capacity (the log dirs' total bytes) after the plan; "
              "brokers whose capacity the snapshot does not record are unconstrained")

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        if not has_room(state, p, dst):
            return False
        return not state.options.remove_log_dirs or (p, src) not in self._kept(state)

    def _kept(self, state: ClusterState) -> set[tuple[int, int]]:
        """``kept_replicas`` of ``state``, computed once per state."""
        if getattr(self, "_kept_of", None) is not state:  # a cache: recomputing each call gives the same set, slower
            self._kept_of, self._kept_set = state, kept_replicas(state)
        return self._kept_set

    def exact_terms(self, model: ExactModel) -> None:
        if model.state.options.relieve:
            self._relief_terms(model)
        if model.state.options.remove_log_dirs:
            # The replicas kept in place (kept_replicas) stay: x[p, b] = 1.
            col = {int(b): j for j, b in enumerate(model.elig.tolist())}
            row_of = {int(p): i for i, p in enumerate(model.parts.tolist())}
            cells = [(row_of[p], col[b]) for p, b in sorted(self._kept(model.state)) if p in row_of and b in col]
            if cells:
                idx = np.asarray([model.var[i, j] for i, j in cells], dtype=np.int64)  # var's entries are int64 already
                ones = np.ones(len(cells))
                model.add(np.arange(len(cells)), idx, ones, ones, ones)
        # No replica on a broker none of whose log dirs could ever hold it (JBOD: the limit is per dir too).
        largest = largest_dirs(model.state)[model.elig]
        if np.isfinite(largest).any():
            model.forbid(~model.on & (model.sizes[:, None] > largest[None, :] + SLACK_BYTES))
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

    def _relief_terms(self, model: ExactModel) -> None:
        """Relief mode: a broker no donor (``relief_donors``) keeps every replica it has and a donor gains none; a
        log dir its broker's other dirs cannot relieve sheds at least its residual excess from that dir's replicas."""
        state = model.state
        donors = relief_donors(state)
        sending = {d.broker for d in donors}
        donor_col = np.asarray([b in sending for b in model.elig.tolist()], dtype=bool)  # bools: bool without the dtype too
        keep = model.on & ~donor_col[None, :]
        idx = model.var[keep]
        ones = np.ones(len(idx))
        model.add(np.arange(len(idx)), idx, ones, ones, ones)
        model.forbid(~model.on & donor_col[None, :])
        col = {int(b): j for j, b in enumerate(model.elig.tolist())}
        row_of = {int(p): i for i, p in enumerate(model.parts.tolist())}
        for d in donors:
            if d.whole or d.broker not in col:
                continue
            cells = [row_of[p] for p in d.parts if p in row_of]
            if not cells:
                continue
            vars_ = model.var[np.asarray(cells), col[d.broker]]
            sizes = model.sizes[np.asarray(cells)] / model.scale
            # (float row numbers would do the same: the model's coo_matrix casts its indices to int)
            model.add(np.zeros(len(cells), dtype=np.int64), vars_, sizes, np.asarray([-np.inf]),
                      np.asarray([(float(sizes.sum()) * model.scale - d.need + SLACK_BYTES) / model.scale]))

    def relief_left(self, view: BalanceView) -> dict[int, str]:
        over = self.check(view)
        return {b.broker_id: f"{human_bytes(b.bytes)} of partitions after the plan against its limit "
                             f"{human_bytes(b.disk_limit or 0.0)} (--max-disk-usage of its capacity, less what else "
                             "its disks hold)" for b in view.brokers if b.broker_id in over.offenders}

    def optimize(self, state: ClusterState) -> None:
        """Move replicas off each broker above its limit, the one furthest above first, each time the
        replica closest in size to what is left of its excess, to the broker that will be least full
        (by the fraction of its limit; brokers without one rank by bytes after every limited one).
        In relief mode (``--relieve``), the fewest bytes that bring each donor under (planner/relief.py)."""
        self.unrelieved: list[int] = []
        _refuse_unrelievable(state)
        if state.options.relieve:
            self.unrelieved = [state.bid(b) for b in relieve(state, relief_donors(state), lambda p: float(state.sizes[p]),
                                                             disk_fill(state), dir_room(state))]
            return
        limit = state.disk_limit
        elig = np.asarray(state.eligible_idx, dtype=np.int64)  # a list of ints: int64 without the dtype too
        excess = state.bytes[elig] - limit[elig]
        for b in elig[np.argsort(-excess, kind="stable")].tolist():
            while float(state.bytes[b]) > limit[b] + SLACK_BYTES:
                chosen: dict[int, int] = {}

                def ok(p: int, b: int = b, chosen: dict[int, int] = chosen) -> bool:
                    dst = self._destination(state, p, b)
                    if dst is not None:
                        chosen[p] = dst
                    return dst is not None

                # SEARCH is also find's default limit (base.SEARCH_LIMIT): named here as this goal's own choice
                p = donor_index(state, b).find(float(state.bytes[b]) - limit[b], ok, SEARCH, allow_touched=True)
                if p is None:
                    self.unrelieved.append(state.bid(b))
                    break
                state.move(p, b, chosen[p])
        self._relieve_dirs(state)

    def _relieve_dirs(self, state: ClusterState) -> None:
        """Move replicas off each log dir the plan has filled past its ceiling (``DirTally``: placement forced a
        replica onto a broker none of whose dirs could hold it), the one closest to the dir's excess first (those
        at least as large before the smaller), to the broker that will be least full among those that accept it.
        A dir left above is the log-dir planner's to refuse (``plan_log_dirs``)."""
        tally = dir_tally(state)
        # (A dir exactly at its ceiling and slack entering here changes nothing: the while below is the same test.)
        for k in sorted(k for k in tally.ceiling if k[1] in tally.paths.get(k[0], ()) and tally.over(k) > 0):
            b, path = k
            tried: set[int] = set()
            while (excess := dir_tally(state).over(k)) > 0:
                pool = sorted((p for (p, q), d in tally.where.items() if q == b and d == path and p not in tried
                               and not state.frozen[p]), key=lambda p: (int(state.sizes[p]) < excess,
                                                                        abs(int(state.sizes[p]) - excess), p))  # fmt: skip
                move = None
                for p in pool[:SEARCH]:
                    tried.add(p)
                    dst = self._destination(state, p, b)
                    if dst is not None:
                        move = p, dst
                        break
                if move is None:
                    break
                state.move(move[0], b, move[1])

    @classmethod
    def report_charts(cls, entry: Mapping[str, Any], final: Any = None,
                      summary: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:  # fmt: skip
        """On a JBOD cluster, per log dir: its bytes before, at its peak during the plan, after the plan and (once
        executed) as the final snapshot records them, against its limit (``summary.log_dirs.dirs``)."""
        block = (summary or {}).get("log_dirs")
        rows = block.get("dirs") if isinstance(block, Mapping) else None
        if not rows:
            return []
        from kafka_rebalance.report import charts

        keys = [(int(r["broker_id"]), str(r["path"])) for r in rows]
        series = [charts.Series("before", [float(r["before_bytes"]) for r in rows]),
                  charts.Series("projected", [float(r["after_bytes"]) for r in rows])]
        if final is not None:
            now = dir_data(final)
            # A dir the final snapshot holds nothing in: 0 (broker_bars draws None as 0 too: the same chart).
            series.append(charts.Series("final", [now.get(k, 0.0) for k in keys]))
        limits = [None if r["limit_bytes"] is None or r.get("removed") else float(r["limit_bytes"]) for r in rows]
        # ``top`` picks the unit only: any floor below 1 KiB (1.0 here, a missing limit as 0) picks bytes alike.
        top = max([v for s in series for v in s.values if v is not None] + [x or 0.0 for x in limits] + [1.0])
        divisor, unit = next(((float(1024**k), u) for k, u in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB"))
                              if top >= 1024**k), (1.0, "bytes"))  # fmt: skip
        # Each dir by its position among its broker's (paths are long; the caption lists them).
        index = {k: i for i, k in enumerate(sorted(keys))}
        number = {k: sum(1 for o in keys if o[0] == k[0] and index[o] < index[k]) for k in keys}
        ids = [f"{b}.{number[(b, d)]}" for b, d in keys]
        labels = [f"{b}:{number[(b, d)]}" + (" (removed)" if r.get("removed") else "") for (b, d), r in zip(keys, rows)]
        chart_id = "log-dirs"
        title = "Partition bytes per log dir"
        svg = charts.broker_bars(chart_id, title, ids, series, unit_divisor=divisor, unit=unit,
                                 marks=[float(r["peak_bytes"]) for r in rows], mark_label="peak during the plan",
                                 limits=limits, limit_label="limit (--max-disk-usage)", tick_labels=labels,
                                 xlabel="broker:dir")
        legend = "; ".join(f"{label.split(' ')[0]} = {d}" for (_, d), label in zip(keys, labels))  # one space: split() alike
        return [{"id": chart_id, "title": title, "svg": svg,
                 "caption": "Each log dir's partition bytes before, after the plan and (after execution) as Kafka reports "
                            "them. Black ticks: the most the dir holds at any step (every replica arriving before any "
                            "leaves); red dashes: its limit, --max-disk-usage of its volume less what else the volume "
                            f"holds. Dirs: {legend}."}]

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


def _refuse_unrelievable(state: ClusterState) -> None:
    """One PlanError line for the brokers no plan can bring under their limit: what must stay on one (its
    replicas no plan may move, or that produce at the throttle) already passes the limit, most often because its
    disks hold other files. Emptying such a broker of everything else would copy bytes for a plan the quality gate
    refuses all the same."""
    elig = state.eligible_index_arr
    stay = state.frozen | state.hot
    rows = state.R[stay]
    valid = rows >= 0
    fixed = np.bincount(rows[valid], weights=np.broadcast_to(state.sizes[stay][:, None], rows.shape)[valid],
                        minlength=state.n_brokers)  # fmt: skip
    stuck = [int(b) for b in elig.tolist() if fixed[b] > state.disk_limit[b] + SLACK_BYTES]
    if not stuck:
        return
    usage = state.options.max_disk_usage
    said = []
    for b in stuck:
        broker = state.snapshot.brokers[b]
        # A broker named here has a limit, so a capacity (without one its limit is inf); it may be 0 bytes.
        capacity = float(broker.capacity_bytes or 0)  # (`or 1` alike: never None here)
        besides = usage * capacity - float(state.volume_limit[b])  # what the disks hold besides the partitions
        need = f"that needs at least {(besides + float(fixed[b])) / capacity:.3f}" if capacity else "its disks report no size"
        said.append(f"broker {broker.id}: its disks hold {human_bytes(besides)} besides partitions"
                    + (f" and {human_bytes(float(fixed[b]))} of partitions no plan may move" if fixed[b] else "")
                    + (" and log dirs --remove-log-dir empties" if state.disk_limit[b] < state.volume_limit[b] else "")
                    + f", above --max-disk-usage {usage:g} of its {human_bytes(capacity)} ({need})")
    raise PlanError(f"{'; '.join(said)}: no plan can bring it under its disk limit; free space on its disks or raise "
                    "--max-disk-usage")


def disk_room(state: ClusterState, dir_plan: LogDirPlan | None = None) -> DiskRoom | None:
    """What the batches and the continuous schedule hold each broker to at every step (planner/peaks.py): its
    partition bytes before the plan and its limit, for every broker whose capacity is known; None when none is.

    The limit is the disk's own (``state.disk_limits`` of the snapshot as found), not the lower one
    ``--remove-log-dir`` sets for after the plan: until the removed dir is emptied, its volume still holds it.
    A broker the plan leaves above it (this goal then reports itself unreached: the placement goals forced
    more onto it) is held to its bytes after the plan instead: no step takes it beyond where the plan ends.
    ``state``: after the replica goals (``state.bytes`` are the bytes after the plan). ``dir_plan``: each log dir of
    a broker with several, held the same way (``LogDirPlan.room``)."""
    start = state.start_bytes
    limit = np.maximum(state.volume_limit, state.bytes)
    known = [i for i in range(state.n_brokers) if math.isfinite(limit[i])]
    if not known:
        return None
    ids = {state.bid(i) for i in known}
    dirs = {k: v for k, v in dir_plan.room.items() if k[0] in ids} if dir_plan is not None else {}
    return DiskRoom({state.bid(i): float(start[i]) for i in known}, {state.bid(i): float(limit[i]) for i in known}, dirs)


# ---------------------------------------------------------------------------- JBOD: the log dirs of each broker
#
# A broker's limit above is the sum over its disks; a full disk on a broker with free ones is not seen
# by it. Here each log dir is held to the same rule on its own: ``max_disk_usage`` of its volume less
# what the volume holds besides the partitions the snapshot places in that dir. Every replica the plan
# adds on a broker with several dirs gets a named dir, and dirs are balanced within their broker by
# moves between them (AlterReplicaLogDirs), which run before any move (the log-dir batches). A new replica
# goes to a dir that holds it at its peak (every arrival, no departure: no order of the steps can take it
# over), else to one that holds it once the dir's departures have ended (the batches and the schedule then
# start it after them: peaks.py holds every dir as every broker), else to a dir a move between the broker's
# dirs first makes room in, else to the dir the veto counted it in (DirTally). The veto refuses a move where no
# dir of the destination holds the replica given what the plan has put in and taken out of each so far, so
# the goals pick another broker; a replica placement forced onto a broker none of whose dirs holds it (and
# the disk goal could not move on) stops the plan, naming the dir. A dir that started above its limit may end
# no fuller than it started (listed in summary.log_dirs.over_limit while above). Where no order of the steps
# keeps every dir within its limit, planning stops naming the dir (DiskLedger.stuck).
#
# Log dirs sharing one volume would count against it once; the snapshot records each dir's path and its
# volume's total and usable bytes, not which volume it is on (two equal disks report the same figures), so
# each dir counts as a volume of its own.

DIR_SEARCH = 512  # replicas examined per move between dirs before the broker is left as it is


@dataclass(frozen=True, slots=True)
class DirMove:
    """One replica put in a named log dir by the plan: a new replica (``source`` None) or one moved between
    the dirs of its broker."""

    p: int  # partition index
    broker: int  # broker id
    path: str
    source: str | None
    size: int


@dataclass
class LogDirPlan:
    """The log dirs the plan names (``new``: replicas it adds; ``within``: moves between a broker's dirs) and
    what it leaves undone, with each dir's figures for plan.json."""

    new: dict[tuple[int, int], str] = field(default_factory=dict)  # (partition index, broker id) -> dir
    within: list[DirMove] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)  # removed dirs' replicas no other dir could take within its limit
    # relief mode: dirs still above their limit after the plan, "broker 3 dir /a: 9.2 GiB of partitions ..."
    unrelieved: list[str] = field(default_factory=list)
    dirs: list[dict[str, Any]] = field(default_factory=list)
    # dirs the plan leaves above their limits (each started above and ends no fuller), "broker 3 log dir /a: ..."
    over: list[str] = field(default_factory=list)
    # (partition index, broker id) -> its dir before the plan, on brokers with several dirs where the snapshot says
    where: dict[tuple[int, int], str] = field(default_factory=dict)
    # (broker id, dir) -> (bytes before the plan, limit) for the disk ledger (peaks.py), dirs of a known size
    room: dict[tuple[int, str], tuple[float, float]] = field(default_factory=dict)

    def named(self, step: Step) -> Step:
        """``step`` with the dirs of the replicas it adds and of those it takes away (unchanged when it names none)."""
        if not self.new and not self.where:  # no dir known anywhere (no broker with several): every step names none
            return step
        dirs = tuple(self.new.get((step.p, b), ANY_LOG_DIR) if b in step.adds else ANY_LOG_DIR for b in step.after)
        sources = tuple(self.where.get((step.p, b), ANY_LOG_DIR) for b in step.before)
        named = any(d != ANY_LOG_DIR for d in dirs)
        left = any(d != ANY_LOG_DIR for b, d in zip(step.before, sources) if b in step.removes)
        if not named and not left:
            return step
        # (dirs of "any" alone and () say the same: Step.dirs' empty is "any" for every replica.)
        return step._replace(dirs=dirs if named else (), sources=sources if left else ())

    def summary(self) -> dict[str, Any]:
        return {"named_for_new_replicas": len(self.new), "moves_between_dirs": len(self.within),
                "bytes_between_dirs": sum(m.size for m in self.within), "unplaced": self.unplaced,
                "over_limit": self.over, "dirs": self.dirs}


def has_room(state: ClusterState, p: int, b: int) -> bool:
    """Would a replica of ``p`` keep broker ``b`` within its disk limit, and fit in one of its log dirs?"""
    return float(state.bytes[b]) + float(state.size_of[p]) <= state.disk_limit[b] + SLACK_BYTES and dir_fits(state, p, b)


def dir_fits(state: ClusterState, p: int, b: int) -> bool:
    """Would a replica of ``p`` arriving on broker ``b`` fit in one of its log dirs, given every replica the plan
    has put in or taken out of each dir so far (``DirTally``)? True on a broker with one dir."""
    tally = dir_tally(state)
    return b not in tally.paths or tally.pick(state, p, b) is not None


class DirTally:
    """Per log dir of each broker with several (broker index, path): its bytes of partitions after the replica
    changes so far, and its ceiling: its limit (``dir_limit``), or its bytes before the plan where it started
    above (such a dir may end no fuller than it started). Each replica the plan brings to such a broker is
    counted in one dir (``pick``), each one it takes away leaves the dir it was counted in, so every dir of the
    tally stays within its ceiling when every arrival was vetted (a replica placement forces onto a broker may
    take its roomiest dir beyond: ``LogDirPlan`` then refuses the plan). The log-dir planner places replicas
    afresh, the largest first; the tally's dirs are its fallback, a placement known to fit.

    Kept up to date from ``state.changes`` (as the topic-spread goal keeps its counts): the veto asks it for
    every candidate move, so an answer costs a lookup per dir of the destination."""

    def __init__(self, state: ClusterState) -> None:
        snap, options = state.snapshot, state.options
        gone = removed_dirs(options.remove_log_dirs)
        self.paths: dict[int, list[str]] = {}  # broker index -> its dirs that may receive, sorted
        self.load: dict[tuple[int, str], float] = {}
        self.ceiling: dict[tuple[int, str], float] = {}
        self.where: dict[tuple[int, int], str] = {}  # (partition, broker index) -> dir, replicas in a known dir
        self.home: dict[tuple[int, int], str] = {}  # the same before the plan
        self.seen = 0  # state.changes applied
        jbod = {i: b for i, b in enumerate(snap.brokers) if len(b.log_dirs) > 1}
        if not jbod:
            return
        data = dir_data(snap)
        for i, b in jbod.items():
            self.paths[i] = sorted(d.path for d in b.log_dirs if (b.id, d.path) not in gone)
            for d in b.log_dirs:
                k = (i, d.path)
                self.load[k] = data.get((b.id, d.path), 0.0)
                self.ceiling[k] = max(dir_limit(d, self.load[k], options.max_disk_usage), self.load[k])
        index = state.index_of
        for p, part in enumerate(snap.partitions):
            for bid, path in zip(part.replicas, part.log_dirs):
                if path is not None and index[bid] in jbod:
                    self.where[(p, index[bid])] = self.home[(p, index[bid])] = path

    def catch_up(self, state: ClusterState) -> None:
        changes = state.changes
        if not self.paths:
            self.seen = len(changes)
            return
        for p, src, dst in changes[self.seen:]:
            size = float(state.sizes[p])
            if src in self.paths:
                d = self.where.pop((p, src), None)
                if d is not None:
                    self.load[(src, d)] -= size
            if dst in self.paths:
                d = self.pick(state, p, dst)
                # (Where pick says None the replica lands where pick would have put it: its home, else the roomiest;
                # pick's room test matters to the veto, not to the count.)
                if d is None:  # forced (placement, the exact model): its home dir, else the roomiest
                    d = self.home.get((p, dst)) or max(self.paths[dst], key=lambda x: (self._room((dst, x)), x))
                self.where[(p, dst)] = d
                self.load[(dst, d)] += size
        self.seen = len(changes)

    def _room(self, k: tuple[int, str]) -> float:
        return self.ceiling[k] - self.load[k] + SLACK_BYTES

    def over(self, k: tuple[int, str]) -> float:
        """The bytes by which dir ``k`` is above its ceiling (<= 0: within it)."""
        return self.load[k] - self.ceiling[k] - SLACK_BYTES

    def pick(self, state: ClusterState, p: int, b: int) -> str | None:
        """The dir of broker ``b`` a replica of ``p`` arriving there would be in: its own dir where it comes back
        to the broker it left (the plan leaves it there), else the roomiest that holds it; None when none does."""
        size = float(state.sizes[p])
        home = self.home.get((p, b))
        if home is not None and home in self.paths[b]:
            return home if self._room((b, home)) >= size else None
        best = max(self.paths[b], key=lambda x: (self._room((b, x)), x), default=None)
        return best if best is not None and self._room((b, best)) >= size else None


def dirs_within(state: ClusterState) -> bool:
    """Does every log dir of the tally end within its ceiling (no replica forced into a dir that cannot hold it)?"""
    tally = dir_tally(state)
    return all(tally.over(k) <= 0 for k in tally.ceiling)


def dir_tally(state: ClusterState) -> DirTally:
    """The state's ``DirTally``, caught up with its changes (one per state: built on first use)."""
    # (the cache only spares rebuilding: a fresh tally caught up counts the same. Kept on the state, not in a weak
    # mapping: the veto asks for it for every candidate move, and the weak lookup was most of the veto's cost)
    got = state.dir_tally
    if got is None:
        got = state.dir_tally = DirTally(state)
    if got.seen != len(state.changes):
        got.catch_up(state)
    return got


_LARGEST: weakref.WeakKeyDictionary[ClusterState, np.ndarray] = weakref.WeakKeyDictionary()


def largest_dirs(state: ClusterState) -> np.ndarray:
    """Per broker index, the largest replica one of its log dirs could hold (its limit with every other replica
    gone: the most a dir can make room for); inf for a broker with one dir or a dir of unknown size. Computed
    once per state (a cache: the snapshot and options of a state do not change)."""
    got = _LARGEST.get(state)
    if got is None:
        got = _LARGEST[state] = _largest_dirs(state)
    return got


def _largest_dirs(state: ClusterState) -> np.ndarray:
    snap, options = state.snapshot, state.options
    gone = removed_dirs(options.remove_log_dirs)
    data = dir_data(snap)
    out = np.full(state.n_brokers, np.inf)
    for i, b in enumerate(snap.brokers):
        if len(b.log_dirs) > 1:
            out[i] = max((dir_limit(d, data.get((b.id, d.path), 0.0), options.max_disk_usage) for d in b.log_dirs
                          if (b.id, d.path) not in gone), default=0.0)
    return out


def kept_replicas(state: ClusterState) -> set[tuple[int, int]]:
    """(partition index, broker index) of the replicas in the other dirs of a broker ``--remove-log-dir`` empties
    a dir of. They stay: what the broker must shed to fit its remaining dirs comes from the removed dirs (those
    replicas are copied once either way), so no replica is copied off the broker and another one into the space
    it left."""
    gone = removed_dirs(state.options.remove_log_dirs)
    brokers = {b for b, _ in gone}
    return {(p, state.index_of[b]) for p, part in enumerate(state.parts) for b, d in zip(part.replicas, part.log_dirs)
            if b in brokers and d is not None and (b, d) not in gone}


def removed_dirs(options_entries: tuple[str, ...]) -> set[tuple[int, str]]:
    return {removed_log_dir(e) for e in options_entries}


def dir_limit(d: LogDir, data: float, max_usage: float) -> float:
    """The bytes of partition data one log dir may hold: ``disk_limits``' rule for one volume (inf: size unknown)."""
    if d.total_bytes is None:
        return math.inf
    other = max(0.0, float(d.total_bytes - d.usable_bytes) - data) if d.usable_bytes is not None else 0.0
    return max_usage * d.total_bytes - other


def dir_data(snapshot: Snapshot) -> dict[tuple[int, str], float]:
    """Bytes of partition data per (broker id, dir) where the snapshot records each replica's dir."""
    out: dict[tuple[int, str], float] = defaultdict(float)
    for part in snapshot.partitions:
        for b, d in zip(part.replicas, part.log_dirs):
            if d is not None:
                out[(b, d)] += float(part.size_bytes or 0)
    return out


def without_removed_dirs(snapshot: Snapshot, options: PlanOptions, limits: np.ndarray) -> np.ndarray:
    """Broker limits (``state.disk_limits``) where ``--remove-log-dir`` takes dirs away: at most the sum of the
    limits of the dirs that stay, so the replica goals and the exact model make room for the removed dirs'
    replicas there, or move them to other brokers. A broker whose staying dirs' sizes are unknown keeps its limit."""
    gone = removed_dirs(options.remove_log_dirs)
    if not gone:
        return limits
    data = dir_data(snapshot)
    out = limits.copy()
    for i, b in enumerate(snapshot.brokers):
        if not any((b.id, d.path) in gone for d in b.log_dirs):
            continue
        kept = sum(dir_limit(d, data.get((b.id, d.path), 0.0), options.max_disk_usage)
                   for d in b.log_dirs if (b.id, d.path) not in gone)
        out[i] = min(out[i], kept)
    return out


def relief_donors(state: ClusterState) -> list[Donor]:
    """Relief mode's donors as the disk sees them: each eligible broker above its limit (all its replicas may go,
    the furthest above first), then each log dir above its own limit, needing what its broker's other dirs
    cannot take (their room at the snapshot: a broker with such a dir receives nothing, so the room stays)."""
    snap, options = state.snapshot, state.options
    limit = state.disk_limit
    elig = state.eligible_index_arr
    # A broker at its limit to the byte is within it (SLACK_BYTES): the need is the excess beyond that.
    whole = [Donor(int(b), float(state.bytes[b] - limit[b]) - SLACK_BYTES, tuple(int(p) for p in state.broker_parts(int(b))))
             for b in elig.tolist() if float(state.bytes[b]) > limit[b] + SLACK_BYTES]
    whole.sort(key=lambda d: (-d.need, d.broker))
    gone = removed_dirs(options.remove_log_dirs)
    data = dir_data(snap)
    in_dir: dict[tuple[int, str], list[int]] = defaultdict(list)
    for p, part in enumerate(snap.partitions):
        for b, d in zip(part.replicas, part.log_dirs):
            if d is not None:
                in_dir[(b, d)].append(p)
    dirs = []
    for b in elig.tolist():
        broker = snap.brokers[b]
        if len(broker.log_dirs) < 2:
            continue
        room = {d.path: dir_limit(d, data.get((broker.id, d.path), 0.0), options.max_disk_usage)
                - data.get((broker.id, d.path), 0.0) for d in broker.log_dirs if (broker.id, d.path) not in gone}
        for path, r in sorted(room.items()):
            if not r < -SLACK_BYTES or math.isinf(r):
                continue
            spare = sum(max(0.0, x) for q, x in room.items() if q != path and math.isfinite(x))
            dirs.append(Donor(b, max(0.0, -r - spare - SLACK_BYTES), tuple(in_dir[(broker.id, path)]), whole=False,
                              where=path))
    dirs.sort(key=lambda d: (-d.need, d.broker, d.where))
    return whole + dirs


def dir_room(state: ClusterState) -> Callable[[int, int], bool]:
    """Relief mode's check that a destination has a log dir to put a replica in: on a broker with several dirs,
    one whose room at the snapshot, less every replica the plan has brought to the broker so far, holds it."""
    snap, options = state.snapshot, state.options
    gone = removed_dirs(options.remove_log_dirs)
    data = dir_data(snap)
    room: dict[int, list[float]] = {}
    for i, broker in enumerate(snap.brokers):
        if len(broker.log_dirs) > 1:
            room[i] = [dir_limit(d, data.get((broker.id, d.path), 0.0), options.max_disk_usage)
                       - data.get((broker.id, d.path), 0.0) for d in broker.log_dirs if (broker.id, d.path) not in gone]

    def fits(p: int, b: int) -> bool:
        if b not in room:
            return True
        arrived = sum(int(state.sizes[q]) for q in set(state.arrivals.get(b, []))
                      if b in state.row(q) and b not in state.original_row(q))
        return max(room[b], default=0.0) - arrived + SLACK_BYTES >= float(state.sizes[p])

    return fits


def plan_log_dirs(state: ClusterState, moves: list[list[Step]]) -> LogDirPlan:
    """The log dir of every replica the plan adds on a broker with several dirs, the moves that empty the dirs
    ``--remove-log-dir`` names onto the broker's other dirs, and moves between a broker's dirs that bring each
    within ``--byte-tolerance`` of its share (the broker's bytes by the dirs' limits)."""
    snap, options = state.snapshot, state.options
    out = LogDirPlan()
    jbod = {b.id: b for b in snap.brokers if len(b.log_dirs) > 1}
    if not jbod:
        return out
    gone = removed_dirs(options.remove_log_dirs)
    data = dir_data(snap)
    limit = {(bid, d.path): (0.0 if (bid, d.path) in gone else dir_limit(d, data.get((bid, d.path), 0.0), options.max_disk_usage))
             for bid, b in jbod.items() for d in b.log_dirs}
    peak = {k: data.get(k, 0.0) for k in limit}  # every arrival, no departure
    # What a new replica may fill a dir to: its limit, or its bytes before the plan where it started above.
    # (A removed dir's ceil is never read: every placement skips ``gone``; its 0 only says so.)
    ceil = {k: lim if k in gone else max(lim, peak[k]) for k, lim in limit.items()}
    final = dict(peak)  # after the whole plan
    where: dict[tuple[int, int], str] = {}  # (partition index, broker id) -> dir, for replicas in a known dir
    for p, part in enumerate(snap.partitions):
        for b, d in zip(part.replicas, part.log_dirs):
            if d is not None and b in jbod:
                where[(p, b)] = d
    size = state.sizes
    for chain in moves:
        for s in chain:
            for b in s.removes:
                d = where.get((s.p, b))
                if d is not None and (b, d) in final:
                    final[(b, d)] -= float(size[s.p])

    def fill(k: tuple[int, str]) -> float:
        lim = limit[k]
        return math.inf if lim <= 0 else peak[k] / lim if math.isfinite(lim) else 0.0  # (peak / inf is 0.0 as well)

    def place(p: int, b: int, avoid: str | None) -> str | None:
        """The least full dir of ``b`` (by its peak's fraction of its limit, then bytes, then path) that holds
        ``p`` at its peak; None when none does."""
        s = float(size[p])
        ok = [d.path for d in jbod[b].log_dirs if d.path != avoid and (b, d.path) not in gone
              and peak[(b, d.path)] + s <= ceil[(b, d.path)] + SLACK_BYTES]
        if not ok:
            return None
        return min(ok, key=lambda d: (fill((b, d)), peak[(b, d)], d))

    def arrive(p: int, b: int, d: str) -> None:
        peak[(b, d)] += float(size[p])
        final[(b, d)] += float(size[p])

    # Replicas on the same broker after the plan (an untouched partition's all are; no row built for them).
    stays = {(p, b) for (p, b) in where if not state.touched[p] or state.index_of[b] in state.row(p)}
    moved: set[tuple[int, int]] = set()

    def move_within(p: int, b: int, src: str, dst: str) -> None:
        arrive(p, b, dst)
        # The log-dir batches end before any move starts: the replica has left its dir by then.
        peak[(b, src)] -= float(size[p])
        final[(b, src)] -= float(size[p])
        out.within.append(DirMove(p, b, dst, src, int(size[p])))
        moved.add((p, b))

    def shiftable(b: int, d: str) -> list[int]:
        """Replicas in dir ``d`` of ``b`` a move between its dirs may take: staying, untouched, not moved yet."""
        return sorted((p for (p, q), x in where.items() if q == b and x == d and (p, q) in stays and (p, q) not in moved
                       and not state.frozen[p] and not state.touched[p]), key=lambda p: (int(size[p]), p))  # fmt: skip

    def room_after(b: int, d: str) -> float:
        return ceil[(b, d)] - final[(b, d)] + SLACK_BYTES

    def make_room(p: int, b: int) -> str | None:
        """A dir of ``b`` that holds ``p`` once one of its replicas has moved to another dir of ``b`` (that dir
        holding it at its peak), the smallest such replica first; None when no move does. (The broker holds that
        replica in both dirs while it moves: each within its limit, the broker is within the sum of theirs.)"""
        s = float(size[p])
        best: tuple[int, int, str, str] | None = None
        for d in sorted(x.path for x in jbod[b].log_dirs if (b, x.path) not in gone):
            need = s - room_after(b, d)
            for q in shiftable(b, d):
                bytes_q = float(size[q])
                if bytes_q < need:
                    continue
                to = place(q, b, d)
                if to is not None and (best is None or int(size[q]) < best[0]):
                    best = (int(size[q]), q, d, to)
                break  # the smallest replica large enough in this dir
        if best is None:
            return None
        _, q, d, to = best
        move_within(q, b, d, to)
        return d

    def place_new(p: int, b: int) -> str | None:
        """A dir for a new replica of ``b``: see the comment above ``DIR_SEARCH``; None when none holds it."""
        d = place(p, b, None)
        if d is not None:
            return d
        s = float(size[p])
        ok = [x.path for x in jbod[b].log_dirs if (b, x.path) not in gone and room_after(b, x.path) >= s]
        if ok:
            return min(ok, key=lambda d: (final[(b, d)] / limit[(b, d)] if limit[(b, d)] > 0 else math.inf, d))
        return make_room(p, b)

    # New replicas, the largest first (they pack tighter), broker by broker. Where that leaves one without a dir,
    # the broker's replicas go where the veto counted them (DirTally: each fits there after the plan); where even
    # that one does not hold it (placement forced it onto the broker), the plan stops, naming the dir.
    adds: dict[int, list[int]] = defaultdict(list)
    for p, bid in sorted(((s.p, bid) for chain in moves for s in chain for bid in s.adds if bid in jbod),
                         key=lambda k: (-int(size[k[0]]), k)):
        adds[bid].append(p)
    tally = dir_tally(state) if adds else None  # only to spare building it: nothing reads it without adds
    for bid, ps in sorted(adds.items()):
        keys = [(bid, x.path) for x in jbod[bid].log_dirs]
        saved = ({k: peak[k] for k in keys}, {k: final[k] for k in keys}, len(out.within), set(moved))
        fresh: dict[int, str] = {}
        for p in ps:
            d = place_new(p, bid)
            if d is None:
                break
            fresh[p] = d
            arrive(p, bid, d)
        else:
            out.new.update({(p, bid): d for p, d in fresh.items()})
            continue
        peak.update(saved[0])
        final.update(saved[1])
        del out.within[saved[2]:]
        moved.intersection_update(saved[3])
        assert tally is not None
        for p in ps:
            d = tally.where.get((p, state.index_of[bid]), "")  # "": no dir's path, so the roomiest below
            if (bid, d) not in ceil or (bid, d) in gone or room_after(bid, d) < float(size[p]):
                d = max((x.path for x in jbod[bid].log_dirs if (bid, x.path) not in gone), key=lambda x: (room_after(bid, x), x))
            if room_after(bid, d) < float(size[p]):
                exact = (" (--optimizer exact holds each broker to its limit, not each log dir: --optimizer auto or "
                         "heuristic plans around it)") if options.optimizer == "exact" else ""
                raise PlanError(f"broker {bid} log dir {d}: {final[(bid, d)] + float(size[p]):,.0f} bytes of partitions "
                                f"after the plan against its limit {ceil[(bid, d)]:,.0f}: no log dir of broker {bid} holds "
                                f"{state.name(p)} ({int(size[p]):,} bytes), which the replica goals put there; give its "
                                f"disks room (a higher --max-disk-usage) or the partition another broker{exact}")
            out.new[(p, bid)] = d
            arrive(p, bid, d)

    # The removed dirs' replicas that stay on their broker: largest first, each to the least full other dir.
    for (p, b) in sorted((k for k in stays if (k[1], where[k]) in gone), key=lambda k: (-int(size[k[0]]), k)):
        d = place(p, b, where[(p, b)])  # avoiding the removed dir says what place() does anyway (it skips ``gone``)
        if d is None:
            out.unplaced.append(f"{state.name(p)} on broker {b} ({int(size[p])} bytes) in removed dir {where[(p, b)]}")
            continue
        move_within(p, b, where[(p, b)], d)
    if options.relieve:
        # Relief mode: no balance between dirs; a dir above its limit sends the fewest bytes that bring it under
        # to its broker's other dirs (no network: a copy within the broker), the least full that holds each first.
        # (A dir at its limit and slack, or below, entering here changes nothing: the while below is the same test.)
        for (bid, path) in sorted(k for k in limit if final[k] > limit[k] + SLACK_BYTES):
            pool = sorted((p for (p, b), d in where.items() if b == bid and d == path and (p, b) in stays
                           and (p, b) not in moved and not state.frozen[p] and not state.touched[p]),
                          key=lambda p: (int(size[p]), p))  # fmt: skip
            while final[(bid, path)] > limit[(bid, path)] + SLACK_BYTES:
                costs = [float(size[p]) for p in pool]
                pick = fewest_bytes(costs, costs, final[(bid, path)] - limit[(bid, path)] - SLACK_BYTES)
                if pick is None:
                    break
                # ``path`` is never chosen even unavoided: its peak, which never falls, is above its limit and slack.
                placed = {pool[i]: place(pool[i], bid, path) for i in sorted(pick, key=lambda i: (-costs[i], i))}
                if None in placed.values():  # checked before any is placed: no peak was counted for this pick
                    pool.remove(next(p for p, d in placed.items() if d is None))
                    continue
                for p in placed:
                    d = place(p, bid, path)  # (avoiding ``path`` changes nothing: see above)
                    if d is None:  # the pick's earlier replicas filled the dir this one was meant for
                        break
                    move_within(p, bid, path, d)
                    pool.remove(p)
        for (bid, path), lim in sorted(limit.items()):
            if final[(bid, path)] > lim + SLACK_BYTES:
                out.unrelieved.append(f"broker {bid} log dir {path}: {human_bytes(final[(bid, path)])} of partitions "
                                      f"after the plan against its limit {human_bytes(lim)} (--max-disk-usage "
                                      f"{options.max_disk_usage:g} of its volume, less what else it holds)")
    # Balance within each broker whose dirs all have a size: the fullest dir (by its share) gives the replica
    # closest to what brings it and the emptiest nearer their shares, while that improves both.
    tol = options.byte_tolerance
    for bid, broker in sorted(jbod.items()) if not options.relieve else ():
        keys = [(bid, d.path) for d in broker.log_dirs if (bid, d.path) not in gone]
        if len(keys) < 2 or not all(math.isfinite(limit[k]) and limit[k] > 0 for k in keys):
            continue
        movable: dict[str, list[int]] = defaultdict(list)
        for (p, b), d in where.items():
            if b == bid and (p, b) in stays and (p, b) not in moved and not state.frozen[p] and not state.touched[p]:
                movable[d].append(p)
        for d in movable:
            movable[d].sort(key=lambda p: (int(size[p]), p))
        for _ in range(DIR_SEARCH):
            total = sum(final[k] for k in keys)
            cap = sum(limit[k] for k in keys)
            share = {k: total * limit[k] / cap for k in keys}
            hi = max(keys, key=lambda k: (final[k] / limit[k], k))
            lo = min(keys, key=lambda k: (final[k] / limit[k], k))
            excess, deficit = final[hi] - share[hi], share[lo] - final[lo]
            if final[hi] <= share[hi] * (1 + tol) + SLACK_BYTES and final[lo] >= share[lo] * (1 - tol) - SLACK_BYTES:
                break
            want = min(excess, deficit)
            room = limit[lo] - peak[lo] + SLACK_BYTES
            best: int | None = None
            for p in movable[hi[1]]:
                bytes_p = float(size[p])
                # Only a replica smaller than excess + deficit brings both dirs nearer their shares.
                if bytes_p <= 0 or bytes_p >= excess + deficit or bytes_p > room:
                    continue
                if best is None or abs(bytes_p - want) < abs(float(size[best]) - want):
                    best = p
            if best is None:
                break
            movable[hi[1]].remove(best)
            move_within(best, bid, hi[1], lo[1])
    for (bid, path), lim in sorted(limit.items()):
        out.dirs.append({"broker_id": bid, "path": path, "removed": (bid, path) in gone,
                         "limit_bytes": None if not math.isfinite(lim) else round(lim),
                         "before_bytes": round(data.get((bid, path), 0.0)),
                         # (the log-dir batches' departures leave before any arrival of a move: never below the start)
                         "peak_bytes": round(max(peak[(bid, path)], data.get((bid, path), 0.0))),
                         "after_bytes": round(final[(bid, path)])})
    out.where = where
    out.over = [f"broker {bid} log dir {path}: {final[(bid, path)]:,.0f} bytes of partitions after the plan against its "
                f"limit {lim:,.0f}" for (bid, path), lim in sorted(limit.items())
                if (bid, path) not in gone and final[(bid, path)] > lim + SLACK_BYTES and not options.relieve]
    # The ledger's limit per dir: a removed dir's volume still holds what it held until it is emptied; a dir the
    # plan leaves above its limit (its broker ends above its own) is held to where the plan leaves it.
    for bid, broker in jbod.items():
        for ld in broker.log_dirs:
            k = (bid, ld.path)
            real = dir_limit(ld, data.get(k, 0.0), options.max_disk_usage)
            if math.isfinite(real):
                out.room[k] = (data.get(k, 0.0), max(real, final[k]))
    return out


def within_steps(state: ClusterState, dir_plan: LogDirPlan, reorders: list[Step]) -> list[Step]:
    """One reassignment entry per partition with replicas moving between their broker's dirs: its replicas as they
    stand when the log-dir batches run (after the reorders, before any move), each moving replica's dir named."""
    by_p: dict[int, dict[int, str]] = defaultdict(dict)
    for m in dir_plan.within:
        by_p[m.p][m.broker] = m.path
    reordered = {s.p: s.after for s in reorders}
    out = []
    for p, dirs in sorted(by_p.items()):
        part = state.parts[p]
        row = reordered.get(p, part.replicas)
        out.append(Step(p, part.topic, part.partition, tuple(row), tuple(row), (), (), 0, part.leader,
                        int(part.size_bytes or 0), part.bytes_in_per_sec or 0.0,
                        tuple(dirs.get(b, ANY_LOG_DIR) for b in row),
                        tuple(dir_plan.where.get((p, b), ANY_LOG_DIR) for b in row) if any((p, b) in dir_plan.where for b in row)
                        else ()))
    return out


def within_throttles(steps: list[Step], rate: int) -> dict[str, Any]:
    """throttles.json of a log-dir batch: ``replica.alter.log.dirs.io.max.bytes.per.second`` (Kafka's intra-broker
    throttle, as ``kafka-reassign-partitions.sh --replica-alter-log-dirs-throttle`` sets it) on every broker a
    replica moves within; no replication throttle, as no replica changes broker."""
    brokers = sorted({b for s in steps for b, d in zip(s.after, s.log_dirs) if d != ANY_LOG_DIR})
    return {"rate_bytes_per_sec": rate, "brokers": {str(b): {LOG_DIR_RATE: str(rate)} for b in brokers}, "topics": {}}


def within_seconds(steps: list[Step], rate: float, fixed: float) -> float:
    """A log-dir batch's duration: the busiest broker's bytes at the throttle, plus one move's fixed cost."""
    per_broker: dict[int, int] = defaultdict(int)
    for s in steps:
        for b, d in zip(s.after, s.log_dirs):
            if d != ANY_LOG_DIR:
                per_broker[b] += s.size
    return (max(per_broker.values(), default=0) / rate + fixed) if steps else 0.0
