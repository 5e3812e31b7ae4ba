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
from tests.support.clusters import part, snapshot
from tests.support.plans import plan_dir, read

# Printable (shlex.quote'd, so shlex.split reads it back) and multi-line (bash's $'...' quoting).
HOSTILE_CLUSTERS = ["$(touch CANARY) `touch CANARY2`; rm -rf ~ 'it''s' \"q\" \\ é",
                    "$(touch CANARY)\n```sh\ntouch CANARY3\n```\t\u0085\u2028'\\"]  # fmt: skip
HOSTILE_TOPICS = ["a b$(touch CANARY4)", "x`y`\n```sh", "``"]
ALLOWED_COMMANDS = ("export BOOTSTRAP=", 'WORK="$(mktemp ', "jq ", "sha256sum ", "kafka-reassign-partitions.sh ",
                    "kafka-leader-election.sh ", 'rm -r -- "$WORK"')  # fmt: skip


@pytest.fixture(scope="module", params=HOSTILE_CLUSTERS, ids=["printable", "multi-line"])
def hostile(request, tmp_path_factory) -> tuple[str, dict]:
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


def test_every_shell_line_is_an_expected_command(hostile) -> None:
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


def test_the_cluster_id_is_one_quoted_argument(hostile, tmp_path: Path) -> None:
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


def test_prose_values_cannot_open_a_code_block(hostile) -> None:
    text, manifest = hostile
    title = text.splitlines()[0]
    assert title.startswith("# Rebalance runbook: `") and "\n" not in title
    for topic in HOSTILE_TOPICS:
        assert runbook._code(topic) in text
    lines = [line for line in shell_lines(text) if not line.startswith("jq -e --arg cluster ")]
    assert not any("touch CANARY" in line for line in lines)
    # Code spans round-trip: the fence is longer than any backtick run inside.
    assert runbook._code("``") == "``` `` ```" and runbook._code("a`b") == "``a`b``"


def test_scratch_directory_is_private_and_per_plan(hostile, tmp_path: Path) -> None:
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


# --------------------------------------------------------------------------- what the runbook says


def manifest(batches: list[dict], **summary_extra: object) -> dict:
    """A plan.json as render() reads it, every value chosen by hand."""
    return {
        "cluster_id": "prod-eu", "snapshot": {"sha256": "ab" * 32, "captured_at": "2026-11-25T01:02:03Z"},
        "options": {"throttle_bytes_per_sec": 10485760, "election_batch_size": 2, "exclude_topics": ["audit"],
                    "decommission_brokers": [7]},
        "summary": {"replica_moves": 3, "bytes_moved": 3221225472, "reorders": 1, "leader_elections": 5,
                    "estimated_seconds": 3725.4, **summary_extra},
        "batches": batches,
    }


REORDER = {"id": "001", "kind": "reorder", "partitions": 1, "replica_moves": 0, "bytes": 0, "estimated_seconds": 0}
MOVE = {"id": "002", "kind": "move", "partitions": 2, "replica_moves": 3, "bytes": 3221225472, "estimated_seconds": 125}


