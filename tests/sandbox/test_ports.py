"""The sandbox's listener ports: distinct, free, and out of the kernel's ephemeral range."""

from __future__ import annotations

import socket

import pytest

from kafka_rebalance.sandbox import cluster
from kafka_rebalance.sandbox.cluster import _PORT_FLOOR, _ephemeral_range, free_ports


def test_ports_are_distinct_free_and_below_the_ephemeral_range() -> None:
    low, _ = _ephemeral_range()
    ports = free_ports(8)
    assert len(set(ports)) == 8
    if low - _PORT_FLOOR >= 1000:  # (a range starting lower leaves the kernel's own choice)
        assert all(_PORT_FLOOR <= p < low for p in ports), (ports, low)  # outgoing connections never take these
    held = []
    try:
        for p in ports:  # each is free now
            s = socket.socket()
            s.bind(("127.0.0.1", p))
            held.append(s)
    finally:
        for s in held:
            s.close()


def test_a_port_someone_holds_is_never_handed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # Candidates narrowed to 1,200 ports the sandboxes of other test workers never pick (theirs lie below the
    # ephemeral range: holding hundreds of those could take a port one of them probed and is about to bind).
    low, high = _ephemeral_range()
    floor = max(low, high - 1_200)
    if high - floor < 1_000:
        pytest.skip(f"the ephemeral range {low}..{high} leaves no stretch of 1,000 ports to narrow the candidates to")
    monkeypatch.setattr(cluster, "_PORT_FLOOR", floor)
    monkeypatch.setattr(cluster, "_ephemeral_range", lambda: (high, high))
    held = []
    try:
        for p in free_ports(900):  # most of the stretch held
            s = socket.socket()
            s.bind(("127.0.0.1", p))
            held.append(s)
        taken = {s.getsockname()[1] for s in held}
        given = free_ports(50)
        assert all(floor <= p < high for p in given), given
        assert not taken & set(given)
    finally:
        for s in held:
            s.close()
