"""SIGTERM stops a test run the way Ctrl-C does: fixtures' teardowns run, so what they started is stopped.

A test run is stopped with SIGTERM to its process group (``timeout``, a CI job cancelled, ``kill -- -PGID``).
Python's default for SIGTERM is to die at once, running no ``finally``, no ``atexit`` and no fixture teardown,
and the servers the session started (Kafka brokers, Prometheus, an Airflow API server) run in sessions of their
own, out of reach of that signal, so they would outlive the run: a killed worker once left three Kafka JVMs
running. As a KeyboardInterrupt, pytest ends the session and tears every fixture down, stopping each server by
the pid it recorded. A second SIGTERM kills at once (a teardown that hangs is not waited for forever).
"""

from __future__ import annotations

import signal
import threading
from types import FrameType


def _interrupt(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    raise KeyboardInterrupt(f"stopped by {signal.Signals(signum).name}")


def interrupt_on_sigterm() -> None:
    """In this process: SIGTERM raises KeyboardInterrupt, unless something else already handles SIGTERM."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _interrupt)


def pytest_configure(config) -> None:
    # In the controller and in every xdist worker: each loads the plugins and conftests.
    interrupt_on_sigterm()
