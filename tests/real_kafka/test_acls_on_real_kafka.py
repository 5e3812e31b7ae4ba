"""The least-privilege ACLs of docs/KAFKA.md on Kafka's StandardAuthorizer: each role's list is enough, and
each of its ACLs is needed (removed, the command fails with one line naming the operation and the resource,
before it changed anything).

One sandbox for the module: two combined KRaft nodes (a move needs a second broker; one node would leave
execute nothing to do), a SASL_PLAINTEXT listener for alice beside PLAINTEXT, whose clients (the sandbox's
own checks and this test's ACL changes) are super users. Between cases alice's ACLs are set through the
admin API and waited for on every node. Expected lines and ACL lists are written out here, not taken from
the code under test.
"""

from __future__ import annotations

import json
import re
import secrets
import time

import pytest
from kafka.admin import (
    ACL,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ConfigResource,
    ConfigResourceType,
    KafkaAdminClient,
    NewTopic,
    ResourcePattern,
    ResourceType,
)
from kafka.protocol.admin import DescribeAclsRequest

from kafka_rebalance.cluster.admin import BROKER, TOPIC, TP, ClusterDenied
from kafka_rebalance.cluster.connection import ConnectionSettings
from kafka_rebalance.cluster.failures import Role, role_acls
from kafka_rebalance.cluster.live import LiveAdmin
from kafka_rebalance.sandbox import cluster
from kafka_rebalance.snapshot import load_snapshot
from tests.support.cli_inprocess import run_cli
from tests.support.kafka import ROOT, cli, disk_limit_args, final_targets, wait_for

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

TOPIC_NAME = "acl-t1"
PRINCIPAL = "User:alice"
DOCS = "the ACLs per role are in docs/KAFKA.md"
# (operation, resource type, resource name), as kafka-acls.sh spells them.
GATHER = (("DESCRIBE", "CLUSTER", "kafka-cluster"), ("DESCRIBE_CONFIGS", "CLUSTER", "kafka-cluster"),
          ("DESCRIBE", "TOPIC", "*"), ("DESCRIBE_CONFIGS", "TOPIC", "*"))
EXECUTE = (("ALTER", "CLUSTER", "kafka-cluster"), ("ALTER_CONFIGS", "CLUSTER", "kafka-cluster"),
           ("DESCRIBE", "TOPIC", "*"), ("ALTER_CONFIGS", "TOPIC", "*"))
THROTTLES = ("leader.replication.throttled.rate", "follower.replication.throttled.rate",
             "leader.replication.throttled.replicas", "follower.replication.throttled.replicas")


def _acl(entry: tuple[str, str, str]) -> ACL:
    op, kind, name = entry
    return ACL(PRINCIPAL, "*", ACLOperation[op], ACLPermissionType.ALLOW,
               ResourcePattern(ResourceType[kind], name, ACLResourcePatternType.LITERAL))


def _alices_acls(su: KafkaAdminClient, node_id: int) -> set[tuple[str, str, str]]:
    """alice's ACLs as node ``node_id``'s authorizer holds them (each node applies the metadata log itself)."""
    request = DescribeAclsRequest(resource_type_filter=ResourceType.ANY, resource_name_filter=None,
                                  pattern_type_filter=ACLResourcePatternType.ANY, principal_filter=PRINCIPAL,
                                  host_filter=None, operation=ACLOperation.ANY, permission_type=ACLPermissionType.ANY)
    response = su._manager.run(su._manager.send, request, node_id)
    return {(ACLOperation(a.operation).name, ResourceType(r.resource_type).name, r.resource_name)
            for r in response.resources for a in r.acls}