def test_runbook_states_the_plan_and_each_command() -> None:
    text = runbook.render(manifest([REORDER, MOVE]), 5)
    lines = text.splitlines()
    assert lines[0] == "# Rebalance runbook: `prod-eu`"
    assert lines[2] == f"Snapshot sha256 `{'ab' * 32}` captured `2026-11-25T01:02:03Z`."
    assert lines[3] == ("3 replica moves (3,221,225,472 bytes), 1 reorders, 5 leader elections in 2 batches, "
                        "throttled at 10,485,760 B/s per broker.")
    # A plan without schedule.json runs only as batches: that is its one figure.
    assert lines[4] == "Run as the batches below, in order (this runbook by hand, or `execute --mode batches`): about 1h02m05s."
    assert "Topics left where they are: `audit`." in lines
    assert "Brokers being emptied: `7`." in lines
    slower = manifest([REORDER, MOVE])
    slower["options"]["throttle_efficiency"] = 0.75
    slower["options"]["move_fixed_seconds"] = 2.5
    assert runbook.render(slower, 5).splitlines()[3].endswith(
        "throttled at 10,485,760 B/s per broker (assuming the brokers deliver 0.75 of it, --throttle-efficiency) "
        "and 2.5 s of fixed cost per move (--move-fixed-seconds).")
    assert "export BOOTSTRAP=broker1:9092" in lines
    assert f"WORK=\"$(mktemp -d -t kafka-rebalance-prod-eu-{'ab' * 6}.XXXXXX)\"" in lines
    assert "jq -e --arg cluster prod-eu '.cluster_id == $cluster' plan.json" in lines
    # Five elections in chunks of two: 0:2, 2:4, 4:6, numbered from 001.
    chunks = [line for line in lines if line.startswith("jq '{partitions")]
    assert chunks[:3] == [
        f"jq '{{partitions: .partitions[{a}:{b}]}}' election.json > \"$WORK/election-{n:03d}.json\" && "
        f"kafka-leader-election.sh --bootstrap-server \"$BOOTSTRAP\" --election-type PREFERRED "
        f"--path-to-json-file \"$WORK/election-{n:03d}.json\""
        for n, (a, b) in enumerate([(0, 2), (2, 4), (4, 6)], start=1)
    ]
    assert len(chunks) == 6  # step 1 and the final elections
    assert "Chunks of 2:" in text
    # The reorder runs without a throttle, the move with the plan's.
    assert "### Batch 001 (reorder: 1 partitions, 0 new replicas, 0 bytes, ~0s)" in lines
    assert ("kafka-reassign-partitions.sh --bootstrap-server \"$BOOTSTRAP\" --reassignment-json-file "
            "batches/001/reassignment.json --execute") in lines
    assert "### Batch 002 (move: 2 partitions, 3 new replicas, 3,221,225,472 bytes, ~2m05s)" in lines
    assert ("kafka-reassign-partitions.sh --bootstrap-server \"$BOOTSTRAP\" --reassignment-json-file "
            "batches/002/reassignment.json --execute --throttle 10485760") in lines
    assert ("kafka-reassign-partitions.sh --bootstrap-server \"$BOOTSTRAP\" --reassignment-json-file "
            "batches/002/reassignment.json --verify") in lines
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == ["## 1. Leader elections (no data moves)", "## 2. Preferred-leader reorders (metadata only, no throttle needed)",
                        "## 3. Replica moves (throttled)", "## 4. Final elections", "## Done"]
    assert "Then run the elections of step 1 again so the new first replicas lead." in lines
    assert text.endswith('```sh\nrm -r -- "$WORK"\n```\n')


def test_few_elections_run_from_the_plan_file_and_empty_steps_are_left_out() -> None:
    m = manifest([MOVE])
    m["options"].update(election_batch_size=5, exclude_topics=[], decommission_brokers=[])
    lines = runbook.render(m, 5).splitlines()
    assert lines.count("kafka-leader-election.sh --bootstrap-server \"$BOOTSTRAP\" --election-type PREFERRED "
                       "--path-to-json-file election.json") == 2
    assert not any(line.startswith(("Topics left", "Brokers being emptied")) for line in lines)
    assert [line for line in lines if line.startswith("## ")] == [
        "## 1. Leader elections (no data moves)", "## 3. Replica moves (throttled)", "## 4. Final elections", "## Done"]


def test_without_elections_or_moves_only_the_reorders_remain() -> None:
    lines = runbook.render(manifest([REORDER]), 0).splitlines()
    assert "None needed." in lines
    assert [line for line in lines if line.startswith("## ")] == [
        "## 1. Leader elections (no data moves)", "## 2. Preferred-leader reorders (metadata only, no throttle needed)",
        "## Done"]
    assert "Then run the elections of step 1 again so the new first replicas lead." not in lines


def test_continuous_estimate_is_stated_beside_the_batches() -> None:
    text = runbook.render(manifest([MOVE], continuous={"estimated_seconds": 61, "physical_bound_seconds": 59.6}), 0)
    assert ("Estimated duration: about 1m01s as `kafka-rebalance execute` runs it by default (continuously, as "
            "`schedule.json` orders the moves); no schedule at this throttle can beat 1m00s (the busiest broker's "
            "bytes in or out at the throttle).") in text
    # A plan of the old layout: its estimated_seconds is the batches' figure.
    assert "Run as the batches below, in order (this runbook by hand, or `execute --mode batches`): about 1h02m05s." in text


