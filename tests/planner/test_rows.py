"""The row-matrix helpers (planner/rows.py): each equals numpy's plain indexing on the same rows, and a patched list
equals one built afresh from the partitions listed after the change."""

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


@settings(max_examples=300, deadline=None)
@given(SOURCE, st.data())
def test_a_patched_list_equals_the_list_built_afresh_and_leaves_the_old_arrays_alone(
        source: list[list[int]], data: st.DataObject) -> None:  # fmt: skip
    m = np.asarray(source, dtype=np.int32)
    n = len(m)
    listed = sorted(data.draw(st.sets(st.integers(0, n - 1))))
    changed = sorted(data.draw(st.sets(st.integers(0, n - 1))))
    wanted = data.draw(st.lists(st.booleans(), min_size=len(changed), max_size=len(changed)))
    # The rows as they were when the list was built (any values: patching must not keep an unchanged one's old row).
    old = np.asarray(data.draw(st.lists(st.lists(st.integers(-1, 6), min_size=m.shape[1], max_size=m.shape[1]),
                                        min_size=len(listed), max_size=len(listed))), dtype=np.int32).reshape(-1, m.shape[1])  # fmt: skip
    parts = np.asarray(listed, dtype=np.int64)
    extra = np.arange(n, dtype=np.float64) * 1.5  # a one-dimensional column beside the rows
    before = (parts.copy(), old.copy())
    after = (set(listed) - set(changed)) | {p for p, w in zip(changed, wanted) if w}
    got_parts, (got_rows, got_extra) = matrix.patched(parts, (old, extra[parts]), np.asarray(changed, dtype=np.int64),
                                                      np.asarray(wanted, bool), (m, extra))  # fmt: skip
    # Worked out apart from the code: unchanged entries keep the row they had, changed ones listed read the source.
    keep_row = dict(zip(listed, old.tolist()))
    fresh = {p for p, w in zip(changed, wanted) if w}
    assert got_parts.tolist() == sorted(after)
    assert got_rows.tolist() == [m[p].tolist() if p in fresh else keep_row[p] for p in sorted(after)]
    assert got_rows.shape == (len(after), m.shape[1]) and got_rows.dtype == m.dtype
    assert got_extra.tolist() == [1.5 * p for p in sorted(after)] and got_extra.dtype == np.float64
    assert parts.tolist() == before[0].tolist() and old.tolist() == before[1].tolist()
