"""Progress for a command that takes a while: a bar on a terminal, a few plain lines anywhere else.

The one place that chooses (``on_terminal``): every command that can take more than a few seconds
(plan, validate, execute, gather, sandbox seed) reports through ``meter`` (an amount of work) or
``stages`` (named steps of unknown length), never through rich directly.

On a terminal (stderr a TTY) a rich bar shows the share done, the amount and the time left. In a
log, a pipe or an Airflow task there is no bar to redraw and no ANSI code is written: ``meter``
prints one line each time another tenth of the work is done (enough to see a long command move,
never a line per call); ``stages`` prints nothing (the command's own lines say what it did).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from kafka_rebalance.cli._app import stderr
from kafka_rebalance.units import human_bytes, human_seconds

Advance = Callable[[float], None]
PLAIN_STEPS = 10


def on_terminal() -> bool:
    """Whether progress is drawn as a bar: stderr is a terminal a person watches."""
    return bool(stderr.is_terminal)


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
    if on_terminal():
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


class Stages:
    """``begin(name)`` as each stage starts; ``expect(n)`` when more stages turn out to follow than were named."""

    def __init__(self, bar: Progress | None, description: str, total: int) -> None:
        self.bar, self.description, self.total, self.started = bar, description, total, 0
        self.task = bar.add_task(description, total=total) if bar is not None else None

    def expect(self, more: int) -> None:
        self.total += more
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, total=self.total)

    def __call__(self, name: str) -> None:
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=self.started, description=f"{self.description}: {name}")
        self.started += 1


@contextmanager
def stages(description: str, names: Sequence[str]) -> Iterator[Stages]:
    """Yield a ``Stages``: call it with each of the ``names`` as that stage starts (work of unknown length each).

    Not on a terminal it shows nothing, as before stages were shown: the command's own lines say what it did, and
    a failure stays ONE error line (a stage line before it would make two).
    """
    if not on_terminal():
        yield Stages(None, description, len(names))
        return
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=stderr, transient=True) as bar:
        yield Stages(bar, description, len(names))


@contextmanager
def follow(description: str, total: float, done: Callable[[], float]) -> Iterator[Callable[[], None]]:
    """Yield ``refresh()``: on a terminal, a bytes bar redrawn at ``done()`` (read anew at each refresh, e.g. from a
    ledger) of ``total``; elsewhere a no-op that never calls ``done``, since the command prints its own lines."""
    if not on_terminal() or total <= 0:
        yield lambda: None
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), DownloadColumn(),
                  TimeRemainingColumn(), console=stderr) as bar:
        task = bar.add_task(description, total=total, completed=int(min(done(), total)))
        yield lambda: bar.update(task, completed=min(done(), total))
