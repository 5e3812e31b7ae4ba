"""The sandbox's listener ports: distinct, free, and out of the kernel's ephemeral range."""

from __future__ import annotations

import socket

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


def test_a_port_someone_holds_is_never_handed_out() -> None:
    # Hold most of one candidate stretch: none of the ports handed out may be one of them.
    held = []
    try:
        for p in free_ports(200):
            s = socket.socket()
            s.bind(("127.0.0.1", p))
            held.append(s)
        taken = {s.getsockname()[1] for s in held}
        assert not taken & set(free_ports(50))
    finally:
        for s in held:
            s.close()
