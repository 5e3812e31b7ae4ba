"""The bits of Java's collections whose ORDER Kafka's placers depend on.

``StripedReplicaPlacer`` draws random numbers while walking a ``HashMap<Optional<String>, Rack>``,
so which rack consumes which draw is decided by ``HashMap``'s iteration order: buckets in index
order, each bucket in insertion order, the table doubling as it fills. Racks are sorted with
``String.compareTo``, which compares UTF-16 code units, not code points.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

from kafka_rebalance.errors import AssignmentError

K = TypeVar("K", bound=Hashable)

_DEFAULT_CAPACITY = 16
_TREEIFY_THRESHOLD = 8  # a bucket reaching 9 entries is turned into a tree (or the table grows)
_MIN_TREEIFY_CAPACITY = 64


def java_string_hash(text: str) -> int:
    """``String.hashCode()``: s[0]*31^(n-1) + ... over UTF-16 code units, as a Java int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_optional_string_hash(value: str | None) -> int:
    """``Optional<String>.hashCode()``: the string's hash, 0 when empty."""
    return 0 if value is None else java_string_hash(value)


def java_string_sort_key(text: str) -> bytes:
    """A key that orders strings as ``String.compareTo`` does (UTF-16 code units, shorter prefix first)."""
    return text.encode("utf-16-be")


def _spread(h: int) -> int:
    """``HashMap.hash``: h ^ (h >>> 16), on the unsigned 32-bit pattern."""
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def hashmap_iteration_order(keys: Iterable[K], hash_code: Callable[[K], int]) -> list[K]:
    """Order in which ``new HashMap<>()`` filled by ``put`` of ``keys`` (distinct, in this order) iterates.

    Raises ``AssignmentError`` in the one case not reproduced: a bucket turned into a red-black
    tree (9 keys in one bucket of a table of 64 or more), whose order Java derives from the tree.
    """
    capacity = 0
    threshold = 0
    table: list[list[K]] = []
    hashes: dict[K, int] = {}
    size = 0

    def resize() -> None:
        nonlocal capacity, threshold, table
        if capacity == 0:
            capacity, threshold = _DEFAULT_CAPACITY, int(_DEFAULT_CAPACITY * 0.75)
        else:
            capacity, threshold = capacity * 2, threshold * 2
        # Splitting a bucket keeps its entries' relative order, as HashMap.resize does.
        new_table: list[list[K]] = [[] for _ in range(capacity)]
        for bucket in table:
            for key in bucket:
                new_table[hashes[key] & (capacity - 1)].append(key)
        table = new_table

    for key in keys:
        if key in hashes:
            continue
        if capacity == 0:
            resize()
        hashes[key] = _spread(hash_code(key))
        bucket = table[hashes[key] & (capacity - 1)]
        bucket.append(key)
        if len(bucket) > _TREEIFY_THRESHOLD:
            if capacity < _MIN_TREEIFY_CAPACITY:
                resize()
            else:
                raise AssignmentError(
                    f"{len(bucket)} rack names fall into one bucket of Java's HashMap "
                    f"({sorted(map(str, bucket))}); Kafka orders them through a red-black tree, which is not reproduced"
                )
        size += 1
        if size > threshold:
            resize()
    return [key for bucket in table for key in bucket]


def sorted_like_java(names: Sequence[str | None]) -> list[str | None]:
    """Kafka's ``OptionalStringComparator``: empty first, then ``String.compareTo`` order."""
    return sorted(names, key=lambda n: (n is not None, java_string_sort_key(n) if n is not None else b""))
