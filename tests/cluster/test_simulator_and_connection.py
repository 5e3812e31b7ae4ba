"""Simulator semantics (KIP-73, KIP-455), the live adapter's describe, connection settings, secrets."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from kafka_rebalance.cluster.admin import TP, ClusterAdmin
from kafka_rebalance.cluster.connection import (
    ConnectionSettings,
    ConnectionSettingsError,
    settings_from_airflow_extra,
    settings_from_properties,
)
from kafka_rebalance.cluster.live import LiveAdmin
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import SimBroker, SimPartition, Simulator
from kafka_rebalance.snapshot import load_snapshot
from kafka_rebalance.testing.testserver import KafkaTestServer

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample-cluster.json"
MB = 1024 * 1024


def _tiny(size=100 * MB, rate=0.0) -> Simulator:
    brokers = [SimBroker(i, f"r{i % 2}") for i in range(4)]
    parts = [SimPartition(TP("t", 0), [0, 1], 0, [0, 1], float(size), rate, True)]
    return Simulator("tiny", brokers, parts)


def test_snapshot_round_trip_and_state_round_trip():
    snap = load_snapshot(SAMPLE)
    sim = Simulator.from_snapshot(snap)
    assert sim.describe() == snap
    sim.alter_configs("broker", "2", {"leader.replication.throttled.rate": "1000"})
    sim.alter_reassignments({TP("topic-000", 0): (1, 4, 0)})
    sim.advance(1.5)
    again = Simulator.from_state(sim.to_state())
    assert again.describe() == sim.describe() and again.list_reassignments() == sim.list_reassignments()
    assert again.describe().broker(2).configs == {"leader.replication.throttled.rate": "1000"}


def test_the_state_keeps_the_traffic_model():
    # `execute --simulate` and the kill-point tests carry a run over processes: NICs, a producer's schedule and its
    # consumers must come back as they were, or `--throttle auto` would see another cluster after a restart.
    sim = Simulator.from_snapshot(load_snapshot(SAMPLE))
    sim.set_network_capacity(2, 100 * MB, 80 * MB)
    sim.set_consume_rate(TP("topic-000", 0), 3 * MB)
    sim.schedule_rates(30.0, TP("topic-000", 1), 5 * MB, 1 * MB)
    sim.advance(10)
    again = Simulator.from_state(sim.to_state())
    assert again.network == {2: (100 * MB, 80 * MB)}
    assert again.broker_traffic() == sim.broker_traffic()
    sim.advance(30)
    again.advance(30)
    assert again.broker_traffic() == sim.broker_traffic() and again.rate_changes == sim.rate_changes == []
    assert again.partitions[TP("topic-000", 1)].consume_rate == 1 * MB


def test_reassignment_follows_the_controller_steps():
    sim = _tiny()
    sim.alter_reassignments({TP("t", 0): (2, 3)})
    p = sim.partitions[TP("t", 0)]
    # AR = RAR + OAR while the new replicas catch up; the leader stays on an old replica.
    assert p.replicas == [2, 3, 0, 1] and p.isr == [0, 1] and p.leader == 0
    r = sim.list_reassignments()[TP("t", 0)]
    assert (r.adding, r.removing, r.target) == ((2, 3), (0, 1), (2, 3))
    sim.advance(0.5)  # 100 MiB at 100 MiB/s unthrottled: not yet
    assert sim.partitions[TP("t", 0)].target is not None
    sim.advance(0.6)
    p = sim.partitions[TP("t", 0)]
    assert p.replicas == [2, 3] and p.isr == [2, 3] and p.leader == 2 and p.target is None


def test_throttle_limits_replication_only_where_set_and_shared_per_broker():
    sim = _tiny(size=10 * MB)
    sim.alter_configs("broker", "2", {"follower.replication.throttled.rate": str(1 * MB)})
    sim.alter_reassignments({TP("t", 0): (0, 2)})
    sim.advance(5)
    assert sim.partitions[TP("t", 0)].target is None  # rate without a replica list: not throttled
    sim = _tiny(size=10 * MB)
    sim.alter_configs("broker", "2", {"follower.replication.throttled.rate": str(1 * MB)})
    sim.alter_configs("topic", "t", {"follower.replication.throttled.replicas": "0:2"})
    sim.alter_reassignments({TP("t", 0): (0, 2)})
    sim.advance(9.9)
    assert sim.partitions[TP("t", 0)].target is not None
    assert sim.replica_sizes([TP("t", 0)])[(TP("t", 0), 2)] == pytest.approx(9.9 * MB, rel=1e-6)
    sim.advance(0.2)
    assert sim.partitions[TP("t", 0)].replicas == [0, 2]


def test_produce_rate_above_the_throttle_never_catches_up():
    sim = _tiny(size=1 * MB, rate=2 * MB)
    sim.alter_configs("broker", "0", {"leader.replication.throttled.rate": str(1 * MB)})
    sim.alter_configs("topic", "t", {"leader.replication.throttled.replicas": "*"})
    sim.alter_reassignments({TP("t", 0): (0, 3)})
    sim.advance(3600)
    assert sim.partitions[TP("t", 0)].target is not None
    # The gap grew by 1 MiB/s for an hour; at a net 0.5 MiB/s it closes in just over two hours.
    sim.set_produce_rate(TP("t", 0), 0.5 * MB)
    sim.advance(7100)
    assert sim.partitions[TP("t", 0)].target is not None
    sim.advance(200)
    assert sim.partitions[TP("t", 0)].replicas == [0, 3]


def test_preferred_election_needs_the_preferred_replica_alive_and_in_isr():
    sim = _tiny()
    p = sim.partitions[TP("t", 0)]
    p.leader = 1
    sim.kill_broker(0)
    assert sim.elect_preferred([TP("t", 0)]) == {TP("t", 0): "PREFERRED_LEADER_NOT_AVAILABLE"}
    sim.start_broker(0)
    assert sim.elect_preferred([TP("t", 0)]) == {TP("t", 0): None}
    assert p.leader == 0
    assert sim.elect_preferred([TP("t", 0)]) == {TP("t", 0): "ELECTION_NOT_NEEDED"}


def test_dead_broker_fails_leadership_over_and_stalls_copies_to_it():
    sim = _tiny()
    sim.alter_reassignments({TP("t", 0): (0, 1, 2)})
    sim.kill_broker(2)
    sim.kill_broker(0)
    p = sim.partitions[TP("t", 0)]
    assert p.leader == 1 and 0 not in p.isr
    sim.advance(3600)
    assert p.target is not None and (TP("t", 0), 2) not in sim.replica_sizes([TP("t", 0)])
    assert sim.alter_reassignments({TP("t", 0): None}) == {TP("t", 0): None}
    assert p.replicas == [0, 1] and p.leader == 1


def test_same_admin_interface_over_tcp_and_in_process():
    snap = load_snapshot(SAMPLE)
    sim_admin = SimAdmin(Simulator.from_snapshot(snap))
    with KafkaTestServer(Simulator.from_snapshot(snap)) as server:
        live = LiveAdmin(ConnectionSettings(server.bootstrap_servers, bootstrap_timeout_ms=5000))
        for admin in (sim_admin, live):
            assert isinstance(admin, ClusterAdmin)
            d = admin.describe()
            assert [(p.topic, p.partition, p.replicas, p.leader, p.isr, p.size_bytes) for p in d.partitions] == \
                   [(p.topic, p.partition, p.replicas, p.leader, p.isr, p.size_bytes) for p in snap.partitions]
            assert [(b.id, b.rack, b.alive) for b in d.brokers] == [(b.id, b.rack, b.alive) for b in snap.brokers]
            admin.alter_configs("topic", "topic-001", {"leader.replication.throttled.replicas": "0:1"})
            assert admin.dynamic_configs("topic", "topic-001", ["leader.replication.throttled.replicas", "retention.ms"]) == \
                   {"leader.replication.throttled.replicas": "0:1", "retention.ms": None}
            admin.alter_configs("topic", "topic-001", {"leader.replication.throttled.replicas": None})
            assert admin.describe().topic_configs("topic-001") == {}
            assert admin.alter_reassignments({TP("nope", 0): (1,)}) == {TP("nope", 0): "UNKNOWN_TOPIC_OR_PARTITION"}
            assert admin.alter_reassignments({TP("topic-000", 0): None}) == {TP("topic-000", 0): "NO_REASSIGNMENT_IN_PROGRESS"}
        live.close()


def test_describe_reports_the_threshold_only_where_the_cluster_has_it():
    from dataclasses import replace
    snap = load_snapshot(SAMPLE)
    with_threshold = replace(snap, configs={"leader.imbalance.per.broker.percentage": "15"})
    for s, expected in ((snap, {}), (with_threshold, {"leader.imbalance.per.broker.percentage": "15"})):
        with KafkaTestServer(Simulator.from_snapshot(s)) as server:
            live = LiveAdmin(ConnectionSettings(server.bootstrap_servers, bootstrap_timeout_ms=5000))
            assert live.describe().configs == expected
            live.close()


def test_airflow_extra_and_properties_map_to_kafka_python(tmp_path):
    s = settings_from_airflow_extra({
        "bootstrap.servers": "b1:9093,b2:9093", "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "ops", "sasl.password": "pw-1", "ssl.ca.location": "/etc/ca.pem", "group.id": "ignored"})
    kw = s.kafka_python_kwargs()
    assert kw["bootstrap_servers"] == ["b1:9093", "b2:9093"] and kw["sasl_mechanism"] == "SCRAM-SHA-512"
    assert (kw["sasl_plain_username"], kw["sasl_plain_password"], kw["ssl_cafile"]) == ("ops", "pw-1", "/etc/ca.pem")
    assert "pw-1" not in repr(s) and "pw-1" not in s.describe()
    props = tmp_path / "c.properties"
    props.write_text("# admin\nsecurity.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=/ca.pem\n"
                     "ssl.endpoint.identification.algorithm=\n")
    s = settings_from_properties(props, "b:9093")
    assert (s.security_protocol, s.ssl_cafile, s.ssl_check_hostname) == ("SSL", "/ca.pem", False)
    props.write_text("security.protocol=SSL\nssl.truststore.location=/ts.jks\nssl.truststore.password=pw\n")
    with pytest.raises(ConnectionSettingsError, match=r"ssl.truststore.location /ts.jks: cannot read"):
        settings_from_properties(props, "b:9093")
    with pytest.raises(ConnectionSettingsError, match="sasl.oauthbearer.token.endpoint.url"):
        settings_from_airflow_extra({"bootstrap.servers": "b:1", "sasl.oauthbearer.token.endpoint.url": "x"})
    with pytest.raises(ConnectionSettingsError, match="not HOST:PORT"):
        ConnectionSettings("localhost")


def test_password_never_reaches_the_logs_even_at_debug(caplog):
    with KafkaTestServer(Simulator.from_snapshot(load_snapshot(SAMPLE)), sasl_users={"u": "hunter2-secret"}) as server:
        with caplog.at_level(logging.DEBUG):
            live = LiveAdmin(ConnectionSettings(server.bootstrap_servers, "SASL_PLAINTEXT", "PLAIN", "u", "hunter2-secret",
                                                bootstrap_timeout_ms=5000))
            live.describe()
            live.close()
    assert "Starting KafkaAdminClient" in caplog.text  # the line that prints every argument was emitted...
    assert "hunter2-secret" not in caplog.text  # ...with the password redacted
