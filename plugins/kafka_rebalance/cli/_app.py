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
from typer.core import TyperGroup

from kafka_rebalance.errors import RebalanceError

EXIT_USAGE = 2


def _one_line(message: str) -> None:
    # Messages carry broker lists like [4, 4, 7]: print plainly, not as Rich markup.
    print("error: " + " ".join(message.split()), file=sys.stderr)


class OneLineErrors(TyperGroup):
    """Every failure the user can cause ends as ONE ``error:`` line and exit 2, in-process too.

    Click's own usage errors (a bad flag value, an unknown option) would print a usage
    block and a boxed panel; file-system errors would print a traceback.
    """

    def main(  # type: ignore[override]  # Click's keyword-only extras differ by version; all are passed on
        self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
        standalone_mode: bool = True, **extra: Any,
    ) -> Any:  # fmt: skip
        from typer._click.exceptions import ClickException, NoArgsIsHelpError
        from typer.exceptions import Abort

        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as exc:  # bare `kafka-rebalance` or a bare group: the help text
            print(exc.ctx.get_help() if exc.ctx else exc.format_message(), file=sys.stderr)
            code = EXIT_USAGE
        except ClickException as exc:
            _one_line(exc.format_message())
            code = EXIT_USAGE
        except RebalanceError as exc:
            _one_line(str(exc))
            code = EXIT_USAGE
        except (IsADirectoryError, NotADirectoryError, PermissionError, FileNotFoundError, FileExistsError) as exc:
            # A path the user named: say which and why (the edges name the field where they can).
            _one_line(f"{exc.filename}: {exc.strerror}")
            code = EXIT_USAGE
        except Abort:
            code = 1
        code = code if isinstance(code, int) else 0
        if not standalone_mode:
            return code
        sys.exit(code)


app = typer.Typer(
    cls=OneLineErrors,
    name="kafka-rebalance",
    help="Minimal-movement, throttled, verified rebalancing for Apache Kafka clusters.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
# Status lines are never wrapped: one line each, greppable in a CI log however long its paths.
stderr = Console(stderr=True, highlight=False, soft_wrap=True)
# Wide enough for the broker table when piped to a file or CI log.
stdout = Console(highlight=False, width=None if sys.stdout.isatty() else 160)


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    raise typer.Exit(code)


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
