"""Kafka's own placement code and java.util.Random as oracles, compiled once per session."""

from __future__ import annotations

import pytest

from tests.placement.oracle import Oracle, compile_oracles, resolve_kafka_lib


@pytest.fixture(scope="session")
def oracles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Oracle]:
    # AdminUtils: Kafka 4.0.x (kafka-server-common), resolved once by scripts/kafka-oracle-classpath.sh.
    # StripedReplicaPlacer: kafka-metadata of the pinned runtime (.kafka/<version>/lib).
    return compile_oracles(
        tmp_path_factory.mktemp("placement-oracles"),
        {
            "AdminUtilsOracle": resolve_kafka_lib("kafka-oracle-classpath.sh"),
            "StripedOracle": resolve_kafka_lib("kafka-classpath.sh"),
            "JavaRandomOracle": None,
        },
    )


@pytest.fixture(scope="session")
def java_random_oracle(oracles: dict[str, Oracle]) -> Oracle:
    return oracles["JavaRandomOracle"]


@pytest.fixture(scope="session")
def adminutils_oracle(oracles: dict[str, Oracle]) -> Oracle:
    return oracles["AdminUtilsOracle"]


@pytest.fixture(scope="session")
def striped_oracle(oracles: dict[str, Oracle]) -> Oracle:
    return oracles["StripedOracle"]
