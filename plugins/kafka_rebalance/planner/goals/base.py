"""What every goal looks like, and the size-ordered replica index goals pick moves from."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from kafka_rebalance.balance import rack_unsafe_rows
from kafka_rebalance.planner.goals.view import BalanceView, GoalCheck
from kafka_rebalance.planner.state import ClusterState

if TYPE_CHECKING:
    from kafka_rebalance.planner.exact import ExactModel
    from kafka_rebalance.planner.goals.preferred_leader import LeaderChoice

# Candidates examined per search before a (donor, receiver) pair counts as exhausted.
SEARCH_LIMIT = 256


def rack_bound(state: ClusterState) -> np.ndarray:
    """Per partition: can none of its replicas change racks? True for a replication factor that is a multiple
    of the rack count, spread rack-safely (exactly RF / racks in each). Every move the goals allow keeps a row
    rack-safe, so this holds for a whole goal's run; a search for a replica to move into another rack skips
    these without asking the vetoes, which refuse them (the same answer, without the cost: at 200,000
    partitions most of the byte goal's and much of the count goal's search time went on such refusals)."""
    out = np.zeros(state.n_parts, dtype=bool)  # (floats would index as the same 0 and 1 flags: only truth is read)
    # (or alike: with racks every eligible broker's rack, -1 included, counts, so n_racks >= 1; without, both are falsy)
    if not (state.has_racks and state.n_racks):
        return out
    # Every such row at once (``rack_unsafe_rows`` is tested equal to ``state.rack_safe``'s rule, row by row): asked
    # row by row it was 2 % of a plan at 200,000 partitions, twice per plan.
    cand = np.flatnonzero(state.rf_target % state.n_racks == 0)
    rows = state.now[cand]
    full = (rows >= 0).sum(axis=1) == state.rf_target[cand]
    out[cand] = full & ~rack_unsafe_rows(rows, state.rack, state.n_racks)
    return out


def bound_for(bound: np.ndarray, state: ClusterState, src: int, dst: int) -> np.ndarray | None:
    """``bound`` (``rack_bound``) where a replica moving from ``src`` to ``dst`` changes racks (into a known
    one: a broker without a rack takes any), else None: no partition is refused for its rack."""
    # (A rack of -1 is a broker the snapshot does not list: never eligible, so the vetoes refuse it either way.)
    return bound if state.rack[src] != state.rack[dst] and state.rack[dst] >= 0 else None


class Goal:
    """One balance rule, whole: its target, its heuristic actions, its veto over later goals'
    moves, its terms in the exact model and its check. A subclass with a ``priority`` is
    registered (planner/goals/registry.py finds it); nothing else in the code restates its rule.
    """

    name: ClassVar[str] = "goal"
    hard: ClassVar[bool] = False  # hard goals veto every move, even those of goals optimised before them
    # A count-neutral swap need not ask a count goal; its veto reads the two brokers only, never the partition
    # (``ClusterState.counts_accept`` asks it once per pair of brokers).
    count_goal: ClassVar[bool] = False
    # Registered goals have one: lower runs first. Replica goals run before leader goals, which
    # work on the final replica sets (``leader_goal``).
    priority: ClassVar[int | None] = None
    leader_goal: ClassVar[bool] = False
    target: ClassVar[str] = ""  # the rule in one line, for plan.json and the docs
    # In the goals a plan runs when --goals names none. A goal that costs more than it is worth on most
    # clusters is opt-in (its docs say what it costs).
    default: ClassVar[bool] = True
    # Its check reads ``BalanceView.topics`` (per-topic loads, costly at a million partitions: views
    # carry them only when a selected goal says so).
    view_topics: ClassVar[bool] = False
    # Its rule is a limit that relief mode (``--relieve``) brings brokers under when the goal is selected; every
    # other soft goal is left out of a relief plan (registry.selected).
    relief: ClassVar[bool] = False

    def optimize(self, state: ClusterState) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def accept_move(self, state: ClusterState, p: int, src: int, dst: int) -> bool:
        return True

    def exact_terms(self, model: ExactModel) -> None:
        """Add this goal's constraints to the exact model (planner/exact.py). Leader goals have
        none: leadership is metadata, chosen on the solved replica sets."""

    def lead(self, state: ClusterState, choice: LeaderChoice) -> None:
        """A replica goal's say on the first replicas, once the preferred-leader goal chose them on the
        final replica sets (``choice`` changed in place, within its bounds). Most goals have none."""

    def check(self, view: BalanceView) -> GoalCheck:  # pragma: no cover - interface
        raise NotImplementedError

    def broker_figures(self, before: BalanceView, after: BalanceView) -> dict[str, Any] | None:
        """Per-broker figures for plan.json's ``summary.goals`` entry (``brokers``), read by this goal's report
        chart and approval line; None (most goals): the report's own per-broker charts show them."""
        return None

    @classmethod
    def report_charts(cls, entry: Mapping[str, Any], final: Any = None,
                      summary: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:  # fmt: skip
        """This goal's charts in report.html from its ``summary.goals`` entry (and the snapshot taken after
        execution, when there is one; and the plan's whole summary, for figures the goal keeps beside its
        entry): ``{"id", "title", "caption", "svg"}`` each. Most goals have none."""
        return []

    @classmethod
    def approval_line(cls, entry: Mapping[str, Any]) -> str:
        """What the approver reads about this goal beyond its figure before and after ("" for none)."""
        return ""

    def relief_left(self, view: BalanceView) -> dict[int, str]:
        """Relief mode: the brokers (id) still above this goal's limit in ``view``, each with why in a few words
        (the disk's bytes against its limit); a goal without ``relief`` has none."""
        return {}

    def band_excess(self, state: ClusterState, load: np.ndarray) -> np.ndarray:
        """Per eligible broker (``state.eligible_idx`` order), the bytes by which ``load`` lies outside
        this goal's band (0 inside it, and for goals without a band): what the exact model's
        widening of that broker's band must cover."""
        return np.zeros(len(state.eligible_idx))

    def verdict(self, value: float, reached: bool, offenders: tuple[int, ...] = (),
                per_broker: dict[int, float] | None = None) -> GoalCheck:  # fmt: skip
        return GoalCheck(self.name, self.hard, self.target, value, reached, offenders, per_broker or {})


class DonorIndex:
    """A broker's movable replicas sorted by (size, partition), to find the one closest to a wanted size.

    Entries leave the lists as soon as they are taken or found gone, so a search never
    walks over replicas that already moved. Replicas of partitions the plan has already
    changed move to a side list the first time a search passes them: most searches want
    untouched partitions only, and at a million partitions walking over the same touched
    entries again and again was the planner's slowest loop. Replicas that arrived on the
    broker during planning join the side list before a search that allows touched ones.
    """

    __slots__ = ("parts", "sizes", "side_parts", "side_sizes", "state", "broker", "fed", "parked")

    def __init__(self, state: ClusterState, broker: int) -> None:
        self.state = state
        self.broker = broker
        ps = state.broker_parts(broker)
        ps = ps[~state.frozen[ps] & ~state.hot[ps]]
        order = np.lexsort((ps, state.sizes[ps]))
        self.parts: list[int] = ps[order].tolist()
        self.sizes: list[int] = state.sizes[ps][order].tolist()
        self.side_parts: list[int] = []
        self.side_sizes: list[int] = []
        self.fed = 0  # how much of ``state.arrivals[broker]`` the side list has taken in
        self.parked: set[int] = set()  # replicas set aside at the move cap (``state.capped``), until ``unpark``

    @staticmethod
    def _insert(sizes: list[int], parts: list[int], size: int, p: int) -> None:
        k = slot(sizes, parts, size, p)
        parts.insert(k, p)
        sizes.insert(k, size)

    @staticmethod
    def _remove(sizes: list[int], parts: list[int], size: int, p: int) -> None:
        k = slot(sizes, parts, size, p)  # p is listed: its own entry
        del parts[k]
        del sizes[k]

    def put_back(self, p: int) -> None:
        """Return a replica ``find`` handed out and the caller did not move: to the side list if
        its partition is changed already (where a later search allowing touched ones finds it;
        dropped there, it would be invisible to every later search), else to the main list."""
        if self.state.touched[p]:
            self._insert(self.side_sizes, self.side_parts, int(self.state.sizes[p]), p)
        else:
            self._insert(self.sizes, self.parts, int(self.state.sizes[p]), p)

    def smallest(self, allow_touched: bool = False) -> float:
        """No replica a ``find`` (with ``allow_touched`` as given) could return is smaller than this (the lists may
        still hold replicas that moved away: a bound, not a candidate); inf when there is none."""
        low = float(self.sizes[0]) if self.sizes else math.inf
        if allow_touched:
            if self.side_sizes:
                low = min(low, float(self.side_sizes[0]))
            new = self.state.arrivals.get(self.broker, [])
            if len(new) > self.fed:
                low = min(low, float(self.state.sizes[new[self.fed :]].min()))
        return low

    def unpark(self, p: int) -> None:
        """The partition of a replica set aside at the cap changed (or the cap rose): searches see it again."""
        self.parked.discard(p)
        self.put_back(p)

    def find(
        self, desired: float, ok: Callable[[int], bool], limit: int = SEARCH_LIMIT, allow_touched: bool = False,
        window: tuple[float, float] = (-math.inf, math.inf),
    ) -> int | None:
        """The replica closest in size to ``desired`` that ``ok`` accepts; it leaves the index.

        Partitions already changed by the plan are skipped unless ``allow_touched``:
        moving a second replica of one partition costs no extra move, but it needs a
        second step when only one new replica per partition may be added per batch.
        ``window``: only sizes strictly inside it can be accepted (the caller knows), so the
        search stops at its edges instead of spending its ``limit`` on replicas ``ok`` refuses.
        """
        found = self._nearest(self.sizes, self.parts, desired, ok, limit, allow_touched, window)
        if allow_touched:
            self._take_arrivals()
            side = self._nearest(self.side_sizes, self.side_parts, desired, ok, limit, True, window)
            if side is not None and (
                found is None or abs(int(self.state.sizes[side]) - desired) < abs(int(self.state.sizes[found]) - desired)
            ):
                self._remove(self.side_sizes, self.side_parts, int(self.state.sizes[side]), side)
                return side
        if found is not None:
            self._remove(self.sizes, self.parts, int(self.state.sizes[found]), found)
        return found

    def _take_arrivals(self) -> None:
        """Replicas moved onto the broker during planning join the side list: they may move on
        (rack safety can leave a broker nothing else to give, e.g. the lower-RF replicas it
        received). One that moves away again is dropped when a search passes it."""
        new = self.state.arrivals.get(self.broker, [])
        sizes = self.state.sizes
        for p in new[self.fed :]:
            self._insert(self.side_sizes, self.side_parts, int(sizes[p]), p)
        self.fed = len(new)

    def any_between(self, floor: float, below: int) -> bool:
        """Does the main list hold a replica of size in [floor, below)? Where not, ``smallest_untouched`` with those
        bounds finds none and changes nothing: a caller may skip its other checks."""
        j = bisect_left(self.sizes, floor)
        return j < len(self.sizes) and self.sizes[j] < below

    def smallest_untouched(self, floor: float, below: int, ok: Callable[[int], bool], limit: int) -> int | None:
        """The smallest untouched replica of size in [floor, below) that ``ok`` accepts; it leaves the index.
        Touched ones passed on the way move to the side list, as in ``find``."""
        sizes, parts, touched = self.sizes, self.parts, self.state.touched
        j = bisect_left(sizes, floor)
        checks = 0
        aside: list[int] = []
        found = None
        while j < len(parts) and sizes[j] < below and checks < limit:
            q = parts[j]
            if touched[q]:
                aside.append(j)
            else:
                checks += 1
                if ok(q):
                    found = j
                    break
            j += 1
        result = None if found is None else parts[found]
        for k in aside:
            self._insert(self.side_sizes, self.side_parts, sizes[k], parts[k])
        for k in sorted(aside + ([] if found is None else [found]), reverse=True):
            del parts[k]
            del sizes[k]
        return result

    def _nearest(self, sizes: list[int], parts: list[int], desired: float, ok: Callable[[int], bool], limit: int,
                 allow_touched: bool, window: tuple[float, float] = (-math.inf, math.inf)) -> int | None:
        """Search outward from ``desired``; drops replicas that moved away, and (when touched
        partitions are not wanted) moves touched ones to the side list. Leaves the found one in place."""
        touched, row, broker = self.state.touched, self.state.row, self.broker
        # An arrival that moved on and whose partition was then put back as it was (``state.restore``) is
        # untouched yet gone from this broker: side-list entries are always checked.
        side = parts is self.side_parts
        checks = 0
        dead: list[int] = []
        aside: list[int] = []
        parked: list[int] = []
        found = None
        for j in outward(sizes, desired, *window):
            if checks >= limit:
                break
            p = parts[j]
            moved = touched[p]  # (read once, not twice: a NumPy index per candidate, millions per plan)
            if moved or side:
                if broker not in row(p):  # this very replica has moved already
                    dead.append(j)
                    continue
                # At 200 brokers most of the byte goal's checks were such replicas, refused by the cap search after search
                if self.state.capped(p, broker):
                    parked.append(j)
                    continue
            if moved:
                if not allow_touched:
                    aside.append(j)
                    continue
            checks += 1
            if ok(p):
                found = p
                break
        for j in aside:
            self._insert(self.side_sizes, self.side_parts, sizes[j], parts[j])
        for j in parked:
            self.parked.add(parts[j])
            self.state.parked.setdefault(parts[j], []).append(broker)
        for j in sorted(dead + aside + parked, reverse=True):
            del parts[j]
            del sizes[j]
        return found


def slot(sizes: list[int], parts: list[int], size: int, p: int) -> int:
    """Where (``size``, ``p``) sits in lists sorted by (size, partition): its entry if listed, else where it goes.
    Bisected within the run of equal sizes too: thousands of empty partitions share size 0, and walking that run
    entry by entry, as every arrival of one joined a broker's lists, was the byte goal's costliest line at 200
    brokers / 200,000 partitions."""
    k = bisect_left(sizes, size)
    return bisect_left(parts, p, k, bisect_right(sizes, size, k))


def outward(sizes: list[int], desired: float, above: float = -math.inf, below: float = math.inf) -> Iterator[int]:
    """Indices of the sorted ``sizes``, nearest to ``desired`` first (of two equally near, the smaller),
    of sizes strictly between ``above`` and ``below``. The caller must not change ``sizes`` while it walks."""
    desired = min(max(desired, above), below)
    i = bisect_left(sizes, desired)
    lo, hi = i - 1, i
    end = bisect_left(sizes, below)  # first index at or past ``below``
    first = bisect_right(sizes, above)  # first index past ``above``
    lo = min(lo, end - 1)  # (a no-op, end + 1 alike: ``desired`` is clamped to ``below``, so i <= end)
    hi = max(hi, first)
    n = end
    while lo >= first or hi < n:
        if hi >= n or (lo >= first and desired - sizes[lo] <= sizes[hi] - desired):
            yield lo
            lo -= 1
        else:
            yield hi
            hi += 1


def donor_index(state: ClusterState, broker: int) -> DonorIndex:
    idx = state.donor_indexes.get(broker)
    if idx is None:
        idx = state.donor_indexes[broker] = DonorIndex(state, broker)
    return idx


def soft_vetoes(state: ClusterState) -> list[Goal]:
    """The goals keeping tallies of their own (the soft vetoes that are not count goals: topic spread, the byte and
    network guards) that may refuse a move: a goal without an ``accept_move`` of its own accepts every one."""
    return [g for g in state.vetoes
            if not g.hard and not g.count_goal and type(g).accept_move is not Goal.accept_move]  # fmt: skip


def tallies_accept(state: ClusterState, p: int, src: int, dst: int, soft: list[Goal] | None = None) -> bool:
    """Whether the goals keeping tallies of their own allow ``p`` from ``src`` to ``dst`` (``soft``: their
    ``soft_vetoes``, where a loop asks thousands of times between two changes of the vetoes); the hard goals and the
    counts are the caller's."""
    return all(g.accept_move(state, p, src, dst) for g in (soft_vetoes(state) if soft is None else soft))


def trade_back(state: ClusterState, p: int, q: int, d: int, r: int) -> None:
    """``p``, moved from ``d`` to ``r`` earlier in the plan, stays on ``d`` after all (its move forgotten, back in
    ``d``'s donor index), and ``q``, another replica on ``d``, goes to ``r`` in its place: the counts are as before."""
    state.move(p, r, d)
    state.restore(p)
    donor_index(state, d).put_back(p)
    state.move(q, d, r)
