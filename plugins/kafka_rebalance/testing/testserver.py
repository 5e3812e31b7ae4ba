"""A Kafka-wire-protocol server on 127.0.0.1, backed by the simulator, for tests and demos.

No Kafka broker can be installed here, so the live adapter (kafka-python's real
KafkaAdminClient) is tested through real sockets against this server. It answers
ApiVersions, Metadata, DescribeCluster, DescribeConfigs, IncrementalAlterConfigs,
AlterPartitionReassignments, ListPartitionReassignments, ElectLeaders and
DescribeLogDirs (plus SaslHandshake/SaslAuthenticate for SASL/PLAIN) using
kafka-python's own protocol classes, so the bytes are what the Java broker sends.

Each simulated broker gets its own listener port, because the client routes by
broker: broker configs to the named broker, reassignments and elections to the
controller (others answer NOT_CONTROLLER), log dirs to every broker.

Virtual time: with ``time_scale`` > 0 the simulator's clock advances by that many
virtual seconds per wall-clock second, checked on every request, so a move that
would take an hour finishes in a few wall seconds of polling.
"""

from __future__ import annotations

import logging
import socket
import socketserver
import struct
import threading
import time
import uuid
from collections.abc import Mapping
from typing import Any

from kafka.protocol import admin as admin_proto
from kafka.protocol import metadata as metadata_proto
from kafka.protocol import sasl as sasl_proto

from kafka_rebalance.cluster.admin import BROKER, TOPIC, TP, ClusterError
from kafka_rebalance.cluster.simulator import Simulator

log = logging.getLogger(__name__)

RESOURCE_TOPIC, RESOURCE_BROKER = 2, 4
ERRORS = {
    None: 0, "UNKNOWN_TOPIC_OR_PARTITION": 3, "INVALID_REPLICA_ASSIGNMENT": 39, "NOT_CONTROLLER": 41,
    "INVALID_CONFIG": 40, "SASL_AUTHENTICATION_FAILED": 58, "PREFERRED_LEADER_NOT_AVAILABLE": 80,
    "ELECTION_NOT_NEEDED": 84, "NO_REASSIGNMENT_IN_PROGRESS": 85, "UNSUPPORTED_VERSION": 35,
    "ILLEGAL_SASL_STATE": 34, "UNSUPPORTED_SASL_MECHANISM": 33, "INVALID_REQUEST": 42,
}
SET, DELETE = 0, 1


def _classes(kind: str) -> dict[int, Any]:
    out = {}
    for module in (admin_proto, metadata_proto, sasl_proto):
        for name in module.__all__:
            cls = getattr(module, name)
            if name.endswith(kind) and hasattr(cls, "_valid_versions") and getattr(cls, "_valid_versions", None):
                out[cls.API_KEY] = cls
    return out


REQUESTS = _classes("Request")
RESPONSES = _classes("Response")
API_VERSIONS, METADATA, DESCRIBE_CLUSTER = 18, 3, 60
DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS = 32, 44
ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS, ELECT_LEADERS, DESCRIBE_LOG_DIRS = 45, 46, 43, 35
SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
SERVED = (API_VERSIONS, METADATA, DESCRIBE_CLUSTER, DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS,
          ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS, ELECT_LEADERS, DESCRIBE_LOG_DIRS, SASL_HANDSHAKE, SASL_AUTHENTICATE)


def _versions(api_key: int) -> tuple[int, int]:
    lo_req, hi_req = REQUESTS[api_key]._valid_versions
    lo_resp, hi_resp = RESPONSES[api_key]._valid_versions
    return max(lo_req, lo_resp), min(hi_req, hi_resp)