@pytest.fixture(scope="module")
def acl_kafka(tmp_path_factory):
    password = secrets.token_hex(12)
    directory = tmp_path_factory.mktemp("kafka-acl") / "sandbox"
    sandbox = cluster.up(directory, brokers=2, racks=0, sasl_plain_users={"alice": password},
                         properties={"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
                                     "super.users": "User:ANONYMOUS", "allow.everyone.if.no.acl.found": "false"})
    su = KafkaAdminClient(bootstrap_servers=sandbox.bootstrap_servers, request_timeout_ms=30000)
    try:
        # Both partitions on broker 1: the plan moves one to broker 2. A dynamic topic and broker config show
        # that gather read configs (a refused DescribeConfigs used to read as "no config").
        su.create_topics([NewTopic(TOPIC_NAME, replica_assignments={0: [1], 1: [1]},
                                   topic_configs={"retention.ms": "86400000"})])
        su.alter_configs([ConfigResource(ConfigResourceType.BROKER, "1", {"max.connections": "100000"})],
                         raise_on_unknown=False, incremental=True)
        wait_for(lambda: len(su.describe_topics([TOPIC_NAME])[0]["partitions"]) == 2, 30, "the topic's partitions")
        properties = directory.parent / "alice.properties"
        properties.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                              "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                              f'username="alice" password="{password}";\n')
        yield sandbox, su, f"127.0.0.1:{sandbox.nodes[0].sasl_port}", password, properties
    finally:
        su.close()
        cluster.down(directory)


def grant(acl_kafka, entries) -> None:
    """alice holds exactly ``entries``, on every node's authorizer."""
    sandbox, su, *_ = acl_kafka
    wanted = set(entries)
    held = _alices_acls(su, sandbox.nodes[0].node_id)
    if held - wanted:
        su.delete_acls([_acl(e) for e in sorted(held - wanted)])
    if wanted - held:
        su.create_acls([_acl(e) for e in sorted(wanted - held)])
    for node in sandbox.nodes:
        wait_for(lambda n=node.node_id: _alices_acls(su, n) == wanted, 30, f"alice's ACLs on node {node.node_id}")


def cluster_state(su: KafkaAdminClient) -> dict:
    """What a refused command must leave as it was: replicas, reassignments and throttle configs (super user's view)."""
    topics = {(t["name"], p["partition_index"]): tuple(p["replica_nodes"])
              for t in su.describe_topics([TOPIC_NAME]) for p in t["partitions"]}
    configs = su.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1"),
                                   ConfigResource(ConfigResourceType.BROKER, "2"),
                                   ConfigResource(ConfigResourceType.TOPIC, TOPIC_NAME)], config_filter="modified")
    throttles = {f"{kind} {name}": {k: v["value"] for k, v in cfg.items() if k in THROTTLES}
                 for kind, by_name in configs.items() for name, cfg in by_name.items()}
    return {"replicas": topics, "reassigning": sorted(map(str, su.list_partition_reassignments())), "throttles": throttles}


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def test_docs_list_the_roles_acls_as_tested_and_as_the_code_checks():
    """docs/KAFKA.md's kafka-acls.sh commands, per role, are the lists this module grants and removes."""
    text = (ROOT / "docs" / "KAFKA.md").read_text()
    documented: dict[str, set[tuple[str, str, str]]] = {}
    for role, block in re.findall(r"^#### Role `(\w+)`.*?\n```sh\n(.*?)```", text, re.S | re.M):
        found = documented.setdefault(role, set())
        for command in block.replace("\\\n", " ").splitlines():
            if "kafka-acls.sh" not in command:
                continue
            ops = re.findall(r"--operation (\w+)", command)
            if "--cluster" in command:
                found |= {(op, "CLUSTER", "kafka-cluster") for op in ops}
            else:
                name = re.search(r"--topic '([^']+)'", command)
                assert name is not None, command
                found |= {(op, "TOPIC", name.group(1)) for op in ops}
    assert documented == {"gather": set(GATHER), "plan": set(), "execute": set(EXECUTE)}
    code = {role.value: {(a.operation.value, a.resource_type.value, "kafka-cluster" if a.resource_type.value == "CLUSTER"
                          else "*") for a in role_acls(role)} for role in Role}
    assert code == documented


