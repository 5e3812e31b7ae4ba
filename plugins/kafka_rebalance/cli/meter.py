"""Progress for a command that takes a while: a bar on a terminal, a few plain lines anywhere else.

On a terminal (stderr a TTY) a rich bar shows the share done, the amount and the time left. In a
log, a pipe or an Airflow task there is no bar to redraw, so one line is printed each time another
tenth of the work is done: enough to see a long command move, never a line per call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn, TimeRemainingColumn

from kafka_rebalance.cli._app import stderr
from kafka_rebalance.units import human_bytes, human_seconds

Advance = Callable[[float], None]
PLAIN_STEPS = 10


def _amount(value: float, unit: str) -> str:
    if unit == "bytes":
        return human_bytes(value)
    if unit == "seconds":
        return human_seconds(value)
    return f"{value:,.0f} {unit}"


@contextmanager
def meter(description: str, total: float, unit: str = "bytes") -> Iterator[Advance]:
    """Yield ``advance(amount)``: call it as the work gets done (``unit``: bytes, seconds, or a noun)."""
    if total <= 0:
        yield lambda _amount: None
        return
    if stderr.is_terminal:
        amount_column = DownloadColumn() if unit == "bytes" else MofNCompleteColumn()
        with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), amount_column,
                      TimeRemainingColumn(), console=stderr) as bar:
            task = bar.add_task(description, total=total)
            yield lambda amount: bar.advance(task, amount)
        return
    done = 0.0
    mark = 1

    def advance(amount: float) -> None:
        nonlocal done, mark
        done += amount
        while mark <= PLAIN_STEPS and done >= total * mark / PLAIN_STEPS:
            stderr.print(f"{description}: {mark * 100 // PLAIN_STEPS}% ({_amount(min(done, total), unit)} of "
                         f"{_amount(total, unit)})")
            mark += 1

    yield advance
