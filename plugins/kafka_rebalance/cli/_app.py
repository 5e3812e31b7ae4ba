"""The Typer application every command module registers on.

Errors: a ``RebalanceError`` (or a bad option) ends as ONE line on stderr and exit
code 2, never a traceback. Machine output (JSON) goes to stdout, humans' progress
to stderr, so ``kafka-rebalance assign ... > plan.json`` stays clean.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from rich.console import Console

app = typer.Typer(
    name="kafka-rebalance",
    help="Minimal-movement, throttled, verified rebalancing for Apache Kafka clusters.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
stderr = Console(stderr=True, highlight=False)
# Wide enough for the broker table when piped to a file or CI log.
stdout = Console(highlight=False, width=None if sys.stdout.isatty() else 160)

EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
