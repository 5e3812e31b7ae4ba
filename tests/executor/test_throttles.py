"""executor/throttles.py: setting a broker's throttle when the broker may have just died."""

from __future__ import annotations

import pytest

from kafka_rebalance.cluster.admin import FOLLOWER_RATE, ClusterError
from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.cluster.simulator import Simulator
from kafka_rebalance.executor.throttles import set_broker_throttle
from tests.support.clusters import part, snapshot


@pytest.fixture
def admin() -> SimAdmin:
    return SimAdmin(Simulator.from_snapshot(snapshot([1, 2, 3], [part("t", 0, [1, 2])])))


def test_a_live_broker_gets_its_rate(admin: SimAdmin) -> None:
    assert set_broker_throttle(admin, 2, {FOLLOWER_RATE: "1000"}) is True
    assert admin.sim.brokers[2].configs[FOLLOWER_RATE] == "1000"


def test_a_broker_that_died_is_reported_not_raised(admin: SimAdmin) -> None:
    admin.sim.kill_broker(2)
    assert set_broker_throttle(admin, 2, {FOLLOWER_RATE: "1000"}) is False
    assert FOLLOWER_RATE not in admin.sim.brokers[2].configs


def test_a_live_broker_refusing_the_value_is_raised(admin: SimAdmin) -> None:
    # Moves must never run past a throttle that failed on a broker that still answers.
    with pytest.raises(ClusterError, match="not a non-negative integer"):
        set_broker_throttle(admin, 2, {FOLLOWER_RATE: "fast"})
