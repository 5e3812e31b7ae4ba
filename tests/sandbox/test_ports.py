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


def test_a_port_taken_between_the_probe_and_the_bind_starts_the_nodes_again_on_new_ports(tmp_path, monkeypatch) -> None:
    # Another process binds a port `free_ports` found free before the node binds it (seen with three test workers
    # starting sandboxes at once): the node dies with "Address already in use", and `up` starts again on new ports.
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    taken = held.getsockname()[1]
    probe = cluster.free_ports
    calls: list[list[int]] = []

    def racing(count: int) -> list[int]:
        ports = probe(count)
        calls.append(ports)
        return [taken, *ports[1:]] if len(calls) == 1 else ports  # node 1's listener port, in the first start only

    monkeypatch.setattr(cluster, "free_ports", racing)
    said: list[str] = []
    directory = tmp_path / "sandbox"
    try:
        sandbox = cluster.up(directory, brokers=1, racks=0, progress=said.append)
        try:
            assert len(calls) == 2
            assert sandbox.nodes[0].port == calls[1][0] != taken
            assert any("starting again on new ports (attempt 2 of 3)" in line for line in said), said
            _, statuses = cluster.status(directory)
            assert [(s.alive, s.registered) for s in statuses] == [(True, True)]
            assert sorted(p.name for p in directory.iterdir()) == ["node-1", "sandbox.json"]  # the first start's files gone
        finally:
            cluster.down(directory)
    finally:
        held.close()
