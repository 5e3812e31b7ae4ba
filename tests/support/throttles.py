"""What the simulator copies without a throttle: the check behind "a move of ours never copies unthrottled"."""

from __future__ import annotations

from kafka_rebalance.cluster.admin import FOLLOWER_RATE, FOLLOWER_REPLICAS, parse_throttled_replicas
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator


def sim_configs(sim: Simulator) -> tuple[dict, dict]:
    """Every broker's and topic's configs: what "every throttle value restored exactly" compares."""
    return ({b.id: dict(b.configs) for b in sim.brokers.values()}, {t: dict(c) for t, c in sim.topics.items()})


def unthrottled_copies(sim: Simulator) -> list[str]:
    """Replicas copying now that the follower throttle does not cover: their broker has no rate, or their topic's
    list does not name them (a dead broker copies nothing and is left out)."""
    out = []
    for p in sim.moving.values():
        listed = parse_throttled_replicas(sim.topics.get(p.tp.topic, {}).get(FOLLOWER_REPLICAS))
        for b in p.copied:
            rated = FOLLOWER_RATE in sim.brokers[b].configs
            if sim.brokers[b].alive and not (rated and (listed == "*" or (p.tp.partition, b) in listed)):
                out.append(f"{p.tp} copied to broker {b} unthrottled at {sim.now:.1f}s")
    return out


class ThrottleWatch(SimAdmin):
    """The simulator's admin, noting after every write and before every sleep what copies unthrottled."""

    def __init__(self, sim: Simulator, state_path=None) -> None:
        super().__init__(sim, state_path)
        self.unthrottled: list[str] = []

    def _look(self) -> None:
        self.unthrottled += unthrottled_copies(self.sim)

    def alter_configs(self, resource_type, name, changes):
        super().alter_configs(resource_type, name, changes)
        self._look()

    def alter_reassignments(self, targets):
        out = super().alter_reassignments(targets)
        self._look()
        return out

    def sleep(self, seconds: float) -> None:
        self._look()
        super().sleep(seconds)
