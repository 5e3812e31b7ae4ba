"""Servers a test starts, stopped by process group and proven gone by reading /proc.

Each server starts in a session of its own (``start_new_session=True``: its session and process
group ids are its pid). Stopping only its process group is not enough: Airflow's task supervisor
moves every task into a process group of its own (``setpgid``), and a process whose parent exits
is reparented to init, out of reach of a walk over children. Both stay in the server's session,
and a process group never spans sessions, so ``stop`` signals every process group of the session
(SIGTERM, then SIGKILL after a timeout) and waits until no process of the session is left. A
descendant that left the session (``setsid``) is found by its parent while that lives: a watcher
thread records the tree every second, and such a session is stopped the same way.

A process is one pid *and* its start time (/proc/PID/stat field 22), so a pid the kernel reused
after a process exited is never signalled nor counted; a session is ours only while the process
holding its id, if any, is the leader we recorded (Linux reuses a pid only once no session or group
holds it, and a new process with that pid leads a session of its own). Nothing is looked up by name.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROC = Path("/proc")


@dataclass(frozen=True)
class Proc:
    pid: int
    start: int  # clock ticks after boot: with the pid, names one process
    ppid: int
    pgid: int
    sid: int
    state: str  # Z: exited, waiting for its parent to reap it
    cmd: str

    def __str__(self) -> str:
        return f"pid {self.pid} (pgid {self.pgid}, sid {self.sid}, ppid {self.ppid}, state {self.state}): {self.cmd[:160]}"


def read_proc(pid: int) -> Proc | None:
    """The process with this pid now, or None when there is none."""
    try:
        stat = (PROC / str(pid) / "stat").read_text()
        cmdline = (PROC / str(pid) / "cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # comm (field 2) is in parentheses and may hold spaces and parentheses: split after the last one.
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    cmd = cmdline.replace(b"\0", b" ").decode(errors="replace").strip() or f"[{comm}]"
    return Proc(pid, int(fields[19]), int(fields[1]), int(fields[2]), int(fields[3]), fields[0], cmd)


def processes() -> list[Proc]:
    return [p for d in PROC.iterdir() if d.name.isdigit() and (p := read_proc(int(d.name))) is not None]


def alive(p: Proc) -> bool:
    """Whether that very process still runs (a zombie has exited; a reused pid is another process)."""
    now = read_proc(p.pid)
    return now is not None and now.start == p.start and now.state not in ("Z", "X")


def descendants(roots: Iterable[int], among: Sequence[Proc] | None = None) -> list[Proc]:
    """Every live descendant of the ``roots`` pids, by parent links."""
    procs = processes() if among is None else among
    children: dict[int, list[Proc]] = {}
    for p in procs:
        children.setdefault(p.ppid, []).append(p)
    found: list[Proc] = []
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child.pid)
    return found


class ProcessSessions:
    """The servers one test module starts, each in its own session, and everything they start."""

    def __init__(self, watch_seconds: float = 1.0) -> None:
        self.leaders: list[subprocess.Popen[Any]] = []
        self.sessions: dict[int, int] = {}  # sid -> its leader's start time: every process in one is ours
        self.seen: dict[tuple[int, int], Proc] = {}  # every process of ours ever observed
        self._lock = threading.Lock()
        self._stop_watching = threading.Event()
        self._watch_seconds = watch_seconds
        self._watcher: threading.Thread | None = None

    def start(self, args: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
        proc = subprocess.Popen(args, start_new_session=True, **popen)
        leader = read_proc(proc.pid)
        assert leader is not None and leader.sid == proc.pid, f"{args[0]} exited at once, or not in a session of its own"
        with self._lock:
            self.leaders.append(proc)
            self.sessions[proc.pid] = leader.start  # start_new_session: sid == pgid == pid
            self.seen[(leader.pid, leader.start)] = leader
        if self._watcher is None:
            self._watcher = threading.Thread(target=self._watch, name="process-sessions", daemon=True)
            self._watcher.start()
        return proc

    def members(self) -> list[Proc]:
        """Every live process of ours now, recorded in ``seen`` (with the sessions it opened)."""
        procs = processes()
        by_pid = {p.pid: p for p in procs}
        with self._lock:
            in_session = [p for p in procs if self._ours(p, by_pid)]
            # Descendants that called setsid: their sessions are ours too.
            for p in descendants({p.pid for p in in_session}, procs):
                if p.sid == p.pid and p.sid not in self.sessions:
                    self.sessions[p.sid] = p.start
            mine = [p for p in procs if self._ours(p, by_pid)]
            for p in mine:
                self.seen[(p.pid, p.start)] = p
        return [p for p in mine if p.state not in ("Z", "X")]

    def _ours(self, p: Proc, by_pid: dict[int, Proc]) -> bool:
        start = self.sessions.get(p.sid)
        leader = by_pid.get(p.sid)
        return start is not None and (leader is None or leader.start == start)

    def process_groups(self) -> set[int]:
        return {p.pgid for p in self.members()}

    def _watch(self) -> None:
        while not self._stop_watching.wait(self._watch_seconds):
            self.members()

    def _signal(self, sig: signal.Signals) -> None:
        members = self.members()
        for pgid in sorted({p.pgid for p in members}):
            try:
                os.killpg(pgid, sig)
            except ProcessLookupError:
                pass
        # Recorded once but in none of our sessions now (a setsid the watcher did not see): by pid.
        current = {(p.pid, p.start) for p in members}
        for p in self.survivors():
            if (p.pid, p.start) not in current:
                try:
                    os.kill(p.pid, sig)
                except ProcessLookupError:
                    pass

    def _wait_gone(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            for leader in self.leaders:
                leader.poll()  # reap our own children as they exit
            if not self.members() and not self.survivors():
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.2)

    def stop(self, timeout: float = 60.0) -> None:
        """SIGTERM to every process group of ours, SIGKILL to what is left after ``timeout``."""
        self._signal(signal.SIGTERM)
        if not self._wait_gone(timeout):
            self._signal(signal.SIGKILL)
            self._wait_gone(10.0)
        self._stop_watching.set()
        for leader in self.leaders:
            try:
                leader.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def survivors(self) -> list[Proc]:
        """Every process of ours ever observed that still runs, read from /proc."""
        with self._lock:
            seen = list(self.seen.values())
        return [p for p in seen if alive(p)]
