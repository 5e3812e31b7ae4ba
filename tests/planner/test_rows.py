"""The row-matrix helpers (planner/rows.py): each equals numpy's plain indexing on the same rows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rebalance.planner import rows as matrix

SOURCE = st.integers(1, 4).flatmap(
    lambda width: st.lists(st.lists(st.integers(-1, 6), min_size=width, max_size=width), min_size=1, max_size=20))


@settings(max_examples=200, deadline=None)
@given(SOURCE, st.data())
def test_take_keep_and_holding_equal_plain_indexing(source: list[list[int]], data: st.DataObject) -> None:
    m = np.asarray(source, dtype=np.int32)
    idx = np.asarray(data.draw(st.lists(st.integers(0, len(m) - 1), max_size=10)), dtype=np.int64)
    mask = np.asarray(data.draw(st.lists(st.booleans(), min_size=len(m), max_size=len(m))), dtype=bool)
    b = data.draw(st.integers(-1, 6))
    assert matrix.take(m, idx).tolist() == m[idx].tolist() and matrix.take(m, idx).shape == m[idx].shape
    assert matrix.keep(m, mask).tolist() == m[mask].tolist() and matrix.keep(m, mask).shape == m[mask].shape
    assert matrix.holding(m, b).tolist() == (m == b).any(axis=1).tolist()
    assert matrix.slots_holding(np.ascontiguousarray(m.T), b).tolist() == (m == b).any(axis=1).tolist()

