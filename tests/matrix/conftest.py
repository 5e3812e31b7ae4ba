"""The version matrix's table: one row per (Kafka version, mode), printed at the end of the run.

Each matrix test puts a ``matrix`` entry in its ``user_properties`` (version, mode, figures it measured);
the row's result and seconds come from pytest's own report of that test, so a failed or skipped case can
never be printed as a pass. ``KAFKA_MATRIX_TABLE=FILE`` also writes the table there (Markdown).
"""

from __future__ import annotations

import os
from pathlib import Path

_ROWS: list[dict] = []
HEADER = "| Kafka | mode | result | seconds | notes |\n|---|---|---|---|---|\n"


def pytest_runtest_logreport(report):
    props = dict(report.user_properties).get("matrix")
    if props is None:
        return
    # The call phase decides the result; a failure while setting up (no call phase) counts too.
    if report.when == "call" or (report.when == "setup" and not report.passed):
        notes = props.get("notes", "")
        if report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            reason = (crash.message if crash is not None else str(report.longrepr)).strip().splitlines()[0][:200]
            notes = f"{reason}; {notes}" if notes else reason
        result = "pass" if report.passed else ("skipped" if report.skipped else "FAIL")
        _ROWS.append({"version": props["version"], "mode": props["mode"], "result": result,
                      "seconds": round(report.duration), "notes": notes})


def matrix_table(rows: list[dict]) -> str:
    return HEADER + "".join(f"| {r['version']} | {r['mode']} | {r['result']} | {r['seconds']} | {r['notes']} |\n" for r in rows)


def pytest_terminal_summary(terminalreporter):
    if not _ROWS:
        return
    table = matrix_table(_ROWS)
    terminalreporter.write_sep("=", "Kafka version matrix")
    terminalreporter.write(table)
    target = os.environ.get("KAFKA_MATRIX_TABLE")
    if target:
        Path(target).write_text(table)
        terminalreporter.write_line(f"(also written to {target})")
