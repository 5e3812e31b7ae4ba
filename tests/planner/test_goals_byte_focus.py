"""The byte goal's compiled choice of the broker to fix and its partners (planner/goals/byte_focus.py), against the
rule written plainly."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kafka_rebalance.planner.goals.byte_focus import next_focus

K = 3


def plain_choice(nbytes: list[int], elig: list[int], upper: list[float], lower: list[float], target: list[float],
                 stuck: list[bool], rack: list[int], has_racks: bool, pinned: bool,
                 held: list[bool]) -> tuple[int, bool, list[int]]:  # fmt: skip
    """The furthest outside its band (of those not stuck; the first of equals, above before below on a tie), then
    its partners: the K lowest in key (rel, or -rel for a light broker; ties by broker) and the K lowest of its own
    rack (only those when pinned), own rack first, each in key order, then the held ones moved to the front."""
    above = [nbytes[b] - upper[i] if not stuck[b] else 0.0 for i, b in enumerate(elig)]
    below = [lower[i] - nbytes[b] if not stuck[b] else 0.0 for i, b in enumerate(elig)]
    ih = max(range(len(elig)), key=lambda i: (above[i], -i))
    il = max(range(len(elig)), key=lambda i: (below[i], -i))
    if above[ih] <= 0 and below[il] <= 0:
        return -1, False, []
    heavy = above[ih] >= below[il]
    me = elig[ih] if heavy else elig[il]
    sign = 1 if heavy else -1
    order = sorted((b for b in elig if b != me), key=lambda b: (sign * (nbytes[b] - target[b]), b))
    if not has_racks:
        return me, heavy, order[:K]
    own = [b for b in order if rack[b] == rack[me]][:K]
    others = [] if pinned else [b for b in order[:K] if b not in own]
    chosen = own + others
    return me, heavy, [b for b in chosen if held[b]] + [b for b in chosen if not held[b]]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 2), st.booleans(), st.booleans(), st.booleans()),
                min_size=1, max_size=9),
       st.integers(3, 6), st.integers(1, 3), st.booleans(), st.booleans())  # fmt: skip
def test_the_focus_and_its_partners_are_the_ones_the_rule_names(
        brokers: list[tuple[int, int, bool, bool, bool]], centre: int, width: int, has_racks: bool,
        pinned: bool) -> None:  # fmt: skip
    # Bytes on a few whole numbers round a band of a few: ties in distance and in key wherever they can fall.
    n = len(brokers) + 1  # broker 0 is not eligible
    nbytes = [0] + [x for x, _, _, _, _ in brokers]
    rack = [0] + [r for _, r, _, _, _ in brokers]
    stuck = [False] + [s for _, _, s, _, _ in brokers]
    held = [False] + [h for _, _, _, h, _ in brokers]
    target = [0.0] + [float(centre + (1 if t else 0)) for _, _, _, _, t in brokers]
    elig = list(range(1, n))
    upper = [float(centre + width)] * len(elig)
    lower = [float(centre - width)] * len(elig)
    out = np.empty(2 * K, dtype=np.int64)
    focus, heavy, k = next_focus(np.asarray(nbytes, dtype=np.int64), np.asarray(elig, dtype=np.int64),
                                 np.asarray(upper), np.asarray(lower), np.asarray(target), np.asarray(stuck),
                                 np.asarray(rack, dtype=np.int64), has_racks, pinned, np.asarray(held), K, out)  # fmt: skip
    want = plain_choice(nbytes, elig, upper, lower, target, stuck, rack, has_racks, pinned, held)
    assert (focus, heavy if focus >= 0 else False, out[:k].tolist() if focus >= 0 else []) == want