def test_a_plan_whose_headline_is_the_continuous_figure_states_the_batches_figure_from_its_own_field() -> None:
    # Today's layout: estimated_seconds is the continuous figure, estimated_seconds_batches the batches'.
    m = manifest([MOVE], continuous={"estimated_seconds": 61, "physical_bound_seconds": 59.6}, estimate_of="continuous",
                 estimated_seconds_batches=125)
    m["summary"]["estimated_seconds"] = 61
    text = runbook.render(m, 0)
    assert "Estimated duration: about 1m01s as `kafka-rebalance execute` runs it by default" in text
    assert "Run as the batches below, in order (this runbook by hand, or `execute --mode batches`): about 2m05s." in text


@pytest.mark.parametrize(("seconds", "text"), [(0, "0s"), (59.4, "59s"), (59.5, "1m00s"), (61, "1m01s"),
                                               (3599, "59m59s"), (3600, "1h00m00s"), (90061, "25h01m01s")])
def test_durations(seconds: float, text: str) -> None:
    assert runbook._dur(seconds) == text


def test_scratch_name_keeps_only_safe_characters_of_the_cluster_id() -> None:
    m = {"cluster_id": "a b/c..", "snapshot": {"sha256": "0123456789abcdef"}}
    assert runbook._tmp_template(m) == "kafka-rebalance-a_b_c-0123456789ab.XXXXXX"
    assert runbook._tmp_template({"cluster_id": "...", "snapshot": {"sha256": "f" * 12}}) == \
        "kafka-rebalance-cluster-ffffffffffff.XXXXXX"
    assert runbook._tmp_template({"cluster_id": "x" * 50, "snapshot": {"sha256": "f" * 12}}) == \
        f"kafka-rebalance-{'x' * 40}-ffffffffffff.XXXXXX"


def test_quoting_of_control_characters() -> None:
    assert runbook._quote("plain") == "plain"
    assert runbook._quote("a b") == "'a b'"
    assert runbook._quote("a\nb'\\") == "$'a\\x0ab\\'\\\\'"
    assert runbook._quote("\u2028") == "$'\\U00002028'"
    assert runbook._sh("jq", "-e", 5) == "jq -e 5"
    assert runbook._code(" x") == '`" x"`' and runbook._code(7) == "`7`"


# --------------------------------------------------------------------------- the whole text, line by line

RULES = [
    "Rules: run batches strictly in order; start a batch only after `--verify` of the previous one reports",
    "every partition complete (that `--verify` also removes the batch's throttles). To undo a running batch:",
    "`kafka-reassign-partitions.sh --bootstrap-server \"$BOOTSTRAP\" --reassignment-json-file batches/NNN/reassignment.json --cancel`;",
    "to undo a finished one, `--execute` its `rollback.json`.",
]  # fmt: skip


def preamble(cluster: str, slug: str) -> list[str]:
    """The lines every runbook has between the summary and step 1, for a cluster id that needs no quoting."""
    return [
        "",
        "Run from this directory, in one shell. Set the bootstrap servers (and `--command-config FILE` if the",
        "cluster needs auth), make a private scratch directory, and check that this is the plan of the cluster",
        "you mean (`jq -e` fails otherwise):",
        "",
        "```sh",
        "export BOOTSTRAP=broker1:9092",
        f'WORK="$(mktemp -d -t kafka-rebalance-{slug}.XXXXXX)"',
        f"jq -e --arg cluster {cluster} '.cluster_id == $cluster' plan.json",
        "```",
        "",
        "Before anything else, check that the plan is unchanged since approval:",
        "",
        "```sh",
        "sha256sum -c <(jq -r '.files | to_entries[] | \"\\(.value)  \\(.key)\"' plan.json)",
        "```",
        "",
        *RULES,
        "",
    ]


