"""The `kafka-rebalance` CLI in-process, for differential tests that run it thousands of times.

Same argument parsing and output as the installed command; a ``RebalanceError`` becomes
``error: <message>`` and exit 2 as ``kafka_rebalance.cli.main`` does (tests/cli/test_cli.py
covers that path in a real subprocess).
"""

from __future__ import annotations

from dataclasses import dataclass

import typer
from click.testing import CliRunner

from kafka_rebalance.cli import app
from kafka_rebalance.errors import RebalanceError

_RUNNER = CliRunner()
# Built once: typer's own test runner rebuilds the whole command tree on every call (~150 ms).
_COMMAND = typer.main.get_command(app)


@dataclass(frozen=True)
class CliResult:
    code: int
    stdout: str
    stderr: str


def run_cli(*args: str) -> CliResult:
    result = _RUNNER.invoke(_COMMAND, list(args))
    if isinstance(result.exception, RebalanceError):
        return CliResult(2, result.stdout, f"error: {result.exception}\n")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return CliResult(result.exit_code, result.stdout, result.stderr)
