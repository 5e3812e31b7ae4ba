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
from typing import Any, NoReturn

import kafka.errors as kafka_errors
from kafka import TopicPartition, TopicPartitionReplica
from kafka.admin import AlterConfigOp, ConfigResource, ConfigResourceType, KafkaAdminClient, OffsetSpec

from kafka_rebalance.cluster.admin import (
    BROKER,
    TP,
    ClusterConnectionError,
    ClusterDenied,
    ClusterError,
    PartitionView,
    Reassignment,
    ReplicaDir,
)
from kafka_rebalance.cluster.connection import ConnectionSettings, install_redaction
from kafka_rebalance.cluster.failures import (
    ALTER_CLUSTER,
    ALTER_CLUSTER_CONFIGS,
    ALTER_TOPIC_CONFIGS,
    CLUSTER_RESOURCE_NAME,
    DESCRIBE_CLUSTER,
    DESCRIBE_CLUSTER_CONFIGS,
    DESCRIBE_GROUP,
    DESCRIBE_TOPIC,
    DESCRIBE_TOPIC_CONFIGS,
    Acl,
    AclResourceType,
    ConnectFailure,
    Denial,
    FailureKind,
    Role,
    TokenEndpointError,
    classify,
    denial,
    effective_acls,
)
from kafka_rebalance.cluster.gather import GroupsUnread, LogEnd
from kafka_rebalance.cluster.netclient import BootstrapFailed, FailFastNetClient
from kafka_rebalance.snapshot import THRESHOLD_CONFIG, Broker, LogDir, Partition, Snapshot

