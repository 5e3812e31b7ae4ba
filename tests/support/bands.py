"""The default balance bands, worked out independently of the planner for tests to check plans against."""

from __future__ import annotations

import math
from collections.abc import Sequence


def counts_in_band(counts: Sequence[int], tolerance: float = 0.1) -> bool:
    """Every count within floor..ceil of the even share, widened by the whole replicas ``tolerance``
    of the share covers (the default --replica-tolerance is 0.1)."""
    if not counts:
        return True
    share = sum(counts) / len(counts)
    widen = math.floor(share * tolerance + 1e-9)
    return all(math.floor(share) - widen <= c <= math.ceil(share) + widen for c in counts)


def bytes_in_band(sizes: Sequence[int], tolerance: float = 0.1) -> bool:
    mean = sum(sizes) / len(sizes) if sizes else 0.0
    return all(abs(s - mean) <= tolerance * mean for s in sizes)
