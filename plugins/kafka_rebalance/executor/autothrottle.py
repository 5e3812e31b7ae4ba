"""``execute --throttle auto``: each broker's replication rate follows its network headroom, poll by poll.

Why a headroom model: a fixed throttle must be set for the busiest hour, so it is either too low when
clients are quiet (the run takes longer than it needs) or too high when they are busy (replication takes
the NIC from producers and consumers). What a broker can spare for copying is its network capacity (the
operator's figure: ``Capacity.network_in/out_bytes_per_sec``) less the traffic its clients and its ISR
followers already put on it (``cluster/traffic.py``). So, as kafka-kit's autothrottle does, at every poll
and for every broker whose rate this run set:

* ``follower.replication.throttled.rate`` (copies it receives) = clamp(network in - traffic in, floor, ceiling)
* ``leader.replication.throttled.rate`` (copies it sends) = clamp(network out - traffic out, floor, ceiling)

Only values that changed are written; each change is recorded in the ledger (the record's
``auto_throttle.changes``: when, on the executor's clock, the rates and the traffic that gave them)
before it is written; the end of the run restores the values recorded before it, as for a fixed throttle.

What the approval covers: the plan's throttle is hashed and approved (its schedule and every batch's
throttles.json), and the estimate the approver read is computed at it. Auto therefore never writes more
than that rate: the ceiling defaults to the plan's throttle and may not exceed it, the floor is at least
the smallest throttle a plan may hold, and the brokers and topics throttled are the plan's own. A lower
rate only slows the copying, which moves nothing the plan did not say; so the plan hash stays what it was
and auto needs no second approval. Wanting more than the approved rate is a new plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafka_rebalance.cluster.admin import BROKER, FOLLOWER_RATE, LEADER_RATE, ClusterError
from kafka_rebalance.cluster.traffic import BrokerTraffic, TrafficSource
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.plan_manifest import Plan
from kafka_rebalance.snapshot.capacity import CapacityMap, read_capacity_map
from kafka_rebalance.snapshot.model import Capacity
from kafka_rebalance.throttle_model import MIN_THROTTLE_BYTES_PER_SEC
from kafka_rebalance.units import human_rate

if TYPE_CHECKING:
    from kafka_rebalance.executor.executor import Executor

# ``execute --throttle``: the plan's own (fixed, as approved) or auto within it.
PLAN, AUTO = "plan", "auto"
THROTTLE_MODES = (PLAN, AUTO)
# The default floor: a tenth of the ceiling. A move held at a few KB/s by a busy broker looks alive to the stall
# check for hours; a tenth keeps every move going while giving clients nine tenths of the approved rate back.
DEFAULT_FLOOR_FRACTION = 10
# A rate is rewritten when it moves by more than this fraction (or reaches the floor or the ceiling): sampled
# traffic wobbles by a few percent from one poll to the next, and a config write per broker per poll for that
# would fill the ledger and the controller's log with noise.
CHANGE_FRACTION = 0.05


@dataclass(frozen=True, slots=True)
class AutoThrottle:
    """The bounds and the capacities auto throttling works with (every involved broker has both network figures)."""

    floor: int
    ceiling: int
    capacities: Mapping[int, Capacity]


@dataclass(frozen=True, slots=True)
class BrokerRates:
    follower: int
    leader: int
    headroom_in: float | None  # None: the traffic is not known yet (the floor is used)
    headroom_out: float | None


def clamp(value: float, floor: int, ceiling: int) -> int:
    return int(min(ceiling, max(floor, value)))


def worth_writing(auto: AutoThrottle, new: int, written: int | None) -> bool:
    """Whether ``new`` replaces the rate ``written`` (None: none yet): a real change, or a bound reached."""
    if written is None:
        return True
    if new == written:
        return False
    return new in (auto.floor, auto.ceiling) or abs(new - written) > CHANGE_FRACTION * written


def broker_rates(auto: AutoThrottle, broker: int, traffic: BrokerTraffic | None) -> BrokerRates:
    """The two rates of one broker for its traffic now. Traffic not known yet (a sampled source has one sample
    until its first poll): the ceiling, the rate the approver accepted and a fixed throttle holds all run long.
    The floor there (a tenth of the ceiling by default) lost nine tenths of the first poll interval's copying, 9 s
    at the default 10 s poll, so auto ended later than the fixed throttle even where the headroom was above the
    ceiling all along."""
    if traffic is None:
        return BrokerRates(auto.ceiling, auto.ceiling, None, None)
    cap = auto.capacities[broker]
    assert cap.network_in_bytes_per_sec is not None and cap.network_out_bytes_per_sec is not None  # auto_throttle checked
    head_in = cap.network_in_bytes_per_sec - traffic.bytes_in
    head_out = cap.network_out_bytes_per_sec - traffic.bytes_out
    return BrokerRates(clamp(head_in, auto.floor, auto.ceiling), clamp(head_out, auto.floor, auto.ceiling), head_in, head_out)


def approved_rate(plan: Plan) -> int | None:
    """The throttle the plan was approved with: its schedule's, else its batches' highest (None: it sets none)."""
    if plan.schedule is not None:
        return plan.schedule.throttle_bytes_per_sec
    rates = [b.throttles.rate_bytes_per_sec for b in plan.batches if b.throttles.rate_bytes_per_sec]
    return max(rates) if rates else None


def auto_throttle(plan: Plan, floor: int | None, ceiling: int | None, capacity: CapacityMap | None) -> AutoThrottle:
    """The bounds and capacities of an auto run of ``plan``, or one line (RebalanceError) saying why not.

    Capacities: ``capacity`` (``execute --capacity FILE``) over the plan's own (``plan --capacity``, in plan.json).
    """
    approved = approved_rate(plan)
    if approved is None:
        raise RebalanceError(f"--throttle auto: plan {plan.path} sets no throttle, so there is no approved rate to stay under")
    top = approved if ceiling is None else ceiling
    if top > approved:
        raise RebalanceError(f"--throttle-ceiling {human_rate(top)} ({top} B/s) is above the plan's approved throttle "
                             f"{human_rate(approved)} ({approved} B/s): auto never writes more than the approval covers; "
                             "re-plan with a higher --throttle to go faster")
    bottom = max(MIN_THROTTLE_BYTES_PER_SEC, top // DEFAULT_FLOOR_FRACTION) if floor is None else floor
    if bottom < MIN_THROTTLE_BYTES_PER_SEC:
        raise RebalanceError(f"--throttle-floor {bottom} B/s is below {MIN_THROTTLE_BYTES_PER_SEC} B/s, the smallest "
                             "throttle a plan may hold")
    if bottom > top:
        raise RebalanceError(f"--throttle-floor {human_rate(bottom)} ({bottom} B/s) is above the ceiling "
                             f"{human_rate(top)} ({top} B/s)")
    involved = sorted(plan.brokers_touched)
    own = read_capacity_map(plan.options.get("capacity"), f"{plan.path}/plan.json options.capacity")
    caps = own.resolve(sorted({*involved, *(b for b, _ in own.brokers)}))
    if capacity is not None:
        given = capacity.resolve(sorted({*involved, *(b for b, _ in capacity.brokers)}))
        caps = {b: given[b].over(caps.get(b)) if b in given else caps[b] for b in {*caps, *given}}
    for b in involved:
        cap = caps.get(b)
        missing = [k for k in ("network_in_bytes_per_sec", "network_out_bytes_per_sec") if cap is None or getattr(cap, k) is None]
        if missing:
            raise RebalanceError(f"--throttle auto: broker {b} (moved by the plan) has no {missing[0]} capacity; give it "
                                 "with --capacity FILE (e.g. {\"default\": {\"network_in_bytes_per_sec\": \"125MB/s\", "
                                 "\"network_out_bytes_per_sec\": \"125MB/s\"}}) or plan with --capacity")
    return AutoThrottle(bottom, top, {b: caps[b] for b in involved})


class AutoRates:
    """One run's auto throttling: reads the traffic at each poll, writes the rates that changed, records each change."""

    def __init__(self, ex: Executor, auto: AutoThrottle, source: TrafficSource) -> None:
        self.ex, self.auto, self.source = ex, auto, source
        self.traffic: dict[int, BrokerTraffic] | None = None
        self.written: dict[int, BrokerRates] = {}
        self.changes: list[dict[str, Any]] = []

    def start(self, entry: dict[str, Any]) -> None:
        """A new throttle record (the continuous run, or a batch): its ledger entry keeps the changes made under it.
        Nothing is written yet: its brokers hold the values recorded before the run."""
        block = entry.setdefault("auto_throttle", {"changes": []})
        block.update(floor=self.auto.floor, ceiling=self.auto.ceiling, traffic=self.source.method.value)
        self.changes = block["changes"]
        self.written = {}
        self.read()

    def read(self) -> None:
        """The traffic now; a cluster that does not answer leaves the last figures (and rates) in place."""
        try:
            found = self.source.read()
        except ClusterError as exc:
            self.ex.ledger.event(f"auto throttle: traffic could not be read ({exc}); rates left as they are")
            return
        if found is not None:
            self.traffic = found

    def want(self, brokers: Iterable[int]) -> dict[int, dict[str, str]]:
        """Per broker, the rate configs whose value changes now (only those), each change recorded in the ledger
        (not saved: the caller saves before writing)."""
        out: dict[int, dict[str, str]] = {}
        at, clock = self.ex.gate.clock().isoformat(timespec="milliseconds"), round(self.ex.admin.now(), 3)
        for b in sorted(set(brokers)):
            traffic = None if self.traffic is None else self.traffic.get(b, BrokerTraffic(0.0, 0.0))
            want, old = broker_rates(self.auto, b, traffic), self.written.get(b)
            was_f, was_l = (old.follower, old.leader) if old is not None else (None, None)
            follower = want.follower if was_f is None or worth_writing(self.auto, want.follower, was_f) else was_f
            leader = want.leader if was_l is None or worth_writing(self.auto, want.leader, was_l) else was_l
            changed = {k: str(v) for k, v, was in ((FOLLOWER_RATE, follower, was_f), (LEADER_RATE, leader, was_l)) if v != was}
            if not changed:
                continue
            out[b] = changed
            self.written[b] = BrokerRates(follower, leader, want.headroom_in, want.headroom_out)
            self.changes.append({"at": at, "clock": clock, "broker": b, "follower_rate": follower, "leader_rate": leader,
                                 "traffic_in": None if traffic is None else round(traffic.bytes_in, 1),
                                 "traffic_out": None if traffic is None else round(traffic.bytes_out, 1)})
        return out

    def slowdown(self, senders: Iterable[int], receivers: Iterable[int]) -> float:
        """How many times longer than at the ceiling a copy from ``senders`` to ``receivers`` takes at the rates
        their traffic gives them now (1 while the traffic is not known). The plan's estimates, which the window
        gate weighs, are made at the ceiling: a move started on them while clients are busy would outlive its
        window and be cancelled at its end."""
        caps = self.auto.capacities

        def rates(b: int) -> BrokerRates:
            return broker_rates(self.auto, b, None if self.traffic is None else self.traffic.get(b, BrokerTraffic(0.0, 0.0)))

        slowest = min([rates(b).leader for b in senders if b in caps] + [rates(b).follower for b in receivers if b in caps],
                      default=self.auto.ceiling)
        return self.auto.ceiling / max(slowest, 1)

    def poll(self, brokers: Iterable[int]) -> None:
        """At each poll: the traffic again, and the rates that changed written (after the ledger holds them)."""
        self.read()
        changed = self.want(brokers)
        if not changed:
            return
        self.ex.ledger.save()
        for b, cfg in sorted(changed.items()):
            try:
                self.ex.admin.alter_configs(BROKER, str(b), cfg)
            except ClusterError as exc:
                # Written again at the next poll; its recorded original is restored at the end either way.
                self.written.pop(b, None)
                self.ex.ledger.event(f"auto throttle: broker {b} did not take its rate ({exc}); tried again next poll")


