"""The ACL knowledge in cluster/failures.py as pure functions: role lists, what they imply, and the denial line
an authorization error code becomes (on a real authorizer: tests/real_kafka/test_acls_on_real_kafka.py)."""

from __future__ import annotations

import kafka.errors as kafka_errors

from kafka_rebalance.cluster.failures import (
    ALTER_CLUSTER,
    ALTER_TOPIC_CONFIGS,
    Role,
    denial,
    effective_acls,
    role_acls,
)


def _names(acls) -> set[str]:
    return {str(a) for a in acls}


def test_execute_covers_everything_gather_needs_and_plan_needs_nothing():
    assert _names(role_acls(Role.GATHER)) == {"DESCRIBE on CLUSTER", "DESCRIBE_CONFIGS on CLUSTER", "DESCRIBE on TOPIC",
                                              "DESCRIBE_CONFIGS on TOPIC"}
    assert _names(effective_acls(Role.EXECUTE)) == {
        "ALTER on CLUSTER", "ALTER_CONFIGS on CLUSTER", "DESCRIBE on TOPIC", "ALTER_CONFIGS on TOPIC",
        "DESCRIBE on CLUSTER", "DESCRIBE_CONFIGS on CLUSTER", "DESCRIBE_CONFIGS on TOPIC"}
    assert role_acls(Role.PLAN) == () and effective_acls(Role.PLAN) == ()


def test_an_error_code_becomes_one_line_naming_operation_and_resource():
    # A per-resource error arrives as a code; kafka-python maps it to the class, never raised.
    refused = denial(kafka_errors.for_code(29), "User:alice", "alter topic t1 configs", ALTER_TOPIC_CONFIGS, "t1")
    assert refused is not None and refused.line() == (
        "authorization denied: User:alice may not ALTER_CONFIGS on TOPIC t1 (alter topic t1 configs needs that ACL; "
        "the ACLs per role are in docs/KAFKA.md)")
    cluster = denial(kafka_errors.ClusterAuthorizationFailedError("x"), "User:bob", "preferred leader election", ALTER_CLUSTER)
    assert cluster is not None and cluster.line() == (
        "authorization denied: User:bob may not ALTER on CLUSTER kafka-cluster (preferred leader election needs that "
        "ACL; the ACLs per role are in docs/KAFKA.md)")


def test_a_refusal_of_another_resource_type_does_not_claim_the_operation():
    refused = denial(kafka_errors.TopicAuthorizationFailedError, "User:alice", "elect", ALTER_CLUSTER)
    assert refused is not None and refused.line() == (
        "authorization denied: User:alice may not act on TOPIC (elect needs that ACL; the ACLs per role are in "
        "docs/KAFKA.md)")


def test_other_errors_are_no_denial():
    assert denial(kafka_errors.NoError, "User:alice", "x", ALTER_CLUSTER) is None
    assert denial(kafka_errors.UnknownTopicOrPartitionError(), "User:alice", "x", ALTER_CLUSTER) is None
