#!/usr/bin/env python3
"""`make mutate`'s mutmut, with a type check that takes seconds to map instead of minutes.

A mutant that fails mypy could never land (`make test` runs mypy first), so mutmut may count it as
caught without running its tests (`type_check_command` in pyproject.toml). mutmut maps each mypy
error to its mutant by parsing every mutated file with libcst, which on this package's mutated
files (planner/core.py alone is 1.5 MB) costs more minutes than the type check saves; `ast` does the
same mapping in seconds. Three kinds of mypy error are not a mutant's doing, and would otherwise
count innocent mutants as caught or stop mutmut with "Could not find mutant":

- errors that mutmut's own scaffolding causes: unused `# type: ignore` on its trampoline lines, and
  an attribute annotated in `__init__` being "redefined" by every copy of `__init__`;
- errors outside any mutant (a caller of a TypeGuard function loses the narrowing once the function
  is a trampoline), and
- the same errors inside every copy of one function, the original included, for the same reason.

So a mutant counts as caught only by errors of a code and message its original does not have (or
has fewer of). Usage: as `mutmut`, e.g. `mutate_run.py run --max-children 2 [NAMES...]`.

A run whose names are all scopes of `[tool.mutate.scopes]` (pyproject.toml), or globs within one
(`kafka_rebalance.planner.goals.network*`: that module's mutants), mutates only those files and
selects only the scope's tests: mutmut's stats pass runs every selected test once, and every
mutant then runs each selected test that reaches its function, so a scope's own unit tests keep its
run to minutes where the planner's end-to-end tests (which reach every goal) would take an hour. A scope
with ``own_tests`` narrows further: a module's mutants run only the tests of its own file (``own_tests``)
and of ``shared_tests`` that reach them, since every goal's file plans whole clusters that reach every goal.
"""

from __future__ import annotations

import ast
import fnmatch
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import mutmut.__main__ as mutmut_main
from mutmut.configuration import config
from mutmut.mutation.file_mutation import FailedTypeCheckMutant, MutatedMethodLocation
from mutmut.type_checking import TypeCheckingError
from mutmut.utils.format_utils import get_mutant_name

SCAFFOLDING = {"unused-ignore", "no-redef"}
COPY = re.compile(r"^(?P<base>.+)__mutmut_(?P<which>\d+|orig)$")


def copies(path: Path) -> list[tuple[int, int, str]]:
    """(first line, last line, name) of every mutmut copy of a function in one mutated file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        (node.lineno, node.end_lineno or node.lineno, node.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and COPY.match(node.name)
    ]


def mutant_errors(root: Path, errors: list[dict[str, Any]]) -> dict[tuple[str, tuple[int, int, str]], list[dict[str, Any]]]:
    """mypy's JSON errors (files relative to ``root``) -> {(file, (first, last, mutant copy)): the errors it adds}."""
    spans: dict[str, list[tuple[int, int, str]]] = {}
    by_copy: dict[tuple[str, tuple[int, int, str]], list[dict[str, Any]]] = defaultdict(list)
    for error in errors:
        if error.get("severity") != "error" or error.get("code") in SCAFFOLDING:
            continue
        file = error["file"]
        if file not in spans:
            spans[file] = copies(root / file)
        inside = [span for span in spans[file] if span[0] <= error["line"] <= span[1]]
        if inside:
            by_copy[(file, inside[-1])].append(error)
    kinds = {key: Counter((e["code"], e["message"]) for e in found) for key, found in by_copy.items()}
    originals = {(file, span[2].removesuffix("__mutmut_orig")): kind
                 for (file, span), kind in kinds.items() if span[2].endswith("__mutmut_orig")}  # fmt: skip
    kept = {}
    for (file, span), kind in kinds.items():
        base, which = span[2].rsplit("__mutmut_", 1)
        new = kind - originals.get((file, base), Counter())
        if which != "orig" and new:
            kept[(file, span)] = [e for e in by_copy[(file, span)] if (e["code"], e["message"]) in new]
    return kept


# mypy's incremental cache, kept outside the stage (which every run deletes). mypy replays a fresh module's errors from
# it, so the errors are the same: a run whose mutated files are as before (tests changed, or a rerun) type-checks in
# seconds instead of minutes (byte_balance's 2 MB of mutants: 580 s cold, 2 s warm, on a loaded machine), and a run of
# another module rechecks only what changed. One cache per part (below), each part's tree at a fixed path.
MYPY_CACHE = Path(__file__).resolve().parents[1] / "build" / "mutate-mypy-cache"


def mutated_files(root: Path) -> list[str]:
    """The files under ``root`` (relative paths) that hold mutmut's copies of a function, largest first."""
    found = [(path.stat().st_size, path.relative_to(root).as_posix()) for path in root.rglob("*.py")
             if "__mutmut_orig" in path.read_text(encoding="utf-8")]  # fmt: skip
    return [file for _, file in sorted(found, key=lambda item: (-item[0], item[1]))]


