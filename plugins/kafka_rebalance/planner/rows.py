"""Reads of row matrices (one partition per row, its brokers in slots, -1 padded) in the searches' hot paths.

numpy's general indexing is slow on such narrow rows: picking rows by an index or a mask, and
``(rows == b).any(axis=1)`` each cost 4-8x what the same work costs on one-dimensional arrays (numpy
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
    return slots_holding(rows.T, b)


def slots_holding(slots: np.ndarray, b: int) -> np.ndarray:
    """``holding`` for rows kept slot-major (slot x partition): with each slot contiguous, twice as fast again."""
    hit = np.zeros(slots.shape[1], dtype=bool)
    for slot in slots:
        hit |= slot == b
    return hit
