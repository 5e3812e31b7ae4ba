"""Connection failures against a real Kafka listener with SASL/PLAIN: the same cause, every time, in seconds.

A one-node sandbox of its own (the session sandbox has PLAINTEXT only), started with `sandbox up`'s
code, a SASL_PLAINTEXT listener and Kafka's StandardAuthorizer (PLAINTEXT clients, the sandbox's own
checks, are super users; alice holds no ACL), and stopped by pid at the end.
"""

from __future__ import annotations

import secrets
import time

import pytest

from kafka_rebalance.cluster.admin import ClusterConnectionError, ClusterError
from kafka_rebalance.cluster.connection import ConnectionSettings
from kafka_rebalance.cluster.failures import FailureKind
from kafka_rebalance.cluster.live import LiveAdmin
from kafka_rebalance.sandbox import cluster

pytestmark = [pytest.mark.kafka, pytest.mark.slow]


@pytest.fixture(scope="module")
def sasl_kafka(tmp_path_factory):
    password = secrets.token_hex(12)
    directory = tmp_path_factory.mktemp("kafka-sasl") / "sandbox"
    sandbox = cluster.up(directory, brokers=1, racks=0, sasl_plain_users={"alice": password},
                         properties={"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                                     "super.users": "User:ANONYMOUS", "allow.everyone.if.no.acl.found": "false"})
    try:
        yield sandbox, f"127.0.0.1:{sandbox.nodes[0].sasl_port}", password
    finally:
        cluster.down(directory)


def _attempt(bootstrap: str, mechanism: str, password: str) -> tuple[ClusterConnectionError, float]:
    started = time.monotonic()
    with pytest.raises(ClusterConnectionError) as info:
        LiveAdmin(ConnectionSettings(bootstrap, "SASL_PLAINTEXT", mechanism, "alice", password, bootstrap_timeout_ms=15000),
                  quiet=True)
    return info.value, time.monotonic() - started


def test_right_password_connects_and_describes(sasl_kafka):
    sandbox, bootstrap, password = sasl_kafka
    admin = LiveAdmin(ConnectionSettings(bootstrap, "SASL_PLAINTEXT", "PLAIN", "alice", password), quiet=True)
    try:
        assert admin.kafka_cluster_id() == sandbox.cluster_uuid
    finally:
        admin.close()


def test_wrong_password_is_bad_credentials_ten_times_in_a_row(sasl_kafka):
    _, bootstrap, _ = sasl_kafka
    kinds, seconds = [], []
    for _ in range(10):
        err, took = _attempt(bootstrap, "PLAIN", "not-the-password")
        kinds.append(err.failure.kind if err.failure else None)
        seconds.append(round(took, 2))
        assert "not-the-password" not in str(err)
    print(f"\nwrong password on real Kafka: seconds to fail {seconds}")
    assert kinds == [FailureKind.BAD_CREDENTIALS] * 10, (kinds, str(err))
    assert str(err) == (f"cannot connect to {bootstrap} over SASL_PLAINTEXT (SASL PLAIN as alice): bad credentials: "
                        "the broker rejected the credentials of user 'alice' (SASL PLAIN)")
    assert max(seconds) < 5, seconds


def test_mechanism_the_listener_does_not_enable(sasl_kafka):
    _, bootstrap, password = sasl_kafka
    err, took = _attempt(bootstrap, "SCRAM-SHA-512", password)
    assert err.failure is not None and err.failure.kind is FailureKind.SASL_MECHANISM, str(err)
    assert took < 5


def test_plaintext_client_on_the_sasl_listener(sasl_kafka):
    _, bootstrap, _ = sasl_kafka
    started = time.monotonic()
    with pytest.raises(ClusterConnectionError) as info:
        LiveAdmin(ConnectionSettings(bootstrap, bootstrap_timeout_ms=15000), quiet=True)
    took = time.monotonic() - started
    print(f"\nPLAINTEXT client on a SASL listener: {info.value} in {took:.2f}s")
    assert info.value.failure is not None and info.value.failure.kind is FailureKind.PEER_CLOSED, str(info.value)
    assert took < 5


def _alice_refused(bootstrap: str, password: str, call) -> ClusterError:
    """What ``call`` on alice's admin client (she holds no ACL) raises."""
    admin = LiveAdmin(ConnectionSettings(bootstrap, "SASL_PLAINTEXT", "PLAIN", "alice", password), quiet=True)
    try:
        with pytest.raises(ClusterError) as info:
            call(admin)
    finally:
        admin.close()
    return info.value


def test_authorization_denied_names_the_call_and_the_resource(sasl_kafka):
    _, bootstrap, password = sasl_kafka
    refused = _alice_refused(bootstrap, password, LiveAdmin.list_reassignments)
    assert str(refused) == (f"{bootstrap}: authorization denied: User:alice may not DESCRIBE on CLUSTER kafka-cluster "
                            "(list partition reassignments needs that ACL; the ACLs per role are in docs/KAFKA.md)")


def test_a_principal_without_describe_on_the_cluster_is_refused_not_given_an_empty_snapshot(sasl_kafka):
    # alice holds no ACL: Kafka answers her metadata and log-dir requests with nothing, not an error, so a
    # snapshot would be an empty, "balanced" cluster. DescribeCluster says which operations she may perform.
    sandbox, bootstrap, password = sasl_kafka
    refused = _alice_refused(bootstrap, password, LiveAdmin.describe)
    assert str(refused) == (
        f"{bootstrap}: authorization denied: User:alice may not DESCRIBE on CLUSTER kafka-cluster (describe the cluster "
        "needs that ACL; the ACLs per role are in docs/KAFKA.md)")
    # the sandbox's own (super user) client still describes it
    su = LiveAdmin(ConnectionSettings(sandbox.bootstrap_servers), quiet=True)
    try:
        assert [b.id for b in su.describe().brokers] == [n.node_id for n in sandbox.nodes]
    finally:
        su.close()