def parts(files: list[str], sizes: dict[str, int], count: int) -> list[list[str]]:
    """``files`` in at most ``count`` parts of about equal size: each file, largest first, joins the smallest part."""
    bins: list[list[str]] = [[] for _ in range(max(1, min(count, len(files))))]
    loads = [0] * len(bins)
    for file in sorted(files, key=lambda f: (-sizes[f], f)):
        smallest = loads.index(min(loads))
        bins[smallest].append(file)
        loads[smallest] += sizes[file]
    return [part for part in bins if part]


class PendingTypeCheck(Mapping[str, FailedTypeCheckMutant]):
    """The type check's verdicts, from mypy processes started at once and awaited on first use.

    mutmut asks for a verdict only once it has run every test for its statistics and once more clean, minutes
    on a large scope: mypy runs meanwhile instead of before. The mutated files are split into parts of about
    equal size, one mypy process each (mypy checks one import cycle on one core, and the package is one cycle):
    each part's tree is the package with only that part's files mutated (the others as written), so each
    mutant's copies are checked exactly once, against the same code, and the errors are those of one whole check.
    """

    def __init__(self, root: Path, stage: Path, jobs: int) -> None:
        self._root = root
        files = mutated_files(root)
        sizes = {file: (root / file).stat().st_size for file in files}
        self._trees: list[tuple[Path, subprocess.Popen[str]]] = []
        for number, part in enumerate(parts(files, sizes, jobs)):
            tree = stage / f"mutants-typecheck-{number}"
            shutil.rmtree(tree, ignore_errors=True)
            tree.mkdir()
            shutil.copyfile(root / "pyproject.toml", tree / "pyproject.toml")  # mypy's settings: it checks src/ alone
            shutil.copytree(root / "src", tree / "src", ignore=shutil.ignore_patterns("*.meta", "*.spans", "__pycache__"))
            for other in files:
                if other not in part:
                    shutil.copyfile(stage / other, tree / other)  # the file as written: the stage's own copy
            command = [*config().type_check_command, "--cache-dir", str(MYPY_CACHE / f"part-{number}")]
            process = subprocess.Popen(command, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE, encoding="utf-8")
            self._trees.append((tree, process))
        self._caught: dict[str, FailedTypeCheckMutant] | None = None

    def _verdicts(self) -> dict[str, FailedTypeCheckMutant]:
        if self._caught is None:
            caught: dict[str, FailedTypeCheckMutant] = {}
            for tree, process in self._trees:
                out, err = process.communicate()
                if process.returncode not in (0, 1):  # 1 is "found errors"; anything else is mypy failing to run
                    raise SystemExit(f"mutate: the type check {process.args} failed to run in {tree}:\n{err}")
                errors = [json.loads(line) for line in out.splitlines() if line.strip()]
                for (file, (first, last, name)), found in mutant_errors(tree, errors).items():
                    path = self._root / file
                    mutant = get_mutant_name(Path(file), name)
                    error = TypeCheckingError(path, found[0]["line"], found[0]["message"])
                    caught[mutant] = FailedTypeCheckMutant(MutatedMethodLocation(path, name, first, last), mutant, error)
                shutil.rmtree(tree, ignore_errors=True)
            self._caught = caught
        return self._caught

    def __getitem__(self, mutant: str) -> FailedTypeCheckMutant:
        return self._verdicts()[mutant]

    def __iter__(self) -> Iterator[str]:
        return iter(self._verdicts())

    def __len__(self) -> int:
        return len(self._verdicts())


def filter_mutants_with_mypy(jobs: int) -> PendingTypeCheck:
    """mutmut's filter_mutants_with_type_checker, with the mapping above and ``jobs`` mypy processes (run in the stage)."""
    return PendingTypeCheck(Path("mutants").absolute(), Path.cwd(), jobs)


def largest_first(walk: Callable[[], Iterator[Path]]) -> Callable[[], Iterator[Path]]:
    """mutmut's source walk with the files to mutate first, largest first: its pool of workers then ends together
    instead of one worker starting the largest file last."""

    def walk_largest_first() -> Iterator[Path]:
        paths = list(walk())
        return iter(sorted(paths, key=lambda path: (not config().should_mutate(path), -path.stat().st_size, str(path))))

    return walk_largest_first


def max_children(argv: list[str]) -> int:
    """The ``--max-children`` of a command line (mutmut's default: every core)."""
    for flag, value in zip(argv, argv[1:]):
        if flag == "--max-children":
            return int(value)
    return os.cpu_count() or 1


