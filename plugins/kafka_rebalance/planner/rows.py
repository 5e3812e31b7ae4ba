"""Reads and edits of row matrices (one partition per row, its brokers in slots, -1 padded) in the searches' hot paths.

numpy's general indexing is slow on such narrow rows: picking rows by an index or a mask, inserting or deleting
rows, and ``(rows == b).any(axis=1)`` each cost 4-8x what the same work costs on one-dimensional arrays (numpy
2.4: 20 us to pick 2,000 rows of three slots by index against 5 us with ``np.take``; 43 us for the test of 3,000
rows of four slots against 12 us column by column). These helpers do the same work the fast way. The answers are
the same arrays, value for value.
"""

from __future__ import annotations

import numpy as np


def take(rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``rows[idx]`` for an integer index array (a new array)."""
    return np.take(rows, idx, axis=0)


def keep(rows: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``rows[mask]`` for a boolean mask over the rows (a new array)."""
    return np.compress(mask, rows, axis=0)


def holding(rows: np.ndarray, b: int) -> np.ndarray:
    """Per row: does it hold broker ``b``? (``(rows == b).any(axis=1)``, slot by slot.)"""
    hit = np.zeros(len(rows), dtype=bool)
    for j in range(rows.shape[1]):
        hit |= rows[:, j] == b
    return hit


def patched(parts: np.ndarray, columns: tuple[np.ndarray, ...], changed: np.ndarray, wanted: np.ndarray,
            sources: tuple[np.ndarray, ...]) -> tuple[np.ndarray, tuple[np.ndarray, ...]]:  # fmt: skip
    """A sorted list of partitions with per-partition ``columns`` (rows, or one value each), after the partitions
    ``changed`` (sorted, distinct) changed: each is listed if ``wanted`` says so, with its entries read from
    ``sources`` (indexed by partition, one per column) now, and unlisted otherwise. The arrays passed in are never
    changed (an earlier answer may still be in use)."""
    # Few partitions change between two asks: the answer is the old arrays' runs between them, with the changed
    # entries put in or left out, joined once (np.insert and np.delete cost 5-9 us each on their own). A row is one
    # element of a record view, so rows are cut and joined as one-dimensional arrays are.
    picked = changed[wanted]
    flats = [_flat(c) for c in columns]
    fresh = [_flat(take(src, picked)) for src in sources]
    n = len(parts)
    pieces: list[list[np.ndarray]] = [[] for _ in range(len(columns) + 1)]
    start = k = 0
    for p, at, want in zip(changed.tolist(), np.searchsorted(parts, changed).tolist(), wanted.tolist()):
        for out, whole in zip(pieces, (parts, *flats)):
            out.append(whole[start:at])
        start = at + 1 if at < n and parts[at] == p else at  # listed now: its old entry is dropped
        if want:
            for out, new in zip(pieces, (picked, *fresh)):
                out.append(new[k : k + 1])
            k += 1
    for out, whole in zip(pieces, (parts, *flats)):
        out.append(whole[start:])
    joined = [np.concatenate(out) for out in pieces]
    return joined[0], tuple(_unflat(j, c) for j, c in zip(joined[1:], columns))


def _flat(a: np.ndarray) -> np.ndarray:
    """A two-dimensional array as one record per row (a view where it can be); a one-dimensional one as it is."""
    if a.ndim == 1:
        return a
    return np.ascontiguousarray(a).view(np.dtype((np.void, a.shape[1] * a.itemsize))).reshape(len(a))


def _unflat(flat: np.ndarray, like: np.ndarray) -> np.ndarray:
    if like.ndim == 1:
        return flat
    return flat.view(like.dtype).reshape(len(flat), like.shape[1])
