"""The simulator as a ``ClusterAdmin``, and its state on disk (so a simulated cluster outlives a run)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from kafka_rebalance.atomic import atomic_write
from kafka_rebalance.cluster.admin import TP, PartitionView, Reassignment, ReplicaDir
from kafka_rebalance.cluster.simulator import ERR_ELECTION_NOT_NEEDED, Simulator
from kafka_rebalance.cluster.traffic import BrokerTraffic
from kafka_rebalance.errors import RebalanceError
from kafka_rebalance.snapshot import Snapshot
from kafka_rebalance.userinput import InputError, read_json


def write_state(sim: Simulator, path: Path) -> None:
    """Atomically, so a killed run never leaves half a state."""
    atomic_write(path, (json.dumps(sim.to_state(), sort_keys=True, indent=1) + "\n").encode("utf-8"))


def read_state(path: Path) -> Simulator:
    what_to_do = ("it is only the simulated cluster, so delete it to start the simulation again from the snapshot "
                  "(the plan's ledger then no longer matches: re-arm the plan)")
    try:
        raw = read_json(path, "simulator state")
    except InputError as exc:
        raise RebalanceError(f"{path}: corrupt simulator state ({str(exc).removeprefix(f'{path}: ')}); {what_to_do}") from None
    if not isinstance(raw, dict):
        raise RebalanceError(f"{path}: corrupt simulator state (top level is not an object); {what_to_do}")
    try:
        return Simulator.from_state(raw, str(path))
    except RebalanceError as exc:
        raise RebalanceError(f"{path}: corrupt simulator state ({str(exc).removeprefix(f'{path}: ')}); {what_to_do}") from None
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise RebalanceError(f"{path}: corrupt simulator state ({type(exc).__name__}: {exc}); {what_to_do}") from None


class SimAdmin:
    """``ClusterAdmin`` over a ``Simulator``; with ``state_path`` every change is persisted at once."""

    simulated = True  # its clock is virtual: the ledger records it, so a run's times are read as such

    def __init__(self, sim: Simulator, state_path: Path | None = None) -> None:
        self.sim = sim
        self.state_path = state_path

    @classmethod
    def open(cls, snapshot: Snapshot, state_path: Path | None) -> SimAdmin:
        """Resume the persisted cluster if ``state_path`` exists, else start from ``snapshot``."""
        if state_path is not None and state_path.exists():
            return cls(read_state(state_path), state_path)
        admin = cls(Simulator.from_snapshot(snapshot), state_path)
        admin._save()
        return admin

    def _save(self) -> None:
        if self.state_path is not None:
            write_state(self.sim, self.state_path)

    def now(self) -> float:
        return self.sim.now

    def sleep(self, seconds: float) -> None:
        self.sim.advance(seconds)
        self._save()

    def describe(self) -> Snapshot:
        return self.sim.describe()

    def kafka_cluster_id(self) -> str | None:
        return self.sim.kafka_cluster_id

    def partitions(self, tps: Iterable[TP]) -> dict[TP, PartitionView]:
        out: dict[TP, PartitionView] = {}
        for tp in tps:
            p = self.sim.partitions.get(tp)
            if p is not None:
                out[tp] = PartitionView(tuple(p.replicas), tuple(p.isr), p.leader)
        return out

    def dynamic_configs(self, resource_type: str, name: str, keys: Iterable[str]) -> dict[str, str | None]:
        current = self.sim.dynamic_configs(resource_type, name)
        return {k: current.get(k) for k in keys}

    def alter_configs(self, resource_type: str, name: str, changes: Mapping[str, str | None]) -> None:
        self.sim.alter_configs(resource_type, name, changes)
        self._save()

    def list_reassignments(self) -> dict[TP, Reassignment]:
        return self.sim.list_reassignments()

    def alter_reassignments(self, targets: Mapping[TP, tuple[int, ...] | None]) -> dict[TP, str | None]:
        out = self.sim.alter_reassignments(targets)
        self._save()
        return out

    def replica_sizes(self, partitions: Iterable[TP]) -> dict[tuple[TP, int], int]:
        return self.sim.replica_sizes(partitions)

    def broker_traffic(self) -> dict[int, BrokerTraffic]:
        """The simulator knows its traffic exactly (cluster/traffic.py's TrafficReporter)."""
        return self.sim.broker_traffic()

    def alter_replica_log_dirs(self, dirs: Mapping[tuple[TP, int], str]) -> dict[tuple[TP, int], str | None]:
        out = self.sim.alter_replica_log_dirs(dirs)
        self._save()
        return out

    def replica_dirs(self, partitions: Iterable[TP]) -> dict[tuple[TP, int], ReplicaDir]:
        return self.sim.replica_dirs(partitions)

    def elect_preferred(self, partitions: Iterable[TP]) -> dict[TP, str | None]:
        out = {tp: (None if err == ERR_ELECTION_NOT_NEEDED else err) for tp, err in self.sim.elect_preferred(partitions).items()}
        self._save()
        return out

    def close(self) -> None:
        self._save()
