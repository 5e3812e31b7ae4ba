"""The sandbox's cluster id follows Kafka's Uuid.randomUuid() rule: never one that starts with '-'."""

from __future__ import annotations

from kafka_rebalance.sandbox.cluster import kafka_uuid


def test_an_id_starting_with_a_dash_is_drawn_again() -> None:
    # 0xF8 = 0b111110_00: the first base64 sextet is 62, which is '-' in the URL-safe alphabet, so
    # `kafka-storage format -t -...` would read the id as an option. Sixteen zero bytes encode as 22 'A's.
    draws = iter([b"\xf8" + b"\x00" * 15, b"\x00" * 16])
    assert kafka_uuid(lambda: next(draws)) == "A" * 22


def test_a_random_id_is_22_url_safe_characters() -> None:
    ids = {kafka_uuid() for _ in range(200)}
    assert len(ids) == 200
    assert all(len(i) == 22 and not i.startswith("-") and set(i) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") for i in ids)