DYNAMIC_SOURCES = {"DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG"}
UNKNOWN_RACK = "unknown-offline"
# A topic name no one creates (auto-creation is off in every Metadata request the admin sends): Kafka answers
# TOPIC_AUTHORIZATION_FAILED for it unless the principal may describe every topic (an ACL on topic "*").
PROBE_TOPIC = "__kafka_rebalance_acl_probe"


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
    def _call(self, what: str, needs: Acl | None = None) -> Iterator[None]:
        """Kafka's and the client's errors as one ClusterError line; an authorization error as ClusterDenied
        naming ``needs``, the ACL the call requires."""
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
            self._raise_if_denied(exc, what, needs)
            raise ClusterError(f"{self.settings.bootstrap_servers}: {what} failed: {exc}") from None

    def _raise_if_denied(self, error: BaseException | type[BaseException], what: str, needs: Acl | None,
                         name: str | None = None) -> None:
        """ClusterDenied if ``error`` (an exception, or the class a per-resource error code maps to) is the
        authorizer's refusal; nothing otherwise."""
        found = denial(error, self._principal(), what, needs, name)
        if found is not None:
            self._deny(found)

    def _deny(self, found: Denial) -> NoReturn:
        raise ClusterDenied(f"{self.settings.bootstrap_servers}: {found.line()}", found) from None

    def _principal(self) -> str:
        """Who the authorizer judged, as Kafka names principals in ACLs (never the password)."""
        if self.settings.sasl_username:
            return f"User:{self.settings.sasl_username}"
        if self.settings.sasl_mechanism == "OAUTHBEARER" and self.settings.oauth is not None:
            # The broker names the token's subject; the client id is what the operator configured.
            return f"the principal of OAuth client {self.settings.oauth.client_id!r}"
        if self.settings.security_protocol == "PLAINTEXT":
            return "User:ANONYMOUS"
        return "the principal of this client's certificate"  # SSL: the broker maps the certificate's DN

    def require(self, role: Role, topics: Iterable[str], call: str) -> None:
        """ClusterDenied naming the first ACL of ``role`` the principal lacks on the cluster or one of ``topics``.

        Read from the operations Kafka says the principal may perform (KIP-430: DescribeCluster for the
        cluster, Metadata for each topic), so a command refused for a missing ACL is refused before it
        changes anything. A broker too old to say (no authorized operations) is taken at its word later.
        """
        needed = effective_acls(role)
        with self._call("describe cluster"):
            allowed = self.client.describe_cluster().get("authorized_operations")
        for acl in needed:
            if acl.resource_type is AclResourceType.CLUSTER and allowed is not None and acl.operation.value not in allowed:
                self._deny(Denial(self._principal(), acl, AclResourceType.CLUSTER, CLUSTER_RESOURCE_NAME, call))
        topic_acls = [a for a in needed if a.resource_type is AclResourceType.TOPIC]
        names = sorted(set(topics))
        if not topic_acls or not names:
            return
        with self._call("describe topics", DESCRIBE_TOPIC):
            described = self.client.describe_topics(names)
        for t in sorted(described, key=lambda t: t["name"]):
            if t.get("error_code"):
                # A topic the principal may not describe is refused as one (Kafka hides whether it exists).
                self._raise_if_denied(kafka_errors.for_code(t["error_code"]), call, DESCRIBE_TOPIC, t["name"])
                continue  # gone since the plan was made: the executor reports that partition itself
            ops = t.get("authorized_operations")
            for acl in topic_acls:
                if ops is not None and acl.operation.value not in ops:
                    self._deny(Denial(self._principal(), acl, AclResourceType.TOPIC, t["name"], call))

    def _describe_configs(self, resources: list[ConfigResource], what: str) -> dict[str, dict[str, dict]]:
        """DescribeConfigs, all keys, checking each resource's error code: kafka-python drops it, so a resource
        the principal may not describe would read as one without any config. Other per-resource errors (a topic
        deleted meanwhile) leave that resource without configs, as before."""
        client = self.client

        async def send() -> list[Any]:
            by_broker, others = client._group_config_resources(resources)
            responses = [await client._manager.send(client._describe_configs_request(group), node_id=broker)
                         for broker, group in by_broker.items()]
            if others:
                responses.append(await client._manager.send(client._describe_configs_request(others)))
            return responses

        with self._call(what):
            responses = client._manager.run(send)
        for response in responses:
            for result in response.results:
                broker = result.resource_type == ConfigResourceType.BROKER
                self._raise_if_denied(
                    kafka_errors.for_code(result.error_code),
                    f"describe {'broker' if broker else 'topic'} {result.resource_name} configs",
                    DESCRIBE_CLUSTER_CONFIGS if broker else DESCRIBE_TOPIC_CONFIGS,
                    None if broker else result.resource_name)
        found: dict[str, dict[str, dict]] = client._describe_configs_process_responses(responses, "all")
        return found

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
        with self._call("describe topics", DESCRIBE_TOPIC):
            topics = self.client.describe_topics(sorted({tp.topic for tp in wanted}))
        out: dict[TP, PartitionView] = {}
        for t in topics:
            if t.get("error_code"):
                # Refused is not gone: a topic the principal may not describe would read as deleted.
                self._raise_if_denied(kafka_errors.for_code(t["error_code"]), "describe topics", DESCRIBE_TOPIC, t["name"])
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
        for acl in (DESCRIBE_CLUSTER, DESCRIBE_CLUSTER_CONFIGS):
            if allowed is not None and acl.operation.value not in allowed:
                self._deny(Denial(self._principal(), acl, AclResourceType.CLUSTER, CLUSTER_RESOURCE_NAME,
                                  "describe the cluster"))
        with self._call("describe topics", DESCRIBE_TOPIC):
            topics = self.client.describe_topics()
        if not topics:
            # Topics the principal may not describe are left out of Metadata and DescribeLogDirs alike, so a
            # principal without DESCRIBE on topics sees an empty cluster. Kafka refuses such a principal a topic
            # that does not exist too (it hides what exists): an empty answer is a denial when that one is refused.
            with self._call("describe topics", DESCRIBE_TOPIC):
                probe = self.client.describe_topics([PROBE_TOPIC])
            for t in probe:
                self._raise_if_denied(kafka_errors.for_code(t.get("error_code") or 0),
                                      "describe the cluster's topics", DESCRIBE_TOPIC, "*")
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
            configs = self._describe_configs(resources, "describe configs") if resources else {}
        except ClusterDenied:
            raise
        except ClusterError:
            # Broker configs are served by each broker itself: one that was just killed (registered
            # until its session times out) fails the whole call. Ask each on its own; a broker that
            # does not answer is recorded as not alive, which is what it is to a rebalance.
            configs = {"broker": {}, "topic": {}}
            topic_resources = [r for r in resources if r.resource_type == ConfigResourceType.TOPIC]
            if topic_resources:
                configs["topic"] = self._describe_configs(topic_resources, "describe topic configs").get("topic", {})
            for b in list(live_ids):
                try:
                    found = self._describe_configs([ConfigResource(ConfigResourceType.BROKER, str(b))],
                                                   f"describe broker {b} configs")
                    configs["broker"].update(found.get("broker", {}))
                except ClusterDenied:
                    raise
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
        with self._call("describe topics", DESCRIBE_TOPIC):
            topics = self.client.describe_topics()
        leaders = {TP(t["name"], p["partition_index"]): p["leader_id"]
                   for t in topics if not t.get("error_code") for p in t["partitions"] if p["leader_id"] >= 0}
        if not leaders:
            return {}
        wanted = [TopicPartition(tp.topic, tp.partition) for tp in sorted(leaders)]
        with self._call("list offsets", DESCRIBE_TOPIC):
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

    def group_offsets(self) -> dict[tuple[str, TP], int] | GroupsUnread:
        """Every consumer group's committed offsets (ListGroups, then OffsetFetch): one sample of gather's
        consumer traffic. Kafka lists only the groups the principal may describe. A refused or failed call (a broker
        down, a coordinator moving) gives the reason instead: consumer traffic is an estimate beside the produce
        rates, and gather says it was not measured, and why, rather than failing."""
        try:
            with self._call("list consumer groups", DESCRIBE_CLUSTER):
                groups = sorted({g["group_id"] for g in self.client.list_groups()})
            if not groups:
                return {}
            with self._call("fetch consumer group offsets", DESCRIBE_GROUP):  # all groups in one request: Kafka 3.0+ (KIP-709)
                fetched = self.client.list_group_offsets(groups)
        except ClusterDenied as denied:
            return GroupsUnread(f"reading consumer groups was refused: {denied.denial.line()}")
        except ClusterError as failed:
            return GroupsUnread(f"reading consumer groups failed: {failed}")
        return {(group, TP(tp.topic, tp.partition)): meta.offset
                for group, offsets in sorted(fetched.items()) for tp, meta in offsets.items() if meta.offset >= 0}

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
        found = self._describe_configs([ConfigResource(kind, str(name))], f"describe {resource_type} {name} configs")
        cfg = found.get(resource_type, {}).get(str(name), {})
        return {k: (cfg[k]["value"] if k in cfg and cfg[k].get("config_source") in DYNAMIC_SOURCES else None) for k in keys}

    def alter_configs(self, resource_type: str, name: str, changes: Mapping[str, str | None]) -> None:
        if not changes:
            return
        kind = ConfigResourceType.BROKER if resource_type == BROKER else ConfigResourceType.TOPIC
        ops = {k: (AlterConfigOp.DELETE, None) if v is None else (AlterConfigOp.SET, v) for k, v in changes.items()}
        what = f"alter {resource_type} {name} configs"
        client = self.client
        request = client._alter_configs_request([ConfigResource(kind, str(name), ops)], incremental=True)

        async def send() -> Any:
            # A broker's configs are altered through that broker; a topic's through any.
            if resource_type == BROKER:
                return await client._manager.send(request, node_id=int(name))
            return await client._manager.send(request)

        with self._call(what):
            self._know_broker(resource_type, name)
            response = client._manager.run(send)
        # Per-resource error codes, read here: kafka-python turns them into text, which is not an interface.
        for result in response.responses:
            error = kafka_errors.for_code(result.error_code)
            if error is kafka_errors.NoError:
                continue
            self._raise_if_denied(error, what, ALTER_CLUSTER_CONFIGS if resource_type == BROKER else ALTER_TOPIC_CONFIGS,
                                  None if resource_type == BROKER else name)
            raise ClusterError(f"{self.settings.bootstrap_servers}: {what} {sorted(changes)}: "
                               f"{error.__name__}: {result.error_message or error.description}")

    def list_reassignments(self) -> dict[TP, Reassignment]:
        with self._call("list partition reassignments", DESCRIBE_CLUSTER):
            found = self.client.list_partition_reassignments()
        return {
            TP(tp.topic, tp.partition): Reassignment(tuple(v["replicas"]), tuple(v["adding_replicas"]), tuple(v["removing_replicas"]))
            for tp, v in found.items()
        }

    def alter_reassignments(self, targets: Mapping[TP, tuple[int, ...] | None]) -> dict[TP, str | None]:
        if not targets:
            return {}
        request = {TopicPartition(tp.topic, tp.partition): (None if t is None else list(t)) for tp, t in targets.items()}
        with self._call("alter partition reassignments", ALTER_CLUSTER):
            result = self.client.alter_partition_reassignments(request)
        return {TP(tp.topic, tp.partition): self._error_name(err) for tp, err in result.items()}

    def _log_dirs(self, wanted: dict[str, list[int]] | None, brokers: list[int] | None) -> list[dict]:
        """DescribeLogDirs of all (or the given) brokers, leaving out the ones that do not answer.

        A broker that was just killed stays registered until its session times out (about 9 s),
        and one unanswered broker fails the whole call: then each broker is asked on its own, so
        a dead broker blinds neither the snapshot nor the executor to the others.
        """
        try:
            with self._call("describe log dirs", DESCRIBE_CLUSTER):
                return self.client.describe_log_dirs(topic_partitions=wanted, brokers=brokers)
        except ClusterDenied:
            raise
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
                with self._call(f"describe log dirs of broker {broker}", DESCRIBE_CLUSTER):
                    entries += self.client.describe_log_dirs(topic_partitions=wanted, brokers=[broker])
                answered += 1
            except ClusterDenied:
                raise
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

    def alter_replica_log_dirs(self, dirs: Mapping[tuple[TP, int], str]) -> dict[tuple[TP, int], str | None]:
        if not dirs:
            return {}
        request = {TopicPartitionReplica(tp.topic, tp.partition, b): d for (tp, b), d in dirs.items()}
        what = "alter replica log dirs"
        with self._call(what, ALTER_CLUSTER):
            result = self.client.alter_replica_log_dirs(request)
        out: dict[tuple[TP, int], str | None] = {}
        for r, err in result.items():
            self._raise_if_denied(err, what, ALTER_CLUSTER)
            out[(TP(r.topic, r.partition), r.broker_id)] = self._error_name(err)
        return out

    def replica_dirs(self, partitions: Iterable[TP]) -> dict[tuple[TP, int], ReplicaDir]:
        wanted: dict[str, list[int]] = {}
        for tp in partitions:
            wanted.setdefault(tp.topic, []).append(tp.partition)
        if not wanted:
            return {}
        current: dict[tuple[TP, int], str] = {}
        future: dict[tuple[TP, int], str] = {}
        for entry in self._log_dirs(wanted, None):
            for d in entry["log_dirs"]:
                if d.get("error_code"):
                    continue  # an offline dir holds nothing Kafka can serve
                for t in d["topics"]:
                    for p in t["partitions"]:
                        key = (TP(t["name"], p["partition_index"]), entry["broker"])
                        (future if p.get("is_future_key") else current)[key] = d["log_dir"]
        return {k: ReplicaDir(path, future.get(k)) for k, path in current.items()}

    def elect_preferred(self, partitions: Iterable[TP]) -> dict[TP, str | None]:
        wanted: dict[str, list[int]] = {}
        for tp in partitions:
            wanted.setdefault(tp.topic, []).append(tp.partition)
        if not wanted:
            return {}
        what = "preferred leader election"
        with self._call(what, ALTER_CLUSTER):
            response = self.client.elect_leaders(0, wanted, raise_errors=False)
        # Refused, Kafka answers with the error on the whole request (v1+) and on every partition: one denial.
        self._raise_if_denied(kafka_errors.for_code(getattr(response, "error_code", 0) or 0), what, ALTER_CLUSTER)
        out: dict[TP, str | None] = {}
        for result in response.replica_election_results:
            for p in result.partition_result:
                err = kafka_errors.for_code(p.error_code)
                self._raise_if_denied(err, what, ALTER_CLUSTER)
                out[TP(result.topic, p.partition_id)] = self._error_name(err)
        return out

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:
            pass
