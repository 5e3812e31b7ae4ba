"""RUNBOOK.md: the commands an operator types to run the plan with Kafka's own scripts.

Operators copy and paste these lines, and the values in them come from files (a snapshot's
cluster id and capture time, the manifest): every value in a shell line is one
``shlex.quote``d argument, and every value in the prose is a code span that cannot close
itself or open a code block. Scratch files go to a private directory made by ``mktemp``,
never to a shared, guessable ``/tmp`` name.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from kafka_rebalance.estimates import mode_seconds
from kafka_rebalance.plan_approval import leader_changes_text
from kafka_rebalance.plan_dir import PLAN_FILE
from kafka_rebalance.planner.batching import LOG_DIR_BATCH


def _quote(value: str) -> str:
    """One shell word for ``value``, on one line.

    ``shlex.quote`` where it keeps the line whole; a value with a newline or another control
    character gets bash's ``$'...'`` quoting instead, so no value can split a command across
    lines of the Markdown code block (the runbook already needs bash for ``<(...)``).
    """
    if value.isprintable():
        return shlex.quote(value)
    out = []
    for c in value:
        if c in "\\'":
            out.append("\\" + c)
        elif c.isprintable():
            out.append(c)
        elif ord(c) < 0x80:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return "$'" + "".join(out) + "'"


def _sh(*args: object) -> str:
    """One shell command line, every argument quoted."""
    return " ".join(_quote(str(a)) for a in args)


def _code(value: object) -> str:
    """A Markdown code span showing ``value`` on one line, whatever characters it holds."""
    text = value if isinstance(value, str) and value.isprintable() and value.strip() == value else json.dumps(value)
    text = str(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _tmp_template(manifest: dict[str, Any]) -> str:
    # mktemp needs a plain file name: keep the cluster id's safe characters for a readable name.
    slug = re.sub(r"[^A-Za-z0-9._-]", "_", str(manifest["cluster_id"]))[:40].strip(".") or "cluster"
    return f"kafka-rebalance-{slug}-{str(manifest['snapshot']['sha256'])[:12]}.XXXXXX"


def _dur(seconds: float) -> str:
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m{sec:02d}s" if h else (f"{m}m{sec:02d}s" if m else f"{sec}s")


def _fixed(opts: dict[str, Any]) -> str:
    fixed = opts.get("move_fixed_seconds")
    return "" if fixed is None else f" and {fixed:g} s of fixed cost per move (--move-fixed-seconds)"


def _efficiency(opts: dict[str, Any]) -> str:
    eff = opts.get("throttle_efficiency", 1.0)
    return "" if eff == 1 else f" (assuming the brokers deliver {eff:g} of it, --throttle-efficiency)"


def render(manifest: dict[str, Any], n_elections: int) -> str:
    opts = manifest["options"]
    summary = manifest["summary"]
    rate = opts["throttle_bytes_per_sec"]
    size = opts["election_batch_size"]
    cluster_id = manifest["cluster_id"]
    lines = [
        f"# Rebalance runbook: {_code(cluster_id)}",
        "",
        f"Snapshot sha256 {_code(manifest['snapshot']['sha256'])} captured {_code(manifest['snapshot']['captured_at'])}.",
        f"{summary['replica_moves']} replica moves ({summary['bytes_moved']:,} bytes), {summary['reorders']} reorders, "
        f"{summary['leader_elections']} leader elections{leader_changes_text(summary)} in {len(manifest['batches'])} batches, "
        f"throttled at {rate:,} B/s per broker{_efficiency(opts)}{_fixed(opts)}.",
    ]
    figures = mode_seconds(summary)
    if figures["continuous"] is not None:
        c = summary["continuous"]
        lines.append(
            f"Estimated duration: about {_dur(figures['continuous'])} as `kafka-rebalance execute` runs it by default "
            f"(continuously, as `schedule.json` orders the moves); no schedule at this throttle can beat "
            f"{_dur(c['physical_bound_seconds'])} (the busiest broker's bytes in or out at the throttle)."
        )
    if figures["batches"] is not None:
        lines.append(f"Run as the batches below, in order (this runbook by hand, or `execute --mode batches`): about "
                     f"{_dur(figures['batches'])}.")
    if opts.get("exclude_topics"):
        lines.append("Topics left where they are: " + ", ".join(_code(t) for t in opts["exclude_topics"]) + ".")
    if opts.get("decommission_brokers"):
        lines.append("Brokers being emptied: " + ", ".join(_code(b) for b in opts["decommission_brokers"]) + ".")
    lines += [
        "",
        "Run from this directory, in one shell. Set the bootstrap servers (and `--command-config FILE` if the",
        "cluster needs auth), make a private scratch directory, and check that this is the plan of the cluster",
        "you mean (`jq -e` fails otherwise):",
        "",
        "```sh",
        "export BOOTSTRAP=broker1:9092",
        f"WORK=\"$({_sh('mktemp', '-d', '-t', _tmp_template(manifest))})\"",
        _sh("jq", "-e", "--arg", "cluster", cluster_id, ".cluster_id == $cluster", PLAN_FILE),
        "```",
        "",
        "Before anything else, check that the plan is unchanged since approval:",
        "",
        "```sh",
        "sha256sum -c <(jq -r '.files | to_entries[] | \"\\(.value)  \\(.key)\"' plan.json)",
        "```",
        "",
        "Rules: run batches strictly in order; start a batch only after `--verify` of the previous one reports",
        "every partition complete (that `--verify` also removes the batch's throttles). To undo a running batch:",
        "`kafka-reassign-partitions.sh --bootstrap-server \"$BOOTSTRAP\" --reassignment-json-file batches/NNN/reassignment.json --cancel`;",
        "to undo a finished one, `--execute` its `rollback.json`.",
        "",
    ]
    elect = []
    if n_elections:
        if n_elections <= size:
            elect.append(
                "kafka-leader-election.sh --bootstrap-server \"$BOOTSTRAP\" --election-type PREFERRED "
                "--path-to-json-file election.json"
            )
        else:
            for start in range(0, n_elections, size):
                chunk = f'"$WORK/election-{start // size + 1:03d}.json"'
                elect.append(
                    f"{_sh('jq', f'{{partitions: .partitions[{start}:{start + size}]}}', 'election.json')} > {chunk} && "
                    f"kafka-leader-election.sh --bootstrap-server \"$BOOTSTRAP\" --election-type PREFERRED --path-to-json-file {chunk}"
                )
    batches = manifest["batches"]
    reorder = [b for b in batches if b["kind"] == "reorder"]
    move = [b for b in batches if b["kind"] == "move"]
    within = [b for b in batches if b["kind"] == LOG_DIR_BATCH]

    def section(title: str, items: list[dict[str, Any]], throttle: bool, flag: str = "--throttle") -> None:
        lines.append(f"## {title}")
        lines.append("")
        for b in items:
            f = shlex.quote(f"batches/{b['id']}/reassignment.json")
            extra = f" {flag} {int(rate)}" if throttle else ""
            lines.append(
                f"### Batch {b['id']} ({b['kind']}: {b['partitions']} partitions, {b['replica_moves']} new replicas, "
                f"{b['bytes']:,} bytes, ~{_dur(b['estimated_seconds'])})"
            )
            lines.append("")
            lines.append("```sh")
            lines.append(f"kafka-reassign-partitions.sh --bootstrap-server \"$BOOTSTRAP\" --reassignment-json-file {f} --execute{extra}")
            lines.append(f"kafka-reassign-partitions.sh --bootstrap-server \"$BOOTSTRAP\" --reassignment-json-file {f} --verify")
            lines.append("```")
            lines.append("")

    lines.append("## 1. Leader elections (no data moves)")
    lines.append("")
    if elect:
        lines.append(
            "Preferred elections where the first replica is alive and in sync. Run them now, and once more after the "
            "last batch (partitions whose first replica changes in a batch are in the same file; a partition already "
            f"led by its preferred replica just reports that no election was needed). Chunks of {size}:"
        )
        lines.append("")
        lines.append("```sh")
        lines.extend(elect)
        lines.append("```")
    else:
        lines.append("None needed.")
    lines.append("")
    if reorder:
        section("2. Preferred-leader reorders (metadata only, no throttle needed)", reorder, throttle=False)
        if elect:
            lines.append("Then run the elections of step 1 again so the new first replicas lead.")
            lines.append("")
    if within:
        # Kafka's tool sends the named dirs through AlterReplicaLogDirs; its --verify waits for each copy to land.
        section("2b. Moves between the log dirs of a broker (throttled by Kafka's intra-broker throttle)", within,
                throttle=True, flag="--replica-alter-log-dirs-throttle")
    if move:
        section("3. Replica moves (throttled)", move, throttle=True)
    if elect and move:
        lines.append("## 4. Final elections")
        lines.append("")
        lines.append("```sh")
        lines.extend(elect)
        lines.append("```")
        lines.append("")
    lines += ["## Done", "", "Remove the scratch directory:", "", "```sh", 'rm -r -- "$WORK"', "```"]
    return "\n".join(lines).rstrip("\n") + "\n"
