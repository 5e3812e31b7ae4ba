"""``ClusterAdmin`` over a real cluster through kafka-python's KafkaAdminClient (3.0.x).

kafka-python is the one Python client with every call the pipeline needs
(DescribeLogDirs, AlterPartitionReassignments, ListPartitionReassignments,
ElectLeaders, incremental configs); see docs/KAFKA.md.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import kafka.errors as kafka_errors
from kafka import TopicPartition
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient, OffsetSpec

from kafka_rebalance.cluster.admin import BROKER, TP, ClusterConnectionError, ClusterError, PartitionView, Reassignment
from kafka_rebalance.cluster.connection import ConnectionSettings, install_redaction
from kafka_rebalance.cluster.failures import ConnectFailure, FailureKind, TokenEndpointError, authorization_resource, classify
from kafka_rebalance.cluster.gather import LogEnd
from kafka_rebalance.cluster.netclient import BootstrapFailed, FailFastNetClient
from kafka_rebalance.snapshot import THRESHOLD_CONFIG, Broker, LogDir, Partition, Snapshot

DYNAMIC_SOURCES = {"DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG"}
UNKNOWN_RACK = "unknown-offline"


class LiveAdmin:
    def __init__(self, settings: ConnectionSettings, *, quiet: bool = False) -> None:
        self.settings = settings
        install_redaction(settings.secrets())
        if quiet:
            # The CLI prints one line per failure; the client's own retries and warnings stay out of it.
            logging.getLogger("kafka").propagate = False
        made: list[FailFastNetClient] = []

        class _Client(FailFastNetClient):
            def __init__(self, **configs: Any) -> None:
                super().__init__(**configs)
                made.append(self)

        kwargs = settings.kafka_python_kwargs()
        provider = kwargs.get("sasl_oauth_token_provider")
        if provider is not None:
            try:  # a token endpoint that fails is named now, before a broker is asked (the token is reused then)
                provider.token()
            except TokenEndpointError as exc:
                raise ClusterConnectionError(f"cannot connect to {settings.describe()}: {exc.failure.line()}",
                                             failure=exc.failure) from None
        try:
            self.client = KafkaAdminClient(**kwargs, kafka_client=_Client)
        except kafka_errors.KafkaConfigurationError as exc:
            raise ClusterConnectionError(f"cannot connect to {settings.describe()}: bad client setting ({exc})") from None
        except (kafka_errors.KafkaError, OSError, ValueError) as exc:
            manager = made[0]._manager if made else None
            failure = (exc.failure if isinstance(exc, BootstrapFailed)
                       else (manager.last_failure() if manager else None) or classify(exc))
            if failure.kind is FailureKind.SILENT:
                failure = ConnectFailure(FailureKind.SILENT, f"{failure.detail} (gave up after "
                                         f"{settings.bootstrap_timeout_ms / 1000:g}s)", failure.server)
            if made:
                made[0].close()  # the client's I/O thread was started before the bootstrap failed
            if "," not in settings.bootstrap_servers:  # the one server is named already
                failure = ConnectFailure(failure.kind, failure.detail)
            raise ClusterConnectionError(f"cannot connect to {settings.describe()}: {failure.line()}",
                                         failure=failure) from None
        # Past the bootstrap, a refused broker is one broker down, not a reason to give up.
        self.client._manager.bootstrapping = False

    # ------------------------------------------------------------------ helpers

    @contextmanager
    def _call(self, what: str) -> Iterator[None]:
        try:
            yield
        except ClusterError:
            raise
        except (kafka_errors.KafkaError, OSError, ValueError) as exc:
            # kafka-python only re-reads the controller id after NOT_CONTROLLER; a killed node it
            # still names (KRaft brokers name a live broker, which may be the one that just died)
            # would be asked forever. Forget it so the next call looks it up again.
            if hasattr(self.client, "_controller_id"):
                self.client._controller_id = None
            resource = authorization_resource(exc)
            if resource is not None:
                raise ClusterError(f"{self.settings.bootstrap_servers}: authorization denied: {what} needs an ACL on the "
                                   f"{resource} resource that {self._principal()} does not hold ({type(exc).__name__})") from None
            raise ClusterError(f"{self.settings.bootstrap_servers}: {what} failed: {exc}") from None

    def _principal(self) -> str:
        """Who the authorizer judged, for an error line (never the password)."""
        if self.settings.sasl_mechanism == "OAUTHBEARER" and self.settings.oauth is not None:
            return f"OAuth client {self.settings.oauth.client_id!r}"
        return f"user {self.settings.sasl_username!r}" if self.settings.sasl_username else "this client"

    @staticmethod
    def _error_name(err: Any) -> str | None:
        if err is None or err is kafka_errors.NoError:
            return None
        if isinstance(err, type) and issubclass(err, kafka_errors.ElectionNotNeededError):
            return None
        name = getattr(err, "message", None) or getattr(err, "__name__", str(err))
        return str(name)

    # ------------------------------------------------------------------ ClusterAdmin

    def now(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def partitions(self, tps: Iterable[TP]) -> dict[TP, PartitionView]:
        wanted = set(tps)
        if not wanted:
            return {}
        with self._call("describe topics"):
            topics = self.client.describe_topics(sorted({tp.topic for tp in wanted}))
        out: dict[TP, PartitionView] = {}
        for t in topics:
            if t.get("error_code"):
                continue  # the topic is gone: its partitions are absent
            for p in t["partitions"]:
                tp = TP(t["name"], p["partition_index"])
                if tp in wanted:
                    out[tp] = PartitionView(tuple(p["replica_nodes"]), tuple(p["isr_nodes"]), p["leader_id"])
        return out

    def kafka_cluster_id(self) -> str | None:
        with self._call("describe cluster"):
            found = self.client.describe_cluster().get("cluster_id")
        return str(found) if found else None

    def describe(self) -> Snapshot:
        with self._call("describe cluster"):
            cluster = self.client.describe_cluster()
        # Under an authorizer Kafka answers a principal without DESCRIBE on the cluster with no
        # log dirs and no topics, not an error: the snapshot would be an empty cluster that looks
        # balanced. The operations it may perform come back with DescribeCluster (absent from
        # brokers too old for it, and every operation without an authorizer).
        allowed = cluster.get("authorized_operations")
        if allowed is not None and "DESCRIBE" not in allowed:
            raise ClusterError(f"{self.settings.bootstrap_servers}: authorization denied: describing the cluster (its log "
                               f"dirs, brokers and configs) needs DESCRIBE on the CLUSTER resource, which {self._principal()} "
                               "does not hold; see the ACLs in docs/KAFKA.md")
        with self._call("describe topics"):
            topics = self.client.describe_topics()
        registered = {b["broker_id"]: b for b in cluster["brokers"]}
        live_ids = sorted(b for b, info in registered.items() if not info.get("is_fenced"))
        all_ids = set(registered)
        for t in topics:
            for p in t["partitions"]:
                all_ids.update(p["replica_nodes"])
        try:
            log_dirs = self._log_dirs(None, live_ids) if live_ids else []
        except ClusterError as exc:
            # A broker without DescribeLogDirs (e.g. tansu): sizes stay unknown (None), never guessed.
            if "IncompatibleBrokerVersion" not in str(exc):
                raise
            log_dirs = []
        sizes: dict[tuple[str, int, int], int] = {}
        replica_dir: dict[tuple[str, int, int], str] = {}
        broker_dirs: dict[int, list[LogDir]] = {}
        for entry in log_dirs:
            for d in entry["log_dirs"]:
                if d.get("error_code"):
                    continue  # an offline disk (KAFKA_STORAGE_ERROR): Kafka lists it without replicas or sizes
                # Kafka 3.3+ (DescribeLogDirs v4) reports the volume's size and free space; older brokers
                # send -1 (or nothing): unknown, never guessed.
                total, usable = d.get("total_bytes", -1), d.get("usable_bytes", -1)
                broker_dirs.setdefault(entry["broker"], []).append(
                    LogDir(d["log_dir"], total if total is not None and total >= 0 else None,
                           usable if usable is not None and usable >= 0 else None))
                for t in d["topics"]:
                    for p in t["partitions"]:
                        if not p.get("is_future_key"):
                            key = (t["name"], p["partition_index"], entry["broker"])
                            sizes[key] = max(sizes.get(key, 0), p["partition_size"])
                            # A replica moving between a broker's disks shows twice, the future copy
                            # flagged: it lives where the current one is until the move completes.
                            replica_dir[key] = d["log_dir"]
        resources = [ConfigResource(ConfigResourceType.BROKER, str(b)) for b in live_ids]
        resources += [ConfigResource(ConfigResourceType.TOPIC, t["name"]) for t in topics]
        try:
            with self._call("describe configs"):
                configs = self.client.describe_configs(resources, config_filter="all") if resources else {}
        except ClusterError:
            # Broker configs are served by each broker itself: one that was just killed (registered
            # until its session times out) fails the whole call. Ask each on its own; a broker that
            # does not answer is recorded as not alive, which is what it is to a rebalance.
            configs = {"broker": {}, "topic": {}}
            topic_resources = [r for r in resources if r.resource_type == ConfigResourceType.TOPIC]
            if topic_resources:
                with self._call("describe topic configs"):
                    configs["topic"] = self.client.describe_configs(topic_resources, config_filter="all").get("topic", {})
            for b in list(live_ids):
                try:
                    with self._call(f"describe broker {b} configs"):
                        found = self.client.describe_configs([ConfigResource(ConfigResourceType.BROKER, str(b))],
                                                             config_filter="all")
                    configs["broker"].update(found.get("broker", {}))
                except ClusterError:
                    live_ids.remove(b)
        broker_cfgs = configs.get("broker", {})
        topic_cfgs = configs.get("topic", {})
        cluster_configs: dict[str, str] = {}
        controller_kind = "kraft"
        for b in live_ids:
            cfg = broker_cfgs.get(str(b), {})
            if THRESHOLD_CONFIG in cfg and cfg[THRESHOLD_CONFIG].get("value") is not None:
                cluster_configs.setdefault(THRESHOLD_CONFIG, cfg[THRESHOLD_CONFIG]["value"])
            zk = cfg.get("zookeeper.connect", {}).get("value")
            roles = cfg.get("process.roles", {}).get("value")
            if zk and not roles:
                controller_kind = "zookeeper"
        has_racks = any(info.get("rack") for info in registered.values())
        brokers = []
        for b in sorted(all_ids):
            info = registered.get(b)
            rack = info.get("rack") if info else (UNKNOWN_RACK if has_racks else None)
            dynamic = {k: v["value"] for k, v in broker_cfgs.get(str(b), {}).items()
                       if v.get("config_source") in DYNAMIC_SOURCES and v.get("value") is not None}
            dirs = tuple(sorted(broker_dirs.get(b, ()), key=lambda d: d.path))
            brokers.append(Broker(b, rack or None, b in live_ids, dict(sorted(dynamic.items())), dirs))
        parts = []
        for t in topics:
            for p in t["partitions"]:
                replicas = tuple(p["replica_nodes"])
                leader = p["leader_id"]
                by_replica = [sizes[(t["name"], p["partition_index"], r)] for r in replicas if (t["name"], p["partition_index"], r) in sizes]
                size = sizes.get((t["name"], p["partition_index"], leader)) if leader >= 0 else None
                if size is None and by_replica:
                    size = max(by_replica)
                dirs_of = tuple(replica_dir.get((t["name"], p["partition_index"], r)) for r in replicas)
                parts.append(Partition(t["name"], p["partition_index"], replicas, leader, tuple(p["isr_nodes"]), size, None,
                                       tuple(p.get("offline_replicas") or ()),
                                       dirs_of if any(d is not None for d in dirs_of) else ()))
        parts.sort(key=lambda p: (p.topic, p.partition))
        topic_out = {
            t["name"]: {"configs": {k: v["value"] for k, v in sorted(topic_cfgs.get(t["name"], {}).items())
                                    if v.get("config_source") in DYNAMIC_SOURCES and v.get("value") is not None}}
            for t in sorted(topics, key=lambda t: t["name"])
        }
        return Snapshot(
            cluster_id=cluster.get("cluster_id") or "unknown", brokers=tuple(brokers), partitions=tuple(parts),
            controller=controller_kind,
            captured_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            configs=cluster_configs, topics=topic_out, kafka_cluster_id=cluster.get("cluster_id") or None,
        )

    def log_ends(self) -> dict[TP, LogEnd]:
        """Every led partition's first and next offsets (ListOffsets to its leader) and its leader
        replica's size (DescribeLogDirs): one sample of ``gather --rate-window``."""
        with self._call("describe topics"):
            topics = self.client.describe_topics()
        leaders = {TP(t["name"], p["partition_index"]): p["leader_id"]
                   for t in topics if not t.get("error_code") for p in t["partitions"] if p["leader_id"] >= 0}
        if not leaders:
            return {}
        wanted = [TopicPartition(tp.topic, tp.partition) for tp in sorted(leaders)]
        with self._call("list offsets"):
            ends = self.client.list_partition_offsets({tp: OffsetSpec.LATEST for tp in wanted})
            starts = self.client.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in wanted})
        sizes: dict[tuple[TP, int], int] = {}
        for entry in self._log_dirs(None, sorted(set(leaders.values()))):
            for d in entry["log_dirs"]:
                for t in d["topics"]:
                    for p in t["partitions"]:
                        if not p.get("is_future_key"):
                            sizes[(TP(t["name"], p["partition_index"]), entry["broker"])] = p["partition_size"]
        out: dict[TP, LogEnd] = {}
        for tp in wanted:
            key = TP(tp.topic, tp.partition)
            if tp in ends and tp in starts:
                out[key] = LogEnd(starts[tp].offset, ends[tp].offset, sizes.get((key, leaders[key])))
        return out

    def _know_broker(self, resource_type: str, name: str) -> None:
        """Before a call addressed to one broker (its own configs): make sure the client knows that broker.

        kafka-python refreshes its metadata every 5 minutes, or after a failed connection: a broker that was down
        (killed, fenced) and has come back stays unknown to it until then, and a call to it fails with
        UnknownBrokerIdError although the broker answers (a throttle restore after a restarted node, say). Kafka's
        own admin client refreshes its metadata when it meets an unknown node; so does this.
        """
        manager = self.client._manager
        if resource_type == BROKER and manager.cluster.broker_metadata(int(name)) is None:
            manager.run(manager.cluster.refresh_metadata)

    def dynamic_configs(self, resource_type: str, name: str, keys: Iterable[str]) -> dict[str, str | None]:
        keys = list(keys)
        kind = ConfigResourceType.BROKER if resource_type == BROKER else ConfigResourceType.TOPIC
        with self._call(f"describe {resource_type} {name} configs"):
            self._know_broker(resource_type, name)
            # All keys, filtered here: some Kafka-compatible brokers (tansu) drop the connection on a key list.
            found = self.client.describe_configs([ConfigResource(kind, str(name))], config_filter="all")
        cfg = found.get(resource_type, {}).get(str(name), {})
        return {k: (cfg[k]["value"] if k in cfg and cfg[k].get("config_source") in DYNAMIC_SOURCES else None) for k in keys}

    def alter_configs(self, resource_type: str, name: str, changes: Mapping[str, str | None]) -> None:
        if not changes:
            return
        kind = ConfigResourceType.BROKER if resource_type == BROKER else ConfigResourceType.TOPIC
        ops = {k: (AlterConfigOp.DELETE, None) if v is None else (AlterConfigOp.SET, v) for k, v in changes.items()}
        with self._call(f"alter {resource_type} {name} configs"):
            self._know_broker(resource_type, name)
            result = self.client.alter_configs([ConfigResource(kind, str(name), ops)], raise_on_unknown=False, incremental=True)
        outcome = result.get(resource_type, {}).get(str(name))
        if outcome != "OK":
            raise ClusterError(f"{self.settings.bootstrap_servers}: alter {resource_type} {name} configs {sorted(changes)}: {outcome}")

    def list_reassignments(self) -> dict[TP, Reassignment]:
        with self._call("list partition reassignments"):
            found = self.client.list_partition_reassignments()
        return {
            TP(tp.topic, tp.partition): Reassignment(tuple(v["replicas"]), tuple(v["adding_replicas"]), tuple(v["removing_replicas"]))
            for tp, v in found.items()
        }

    def alter_reassignments(self, targets: Mapping[TP, tuple[int, ...] | None]) -> dict[TP, str | None]:
        if not targets:
            return {}
        request = {TopicPartition(tp.topic, tp.partition): (None if t is None else list(t)) for tp, t in targets.items()}
        with self._call("alter partition reassignments"):
            result = self.client.alter_partition_reassignments(request)
        return {TP(tp.topic, tp.partition): self._error_name(err) for tp, err in result.items()}

    def _log_dirs(self, wanted: dict[str, list[int]] | None, brokers: list[int] | None) -> list[dict]:
        """DescribeLogDirs of all (or the given) brokers, leaving out the ones that do not answer.

        A broker that was just killed stays registered until its session times out (about 9 s),
        and one unanswered broker fails the whole call: then each broker is asked on its own, so
        a dead broker blinds neither the snapshot nor the executor to the others.
        """
        try:
            with self._call("describe log dirs"):
                return self.client.describe_log_dirs(topic_partitions=wanted, brokers=brokers)
        except ClusterError as exc:
            if "IncompatibleBrokerVersion" in str(exc):
                raise
        if brokers is None:
            with self._call("describe cluster"):
                brokers = sorted(b["broker_id"] for b in self.client.describe_cluster()["brokers"])
        entries: list[dict] = []
        answered = 0
        for broker in brokers:
            try:
                with self._call(f"describe log dirs of broker {broker}"):
                    entries += self.client.describe_log_dirs(topic_partitions=wanted, brokers=[broker])
                answered += 1
            except ClusterError:
                continue
        if brokers and not answered:
            raise ClusterError(f"{self.settings.bootstrap_servers}: describe log dirs failed on every broker {brokers}")
        return entries

    def replica_sizes(self, partitions: Iterable[TP]) -> dict[tuple[TP, int], int]:
        wanted: dict[str, list[int]] = {}
        for tp in partitions:
            wanted.setdefault(tp.topic, []).append(tp.partition)
        if not wanted:
            return {}
        entries = self._log_dirs(wanted, None)
        out: dict[tuple[TP, int], int] = {}
        for entry in entries:
            for d in entry["log_dirs"]:
                for t in d["topics"]:
                    for p in t["partitions"]:
                        key = (TP(t["name"], p["partition_index"]), entry["broker"])
                        out[key] = max(out.get(key, 0), p["partition_size"])
        return out

    def elect_preferred(self, partitions: Iterable[TP]) -> dict[TP, str | None]:
        wanted: dict[str, list[int]] = {}
        for tp in partitions:
            wanted.setdefault(tp.topic, []).append(tp.partition)
        if not wanted:
            return {}
        with self._call("preferred leader election"):
            response = self.client.elect_leaders(0, wanted, raise_errors=False)
        out: dict[TP, str | None] = {}
        for result in response.replica_election_results:
            for p in result.partition_result:
                err = kafka_errors.for_code(p.error_code)
                out[TP(result.topic, p.partition_id)] = self._error_name(err)
        return out

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:
            pass
