"""Compiled Java oracles, once per session (each javac run takes a second or two)."""

from __future__ import annotations

import pytest

from tests.placement.oracle import Oracle, compile_oracle, resolve_kafka_lib


@pytest.fixture(scope="session")
def java_random_oracle(tmp_path_factory: pytest.TempPathFactory) -> Oracle:
    return compile_oracle("JavaRandomOracle", tmp_path_factory.mktemp("java-random-oracle"), None)


@pytest.fixture(scope="session")
def adminutils_oracle(tmp_path_factory: pytest.TempPathFactory) -> Oracle:
    """Kafka 4.0.x's AdminUtils (kafka-server-common), resolved once by scripts/kafka-oracle-classpath.sh."""
    lib = resolve_kafka_lib("kafka-oracle-classpath.sh")
    return compile_oracle("AdminUtilsOracle", tmp_path_factory.mktemp("adminutils-oracle"), lib)


@pytest.fixture(scope="session")
def striped_oracle(tmp_path_factory: pytest.TempPathFactory) -> Oracle:
    """kafka-metadata's StripedReplicaPlacer from the pinned Kafka runtime (.kafka/<version>/lib)."""
    lib = resolve_kafka_lib("kafka-classpath.sh")
    return compile_oracle("StripedOracle", tmp_path_factory.mktemp("striped-oracle"), lib)