DONE = ["## Done", "", "Remove the scratch directory:", "", "```sh", 'rm -r -- "$WORK"', "```"]
EXECUTE = 'kafka-reassign-partitions.sh --bootstrap-server "$BOOTSTRAP" --reassignment-json-file batches/{}/reassignment.json --execute'
VERIFY = 'kafka-reassign-partitions.sh --bootstrap-server "$BOOTSTRAP" --reassignment-json-file batches/{}/reassignment.json --verify'
# Step 2 of a plan whose one reorder is batch 001.
REORDER_STEP = [
    "## 2. Preferred-leader reorders (metadata only, no throttle needed)",
    "",
    "### Batch 001 (reorder: 1 partitions, 0 new replicas, 0 bytes, ~0s)",
    "",
    "```sh", EXECUTE.format("001"), VERIFY.format("001"), "```",
    "",
    "Then run the elections of step 1 again so the new first replicas lead.",
    "",
]  # fmt: skip
ELECTION_INTRO = (
    "Preferred elections where the first replica is alive and in sync. Run them now, and once more after the "
    "last batch (partitions whose first replica changes in a batch are in the same file; a partition already "
    "led by its preferred replica just reports that no election was needed). Chunks of {}:"
)


def test_the_whole_runbook_of_a_plan_with_every_step() -> None:
    sha = "0123456789abcdef" * 4
    m = {
        # Upper case survives into the scratch name; the two topics and brokers are joined by ", ".
        "cluster_id": "Prod-EU", "snapshot": {"sha256": sha, "captured_at": "2026-11-25T01:02:03Z"},
        "options": {"throttle_bytes_per_sec": 1048576, "election_batch_size": 2, "throttle_efficiency": 0.5,
                    "exclude_topics": ["audit", "logs"], "decommission_brokers": [7, 8]},
        "summary": {"replica_moves": 4, "bytes_moved": 2147483648, "reorders": 1, "leader_elections": 3,
                    "estimated_seconds": 4096,
                    "continuous": {"estimated_seconds": 3000, "physical_bound_seconds": 2048.4}},
        "batches": [
            {"id": "001", "kind": "reorder", "partitions": 1, "replica_moves": 0, "bytes": 0, "estimated_seconds": 0},
            {"id": "002", "kind": "move", "partitions": 2, "replica_moves": 3, "bytes": 1073741824, "estimated_seconds": 1024},
            {"id": "003", "kind": "move", "partitions": 1, "replica_moves": 1, "bytes": 1073741824, "estimated_seconds": 3072},
        ],
    }  # fmt: skip
    # Three elections in chunks of two: [0:2] into election-001, [2:4] into election-002.
    chunks = [
        f"jq '{{partitions: .partitions[{a}:{b}]}}' election.json > \"$WORK/election-{n}.json\" && "
        f"kafka-leader-election.sh --bootstrap-server \"$BOOTSTRAP\" --election-type PREFERRED "
        f"--path-to-json-file \"$WORK/election-{n}.json\""
        for n, a, b in [("001", 0, 2), ("002", 2, 4)]
    ]
    expected = [
        "# Rebalance runbook: `Prod-EU`",
        "",
        f"Snapshot sha256 `{sha}` captured `2026-11-25T01:02:03Z`.",
        # 4096 s = 1 h + 496 s = 1 h 8 min 16 s; the efficiency 0.5 printed with :g.
        "4 replica moves (2,147,483,648 bytes), 1 reorders, 3 leader elections in 3 batches, throttled at "
        "1,048,576 B/s per broker (assuming the brokers deliver 0.5 of it, --throttle-efficiency).",
        # 3000 s = 50 min 0 s; 2048.4 s rounds to 2048 s = 34 min 8 s.
        "Estimated duration: about 50m00s as `kafka-rebalance execute` runs it by default (continuously, as "
        "`schedule.json` orders the moves); no schedule at this throttle can beat 34m08s (the busiest broker's bytes "
        "in or out at the throttle).",
        "Run as the batches below, in order (this runbook by hand, or `execute --mode batches`): about 1h08m16s.",
        "Topics left where they are: `audit`, `logs`.",
        "Brokers being emptied: `7`, `8`.",
        # slug Prod-EU (all safe characters), sha256's first 12 hex digits 0123456789ab
        *preamble("Prod-EU", "Prod-EU-0123456789ab"),
        "## 1. Leader elections (no data moves)",
        "",
        ELECTION_INTRO.format(2),
        "",
        "```sh", *chunks, "```",
        "",
        *REORDER_STEP,
        "## 3. Replica moves (throttled)",
        "",
        # 1024 s = 17 min 4 s
        "### Batch 002 (move: 2 partitions, 3 new replicas, 1,073,741,824 bytes, ~17m04s)",
        "",
        "```sh", EXECUTE.format("002") + " --throttle 1048576", VERIFY.format("002"), "```",
        "",
        # 3072 s = 51 min 12 s
        "### Batch 003 (move: 1 partitions, 1 new replicas, 1,073,741,824 bytes, ~51m12s)",
        "",
        "```sh", EXECUTE.format("003") + " --throttle 1048576", VERIFY.format("003"), "```",
        "",
        "## 4. Final elections",
        "",
        "```sh", *chunks, "```",
        "",
        *DONE,
    ]  # fmt: skip
    assert runbook.render(m, 3) == "\n".join(expected) + "\n"


