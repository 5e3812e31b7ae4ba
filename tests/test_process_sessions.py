"""tests/support/processes.py, on real processes: what a server a test starts leaves when only its
process group is stopped, and that ``ProcessSessions.stop`` leaves nothing."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from tests.support.processes import ProcessSessions, alive, read_proc

# A server as Airflow's are: a child in a process group of its own (Airflow's task supervisor
# setpgid's each task), an orphan in such a group (its parent exited, so init adopted it: no walk
# over the server's children finds it), a child that called setsid; the first and the orphan
# ignore SIGTERM, as a process busy shutting down may.
TREE = r"""
import os, signal, sys, time
out = sys.argv[1]

def child(name, setup):
    if os.fork() == 0:
        setup()
        with open(f"{out}/{name}.tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(f"{out}/{name}.tmp", f"{out}/{name}.pid")
        while True:
            time.sleep(1)

def ignore_term():
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

def own_group():
    os.setpgid(0, 0)
    ignore_term()

child("own-group", own_group)
child("escaped", os.setsid)
middle = os.fork()
if middle == 0:
    os.setpgid(0, 0)  # a task's group; the task forks and exits, its child stays in that group
    child("orphan", ignore_term)
    os._exit(0)
os.waitpid(middle, 0)
while True:
    time.sleep(1)
"""
NAMES = ("own-group", "escaped", "orphan")


def _pids(directory: Path) -> dict[str, int]:
    deadline = time.monotonic() + 30
    while not all((directory / f"{n}.pid").exists() for n in NAMES):
        assert time.monotonic() < deadline, "the process tree did not start"
        time.sleep(0.05)
    return {n: int((directory / f"{n}.pid").read_text()) for n in NAMES}


def test_stop_leaves_nothing_of_a_server_whose_processes_left_its_group(tmp_path: Path) -> None:
    sessions = ProcessSessions(watch_seconds=0.1)
    leader = sessions.start([sys.executable, "-c", TREE, str(tmp_path)])
    try:
        procs = {n: read_proc(pid) for n, pid in _pids(tmp_path).items()}
        assert all(p is not None for p in procs.values())
        own, escaped, orphan = procs["own-group"], procs["escaped"], procs["orphan"]
        assert own is not None and escaped is not None and orphan is not None
        assert own.pgid == own.pid != leader.pid and own.sid == leader.pid
        assert escaped.sid == escaped.pid != leader.pid
        assert orphan.ppid != leader.pid and orphan.pgid != leader.pid and orphan.sid == leader.pid
        members = {p.pid for p in sessions.members()}
        assert {leader.pid, own.pid, escaped.pid, orphan.pid} <= members

        # What stopping the server's own process group did: all three outlive it.
        os.killpg(leader.pid, signal.SIGKILL)
        leader.wait(timeout=10)
        time.sleep(0.5)
        assert [n for n, p in procs.items() if p is not None and alive(p)] == list(NAMES)

        started = time.monotonic()
        sessions.stop(timeout=1.0)
        # SIGTERM first; two of them ignore it, so SIGKILL after the timeout, and nothing is left.
        assert 1.0 <= time.monotonic() - started < 15
        assert sessions.survivors() == []
        assert not [p for p in procs.values() if p is not None and alive(p)]
    finally:
        sessions.stop(timeout=1.0)


def test_a_server_that_exits_on_sigterm_is_stopped_without_sigkill(tmp_path: Path) -> None:
    sessions = ProcessSessions()
    proc = sessions.start([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])
    started = time.monotonic()
    sessions.stop(timeout=30)
    assert time.monotonic() - started < 10 and proc.returncode == -signal.SIGTERM
    assert sessions.survivors() == []
