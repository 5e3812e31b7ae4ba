#!/usr/bin/env python3
"""Per-module mutation score from a `make mutate` run (mutmut 3's mutants/**/*.meta in the stage dir).

Usage: scripts/mutate_summary.py [STAGE_DIR]   (default build/mutate)

Score = detected / checked, where detected = killed + timeout + caught by type check, and checked is
every mutant with a result ("not checked" ones, from an interrupted run, are shown but not counted).
A mutant no test reaches ("no tests") counts as not detected: the line it mutates is untested.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from mutmut.stats import status_by_exit_code

DETECTED = {"killed", "timeout", "type check"}
COLUMNS = ("killed", "timeout", "type check", "survived", "no tests", "other", "not checked")


def summarise(stage: Path) -> list[tuple[str, Counter]]:
    rows = []
    for meta in sorted((stage / "mutants").rglob("*.meta")):
        codes = json.loads(meta.read_text())["exit_code_by_key"]
        counts: Counter = Counter()
        for code in codes.values():
            status = status_by_exit_code[code].replace("caught by type check", "type check")
            counts[status if status in COLUMNS else "other"] += 1
        module = meta.relative_to(stage / "mutants").as_posix().removesuffix(".meta")
        rows.append((module.removeprefix("src/"), counts))
    return rows


def score(counts: Counter) -> tuple[int, int]:
    detected = sum(counts[s] for s in DETECTED)
    checked = sum(counts.values()) - counts["not checked"]
    return detected, checked


def main() -> int:
    stage = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1] / "build" / "mutate"
    rows = summarise(stage)
    if not rows:
        print(f"error: no mutmut results under {stage / 'mutants'}; run `make mutate` first", file=sys.stderr)
        return 2
    width = max(len(m) for m, _ in rows) + 2
    print(f"{'module':<{width}}" + "".join(f"{c:>12}" for c in COLUMNS) + f"{'score':>10}")
    total: Counter = Counter()
    for module, counts in rows:
        total.update(counts)
        d, c = score(counts)
        print(f"{module:<{width}}" + "".join(f"{counts[col]:>12}" for col in COLUMNS) + (f"{100 * d / c:>9.1f}%" if c else f"{'-':>10}"))
    d, c = score(total)
    print(f"{'all':<{width}}" + "".join(f"{total[col]:>12}" for col in COLUMNS) + (f"{100 * d / c:>9.1f}%" if c else f"{'-':>10}"))
    print(f"mutation score: {d}/{c} detected ({100 * d / c:.1f} %)" if c else "mutation score: nothing checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
