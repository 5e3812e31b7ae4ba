"""scripts/mutate_summary.py: which survivors a comment at their line shows equivalent, on a stage laid out as
`make mutate` leaves it (the original under src/, mutmut's copies and results under mutants/src/)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from mutmut.stats import status_by_exit_code

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutate_summary", ROOT / "scripts" / "mutate_summary.py")
assert _spec is not None and _spec.loader is not None
summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summary)

ORIGINAL = '''\
def clamp(x, hi):
    # (>= for > alike: at x == hi both return hi)
    if x > hi:
        return hi
    return x


class Box:
    def size(self, n):
        # the result is cached elsewhere
        return n + 1
'''

MUTATED = '''\
def x_clamp__mutmut_orig(x, hi):
    # (>= for > alike: at x == hi both return hi)
    if x > hi:
        return hi
    return x


def x_clamp__mutmut_1(x, hi):
    # (>= for > alike: at x == hi both return hi)
    if x >= hi:
        return hi
    return x


def x_clamp__mutmut_2(x, hi):
    # (>= for > alike: at x == hi both return hi)
    if x > hi:
        return None
    return x


class Box:
    def xǁBoxǁsize__mutmut_orig(self, n):
        # the result is cached elsewhere
        return n + 1

    def xǁBoxǁsize__mutmut_1(self, n):
        # the result is cached elsewhere
        return n - 1
'''


def code(status: str) -> int:
    return next(c for c, s in status_by_exit_code.items() if s == status)


def test_a_survivor_is_shown_equivalent_only_by_a_comment_at_its_own_line(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(ORIGINAL)
    (tmp_path / "mutants" / "src").mkdir(parents=True)
    (tmp_path / "mutants" / "src" / "m.py").write_text(MUTATED)
    results = {"m.x_clamp__mutmut_1": code("survived"), "m.x_clamp__mutmut_2": code("survived"),
               "m.xǁBoxǁsize__mutmut_1": code("survived")}
    (tmp_path / "mutants" / "src" / "m.py.meta").write_text(json.dumps({"exit_code_by_key": results}))
    killed, live = summary.live_survivors(tmp_path)
    # clamp's `>=` is on the line under the comment that shows it alike; its `return None` and Box.size's `- 1`
    # change lines no such comment covers (size's comment says nothing of equivalence).
    assert killed == 0
    assert live == [("m.x_clamp__mutmut_2 (line 4)", 4), ("m.xǁBoxǁsize__mutmut_1 (line 11)", 11)]
