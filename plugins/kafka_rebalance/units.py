"""Units: the one owner of how sizes, rates and durations are written and read.

Every size an operator reads (plan's summary line, the approval text, the report, progress lines,
``status``) is written by ``human_bytes`` in binary (IEC) units, and every rate by ``human_rate`` as
bytes/s in the same units ("50.0 MiB/s"), so one plan never shows "7,481.7 MiB" in one place and
"7.3 GiB" in another. ``parse_bytes`` reads the same units back from flags.
"""

from __future__ import annotations

import re

# Throttles in the trigger form and clusters.yaml are in MB/s of 1,048,576 bytes, as Kafka's docs count them.
MIB = 1024 * 1024

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
_FACTORS = {u.lower(): 1024**i for i, u in enumerate(_UNITS)}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*(?:/\s*s)?\s*")


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


def parse_bytes(text: str, flag: str) -> int:
    """A size or rate as an operator writes it: ``52428800`` (bytes), ``50MiB``, ``50 MiB/s``, ``1.5GiB``.

    Only binary units (KiB..EiB, case-insensitive, B for bytes) are accepted: ``50MB`` is refused
    rather than guessed at, because MB means 10^6 to some and 2^20 to others.
    """
    m = _SIZE.fullmatch(text)
    unit = m.group(2).lower() if m else ""
    if m is None or unit not in {"", *_FACTORS}:
        raise ValueError(f"{flag}: {text!r} is not a size; give bytes (52428800) or a binary unit "
                         f"({', '.join(_UNITS[1:])}, e.g. 50MiB or 50MiB/s)")
    number = m.group(1)
    factor = _FACTORS.get(unit, 1)
    if "." in number:
        value = float(number) * factor
        if value != int(value):
            raise ValueError(f"{flag}: {text!r} is not a whole number of bytes ({value:,.2f})")
        return int(value)
    return int(number) * factor


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
