#!/usr/bin/env python3
"""Per-module mutation score from a `make mutate` run (mutmut 3's mutants/**/*.meta in the stage dir).

Usage: scripts/mutate_summary.py [STAGE_DIR]   (default build/mutate)

Score = detected / checked, where detected = killed + timeout + caught by type check, and checked is
every mutant with a result ("not checked" ones, from an interrupted run, are shown but not counted).
A mutant no test reaches ("no tests") counts as not detected: the line it mutates is untested.

A survivor that cannot change behaviour is shown equivalent by a comment on its line or in the comment block
right above it, in the codebase's words for it ("alike": the mutated and the original expression give the same
result there, and why; or "equivalent"). The second figure, killed / (killed + survivors not so shown), counts
every other survivor as live; the survivors it counts are listed with their lines.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
import sys
from collections import Counter
from functools import cache
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


SHOWN = re.compile(r"\balike\b|equivalent", re.IGNORECASE)
COMMENT_BLOCK_LINES = 25


@cache
def _functions(path: Path) -> dict[str, ast.FunctionDef]:
    """Every function of a file by its mutmut name: ``x_name`` at module level, ``xǁClassǁname`` in a class."""
    tree = ast.parse(_text(path))
    found: dict[str, ast.FunctionDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name if node.name.startswith("x") and "__mutmut_" in node.name else f"x_{node.name}"] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    found[item.name if "__mutmut_" in item.name else f"xǁ{node.name}ǁ{item.name}"] = item
    return found


@cache
def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@cache
def _lines(path: Path) -> list[str]:
    return _text(path).splitlines()


def _shown_equivalent(stage: Path, module: str, name: str) -> tuple[bool, int | None]:
    """Whether the original line a survivor changes carries a comment showing it equivalent, and that line."""
    mutated_file = stage / "mutants" / "src" / module
    original_file = stage / "src" / module
    mutated, original = _functions(mutated_file), _functions(original_file)
    function = name.rsplit(".", 1)[1]
    base = function.rsplit("__mutmut_", 1)[0]
    text = _lines(mutated_file)
    orig_copy, mutant_copy = mutated.get(f"{base}__mutmut_orig"), mutated.get(function)
    if orig_copy is None or mutant_copy is None or base not in original:
        return False, None
    before = text[orig_copy.lineno:orig_copy.end_lineno]
    after = text[mutant_copy.lineno:mutant_copy.end_lineno]
    changed = [line[1:].strip() for line in difflib.unified_diff(before, after, lineterm="", n=0)
               if line.startswith("-") and not line.startswith("---")]
    lines = _lines(original_file)
    node = original[base]
    for i in range(node.lineno - 1, node.end_lineno or node.lineno):
        if changed and lines[i].strip() == changed[0]:
            block = [lines[i]]
            j = i - 1
            while j >= node.lineno - 1 and i - j <= COMMENT_BLOCK_LINES and lines[j].strip().startswith("#"):
                block.append(lines[j])
                j -= 1
            return bool(SHOWN.search("\n".join(block))), i + 1
    return False, None


def live_survivors(stage: Path) -> tuple[int, list[tuple[str, int | None]]]:
    """(killed, the survivors no comment shows equivalent, with their original lines)."""
    killed, live = 0, []
    for meta in sorted((stage / "mutants").rglob("*.meta")):
        module = meta.relative_to(stage / "mutants" / "src").as_posix().removesuffix(".meta")
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            status = status_by_exit_code[code]
            killed += status == "killed"
            if status == "survived":
                shown, line = _shown_equivalent(stage, module, name)
                if not shown:
                    live.append((f"{name} (line {line})" if line else name, line))
    return killed, live


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
    killed, live = live_survivors(stage)
    shown = total["survived"] - len(live)
    if killed + len(live):
        print(f"survivors shown equivalent by a comment at their line: {shown} of {total['survived']}; killed / (killed + "
              f"the other {len(live)} survivors): {killed}/{killed + len(live)} ({100 * killed / (killed + len(live)):.1f} %)")
    for name, _ in live:
        print(f"  not shown equivalent: {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
