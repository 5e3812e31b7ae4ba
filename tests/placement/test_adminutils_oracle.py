"""Differential test: `assign` / `add-partitions` against Kafka 4.0.x's own AdminUtils.

Thousands of seeded random cases go through ONE JVM running org.apache.kafka.admin.AdminUtils
(kafka-server-common 4.0.2, the last line that has it). Placements must be equal byte for byte
(our CLI's JSON against the harness's), errors must have the same text and the same kind.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from kafka_rebalance.assignment import BrokerMetadata, assign_replicas_to_brokers, create_new_partitions_assignment
from kafka_rebalance.errors import AssignmentError
from tests.placement.oracle import Oracle, broker_token
from tests.support.cli_inprocess import run_cli

SEED = 20240612
ASSIGN_CASES = 2400
GROW_CASES = 600
CLI_CASES = 500  # of the assign cases, also run through the CLI (a few ms each)
# Plain names, names that sort differently as UTF-16 than as code points (U+FF21 vs U+1F680),
# and names with characters Java and Python hash and compare differently if done naively.
RACK_NAMES = ["rack-a", "rack-b", "rack-c", "us-east-1a", "us-east-1b", "eu-west-1c", "Z", "a", "r10", "r9",
              "\u00e4-rack", "\uff21", "\U0001f680", "rack:colon"]


@dataclass(frozen=True)
class AssignCase:
    id: int
    brokers: tuple[BrokerMetadata, ...]  # in the order Kafka is given them
    partitions: int
    rf: int
    start_index: int
    start_partition_id: int

    def line(self) -> str:
        token = broker_token((b.id, b.rack, False) for b in self.brokers)
        return f"{self.id} assign {self.partitions} {self.rf} {self.start_index} {self.start_partition_id} {token}"

    @property
    def sorted_by_id(self) -> bool:
        return [b.id for b in self.brokers] == sorted(b.id for b in self.brokers)


def _brokers(rng: random.Random, n: int) -> list[BrokerMetadata]:
    ids = list(range(n)) if rng.random() < 0.4 else rng.sample(range(1000), n)
    n_racks = rng.randint(0, 6)
    names = rng.sample(RACK_NAMES, n_racks)
    brokers = [BrokerMetadata(i, rng.choice(names) if names else None) for i in sorted(ids)]
    if names and n > 1 and rng.random() < 0.05:
        # Some brokers without a rack: Kafka refuses rack-aware placement.
        brokers = [BrokerMetadata(b.id, None) if rng.random() < 0.3 else b for b in brokers]
    return brokers


def _assign_cases() -> list[AssignCase]:
    rng = random.Random(SEED)
    cases = []
    for case_id in range(ASSIGN_CASES):
        n = rng.randint(1, 40)
        brokers = _brokers(rng, n)
        if rng.random() < 0.2:
            rng.shuffle(brokers)  # Kafka keeps the caller's order for rack-unaware placement
        roll = rng.random()
        if roll < 0.04:
            rf = rng.choice([0, -1])
        elif roll < 0.08:
            rf = n + rng.randint(1, 3)
        else:
            rf = rng.randint(1, min(n, 5))
        partitions = rng.randint(1, 200) if rng.random() > 0.02 else rng.choice([0, -4])
        start_index = rng.randint(0, 2 * n)
        start_partition_id = rng.choice([-1, 0, rng.randint(1, 300)])
        cases.append(AssignCase(case_id, tuple(brokers), partitions, rf, start_index, start_partition_id))
    return cases


def _ours(case: AssignCase) -> str:
    try:
        got = assign_replicas_to_brokers(
            case.brokers, case.partitions, case.rf, start_index=case.start_index, start_partition_id=case.start_partition_id
        )
    except AssignmentError as e:
        return f"ERR {e.kafka_exception} {e}"
    return "OK " + json.dumps({str(p): r for p, r in sorted(got.items())})


def _ours_cli(case: AssignCase) -> str:
    spec = ",".join(str(b.id) if b.rack is None else f"{b.id}:{b.rack}" for b in case.brokers)
    r = run_cli("assign", "--brokers", spec, "--partitions", str(case.partitions),
                "--replication-factor", str(case.rf), "--start-index", str(case.start_index),
                "--start-partition-id", str(case.start_partition_id))
    return "OK " + r.stdout.rstrip("\n") if r.code == 0 else r.stderr.rstrip("\n")


def _answers(oracle: Oracle, lines: list[str]) -> dict[int, str]:
    out = oracle.ask(lines)
    answers = {}
    for line in out:
        case_id, _, answer = line.partition(" ")
        answers[int(case_id)] = answer
    assert len(answers) == len(lines), f"oracle answered {len(answers)} of {len(lines)} cases"
    return answers


def test_assign_equals_adminutils(adminutils_oracle: Oracle) -> None:
    cases = _assign_cases()
    kafka = _answers(adminutils_oracle, [c.line() for c in cases])
    mismatches = [(c, kafka[c.id], _ours(c)) for c in cases if kafka[c.id] != _ours(c)]
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[0]}"

    # The CLI, byte for byte (stdout JSON, or the one error line), where its broker order is Kafka's.
    cli_cases = [c for c in cases if c.sorted_by_id][:CLI_CASES]
    cli_mismatches = []
    for c in cli_cases:
        expected = kafka[c.id]
        if expected.startswith("ERR "):
            expected = "error: " + expected.split(" ", 2)[2]
        if _ours_cli(c) != expected:
            cli_mismatches.append((c, expected, _ours_cli(c)))
    assert not cli_mismatches, f"{len(cli_mismatches)} CLI runs differ; first: {cli_mismatches[0]}"

    # The cases really cover what they claim to.
    answers = list(kafka.values())
    rack_aware_ok = [c for c in cases if kafka[c.id].startswith("OK") and all(b.rack for b in c.brokers)]
    errors = {a.split(" ", 2)[1] for a in answers if a.startswith("ERR")}
    print(f"\nAdminUtils differential: {len(cases)} assign cases ({len(cli_cases)} also through the CLI), "
          f"{len(rack_aware_ok)} rack-aware placements, error kinds {sorted(errors)}")
    assert len(rack_aware_ok) > 1000 and len(cli_cases) == CLI_CASES
    assert errors == {"InvalidPartitionsException", "InvalidReplicationFactorException", "AdminOperationException"}


def test_add_partitions_equals_adminutils(adminutils_oracle: Oracle) -> None:
    """createNewPartitionsAssignment: AdminUtils started at partition 0's leader, numbered after the existing ones."""
    rng = random.Random(SEED + 1)
    cases = []
    for case_id in range(GROW_CASES):
        n = rng.randint(1, 40)
        brokers = [b for b in _brokers(rng, n)]
        rf = rng.randint(1, min(n, 5)) if rng.random() > 0.05 else n + 1
        existing_count = rng.randint(1, 60)
        # Partition 0's leader need not be a live broker (it may have been decommissioned).
        leader = rng.choice([b.id for b in brokers]) if rng.random() < 0.8 else rng.randint(0, 1100)
        existing = {p: [leader] if p == 0 else [] for p in range(existing_count)}
        existing[0] = [leader] + [x for x in range(2000, 2000 + rf - 1)]
        total = existing_count + rng.randint(1, 200)
        cases.append((case_id, brokers, existing, total))
    lines = [
        f"{cid} grow {len(ex)} {ex[0][0]} {len(ex[0])} {total} {broker_token((b.id, b.rack, False) for b in bs)}"
        for cid, bs, ex, total in cases
    ]
    kafka = _answers(adminutils_oracle, lines)
    mismatches = []
    for cid, bs, ex, total in cases:
        try:
            got = create_new_partitions_assignment("t", ex, bs, total)
            ours = "OK " + json.dumps({str(p): r for p, r in sorted(got.items())})
        except AssignmentError as e:
            ours = f"ERR {e.kafka_exception} {e}"
        if ours != kafka[cid]:
            mismatches.append((cid, kafka[cid], ours))
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first: {mismatches[0]}"
    print(f"\nAdminUtils differential: {len(cases)} add-partitions cases")
