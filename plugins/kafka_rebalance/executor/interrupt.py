"""Stopping a run on SIGTERM or SIGINT without leaving throttles set.

systemd, ``timeout``, CI and Airflow stop a process with SIGTERM; an operator presses Ctrl-C
(SIGINT). Python's defaults kill the process on SIGTERM before any ``finally`` runs (the throttles
stay set), and raise KeyboardInterrupt anywhere on SIGINT, in the middle of a Kafka call whose
client is then left half-way through a request.

A ``StopRequest`` is consulted by the executor instead: a signal is only remembered while a Kafka
call runs, and acted on at the next safe point (before a batch or a step is submitted, or in the
sleep between polls, where the signal interrupts the sleep at once). Acting means raising
``StopSignal`` there, so the executor's own ``finally`` blocks restore the throttles exactly as
after any failure. A second signal while that cleanup runs does not interrupt it: it is reported,
and the cleanup goes on (SIGKILL still ends the process; the ledger then tells the next run what to
restore).

Every other command needs less, and still more than Python's default: its ``finally`` blocks and
``atexit`` functions must run, so that the PEM copies of a client's key stores (cluster/stores.py)
are removed. ``exit_on_signals`` turns both signals into ``SystemExit`` with the shell's code.

Nothing here is installed at import: the CLI's entry point installs ``exit_on_signals`` around every
command and ``execute`` replaces it with ``stop_on_signals`` around its run; the Airflow operator
calls ``request`` from its ``on_kill``.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kafka_rebalance.executor.results import StopReport

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def exit_code(signum: int) -> int:
    """The shell's convention for a process ended by a signal: 128 + its number (143 SIGTERM, 130 SIGINT)."""
    return 128 + signum


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class StopSignal(BaseException):
    """Raised at a safe point once a stop was asked for; a BaseException so ``except Exception`` never swallows it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal_name(signum))
        self.signum = signum

    @property
    def name(self) -> str:
        return signal_name(self.signum)

    @property
    def exit_code(self) -> int:
        return exit_code(self.signum)


class StopRequest:
    """Whether a stop was asked for, and the one place where it turns into ``StopSignal``."""

    def __init__(self, note: Callable[[str], None]) -> None:
        self.note = note  # how a second signal is reported (stderr for the CLI, the task log for Airflow)
        self.signum: int | None = None
        self._sleeping = 0
        self._raised = False

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def request(self, signum: int) -> None:
        """A signal arrived (called from its handler, in the main thread)."""
        if self.signum is None:
            self.signum = signum
            if self._sleeping:
                self._raise()
            return
        self.note(f"execute: {signal_name(signum)} received while stopping after {signal_name(self.signum)}: still "
                  "restoring the throttles this run set (SIGKILL would leave them to the next run or `cancel`)")

    def check(self) -> None:
        """A safe point: stop here if a signal arrived (once; the cleanup that follows is never interrupted)."""
        if self.signum is not None and not self._raised:
            self._raise()

    def sleep(self, sleep: Callable[[float], None], seconds: float) -> None:
        """``sleep(seconds)``, cut short by a stop: a signal during it raises ``StopSignal`` at once."""
        self.check()
        self._sleeping += 1
        try:
            sleep(seconds)
        finally:
            self._sleeping -= 1

    def _raise(self) -> None:
        assert self.signum is not None
        self._raised = True
        raise StopSignal(self.signum)


@contextmanager
def stop_on_signals(stop: StopRequest) -> Iterator[StopRequest]:
    """SIGTERM and SIGINT go to ``stop`` inside the block; the previous handlers come back after it.

    Python lets only the main thread install handlers: elsewhere (an in-process caller's worker
    thread) the block runs with the process's handlers as they are.
    """
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {s: signal.signal(s, lambda signum, frame: stop.request(signum)) for s in SIGNALS}
    try:
        yield stop
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _exit(signum: int, frame: object) -> None:
    try:
        print(f"stopped by {signal_name(signum)}", file=sys.stderr)
    except (OSError, RuntimeError):  # stderr closed, or the signal came in the middle of a write to it
        pass
    raise SystemExit(exit_code(signum))


@contextmanager
def exit_on_signals() -> Iterator[None]:
    """SIGTERM and SIGINT end the process as ``SystemExit(128 + signal)`` inside the block.

    Python's default ends the process on SIGTERM without running any ``finally`` or ``atexit``
    function, and turns SIGINT into a KeyboardInterrupt that Click reports as "Aborted!", exit 1.
    A ``stop_on_signals`` block inside this one takes the signals over and gives them back after it.
    Only the main thread may install handlers: elsewhere the block runs with the process's own.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, _exit) for s in SIGNALS}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def stop_message(report: StopReport, plan_dir: str) -> str:
    """The one line a stopped run ends with: what was done, what the stop did, and what is left running."""
    line = f"execute: stopped by {report.signal} after {report.done}/{report.total} {report.unit} finished; "
    if report.throttles_pending:
        line += (f"throttles this run set are restored except on {', '.join(report.throttles_pending)} "
                 "(unreachable: the next run or `cancel` restores them)")
    else:
        line += "every throttle this run set is restored to its value before the run"
    if report.in_flight is None:
        line += "; the cluster did not say which moves are still in flight"
    elif report.in_flight:
        line += (f"; {len(report.in_flight)} move(s) left running in Kafka, no longer throttled (running execute again "
                 f"watches them to their end; `kafka-rebalance cancel --plan {plan_dir}` reverts them)")
    else:
        line += "; no move of the plan is in flight"
    return line
