"""Progress bars: on a terminal (a real pseudo-terminal) plan, execute and gather draw rich bars; piped, the
same commands print plain lines without one ANSI code, as before bars existed. The terminal runs are real
subprocesses (a bar needs a TTY); the piped ones run in-process (output captured, as in a pipe)."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from kafka_rebalance.snapshot import load_snapshot, snapshot_from_dict, write_snapshot
from tests.support.cli_inprocess import CliResult, run_cli
from tests.support.plans import approve, move_one_replica, write_plan

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample-cluster.json"
ESC = "\x1b["
BAR = "━"  # rich's bar glyph


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")}
    return {**env, "TERM": "xterm-256color", "COLUMNS": "160", "LINES": "40"}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "kafka_rebalance.cli", *args]


def on_terminal(*args: str, timeout: float = 120.0) -> tuple[int, str, str]:
    """Run the command with stderr on a pseudo-terminal (as a person's shell has it): (exit code, stdout, terminal)."""
    master, slave = os.openpty()
    proc = subprocess.Popen(_cli(*args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=_env(), cwd=ROOT)
    os.close(slave)
    drawn = bytearray()
    try:
        while True:
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                proc.kill()
                pytest.fail(f"{args[0]}: no output for {timeout} s")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other end closed: the command ended
                break
            if not chunk:
                break
            drawn += chunk
        out = proc.stdout.read().decode() if proc.stdout else ""
        return proc.wait(timeout=timeout), out, drawn.decode("utf-8", "replace")
    finally:
        os.close(master)
        if proc.stdout:
            proc.stdout.close()


def piped(*args: str) -> CliResult:
    """The command with its output captured (not a terminal), in-process: the same code path, no interpreter start."""
    return run_cli(*args)


def test_plan_draws_its_stages_on_a_terminal_and_prints_one_plain_line_when_piped(tmp_path: Path) -> None:
    code, _, drawn = on_terminal("plan", "--snapshot", str(SAMPLE), "--out", str(tmp_path / "tty"))
    assert code == 0, drawn
    assert ESC in drawn and "plan: " in drawn and "/3" in drawn  # the stage bar: "plan: planning ... 1/3"
    assert "written " in drawn
    r = piped("plan", "--snapshot", str(SAMPLE), "--out", str(tmp_path / "pipe"))
    assert r.code == 0 and ESC not in r.stderr and BAR not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and r.stderr.startswith("written ")
    # The same plan either way: the bar changes nothing but the terminal.
    assert json.loads((tmp_path / "tty" / "plan.json").read_text())["plan_hash"] == \
        json.loads((tmp_path / "pipe" / "plan.json").read_text())["plan_hash"]


def _approved_plan(tmp_path: Path) -> tuple[Path, Path]:
    raw = json.loads(SAMPLE.read_text())
    raw["captured_at"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # young enough to start
    snap_path = write_snapshot(snapshot_from_dict(raw, "test"), tmp_path / "snapshot.json")
    snap = load_snapshot(snap_path)
    plan = write_plan(tmp_path / "plan", snap, [move_one_replica(snap, 4), move_one_replica(snap, 4, skip=4)])
    return approve(plan), snap_path


def test_execute_draws_a_bytes_bar_on_a_terminal_and_keeps_its_plain_lines_when_piped(tmp_path: Path) -> None:
    plan, snap = _approved_plan(tmp_path / "tty")
    code, out, drawn = on_terminal("execute", "--plan", str(plan), "--simulate", str(snap), "--poll-interval", "2")
    assert code == 0, drawn
    head = json.loads((plan / "plan.json").read_text())["plan_hash"][:12]
    assert ESC in drawn and BAR in drawn and f"plan {head}" in drawn and "100%" in drawn
    assert json.loads(out)["status"] == "complete"
    plan, snap = _approved_plan(tmp_path / "pipe")
    r = piped("execute", "--plan", str(plan), "--simulate", str(snap), "--poll-interval", "2")
    assert r.code == 0, r.stderr
    assert ESC not in r.stderr and BAR not in r.stderr and "100%" not in r.stderr
    assert "continuous: 8/8 steps, predicted " in r.stderr  # the executor's own lines, as before


def test_gather_shows_what_it_waits_for_on_a_terminal_and_fails_in_one_line_when_piped() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ("gather", "--bootstrap-server", f"127.0.0.1:{port}", "--cluster-id", "c1", "--out", "/tmp/never-written.json",
            "--connect-timeout", "1")
    code, _, drawn = on_terminal(*args)
    assert code == 2 and ESC in drawn and f"connecting to 127.0.0.1:{port}" in drawn
    r = piped(*args)
    lines = r.stderr.strip().splitlines()
    assert r.code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and ESC not in r.stderr
