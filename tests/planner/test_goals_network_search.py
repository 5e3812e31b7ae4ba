"""Network in's compiled searches (planner/goals/network_search.py) against a full sort of what the rule allows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rebalance.planner.goals import network_search

# a's load, band, r's load, band: a above its band, r below it, so moving some traffic helps and too much does not
BANDS = st.tuples(st.integers(50, 90), st.integers(0, 40), st.integers(0, 30), st.integers(0, 60))


def band_of(la: int, lr: int, lo: int, width: int) -> np.ndarray:
    lo_a, hi_a, lo_r, hi_r = float(lo), float(lo + width), float(lo), float(lo + width)
    now = max(0.0, la - hi_a, lo_a - la) + max(0.0, lr - hi_r, lo_r - lr)
    return np.array([la, lo_a, hi_a, lr, lo_r, hi_r, now - 1e-6 * max(1.0, now)], dtype=np.float64)


def allowed(x: float, band: np.ndarray) -> bool:
    """The rule, stated plainly: the two brokers' distances outside their bands, summed, fall below the limit."""
    la, lo_a, hi_a, lr, lo_r, hi_r, limit = band.tolist()
    return max(0.0, la - x - hi_a, lo_a - (la - x)) + max(0.0, lr + x - hi_r, lo_r - (lr + x)) < limit


def test_a_transfer_is_better_when_it_brings_the_two_brokers_nearer_their_bands_in_sum() -> None:
    # a at 90, r at 0, both bands 36..44: 82 outside now. 30 leaves 16 + 6; 90 the same 82 the other way round;
    # 46 leaves 0 + 2; 1e-5 brings them nearer by less than a millionth of what is outside.
    band = band_of(90, 0, 36, 8)
    assert [network_search.better(x, *band) for x in (30.0, 90.0, 46.0, 1e-5)] == [True, False, True, False]


@settings(max_examples=200, deadline=None)
@given(BANDS, st.lists(st.tuples(st.integers(0, 60), st.booleans()), max_size=40), st.integers(0, 80),
       st.integers(1, 12))  # fmt: skip
def test_the_closest_to_the_need_are_the_first_a_full_sort_of_the_better_ones_lists(
        bands: tuple[int, int, int, int], entries: list[tuple[int, bool]], need: int, k: int) -> None:  # fmt: skip
    # Rates on whole numbers and a need among them: ties on both sides of it, broken by partition. Partitions in no
    # order (the goal lists them hottest first).
    band = band_of(*bands)
    parts = np.asarray([(i * 37) % 101 for i in range(len(entries))], dtype=np.int64)
    rates = np.asarray([float(r) for r, _ in entries], dtype=np.float64)
    skip = np.asarray([s for _, s in entries], dtype=np.bool_)
    out = np.empty(k, dtype=np.int64)
    got = out[: network_search.closest_to_need(parts, rates, skip, float(need), band, out)].tolist()
    want = sorted((abs(r - need), int(p)) for p, r, s in zip(parts, rates.tolist(), skip.tolist(), strict=True)
                  if not s and allowed(r, band))  # fmt: skip
    assert got == [p for _, p in want][:k]


@settings(max_examples=200, deadline=None)
@given(BANDS, st.lists(st.tuples(st.integers(0, 6), st.integers(0, 60), st.integers(0, 40), st.booleans()),
                       unique_by=lambda e: e[1], max_size=40),
       st.integers(0, 13), st.integers(0, 60), st.integers(1, 12))  # fmt: skip
def test_the_nearest_cooler_are_the_first_a_full_sort_by_gap_and_partition_of_the_better_swaps_lists(
        bands: tuple[int, int, int, int], entries: list[tuple[int, int, int, bool]], twice_sp: int, rp: int,
        k: int) -> None:  # fmt: skip
    # Many equal sizes (0..6) and a wanted size on them or halfway between: ties on both sides at once, broken by
    # partition wherever the k-th falls; the rule and the skip marks leave holes in the runs.
    band = band_of(*bands)
    entries.sort()
    sizes = np.asarray([float(s) for s, _, _, _ in entries], dtype=np.float64)
    parts = np.asarray([p for _, p, _, _ in entries], dtype=np.int64)
    rates = np.asarray([float(r) for _, _, r, _ in entries], dtype=np.float64)
    skip = np.asarray([s for _, _, _, s in entries], dtype=np.bool_)
    sp = twice_sp / 2
    out = np.empty(k, dtype=np.int64)
    got = out[: network_search.nearest_cooler(sp, float(rp), parts, sizes, rates, skip, band, out)].tolist()
    want = sorted((abs(s - sp), p) for s, p, r, x in entries if not x and allowed(rp - r, band))
    assert got == [p for _, p in want][:k]