def mutant_globs(argv: list[str]) -> list[str]:
    """The mutant names or globs of a `run` command line (mutmut's other options take no name)."""
    if not argv or argv[0] != "run":
        return []
    rest, names = iter(argv[1:]), []
    for arg in rest:
        if arg == "--max-children":
            next(rest, None)
        elif not arg.startswith("-"):
            names.append(arg)
    return names


def module_of(path: str) -> str:
    """The module name mutmut prefixes a staged file's mutants with: src/a/b.py -> a.b."""
    return path.removeprefix("src/").removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def within(name: str, module: str) -> bool:
    """Whether mutant-name glob ``name`` may match a mutant of ``module`` (its literal part before any
    wildcard is a prefix of "module." or starts with it)."""
    literal = re.split(r"[*?\[]", name, maxsplit=1)[0]
    return (module + ".").startswith(literal) or literal.startswith(module + ".")


def narrow_to_scopes(names: list[str]) -> None:
    """Where every name is a scope of `[tool.mutate.scopes]`, or a narrower glob that scope matches (one
    module's mutants: 'kafka_rebalance.planner.goals.network*'), mutate only the scope's files that name
    reaches, with the scope's tests: one module's run is then that module's share of the scope's run."""
    scopes = tomllib.loads(Path("pyproject.toml").read_text(encoding="utf-8")).get("tool", {}).get("mutate", {}).get("scopes", {})
    owners = [next((scope for scope in scopes if fnmatch.fnmatchcase(name, scope)), None) for name in names]
    if not names or None in owners:
        return
    only: list[str] = []
    tests: list[str] = []
    for name, scope in zip(names, owners):
        assert scope is not None
        files = [f for pattern in scopes[scope]["only_mutate"] for f in sorted(glob.glob(pattern))]
        only += [f for f in files if name == scope or within(name, module_of(f))]
    for scope in dict.fromkeys(owners):
        assert scope is not None
        for arg in scopes[scope]["tests"]:  # pytest expands no globs: a test path may be one
            tests += sorted(glob.glob(arg)) if "*" in arg and not arg.startswith("-") else [arg]
    if not only:
        raise SystemExit(f"mutate: {' '.join(names)} names no file of its scope")
    config().only_mutate = sorted(set(only))
    config().pytest_add_cli_args_test_selection = tests
    print(f"mutate: {' '.join(names)}: mutating {' '.join(config().only_mutate)} with {len(tests)} test arguments")
    owners_set = [scopes[scope] for scope in dict.fromkeys(owners) if scope is not None]
    patterns = [s["own_tests"] for s in owners_set if "own_tests" in s]
    if patterns:
        shared = [t for s in owners_set for t in s.get("shared_tests", [])]
        original = mutmut_main.collect_or_load_stats

        def collect_then_narrow(*args: Any, **kwargs: Any) -> None:
            original(*args, **kwargs)
            narrowed = own_tests(mutmut_main.state().tests_by_mangled_function_name, patterns, shared)
            print(f"mutate: each module's mutants run its own test file ({', '.join(patterns)}) and {len(shared)} shared: "
                  f"{narrowed} module functions narrowed")

        mutmut_main.collect_or_load_stats = collect_then_narrow


def own_tests(tests_by_function: dict[str, set[str]], patterns: list[str], shared: list[str]) -> int:
    """Narrow (in place) the tests each mutated function runs to its module's own test file (``pattern`` with
    ``{module}``: the module's last name) and the ``shared`` files, where that file exists; a module without
    one keeps every test that reaches it. A goal's end-to-end plans in other goals' files reach every goal and
    were most of each mutant's time; its own file's tests are the ones written to kill its mutants. Returns
    how many functions were narrowed."""
    narrowed = 0
    for function, tests in tests_by_function.items():
        module = re.split(r"\.x(?:_|\u01c1)", function, maxsplit=1)[0].rsplit(".", 1)[-1]
        files = [f for pattern in patterns if Path(f := pattern.format(module=module)).exists()]
        if not files:
            continue
        keep = {t for t in tests if t.split("::", 1)[0] in files or t.split("::", 1)[0] in shared}
        if keep != tests:
            tests.intersection_update(keep)
            narrowed += 1
    return narrowed


if __name__ == "__main__":
    narrow_to_scopes(mutant_globs(sys.argv[1:]))
    jobs = max_children(sys.argv[1:])
    # mutmut annotates a dict but reads the verdicts only with .get and truth, which the Mapping serves
    mutmut_main.filter_mutants_with_type_checker = lambda: filter_mutants_with_mypy(jobs)  # type: ignore[assignment,return-value]
    mutmut_main.walk_source_files = largest_first(mutmut_main.walk_source_files)
    sys.argv[0] = "mutmut"
    sys.exit(mutmut_main.cli())
