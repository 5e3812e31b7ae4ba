"""The one owner of the rules for what users hand us: numbers, topic names and cluster ids, JSON files, paths.

Every edge (CLI flags, snapshot files, describe text, rack maps, plan files) uses these,
so a rule is written once and every message has the same shape:
``<file or flag>: <field>: <what is wrong>, got <value>``, raised as ``InputError``
(a ``RebalanceError``: the CLI prints it on one line and exits 2).

Why each rule exists:
* ASCII digits only: ``str.isdigit()`` is true for ``"١٢"`` and ``"²"``, and ``int()``
  then accepts the first and raises on the second; neither is a broker id anyone meant.
* int32 / int64 ranges: Kafka's broker ids and partition numbers are int32, sizes int64;
  a larger value overflows NumPy, Arrow and Kafka's own tools further down.
* finite floats: ``nan`` compares false with everything, so ``nan < 0`` lets it through
  every ``>=`` check and then turns an ordering or a sleep into nonsense or a hang.
* strict JSON: the last of two equal keys silently wins in Python's parser (a second
  ``"partitions": []`` empties a cluster); ``NaN``/``Infinity`` are not JSON; deep
  nesting exhausts the recursion limit. ``1e400`` parses to inf: fields holding floats
  check ``finite_number``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

from kafka_rebalance.errors import RebalanceError

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
MAX_JSON_DEPTH = 64
TOPIC_MAX_LENGTH = 249  # Kafka's Topic.MAX_NAME_LENGTH
_TOPIC_CHARS = re.compile(r"[a-zA-Z0-9._-]+")
_ASCII_INT = re.compile(r"-?[0-9]+")
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')


class InputError(RebalanceError):
    """A value a user gave (flag, file, field) breaks a rule; the message names where and what."""


# --------------------------------------------------------------------------- numbers


def is_int(value: Any) -> bool:
    """A JSON/Arrow integer (bool is an int subclass in Python, but never an id or a count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def int_in(value: Any, lo: int, hi: int) -> TypeGuard[int]:
    return is_int(value) and lo <= value <= hi


def parse_int(text: str, where: str, lo: int = 0, hi: int = INT32_MAX, what: str = "an integer") -> int:
    """An integer written in ASCII digits (an optional leading '-') within lo..hi."""
    t = text.strip()
    if not _ASCII_INT.fullmatch(t) or len(t) > 20:
        raise InputError(f"{where}: expected {what} (ASCII digits), got {json.dumps(text)}")
    value = int(t)
    if not lo <= value <= hi:
        raise InputError(f"{where}: {value} is outside {lo}..{hi}")
    return value


def is_ascii_digits(text: str) -> bool:
    return bool(text) and text.isascii() and text.isdigit()


def finite_number(value: Any, lo: float = -math.inf, hi: float = math.inf) -> TypeGuard[int | float]:
    """A real, finite JSON/Python number within lo..hi (False for bool, NaN and +-inf)."""
    return (
        isinstance(value, (int, float)) and not isinstance(value, bool)
        and (is_int(value) or math.isfinite(value)) and lo <= value <= hi
    )  # fmt: skip


# --------------------------------------------------------------------------- Kafka names


def _kafka_name_problem(name: Any, what: str, show: Callable[[Any], str]) -> str | None:
    """Why Kafka's Topic.validate would refuse ``name``, or None when it is legal."""
    lead = f"{what} " if what else ""
    if not isinstance(name, str) or not name:
        return f"{lead}must be a non-empty string, got {show(name)}"
    if name in (".", ".."):
        return f'{lead}cannot be "." or "..", got {show(name)}'
    if len(name) > TOPIC_MAX_LENGTH:
        return f"{lead}is {len(name)} characters, Kafka allows at most {TOPIC_MAX_LENGTH}: {show(name[:40])}..."
    if not _TOPIC_CHARS.fullmatch(name):
        return f"{lead}{show(name)} has characters outside [a-zA-Z0-9._-]"
    return None


def topic_name_problem(name: Any) -> str | None:
    """Why Kafka would refuse this topic name (Topic.validate), or None when it is legal."""
    return _kafka_name_problem(name, "topic name", json.dumps)


def cluster_id_problem(cluster_id: Any) -> str | None:
    """Why ``cluster_id`` cannot name a cluster, or None when it can.

    The id reaches RUNBOOK.md's shell lines, mktemp templates, run and plan directory names and
    DAG ids, so it is held to Kafka's own topic-name characters: nothing in it can end a shell
    word, a line or a path component. The value is shown as a Python literal so that a newline
    or a control character in it stays visible on the one error line.
    """
    return _kafka_name_problem(cluster_id, "", repr)


def check_cluster_id(cluster_id: Any, where: str) -> str:
    problem = cluster_id_problem(cluster_id)
    if problem:
        raise InputError(f"{where}: {problem}")
    return cluster_id


def check_topic_name(name: Any, where: str) -> str:
    problem = topic_name_problem(name)
    if problem:
        raise InputError(f"{where}: {problem}")
    return name


# --------------------------------------------------------------------------- JSON


class _Refused(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _Refused(f"duplicate key {json.dumps(k)} in one object (JSON keys must be unique)")
            seen.add(k)
    return out


def _no_constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def json_depth(text: str) -> int:
    """Deepest bracket nesting outside strings (checked before parsing: deep input exhausts the
    parser's recursion). Vectorised: a 30 MB snapshot takes a tenth of a second."""
    import numpy as np

    if "\\" in text:  # escaped quotes: strip strings exactly (slower, and rare in snapshots)
        text = _STRINGS.sub("", text)
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)
    # Without escapes every quote toggles "inside a string".
    inside = np.bitwise_xor.accumulate((data == ord('"')).view(np.uint8)).view(bool)
    opens = ((data == ord("[")) | (data == ord("{"))) & ~inside
    closes = ((data == ord("]")) | (data == ord("}"))) & ~inside
    where = np.flatnonzero(opens | closes)
    if not len(where):
        return 0
    return int(np.cumsum(np.where(opens[where], 1, -1)).max())


def loads_json(text: str, source: str) -> Any:
    """Parse JSON strictly; raise InputError('<source>: ...') on any problem."""
    if json_depth(text) > MAX_JSON_DEPTH:
        raise InputError(f"{source}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{source}: not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except _Refused as exc:
        raise InputError(f"{source}: {exc}") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer literal of more than 4300 digits
        raise InputError(f"{source}: not usable JSON: {str(exc).splitlines()[0][:120]}") from None


def read_text(path: str | Path, what: str = "file") -> str:
    """A UTF-8 text file, with every file-system failure named as an InputError."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: {what} does not exist") from None
    except IsADirectoryError:
        raise InputError(f"{p}: is a directory, expected a {what}") from None
    except PermissionError:
        raise InputError(f"{p}: {what} is not readable (permission denied)") from None
    except OSError as exc:
        raise InputError(f"{p}: cannot read {what} ({exc.strerror or exc})") from None
    if b"\x00" in data:
        raise InputError(f"{p}: {what} is binary (holds NUL bytes), expected UTF-8 text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: {what} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def read_json(path: str | Path, what: str = "JSON file") -> Any:
    return loads_json(read_text(path, what), str(path))


# --------------------------------------------------------------------------- output paths


def check_output_file(path: str | Path, flag: str) -> Path:
    """An output file we may create: not a directory, and no parent is an existing file."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{flag} {p}: is a directory, expected a file name")
    return _check_parents(p, flag)


def check_output_dir(path: str | Path, flag: str) -> Path:
    """An output directory we may create: not an existing file, and no parent is a file."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(f"{flag} {p}: is a file, expected a directory")
    return _check_parents(p, flag)


def _check_parents(p: Path, flag: str) -> Path:
    """The nearest existing parent must be a directory (mkdir -p would fail under a file)."""
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{flag} {p}: {parent} is a file, not a directory")
            break
    return p
