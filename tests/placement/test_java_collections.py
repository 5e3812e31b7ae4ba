"""Java's String.hashCode / compareTo and HashMap iteration order, from their definitions."""

from __future__ import annotations

from kafka_rebalance.placement.java_collections import (
    hashmap_iteration_order,
    java_string_hash,
    sorted_like_java,
)


def test_string_hash_follows_the_javadoc_formula() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("Aa") == java_string_hash("BB") == 65 * 31 + 97
    assert java_string_hash("hello") == 99162322
    # Overflow wraps as a Java int: this well-known string hashes to Integer.MIN_VALUE.
    assert java_string_hash("polygenelubricants") == -(1 << 31)
    # Outside the BMP, Java hashes the two UTF-16 surrogates (U+1F680 = D83D DE80).
    assert java_string_hash("\U0001f680") == 0xD83D * 31 + 0xDE80


def test_sort_is_utf16_order_with_empty_first() -> None:
    # Java puts U+1F680 (surrogate D83D) before U+FF21; Python's code-point order would not.
    assert sorted_like_java(["\uff21", "\U0001f680", None, "a"]) == [None, "a", "\U0001f680", "\uff21"]


def test_hashmap_order_is_bucket_then_insertion() -> None:
    # Small Integer keys hash to themselves: buckets 1, 2, 17 & 15 = 1 (after 1), ... in a 16-bucket table.
    assert hashmap_iteration_order([17, 2, 1], int) == [17, 1, 2]
    # A 13th key exceeds the 0.75 load factor: the table doubles to 32 buckets and 17 moves behind 2.
    keys = [17, 2, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    assert hashmap_iteration_order(keys, int) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 17]
