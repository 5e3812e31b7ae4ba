"""A busy machine, made on purpose: CPU-bound processes running beside the code under test."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cpu_burners(n: int = 2) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``n`` Python processes spinning on a core each, for as long as the block runs; exactly these
    are stopped (by their own handles, so by pid) when it ends, however it ends."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(n):
            procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        yield procs
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
