"""Units: the one owner of how sizes, rates and durations are written and read.

Every size an operator reads (plan's summary line, the approval text, the report, progress lines,
``status``) is written by ``human_bytes`` in binary (IEC) units, and every rate by ``human_rate`` as
bytes/s in the same units ("50.0 MiB/s"), so one plan never shows "7,481.7 MiB" in one place and
"7.3 GiB" in another.

``parse_bytes`` reads every size or rate an operator writes (the ``--throttle`` flag, clusters.yaml,
the trigger form), and ``SIZE_PATTERN`` is its syntax as the form's JSON schema checks it at trigger
time. ``exact_rate`` writes a rate back in that syntax without rounding (a form's default).
"""

from __future__ import annotations

import re
from fractions import Fraction

MIB = 1024 * 1024

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_PREFIXES = "KMGTPE"
# A longer value is not a size anyone meant; int() of thousands of digits is also refused by Python itself.
_MAX_TEXT = 64
_NUMBER = r"[0-9]+(?:\.[0-9]+)?"
# Everything that looks like a number and letters, so a wrong unit gets its own reason.
_LOOSE = re.compile(rf"\s*(-?)\s*({_NUMBER})\s*([A-Za-z]*)\s*(/\s*[A-Za-z]*)?\s*")
# Prefix letters and the i of a binary unit in either case ("50mib", "1GIB": nobody means bits
# there). A decimal unit or a bare B must have a capital B: "50Mb" or "50mb" is megabits to a
# network engineer and megabytes to others, and guessing wrong moves data 8x faster than asked.
_UNIT = rf"(?:[{_PREFIXES}{_PREFIXES.lower()}](?:[Ii][Bb]|B)|B)"
SIZE_PATTERN = rf"^\s*{_NUMBER}\s*{_UNIT}?\s*(?:/\s*[Ss])?\s*$"
_STRICT = re.compile(SIZE_PATTERN)
_SPELLINGS = ("bytes (52428800) or a number with a unit: KB, MB, GB, TB, PB, EB (powers of 1000) or KiB, MiB, GiB, "
              "TiB, PiB, EiB (powers of 1024), /s optional, e.g. 50MB/s or 50MiB/s")


def human_bytes(n: float) -> str:
    """``1234`` -> ``1.2 KiB``: whole bytes below 1 KiB, one decimal above, up to EiB."""
    for unit in _UNITS:
        if abs(n) < 1024 or unit == _UNITS[-1]:
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable: the last unit returns")


def human_rate(bytes_per_sec: float) -> str:
    """A rate in bytes/s, in the units of ``human_bytes``: ``52428800`` -> ``50.0 MiB/s``."""
    return f"{human_bytes(bytes_per_sec)}/s"


def human_range(lo: float, hi: float) -> str:
    """The range of a rate option as it reads in help and errors: ``1.0 KiB/s to 8.0 EiB/s``."""
    return f"{human_rate(lo)} to {human_rate(hi)}"


def _factor(unit: str) -> int:
    """Bytes per ``unit``, for a unit ``SIZE_PATTERN`` accepts."""
    if unit in ("", "B"):
        return 1
    power = _PREFIXES.index(unit[0].upper()) + 1
    return 1024**power if len(unit) == 3 else 1000**power


def _power(base: int, prefix: str) -> str:
    """``1000, "M"`` -> ``1000^2``; ``1024, "K"`` -> ``1024``."""
    power = _PREFIXES.index(prefix) + 1
    return str(base) if power == 1 else f"{base}^{power}"


def parse_bytes(text: str, field: str) -> int:
    """A size or rate as an operator writes it: ``52428800`` (bytes), ``50MB`` (50 x 10^6), ``50 MiB/s``,
    ``1.5GiB``, ``4kib``. Raises ValueError with one line naming ``field`` and the value.

    The range is the caller's: an option's (``OptionField.problem``) says what it allows.
    """
    if len(text) > _MAX_TEXT:
        raise ValueError(f"{field}: {text[:_MAX_TEXT]!r}... is not a size ({len(text)} characters); give {_SPELLINGS}")
    loose = _LOOSE.fullmatch(text)
    if loose is not None and loose.group(1):
        raise ValueError(f"{field}: {text!r} is negative; a size or rate is at least 0")
    if loose is not None and _STRICT.fullmatch(text) is None:
        number, unit = loose.group(2), loose.group(3)
        if unit == "b":
            raise ValueError(f"{field}: {text!r} is ambiguous: a lowercase b means bits; write {number}B for bytes")
        prefix = unit[:1].upper()
        if prefix and prefix in _PREFIXES and unit[1:] in ("", "i", "I", "b"):
            decimal, binary = f"{number}{prefix}B ({number} x {_power(1000, prefix)} bytes)", \
                f"{number}{prefix}iB ({number} x {_power(1024, prefix)} bytes)"
            why = "is ambiguous: a lowercase b means bits" if unit[1:] == "b" else "has no B"
            raise ValueError(f"{field}: {text!r} {why}; write {decimal} or {binary}")
    m = _STRICT.fullmatch(text)
    if m is None or loose is None:
        raise ValueError(f"{field}: {text!r} is not a size or rate; give {_SPELLINGS}")
    value = Fraction(loose.group(2)) * _factor(loose.group(3))
    if value.denominator != 1:
        raise ValueError(f"{field}: {text!r} is not a whole number of bytes ({float(value):,.2f})")
    return int(value)


def exact_rate(bytes_per_sec: int) -> str:
    """A rate in ``parse_bytes``' syntax that reads back as exactly ``bytes_per_sec``: ``50MiB/s``, ``50MB/s``, ``1000B/s``."""
    for base, suffix in ((1024, "iB"), (1000, "B")):
        for power in range(len(_PREFIXES), 0, -1):
            if bytes_per_sec and bytes_per_sec % base**power == 0:
                return f"{bytes_per_sec // base**power}{_PREFIXES[power - 1]}{suffix}/s"
    return f"{bytes_per_sec}B/s"


def human_seconds(s: float | None) -> str:
    if s is None:
        return "unknown"
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    if s < 2 * 86400:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    return f"{s // 86400}d{(s % 86400) // 3600:02d}h"  # a snapshot's age: "330d14h", not "7934h"