@dataclass(frozen=True, slots=True)
class RateHistory:
    """What a ledger says auto throttling did: per broker, (seconds from the first change, follower, leader rate)."""

    floor: int
    ceiling: int
    traffic: str
    brokers: Mapping[int, tuple[tuple[float, int, int], ...]]


def rate_history(ledger: Mapping[str, Any] | None) -> RateHistory | None:
    """The rates used over time, from every throttle record's ``auto_throttle`` block (None: auto never ran).

    The ledger is read as a report reads it (never trusted to be whole): entries that are not a change are skipped.
    """
    if not isinstance(ledger, Mapping):
        return None
    entries = [ledger.get("continuous")] + list((ledger.get("batches") or {}).values())
    blocks = [e["auto_throttle"] for e in entries if isinstance(e, Mapping) and isinstance(e.get("auto_throttle"), Mapping)]
    changes = [c for b in blocks for c in b.get("changes") or [] if isinstance(c, Mapping)
               and all(isinstance(c.get(k), (int, float)) and not isinstance(c.get(k), bool)
                       for k in ("clock", "broker", "follower_rate", "leader_rate"))]
    if not changes:
        return None
    start = min(float(c["clock"]) for c in changes)
    per: dict[int, list[tuple[float, int, int]]] = {}
    for c in sorted(changes, key=lambda c: float(c["clock"])):
        per.setdefault(int(c["broker"]), []).append((float(c["clock"]) - start, int(c["follower_rate"]), int(c["leader_rate"])))
    last = blocks[-1]
    return RateHistory(int(last.get("floor") or 0), int(last.get("ceiling") or 0), str(last.get("traffic") or ""),
                       {b: tuple(v) for b, v in sorted(per.items())})
