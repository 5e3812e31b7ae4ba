"""tests/support/interrupt.py on real pytest runs: SIGTERM to a run's process group (as ``timeout`` sends it)
tears the session fixtures down, so a server a fixture started in a session of its own is stopped, with and
without xdist workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.processes import alive, read_proc

ROOT = Path(__file__).resolve().parents[1]

# A session fixture starting a server the way the sandbox starts Kafka (a session of its own, so the run's
# process-group signal never reaches it) and stopping it by pid at teardown; a test that waits to be stopped.
RUN = r'''
import os, subprocess, sys, time
from pathlib import Path

import pytest

OUT = Path(os.environ["INTERRUPT_OUT"])


@pytest.fixture(scope="session")
def server():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    yield proc
    proc.terminate()
    proc.wait(30)
    (OUT / "torn-down").write_text(str(proc.pid))


def test_waits_to_be_stopped(server):
    (OUT / "server.tmp").write_text(str(server.pid))
    os.rename(OUT / "server.tmp", OUT / "server.pid")
    time.sleep(600)
'''


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, f"the run ended before writing {path.name}: {proc.stdout.read() if proc.stdout else ''}"
        assert time.monotonic() < deadline, f"no {path.name} after {seconds:.0f} s"
        time.sleep(0.1)


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["one-process", "xdist"])
def test_sigterm_to_the_run_stops_what_its_fixtures_started(tmp_path, workers):
    tests = tmp_path / "run"
    tests.mkdir()
    (tests / "test_run.py").write_text(RUN)
    (tests / "pytest.ini").write_text("[pytest]\n")
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "INTERRUPT_OUT": str(out), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "tests.support.interrupt", "-p", "no:cacheprovider",
                             *workers, "test_run.py"], cwd=tests, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    server = None
    try:
        _wait_for(out / "server.pid", proc, 120)
        server = read_proc(int((out / "server.pid").read_text()))
        assert server is not None and alive(server)
        os.killpg(proc.pid, signal.SIGTERM)
        output, _ = proc.communicate(timeout=60)
        left = alive(server)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if server is not None and alive(server):  # what a failing run left: this test's own server, by pid
            os.kill(server.pid, signal.SIGKILL)
    assert (out / "torn-down").exists() and (out / "torn-down").read_text() == str(server.pid), output
    assert not left
    assert proc.returncode != 0  # an interrupted run never reads as a pass