class KafkaTestServer:
    """Start with ``start()`` (or as a context manager); ``bootstrap_servers`` is what clients dial."""

    def __init__(
        self,
        sim: Simulator,
        *,
        time_scale: float = 0.0,
        sasl_users: Mapping[str, str] | None = None,
        host: str = "127.0.0.1",
        failed_auth_close_delay: float = 0.1,
    ) -> None:
        self.sim = sim
        self.time_scale = time_scale
        self.sasl_users = dict(sasl_users) if sasl_users else None
        self.host = host
        # 0 closes right after the failure response, so it and the close reach the client together.
        self.failed_auth_close_delay = failed_auth_close_delay
        self.lock = threading.RLock()
        self.requests: list[tuple[int, int, int]] = []  # (broker, api_key, version) for tests to inspect
        self._servers: dict[int, socketserver.ThreadingTCPServer] = {}
        self._threads: list[threading.Thread] = []
        self._wall0 = time.monotonic()
        self._virtual0 = sim.now

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> KafkaTestServer:
        outer = self
        for broker_id in self.sim.brokers:
            class Handler(socketserver.BaseRequestHandler):
                bid = broker_id

                def handle(self) -> None:
                    outer._serve_connection(self.request, self.bid)

            server = socketserver.ThreadingTCPServer((self.host, 0), Handler, bind_and_activate=False)
            server.allow_reuse_address = True
            server.daemon_threads = True
            server.server_bind()
            server.server_activate()
            self._servers[broker_id] = server
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            thread.start()
            self._threads.append(thread)
        self._wall0, self._virtual0 = time.monotonic(), self.sim.now
        return self

    def stop(self) -> None:
        for server in self._servers.values():
            server.shutdown()
            server.server_close()
        self._servers.clear()

    def __enter__(self) -> KafkaTestServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def port(self, broker_id: int) -> int:
        return self._servers[broker_id].server_address[1]

    @property
    def bootstrap_servers(self) -> str:
        live = [b for b in self.sim.brokers if self.sim.brokers[b].alive] or list(self.sim.brokers)
        return f"{self.host}:{self.port(live[0])}"

    def sync_clock(self) -> None:
        """Bring the simulator to the virtual time that corresponds to now."""
        with self.lock:
            if self.time_scale > 0:
                target = self._virtual0 + (time.monotonic() - self._wall0) * self.time_scale
                if target > self.sim.now:
                    self.sim.advance(target - self.sim.now)

    # ------------------------------------------------------------------ wire

    def _serve_connection(self, sock: socket.socket, broker_id: int) -> None:
        authenticated = self.sasl_users is None
        handshake_done = False
        try:
            while True:
                head = _recv_exact(sock, 4)
                if head is None:
                    return
                (size,) = struct.unpack(">i", head)
                payload = _recv_exact(sock, size)
                if payload is None:
                    return
                api_key, version = struct.unpack(">hh", payload[:4])
                (cid,) = struct.unpack(">i", payload[4:8])
                if api_key == API_VERSIONS and not (REQUESTS[API_VERSIONS]._valid_versions[0] <= version <= _versions(API_VERSIONS)[1]):
                    sock.sendall(self._api_versions_error(cid))
                    continue
                if api_key not in SERVED or not _versions(api_key)[0] <= version <= _versions(api_key)[1]:
                    log.info("test server: closing on unsupported api %s v%s", api_key, version)
                    return
                if not authenticated and api_key not in (API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE):
                    log.info("test server: request %s before SASL authentication: closing", api_key)
                    return
                request = REQUESTS[api_key].decode(payload, version=version, header=True)
                with self.lock:
                    self.requests.append((broker_id, api_key, version))
                    if api_key == SASL_HANDSHAKE:
                        handshake_done = request.mechanism == "PLAIN"
                        fields = {"error_code": 0 if handshake_done else ERRORS["UNSUPPORTED_SASL_MECHANISM"],
                                  "mechanisms": ["PLAIN"]}
                    elif api_key == SASL_AUTHENTICATE:
                        ok = handshake_done and self._check_plain(bytes(request.auth_bytes))
                        fields = {"error_code": 0 if ok else ERRORS["SASL_AUTHENTICATION_FAILED"],
                                  "error_message": None if ok else "Authentication failed: Invalid username or password",
                                  "auth_bytes": b"", "session_lifetime_ms": 0}
                        authenticated = ok
                    else:
                        self.sync_clock()
                        fields = self._handle(api_key, version, request, broker_id)
                response = RESPONSES[api_key][version](**fields)
                response.with_header(correlation_id=cid)
                sock.sendall(response.encode(header=True, framed=True))
                if api_key == SASL_AUTHENTICATE and not authenticated:
                    # Like Kafka's connection.failed.authentication.delay.ms: close after the client read the error.
                    time.sleep(self.failed_auth_close_delay)
                    return
        except (ConnectionError, OSError):
            return

    def _api_versions_error(self, cid: int) -> bytes:
        resp = RESPONSES[API_VERSIONS][0](error_code=ERRORS["UNSUPPORTED_VERSION"], api_keys=self._api_keys(0))
        resp.with_header(correlation_id=cid)
        return resp.encode(header=True, framed=True)

    def _api_keys(self, version: int) -> list[Any]:
        cls = RESPONSES[API_VERSIONS][version]
        return [cls.ApiVersion(api_key=k, min_version=_versions(k)[0], max_version=_versions(k)[1]) for k in SERVED]

    def _check_plain(self, token: bytes) -> bool:
        parts = token.split(b"\0")
        if len(parts) != 3 or self.sasl_users is None:
            return False
        user, password = parts[1].decode(errors="replace"), parts[2].decode(errors="replace")
        return self.sasl_users.get(user) == password

    # ------------------------------------------------------------------ handlers

    def _handle(self, api_key: int, version: int, req: Any, broker_id: int) -> dict[str, Any]:
        resp = RESPONSES[api_key][version]
        sim = self.sim
        if api_key == API_VERSIONS:
            return {"error_code": 0, "api_keys": self._api_keys(version), "throttle_time_ms": 0}
        if api_key == METADATA:
            return self._metadata(resp, req)
        if api_key == DESCRIBE_CLUSTER:
            return {
                "throttle_time_ms": 0, "error_code": 0, "error_message": None, "endpoint_type": 1,
                "cluster_id": sim.cluster_id, "controller_id": sim.controller_id,
                "brokers": [resp.DescribeClusterBroker(broker_id=b.id, host=self.host, port=self.port(b.id), rack=b.rack,
                                                       is_fenced=False)
                            for b in sim.brokers.values() if b.alive],
                "authorized_operations": None,
            }
        if api_key == DESCRIBE_CONFIGS:
            return {"throttle_time_ms": 0, "results": [self._describe_configs(resp, version, r) for r in req.resources]}
        if api_key == INCREMENTAL_ALTER_CONFIGS:
            return {"throttle_time_ms": 0, "responses": [self._alter_configs(resp, r, req.validate_only) for r in req.resources]}
        if api_key in (ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS, ELECT_LEADERS) and broker_id != sim.controller_id:
            return self._not_controller(api_key, version)
        if api_key == ALTER_REASSIGNMENTS:
            targets = {TP(t.name, p.partition_index): (None if p.replicas is None else tuple(p.replicas))
                       for t in req.topics for p in t.partitions}
            results = sim.alter_reassignments(targets)
            by_topic: dict[str, list[Any]] = {}
            for tp, err in results.items():
                by_topic.setdefault(tp.topic, []).append(
                    resp.ReassignableTopicResponse.ReassignablePartitionResponse(
                        partition_index=tp.partition, error_code=ERRORS[err], error_message=err))
            return {"throttle_time_ms": 0, "allow_replication_factor_change": True, "error_code": 0, "error_message": None,
                    "responses": [resp.ReassignableTopicResponse(name=t, partitions=ps) for t, ps in by_topic.items()]}
        if api_key == LIST_REASSIGNMENTS:
            wanted = None if req.topics is None else {TP(t.name, i) for t in req.topics for i in t.partition_indexes}
            by_topic = {}
            for tp, r in sorted(sim.list_reassignments().items()):
                if wanted is not None and tp not in wanted:
                    continue
                by_topic.setdefault(tp.topic, []).append(
                    resp.OngoingTopicReassignment.OngoingPartitionReassignment(
                        partition_index=tp.partition, replicas=list(r.replicas), adding_replicas=list(r.adding),
                        removing_replicas=list(r.removing)))
            return {"throttle_time_ms": 0, "error_code": 0, "error_message": None,
                    "topics": [resp.OngoingTopicReassignment(name=t, partitions=ps) for t, ps in by_topic.items()]}
        if api_key == ELECT_LEADERS:
            if req.topic_partitions is None:
                tps = [tp for tp, p in sim.partitions.items()]
            else:
                tps = [TP(t.topic, p) for t in req.topic_partitions for p in t.partitions]
            results = sim.elect_preferred(tps)
            by_topic = {}
            for tp, err in results.items():
                by_topic.setdefault(tp.topic, []).append(
                    resp.ReplicaElectionResult.PartitionResult(partition_id=tp.partition, error_code=ERRORS[err], error_message=err))
            return {"throttle_time_ms": 0, "error_code": 0,
                    "replica_election_results": [resp.ReplicaElectionResult(topic=t, partition_result=ps) for t, ps in by_topic.items()]}
        if api_key == DESCRIBE_LOG_DIRS:
            return self._log_dirs(resp, req, broker_id)
        raise AssertionError(api_key)

    def _not_controller(self, api_key: int, version: int) -> dict[str, Any]:
        code = ERRORS["NOT_CONTROLLER"]
        if api_key == ALTER_REASSIGNMENTS:
            return {"throttle_time_ms": 0, "error_code": code, "error_message": "not controller", "responses": []}
        if api_key == LIST_REASSIGNMENTS:
            return {"throttle_time_ms": 0, "error_code": code, "error_message": "not controller", "topics": []}
        return {"throttle_time_ms": 0, "error_code": code, "replica_election_results": []}

    def _metadata(self, resp: Any, req: Any) -> dict[str, Any]:
        sim = self.sim
        names = sorted({tp.topic for tp in sim.partitions}) if req.topics is None else [t.name for t in req.topics]
        topics = []
        for name in names:
            parts = [p for tp, p in sim.partitions.items() if tp.topic == name]
            if not parts:
                topics.append(resp.MetadataResponseTopic(error_code=ERRORS["UNKNOWN_TOPIC_OR_PARTITION"], name=name,
                                                         topic_id=uuid.UUID(int=0), is_internal=False, partitions=[],
                                                         authorized_operations=None))
                continue
            topics.append(resp.MetadataResponseTopic(
                error_code=0, name=name, topic_id=uuid.uuid5(uuid.NAMESPACE_URL, f"{sim.cluster_id}/{name}"),
                is_internal=name.startswith("__"), authorized_operations=None,
                partitions=[resp.MetadataResponseTopic.MetadataResponsePartition(
                    error_code=0 if p.leader != -1 else 5, partition_index=p.tp.partition, leader_id=p.leader, leader_epoch=0,
                    replica_nodes=list(p.replicas), isr_nodes=list(p.isr),
                    offline_replicas=[r for r in p.replicas if not sim.brokers[r].alive]) for p in parts]))
        return {
            "throttle_time_ms": 0, "cluster_id": sim.cluster_id, "controller_id": sim.controller_id, "error_code": 0,
            "brokers": [resp.MetadataResponseBroker(node_id=b.id, host=self.host, port=self.port(b.id), rack=b.rack)
                        for b in sim.brokers.values() if b.alive],
            "topics": topics, "authorized_operations": None,
        }

    def _describe_configs(self, resp: Any, version: int, r: Any) -> Any:
        kind = {RESOURCE_BROKER: BROKER, RESOURCE_TOPIC: TOPIC}.get(r.resource_type)
        result_cls = resp.DescribeConfigsResult
        try:
            if kind is None:
                raise ClusterError(f"resource type {r.resource_type} not served")
            if kind == BROKER and not r.resource_name.isdigit():
                raise ClusterError(f"broker name {r.resource_name!r} is not an id")
            configs = self.sim.all_configs(kind, r.resource_name)
        except ClusterError as exc:
            return result_cls(error_code=ERRORS["UNKNOWN_TOPIC_OR_PARTITION"] if kind == TOPIC else ERRORS["INVALID_REQUEST"],
                              error_message=str(exc), resource_type=r.resource_type, resource_name=r.resource_name, configs=[])
        keys = sorted(configs) if r.configuration_keys is None else [k for k in r.configuration_keys if k in configs]
        entries = [
            result_cls.DescribeConfigsResourceResult(
                name=k, value=configs[k][0], read_only=configs[k][2], config_source=configs[k][1],
                is_default=configs[k][1] == 5, is_sensitive=False, synonyms=[], config_type=2 if "replicas" in k else 5,
                documentation=None)
            for k in keys
        ]
        return result_cls(error_code=0, error_message=None, resource_type=r.resource_type, resource_name=r.resource_name,
                          configs=entries)

    def _alter_configs(self, resp: Any, r: Any, validate_only: bool) -> Any:
        kind = {RESOURCE_BROKER: BROKER, RESOURCE_TOPIC: TOPIC}.get(r.resource_type)
        out = resp.AlterConfigsResourceResponse
        changes: dict[str, str | None] = {}
        for c in r.configs:
            if c.config_operation not in (SET, DELETE):
                return out(error_code=ERRORS["INVALID_REQUEST"], error_message="only SET and DELETE are served",
                           resource_type=r.resource_type, resource_name=r.resource_name)
            changes[c.name] = c.value if c.config_operation == SET else None
        try:
            if kind is None:
                raise ClusterError(f"resource type {r.resource_type} not served")
            if not validate_only:
                self.sim.alter_configs(kind, r.resource_name, changes)
        except (ClusterError, ValueError) as exc:
            return out(error_code=ERRORS["INVALID_CONFIG"], error_message=str(exc), resource_type=r.resource_type,
                       resource_name=r.resource_name)
        return out(error_code=0, error_message=None, resource_type=r.resource_type, resource_name=r.resource_name)

    def _log_dirs(self, resp: Any, req: Any, broker_id: int) -> dict[str, Any]:
        sim = self.sim
        wanted = None if req.topics is None else {TP(t.topic, p) for t in req.topics for p in t.partitions}
        sizes = sim.replica_sizes(None if wanted is None else sorted(wanted))
        by_topic: dict[str, list[Any]] = {}
        topic_cls = resp.DescribeLogDirsResult.DescribeLogDirsTopic
        for (tp, b), size in sorted(sizes.items()):
            if b != broker_id:
                continue
            p = sim.partitions[tp]
            lag = 0 if b in p.isr else max(0, int(p.size) - size)
            by_topic.setdefault(tp.topic, []).append(topic_cls.DescribeLogDirsPartition(
                partition_index=tp.partition, partition_size=size, offset_lag=lag, is_future_key=False))
        result = resp.DescribeLogDirsResult(
            error_code=0, log_dir=f"/var/lib/kafka/data-{broker_id}", total_bytes=-1, usable_bytes=-1, is_cordoned=False,
            topics=[topic_cls(name=t, partitions=ps) for t, ps in by_topic.items()])
        return {"throttle_time_ms": 0, "error_code": 0, "results": [result]}


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf.extend(chunk)
    return bytes(buf)
