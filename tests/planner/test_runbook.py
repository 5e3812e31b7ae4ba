"""RUNBOOK.md with hostile values: every shell line is safe to paste, scratch files are private."""

from __future__ import annotations

import os
import re
import shlex
import stat
import subprocess
from pathlib import Path

import pytest

from kafka_rebalance.planner import runbook
from tests.planner._helpers import part, plan_dir, read, snapshot

# Printable (shlex.quote'd, so shlex.split reads it back) and multi-line (bash's $'...' quoting).
HOSTILE_CLUSTERS = ["$(touch CANARY) `touch CANARY2`; rm -rf ~ 'it''s' \"q\" \\ é",
                    "$(touch CANARY)\n```sh\ntouch CANARY3\n```\t\u0085\u2028'\\"]  # fmt: skip
HOSTILE_TOPICS = ["a b$(touch CANARY4)", "x`y`\n```sh", "``"]
ALLOWED_COMMANDS = ("export BOOTSTRAP=", 'WORK="$(mktemp ', "jq ", "sha256sum ", "kafka-reassign-partitions.sh ",
                    "kafka-leader-election.sh ", 'rm -r -- "$WORK"')  # fmt: skip


@pytest.fixture(scope="module", params=HOSTILE_CLUSTERS, ids=["printable", "multi-line"])
def hostile(request, tmp_path_factory) -> tuple[str, dict]:  # noqa: ANN001
    # A real plan (moves, a reorder, elections in several chunks), then the values a snapshot
    # file controls replaced by hostile ones: render() is what the planner calls with them.
    snap = snapshot([(b, f"r{b % 3}") for b in range(6)],
                    [part("orders", i, [0, 1, 2] if i % 2 else [1, 0, 2]) for i in range(12)])  # fmt: skip
    out = tmp_path_factory.mktemp("runbook") / "p"
    plan_dir(snap, out, election_batch_size=2)
    manifest = read(out, "plan.json")
    manifest["cluster_id"] = request.param
    manifest["snapshot"]["captured_at"] = "2026\n```sh\ntouch CANARY5\n```"
    manifest["options"]["exclude_topics"] = HOSTILE_TOPICS
    n_elections = len(read(out, "election.json")["partitions"])
    assert n_elections > 2 and any(b["kind"] == "move" for b in manifest["batches"])
    return runbook.render(manifest, n_elections), manifest


def shell_lines(text: str) -> list[str]:
    lines, inside = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            assert line in ("```sh", "```") and inside == (line == "```"), f"unexpected fence {line!r}"
            inside = not inside
        elif inside:
            lines.append(line)
    assert not inside, "an unclosed code block"
    return lines


def test_every_shell_line_is_an_expected_command(hostile) -> None:  # noqa: ANN001
    text, _ = hostile
    lines = shell_lines(text)
    assert len(lines) > 10
    for line in lines:
        assert line.startswith(ALLOWED_COMMANDS), line
    subprocess.run(["bash", "-n"], input="\n".join(lines), text=True, check=True)  # every line parses
    assert "/tmp" not in text, "scratch files must not use shared /tmp names"
    # The hostile values never reach a shell line except as the one quoted jq argument.
    others = [line for line in lines if not line.startswith("jq -e --arg cluster ")]
    assert len(others) == len(lines) - 1
    for raw in [*HOSTILE_TOPICS, "touch CANARY"]:
        assert not any(raw in line for line in others), raw


def test_the_cluster_id_is_one_quoted_argument(hostile, tmp_path: Path) -> None:  # noqa: ANN001
    text, manifest = hostile
    raw = manifest["cluster_id"]
    [check] = [line for line in shell_lines(text) if line.startswith("jq -e ")]
    expected = ["-e", "--arg", "cluster", raw, ".cluster_id == $cluster", "plan.json"]
    if raw.isprintable():
        assert shlex.split(check) == ["jq", *expected]
    # bash, which the operator pastes into, must read it the same way and run nothing from it.
    as_printf = "printf '%s\\0' " + check.removeprefix("jq ")
    r = subprocess.run(["bash", "-c", as_printf], cwd=tmp_path, capture_output=True, check=True,
                       env={**os.environ, "LC_ALL": "C.UTF-8"})  # fmt: skip
    assert r.stdout.split(b"\0")[:-1] == [a.encode() for a in expected]
    assert list(tmp_path.iterdir()) == []


def test_prose_values_cannot_open_a_code_block(hostile) -> None:  # noqa: ANN001
    text, manifest = hostile
    title = text.splitlines()[0]
    assert title.startswith("# Rebalance runbook: `") and "\n" not in title
    for topic in HOSTILE_TOPICS:
        assert runbook._code(topic) in text
    lines = [line for line in shell_lines(text) if not line.startswith("jq -e --arg cluster ")]
    assert not any("touch CANARY" in line for line in lines)
    # Code spans round-trip: the fence is longer than any backtick run inside.
    assert runbook._code("``") == "``` `` ```" and runbook._code("a`b") == "``a`b``"


def test_scratch_directory_is_private_and_per_plan(hostile, tmp_path: Path) -> None:  # noqa: ANN001
    text, manifest = hostile
    [make] = [line for line in shell_lines(text) if line.startswith("WORK=")]
    script = f'{make}\nprintf %s "$WORK"'
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    first = Path(subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, check=True).stdout)
    second = Path(subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, check=True).stdout)
    assert first != second and first.parent == second.parent == tmp_path
    assert stat.S_IMODE(first.stat().st_mode) == 0o700
    assert re.fullmatch(r"kafka-rebalance-[A-Za-z0-9._-]+-" + manifest["snapshot"]["sha256"][:12] + r"\.\w{6}", first.name)
    # Every election chunk lives in that directory.
    chunks = [line for line in shell_lines(text) if line.startswith("jq '{partitions")]
    assert len(chunks) > 1 and all(line.count('"$WORK/election-') == 2 for line in chunks)
