"""RUNBOOK.md: the commands an operator types to run the plan with Kafka's own scripts."""

from __future__ import annotations

from typing import Any


def _dur(seconds: float) -> str:
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m{sec:02d}s" if h else (f"{m}m{sec:02d}s" if m else f"{sec}s")


def render(manifest: dict[str, Any], n_elections: int) -> str:
    opts = manifest["options"]
    summary = manifest["summary"]
    rate = opts["throttle_bytes_per_sec"]
    size = opts["election_batch_size"]
    lines = [
        f"# Rebalance runbook: {manifest['cluster_id']}",
        "",
        f"Snapshot sha256 `{manifest['snapshot']['sha256']}` captured {manifest['snapshot']['captured_at']}.",
        f"{summary['replica_moves']} replica moves ({summary['bytes_moved']:,} bytes), {summary['reorders']} reorders, "
        f"{summary['leader_elections']} leader elections in {len(manifest['batches'])} batches; "
        f"estimated {_dur(summary['estimated_seconds'])} of data movement at {rate:,} B/s per broker.",
        "",
        "Run from this directory. Set the bootstrap servers (and `--command-config FILE` if the cluster needs auth):",
        "",
        "```sh",
        "export BOOTSTRAP=broker1:9092",
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
                elect.append(
                    f"jq '{{partitions: .partitions[{start}:{start + size}]}}' election.json > /tmp/election-{start // size + 1:03d}.json && "
                    "kafka-leader-election.sh --bootstrap-server \"$BOOTSTRAP\" --election-type PREFERRED "
                    f"--path-to-json-file /tmp/election-{start // size + 1:03d}.json"
                )
    batches = manifest["batches"]
    reorder = [b for b in batches if b["kind"] == "reorder"]
    move = [b for b in batches if b["kind"] == "move"]

    def section(title: str, items: list[dict[str, Any]], throttle: bool) -> None:
        lines.append(f"## {title}")
        lines.append("")
        for b in items:
            f = f"batches/{b['id']}/reassignment.json"
            extra = f" --throttle {rate}" if throttle else ""
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
    if move:
        section("3. Replica moves (throttled)", move, throttle=True)
    if elect and move:
        lines.append("## 4. Final elections")
        lines.append("")
        lines.append("```sh")
        lines.extend(elect)
        lines.append("```")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"