@pytest.fixture(scope="module")
def gathered(acl_kafka, tmp_path_factory):
    """alice's snapshot, holding the gather role's ACLs only."""
    sandbox, su, bootstrap, _, properties = acl_kafka
    grant(acl_kafka, GATHER)
    out = tmp_path_factory.mktemp("acl-gather") / "snap.json"
    done = cli("gather", "--bootstrap-server", bootstrap, "--command-config", str(properties), "--cluster-id", "acl",
               "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_the_gather_role_gathers(gathered):
    snap = load_snapshot(gathered)
    assert {(p.topic, p.partition): p.replicas for p in snap.partitions} == {(TOPIC_NAME, 0): (1,), (TOPIC_NAME, 1): (1,)}
    assert snap.topics[TOPIC_NAME]["configs"] == {"retention.ms": "86400000"}
    assert {b.id: b.configs.get("max.connections") for b in snap.brokers} == {1: "100000", 2: None}
    assert [len(b.log_dirs) for b in snap.brokers] == [1, 1]


GATHER_DENIALS = {
    ("DESCRIBE", "CLUSTER", "kafka-cluster"):
        "may not DESCRIBE on CLUSTER kafka-cluster (describe the cluster needs that ACL",
    ("DESCRIBE_CONFIGS", "CLUSTER", "kafka-cluster"):
        "may not DESCRIBE_CONFIGS on CLUSTER kafka-cluster (describe the cluster needs that ACL",
    ("DESCRIBE", "TOPIC", "*"):
        "may not DESCRIBE on TOPIC * (describe the cluster's topics needs that ACL",
    ("DESCRIBE_CONFIGS", "TOPIC", "*"):
        f"may not DESCRIBE_CONFIGS on TOPIC {TOPIC_NAME} (describe topic {TOPIC_NAME} configs needs that ACL",
}


@pytest.mark.parametrize("removed", GATHER, ids=lambda e: f"{e[0]}-{e[1]}")
def test_gather_without_one_of_its_acls_names_it(acl_kafka, tmp_path, removed):
    sandbox, su, bootstrap, _, properties = acl_kafka
    grant(acl_kafka, [e for e in GATHER if e != removed])
    out = tmp_path / "snap.json"
    started = time.monotonic()
    done = cli("gather", "--bootstrap-server", bootstrap, "--command-config", str(properties), "--cluster-id", "acl",
               "--out", str(out))
    line = one_line(done.stderr)
    print(f"\ngather without {removed[0]} on {removed[1]} {removed[2]}: {line} ({time.monotonic() - started:.1f}s)")
    assert done.returncode == 2 and line == f"error: {bootstrap}: authorization denied: {PRINCIPAL} {GATHER_DENIALS[removed]}; {DOCS})"
    assert not out.exists()


@pytest.fixture(scope="module")
def approved_plan(gathered):
    """The plan role needs no ACL: plan, validate and approve read alice's snapshot and never connect. The plan
    moves one partition to broker 2."""
    plan_dir = gathered.parent / "plan"
    # In-process (the same commands, without three interpreter starts): no cluster is involved.
    for args in (("plan", "--snapshot", str(gathered), "--out", str(plan_dir), "--throttle", str(50 * 1024 * 1024),
                  *disk_limit_args()),
                 ("validate", "--plan", str(plan_dir), "--snapshot", str(gathered)),
                 ("approve", "--plan", str(plan_dir), "--by", "real-kafka-test")):
        done = run_cli(*args)
        assert done.code == 0, (args[0], done.stderr)
    manifest = json.loads((plan_dir / "plan.json").read_text())
    assert manifest["summary"]["replica_moves"] == 1, manifest["summary"]
    return plan_dir


EXECUTE_DENIALS = {
    ("ALTER", "CLUSTER", "kafka-cluster"): "may not ALTER on CLUSTER kafka-cluster (execute needs that ACL",
    ("ALTER_CONFIGS", "CLUSTER", "kafka-cluster"): "may not ALTER_CONFIGS on CLUSTER kafka-cluster (execute needs that ACL",
    ("DESCRIBE", "TOPIC", "*"): f"may not DESCRIBE on TOPIC {TOPIC_NAME} (execute needs that ACL",
    ("ALTER_CONFIGS", "TOPIC", "*"): f"may not ALTER_CONFIGS on TOPIC {TOPIC_NAME} (execute needs that ACL",
}


@pytest.mark.parametrize("removed", EXECUTE, ids=lambda e: f"{e[0]}-{e[1]}")
def test_execute_without_one_of_its_acls_names_it_before_changing_anything(acl_kafka, approved_plan, removed):
    sandbox, su, bootstrap, _, properties = acl_kafka
    grant(acl_kafka, [e for e in EXECUTE if e != removed])
    before = cluster_state(su)
    started = time.monotonic()
    done = cli("execute", "--plan", str(approved_plan), "--bootstrap-server", bootstrap, "--command-config",
               str(properties), "--poll-interval", "1")
    line = one_line(done.stderr)
    print(f"\nexecute without {removed[0]} on {removed[1]} {removed[2]}: {line} ({time.monotonic() - started:.1f}s)")
    assert done.returncode == 2 and line == f"error: {bootstrap}: authorization denied: {PRINCIPAL} {EXECUTE_DENIALS[removed]}; {DOCS})"
    assert cluster_state(su) == before
    assert not (approved_plan / "ledger.json").exists()


# Each call refused by Kafka itself (not by the check before execute): a per-resource config error, a
# per-partition election error, a whole request refused, and a topic Metadata refuses by name.
CALLS = {
    "alter topic configs": (EXECUTE, ("ALTER_CONFIGS", "TOPIC", "*"),
                            lambda a: a.alter_configs(TOPIC, TOPIC_NAME, {THROTTLES[3]: "0:2"}),
                            f"ALTER_CONFIGS on TOPIC {TOPIC_NAME} (alter topic {TOPIC_NAME} configs"),
    "alter broker configs": (EXECUTE, ("ALTER_CONFIGS", "CLUSTER", "kafka-cluster"),
                             lambda a: a.alter_configs(BROKER, "1", {THROTTLES[1]: "1000"}),
                             "ALTER_CONFIGS on CLUSTER kafka-cluster (alter broker 1 configs"),
    "elect leaders": (EXECUTE, ("ALTER", "CLUSTER", "kafka-cluster"),
                      lambda a: a.elect_preferred([TP(TOPIC_NAME, 0)]),
                      "ALTER on CLUSTER kafka-cluster (preferred leader election"),
    "alter reassignments": (EXECUTE, ("ALTER", "CLUSTER", "kafka-cluster"),
                            lambda a: a.alter_reassignments({TP(TOPIC_NAME, 0): (2,)}),
                            "ALTER on CLUSTER kafka-cluster (alter partition reassignments"),
    "describe broker configs": (GATHER, ("DESCRIBE_CONFIGS", "CLUSTER", "kafka-cluster"),
                                lambda a: a.dynamic_configs(BROKER, "1", THROTTLES[:2]),
                                "DESCRIBE_CONFIGS on CLUSTER kafka-cluster (describe broker 1 configs"),
    "describe topic configs": (GATHER, ("DESCRIBE_CONFIGS", "TOPIC", "*"),
                               lambda a: a.dynamic_configs(TOPIC, TOPIC_NAME, THROTTLES[2:]),
                               f"DESCRIBE_CONFIGS on TOPIC {TOPIC_NAME} (describe topic {TOPIC_NAME} configs"),
    "list reassignments": (GATHER, ("DESCRIBE", "CLUSTER", "kafka-cluster"), lambda a: a.list_reassignments(),
                           "DESCRIBE on CLUSTER kafka-cluster (list partition reassignments"),
    "describe partitions": (GATHER, ("DESCRIBE", "TOPIC", "*"), lambda a: a.partitions([TP(TOPIC_NAME, 0)]),
                            f"DESCRIBE on TOPIC {TOPIC_NAME} (describe topics"),
}


@pytest.mark.parametrize("case", sorted(CALLS))
def test_a_call_kafka_refuses_is_one_denial_naming_operation_and_resource(acl_kafka, case):
    sandbox, su, bootstrap, password, _ = acl_kafka
    role, removed, call, expected = CALLS[case]
    grant(acl_kafka, [e for e in role if e != removed])
    before = cluster_state(su)
    admin = LiveAdmin(ConnectionSettings(bootstrap, "SASL_PLAINTEXT", "PLAIN", "alice", password), quiet=True)
    try:
        with pytest.raises(ClusterDenied) as refused:
            call(admin)
    finally:
        admin.close()
    print(f"\n{case} without {removed[0]} on {removed[1]} {removed[2]}: {refused.value}")
    assert str(refused.value) == f"{bootstrap}: authorization denied: {PRINCIPAL} may not {expected} needs that ACL; {DOCS})"
    assert cluster_state(su) == before


def test_the_execute_role_gathers_and_executes(acl_kafka, approved_plan, tmp_path):
    sandbox, su, bootstrap, _, properties = acl_kafka
    grant(acl_kafka, EXECUTE)
    out = tmp_path / "snap.json"
    gathered = cli("gather", "--bootstrap-server", bootstrap, "--command-config", str(properties), "--cluster-id", "acl",
                   "--out", str(out))
    assert gathered.returncode == 0, gathered.stderr
    assert len(load_snapshot(out).partitions) == 2
    done = cli("execute", "--plan", str(approved_plan), "--bootstrap-server", bootstrap, "--command-config",
               str(properties), "--poll-interval", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["status"] == "complete"
    after = cluster_state(su)
    assert sorted(after["replicas"].values()) == [(1,), (2,)], after  # one partition moved to broker 2
    assert final_targets(approved_plan).items() <= after["replicas"].items()
    assert after["reassigning"] == [] and after["throttles"] == {"broker 1": {}, "broker 2": {}, f"topic {TOPIC_NAME}": {}}
    verified = cli("verify", "--plan", str(approved_plan), "--bootstrap-server", bootstrap, "--command-config",
                   str(properties))
    assert verified.returncode == 0, verified.stderr


def test_the_gather_role_samples_rates_and_says_why_it_could_not_read_the_consumer_groups(acl_kafka, tmp_path):
    """A group a super user committed: alice may list it (DESCRIBE on the cluster) but not read its offsets (no ACL
    on the group). Her sampled gather still succeeds, measures the produce rates, and says why consumer traffic is
    not measured instead of failing or recording none as zero. Last in the module: the commit creates
    __consumer_offsets, whose partitions every later gather of the module would list."""
    from kafka import KafkaConsumer, TopicPartition
    from kafka.structs import OffsetAndMetadata

    sandbox, su, bootstrap, _, properties = acl_kafka
    grant(acl_kafka, GATHER)
    group = "acl-readers"
    consumer = KafkaConsumer(bootstrap_servers=sandbox.bootstrap_servers, group_id=group, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition(TOPIC_NAME, 0)])
        consumer.commit({TopicPartition(TOPIC_NAME, 0): OffsetAndMetadata(0, "", -1)})
    finally:
        consumer.close()
    out = tmp_path / "sampled.json"
    try:
        done = cli("gather", "--bootstrap-server", bootstrap, "--command-config", str(properties), "--cluster-id", "acl",
                   "--out", str(out), "--rate-window", "1")
    finally:
        su.delete_groups([group])
    assert done.returncode == 0, done.stderr
    raw = json.loads(out.read_text())
    note = raw["metrics"]["bytes_out"]
    assert note == ("not measured: reading consumer groups was refused: authorization denied: User:alice may not DESCRIBE on "
                    "GROUP (fetch consumer group offsets needs that ACL; the ACLs per role are in docs/KAFKA.md) (use --metrics "
                    "prometheus=URL)"), note
    ours = [p for p in raw["partitions"] if p["topic"] == TOPIC_NAME]
    assert len(ours) == 2 and all(p["bytes_in_per_sec"] == 0.0 and p.get("bytes_out_per_sec") is None for p in ours), ours
