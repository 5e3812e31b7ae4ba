"""Units: the binary megabyte, and human-readable sizes and durations for tables, progress lines and reports."""

from __future__ import annotations

# Throttles in the trigger form and clusters.yaml are in MB/s of 1,048,576 bytes, as Kafka's docs count them.
MIB = 1024 * 1024


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} TiB"


def human_seconds(s: float | None) -> str:
    if s is None:
        return "unknown"
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"