def small_manifest(batches: list[dict], elections: int) -> dict:
    return {
        "cluster_id": "c1", "snapshot": {"sha256": "f" * 64, "captured_at": "2026-01-01T00:00:00Z"},
        "options": {"throttle_bytes_per_sec": 1000, "election_batch_size": 5},
        "summary": {"replica_moves": sum(b["replica_moves"] for b in batches), "bytes_moved": sum(b["bytes"] for b in batches),
                    "reorders": sum(b["kind"] == "reorder" for b in batches), "leader_elections": elections,
                    "estimated_seconds": sum(b["estimated_seconds"] for b in batches)},
        "batches": batches,
    }  # fmt: skip


def test_elections_and_reorders_without_moves_need_no_final_elections() -> None:
    # Two elections fit one chunk of five, so the plan's own election.json is used; with no move
    # there is nothing after the reorders to elect again for, so no step 3 and no step 4.
    election = ('kafka-leader-election.sh --bootstrap-server "$BOOTSTRAP" --election-type PREFERRED '
                "--path-to-json-file election.json")  # fmt: skip
    text = runbook.render(small_manifest([REORDER], 2), 2)
    expected = [
        "# Rebalance runbook: `c1`",
        "",
        f"Snapshot sha256 `{'f' * 64}` captured `2026-01-01T00:00:00Z`.",
        # no throttle_efficiency option: 1.0, nothing said; 0 s of movement
        "0 replica moves (0 bytes), 1 reorders, 2 leader elections in 1 batches, throttled at 1,000 B/s per broker.",
        "Run as the batches below, in order (this runbook by hand, or `execute --mode batches`): about 0s.",
        *preamble("c1", f"c1-{'f' * 12}"),
        "## 1. Leader elections (no data moves)",
        "",
        ELECTION_INTRO.format(5),
        "",
        "```sh", election, "```",
        "",
        *REORDER_STEP,
        *DONE,
    ]  # fmt: skip
    assert text == "\n".join(expected) + "\n"


def test_moves_without_elections_have_no_final_elections() -> None:
    lines = runbook.render(small_manifest([MOVE], 0), 0).splitlines()
    assert [line for line in lines if line.startswith("## ")] == [
        "## 1. Leader elections (no data moves)", "## 3. Replica moves (throttled)", "## Done"]
    assert lines.count("None needed.") == 1 and not any(line.startswith("kafka-leader-election.sh") for line in lines)


def test_scratch_name_keeps_upper_case_and_strips_only_dots() -> None:
    # "X" and upper case are safe characters: kept; only the leading/trailing dots go.
    assert runbook._tmp_template({"cluster_id": ".XProd.X.", "snapshot": {"sha256": "0" * 12}}) == \
        f"kafka-rebalance-XProd.X-{'0' * 12}.XXXXXX"


def test_dollar_quoting_escapes_only_quotes_and_backslashes() -> None:
    # "X" is printable and no quote: kept as is, beside the newline's \x0a.
    assert runbook._quote("X\n") == "$'X\\x0a'"
    # U+0080 is the first character past ASCII (a C1 control, not printable): \U, not \x.
    assert runbook._quote("\x7f\x80") == "$'\\x7f\\U00000080'"


def test_code_spans_pad_a_backtick_at_either_end() -> None:
    # One backtick inside: a fence of two; a space keeps the inner backtick off the fence.
    assert runbook._code("`a") == "`` `a ``"
    assert runbook._code("a`") == "`` a` ``"
    assert runbook._code("a`b") == "``a`b``"  # in the middle: no padding
