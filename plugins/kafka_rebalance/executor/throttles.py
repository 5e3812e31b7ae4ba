"""The throttle values an execution changes: recorded on the ledger before anything is set, and restored.

Both modes use one record per ledger key (a batch id, or the continuous run). A batch records its
brokers and topics once, before its throttles are set; the continuous run records each broker and
topic the first time a move touches it. Either way the old values are saved to the ledger before
the first write, so a killed run's throttles are restored by the next one, and ``restore`` writes
exactly those values back (``None``: delete the dynamic config, as it was unset).

A record that could not be fully restored (a broker that did not answer) is kept when the key starts
again: it holds the true originals, which the cluster no longer shows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from kafka_rebalance.cluster.admin import BROKER, TOPIC, TP, ClusterAdmin, ClusterDenied, ClusterError, merge_throttle
from kafka_rebalance.executor.ledger import CONTINUOUS, Ledger

# {"brokers": {id: {key: value or None}}, "topics": {topic: {key: value or None}}}, as the ledger holds it
Recorded = dict[str, dict[str, dict[str, str | None]]]


def topic_gone(admin: ClusterAdmin, topic: str) -> bool:
    """Whether the cluster no longer has ``topic`` (someone deleted it): its configs, throttles included, went
    with it, so there is nothing left to set or restore. A cluster that does not answer says nothing: False."""
    try:
        return not admin.partitions([TP(topic, 0)])  # every topic has a partition 0
    except ClusterError:
        return False


def set_broker_throttle(admin: ClusterAdmin, broker: int, values: Mapping[str, str | None]) -> bool:
    """Write a broker's throttle values; False when the broker no longer answers (it died since it was last read: a
    dead broker serves no replication, and its config can only be written through itself). A refusal from a broker
    that still answers (a denial, an invalid value) is raised: moves must never run past a throttle that failed."""
    try:
        admin.alter_configs(BROKER, str(broker), values)
        return True
    except ClusterDenied:
        raise
    except ClusterError:
        try:
            admin.dynamic_configs(BROKER, str(broker), sorted(values))
        except ClusterError:
            return False
        raise


def label(key: str) -> str:
    """How messages name a throttle record: a batch, or the continuous run."""
    return "continuous execution" if key == CONTINUOUS else f"batch {key}"


class ThrottleRecord:
    def __init__(self, admin: ClusterAdmin, ledger: Ledger, key: str, progress: Callable[[str], None]) -> None:
        self.admin, self.ledger, self.key, self.progress = admin, ledger, key, progress

    @property
    def _entry(self) -> dict:
        return self.ledger.throttle_entry(self.key)

    @property
    def recorded(self) -> Recorded:
        return self._entry["throttles_before"]

    def begin(self) -> None:
        """A fresh record, unless the last one is not fully restored yet (it keeps the true originals)."""
        e = self._entry
        if e.get("throttles_before") is None or e.get("throttles_restored"):
            e.update(throttles_before={"brokers": {}, "topics": {}}, throttles_restored=False, restored=[], restore_pending=[])
        else:
            e.update(restored=[])

    def has_broker(self, broker: int) -> bool:
        return str(broker) in self.recorded["brokers"]

    def record_broker(self, broker: int, keys: Iterable[str]) -> None:
        """The broker's dynamic values of ``keys``, unless recorded already; ClusterError if it does not answer."""
        if not self.has_broker(broker):
            self.recorded["brokers"][str(broker)] = self.admin.dynamic_configs(BROKER, str(broker), sorted(keys))

    def record_topic(self, topic: str, keys: Iterable[str]) -> None:
        if topic not in self.recorded["topics"]:
            self.recorded["topics"][topic] = self.admin.dynamic_configs(TOPIC, topic, sorted(keys))

    def save(self) -> None:
        """Put the record on disk: call before the first write to the cluster."""
        self.ledger.save()

    def merged(self, topic: str, planned: Mapping[str, str]) -> dict[str, str | None]:
        """The planned throttled-replica lists joined with the topic's recorded ones, per planned key."""
        original = self.recorded["topics"].get(topic, {})
        return {k: merge_throttle(k, v, original.get(k)) for k, v in sorted(planned.items())}

    def restore(self) -> list[str]:
        """Put back the recorded values on every resource that answers; returns those that could not be restored.

        A broker's own throttle rate can only be changed through that broker (Kafka refuses a broker
        config addressed to another broker id), so a dead broker's values stay pending in the ledger
        and the next run, or `cancel`, restores them once it is back. Topics are restored first: their
        throttled-replica lists are what actually slows replication.
        """
        entry = self._entry
        before = entry.get("throttles_before")
        if before is None or entry.get("throttles_restored"):
            return []
        done = set(entry.get("restored", []))
        failed: list[str] = []
        resources = [(TOPIC, t, v) for t, v in sorted(before.get("topics", {}).items())]
        resources += [(BROKER, b, v) for b, v in sorted(before.get("brokers", {}).items())]
        for kind, name, values in resources:
            key = f"{kind}:{name}"
            if key in done:
                continue
            try:
                self.admin.alter_configs(kind, name, values)
            except ClusterError as exc:
                if kind == TOPIC and topic_gone(self.admin, name):
                    done.add(key)
                    self.ledger.event(f"{label(self.key)}: topic {name} no longer exists; its throttles went with it")
                    continue
                failed.append(key)
                self.progress(f"{label(self.key)}: could not restore throttles on {kind} {name} ({exc}); "
                              "they stay recorded and are restored by the next run")
                continue
            done.add(key)
        entry["restored"] = sorted(done)
        entry["restore_pending"] = failed
        entry["throttles_restored"] = not failed
        if failed:
            self.ledger.event(f"{label(self.key)}: throttles not yet restored on {', '.join(failed)} (unreachable)")
        self.ledger.save()
        return failed


def restore_leftovers(admin: ClusterAdmin, ledger: Ledger, progress: Callable[[str], None],
                      in_flight: Mapping[str, int] | None = None, said: set[str] | None = None) -> list[str]:
    """Put back throttle values a killed or failed run left set; returns the keys restored.

    ``in_flight``: records (key -> how many of their moves Kafka still runs) left set on purpose. Restoring
    them would let those moves copy at full speed until the run that resumes them sets the same values
    again; that run takes the record over instead (``ThrottleRecord.begin`` keeps an unrestored record) and
    restores it at its end, so the moves stay throttled across the kill. ``said``: records already reported kept
    (a run checks again before each batch), not reported again; the keys reported now are added to it.
    """
    kept = dict(in_flight or {})
    leftover = [key for key in ledger.unrestored() if key not in kept]
    for key, moving in sorted(kept.items()):
        if said is not None:
            if key in said:
                continue
            said.add(key)
        progress(f"{label(key)}: keeping the throttles an interrupted run set: {moving} of its move(s) are still "
                 "in flight; the run that resumes them restores them")
        ledger.event(f"kept the throttles an interrupted run of {label(key)} set: {moving} of its move(s) still "
                     "in flight")
    for key in leftover:
        progress(f"{label(key)}: restoring the throttle values recorded before an interrupted run")
        ThrottleRecord(admin, ledger, key, progress).restore()
        ledger.event(f"restored throttles left by an interrupted run of {label(key)}")
        ledger.save()
    return leftover
