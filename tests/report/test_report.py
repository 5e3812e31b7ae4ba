"""report.html on a real plan: one SVG per chart, the threshold drawn, values matching the inputs,
escaped names, and a render in Debian's chromium (screenshot kept in test-artifacts/)."""

from __future__ import annotations

import json
import re
import subprocess
from collections import Counter
from datetime import UTC
from pathlib import Path

from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
from kafka_rebalance.report.html import write_report
from kafka_rebalance.snapshot import load_snapshot, snapshot_from_dict, write_snapshot

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")


def planned(tmp_path: Path, snapshot_path: Path) -> Path:
    snap = load_snapshot(snapshot_path)
    plan_dir = tmp_path / "plan"
    write_plan(make_plan(snap, PlanOptions(threshold_percentage=10.0, threshold_source="setting")), plan_dir,
               str(snapshot_path))  # fmt: skip
    return plan_dir


def test_report_charts_threshold_and_numbers(tmp_path: Path, sample_snapshot_path: Path) -> None:
    plan_dir = planned(tmp_path, sample_snapshot_path)
    html = write_report(plan_dir, sample_snapshot_path).read_text()
    # Replicas, leaders, preferred leaders, bytes, imbalance ratio, batch timeline, lower bounds.
    assert html.count("<svg") == 7
    assert "threshold 10%" in html
    # Offline: nothing loaded from the network, no scripts (SVG namespace URIs are not fetches).
    assert "<script" not in html and not re.search(r'(src|href)="https?://', html)
    # Per-broker "before" counts, computed here straight from the snapshot file.
    raw = json.loads(sample_snapshot_path.read_text())
    replicas = Counter(b for p in raw["partitions"] for b in p["replicas"])
    leaders = Counter(p["leader"] for p in raw["partitions"])
    sizes = Counter()
    for p in raw["partitions"]:
        for b in p["replicas"]:
            sizes[b] += p["size_bytes"]
    for broker in raw["brokers"]:
        b = broker["id"]
        row = re.search(rf'<tr data-broker="{b}">(.*?)</tr>', html, re.S)
        assert row, f"no row for broker {b}"
        values = dict(re.findall(r'data-col="([\w-]+)" data-value="([^"]*)"', row.group(1)))
        assert int(values["replicas-before"]) == replicas[b]
        assert int(values["leaders-before"]) == leaders[b]
        assert int(values["size_bytes-before"]) == sizes[b]
    # Without a final snapshot or ledger there is no "final" series and no actual timeline.
    assert "final snapshot captured" not in html
    # One row per goal the plan ran, in plan.json's order, with its verdict.
    manifest = json.loads((plan_dir / "plan.json").read_text())
    goals = re.findall(r'<tr data-goal="([\w-]+)">.*?<td class="l">(yes|<strong>no</strong>)', html, re.S)
    assert [name for name, _ in goals] == [g["name"] for g in manifest["summary"]["goals"]]
    assert [met == "yes" for _, met in goals] == [g["reached"] for g in manifest["summary"]["goals"]]


def test_the_headline_estimate_is_the_mode_that_runs_and_the_other_is_labelled(tmp_path: Path, sample_snapshot_path: Path) -> None:
    plan_dir = planned(tmp_path, sample_snapshot_path)
    summary = json.loads((plan_dir / "plan.json").read_text())["summary"]
    continuous, waves = summary["continuous"]["estimated_seconds"], summary["estimated_seconds_batches"]
    assert continuous != waves  # otherwise the test cannot tell them apart

    def rows(html: str) -> tuple[str, str]:
        head = re.search(r'<td>estimated duration \(([^)]*)\)</td><td data-field="estimated_seconds">([^<]*)</td>', html)
        other = re.search(r'<td>if run as ([^<]*) instead</td><td data-field="estimated_seconds_other">([^<]*)</td>', html)
        assert head and other
        return f"{head.group(1)}: {head.group(2)}", f"{other.group(1)}: {other.group(2)}"

    from kafka_rebalance.units import human_seconds

    # Default: the executor runs the continuous schedule.
    assert rows(write_report(plan_dir, sample_snapshot_path).read_text()) == (
        f"continuous schedule, the mode that runs: {human_seconds(continuous)}", f"batches as waves: {human_seconds(waves)}")
    # A cluster whose executor runs batches headlines their figure.
    assert rows(write_report(plan_dir, sample_snapshot_path, mode="batches").read_text()) == (
        f"batches as waves, the mode that runs: {human_seconds(waves)}", f"continuous schedule: {human_seconds(continuous)}")


def test_hostile_names_are_escaped(tmp_path: Path) -> None:
    # Topic names and the cluster id are held to Kafka's name rule by the loader; rack names are free text.
    hostile = "<img src=x onerror=alert(1)>"
    raw = {
        "cluster_id": "c1",
        "brokers": [{"id": 0, "rack": f"c<b>1</b>{hostile}"}, {"id": 1, "rack": "r1"}, {"id": 2, "rack": "r2"}],
        "partitions": [{"topic": "orders", "partition": p, "replicas": [0, 1], "leader": 0, "isr": [0, 1], "size_bytes": 10}
                       for p in range(6)],
    }  # fmt: skip
    snap_path = write_snapshot(snapshot_from_dict(raw), tmp_path / "s.json")
    html = write_report(planned(tmp_path, snap_path), snap_path).read_text()
    assert hostile not in html and "c<b>1</b>" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;b&gt;" in html


def test_report_of_an_executed_plan_renders_in_chromium(tmp_path: Path, sample_snapshot_path: Path) -> None:
    from kafka_rebalance.cluster.sim_admin import SimAdmin
    from kafka_rebalance.executor.executor import Executor
    from kafka_rebalance.plan_manifest import load_plan
    from kafka_rebalance.report.html import ledger_times
    from kafka_rebalance.validation import validate_plan

    plan_dir = planned(tmp_path, sample_snapshot_path)
    assert validate_plan(plan_dir, sample_snapshot_path).status == "passed"
    admin = SimAdmin.open(load_snapshot(sample_snapshot_path), tmp_path / "sim.json")
    result = Executor(load_plan(plan_dir), admin).run(final_snapshot=tmp_path / "final.json").to_dict()
    assert result["status"] == "complete"
    report = write_report(plan_dir, sample_snapshot_path, final_snapshot_path=tmp_path / "final.json",
                          ledger=ledger_times(plan_dir))  # fmt: skip
    html = report.read_text()
    assert "final snapshot captured" in html and "actual" in html
    if not CHROMIUM.exists():
        subprocess.run(["apt-get", "install", "-y", "chromium"], check=True, capture_output=True, timeout=900)
    shot = ROOT / "test-artifacts" / "report.png"
    shot.parent.mkdir(exist_ok=True)
    shot.unlink(missing_ok=True)
    subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'chromium'}", f"--screenshot={shot}", "--window-size=1400,3000",
         f"file://{report}"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert shot.stat().st_size > 50_000  # a blank page is a few KB; charts make it large


def test_report_shows_who_paused_the_holds_and_the_progress(tmp_path: Path, sample_snapshot_path: Path) -> None:
    from datetime import datetime

    from kafka_rebalance.cluster.sim_admin import SimAdmin
    from kafka_rebalance.cluster.simulator import Simulator
    from kafka_rebalance.executor.control import request
    from kafka_rebalance.executor.executor import Executor
    from kafka_rebalance.executor.gate import ExecutionGate
    from kafka_rebalance.executor.settings import ExecSettings
    from kafka_rebalance.executor.windows import policy
    from kafka_rebalance.plan_dir import record_approval, write_validation_verdict
    from kafka_rebalance.plan_manifest import load_plan

    plan_dir = planned(tmp_path, sample_snapshot_path)
    html = write_report(plan_dir, sample_snapshot_path).read_text()
    assert '<strong id="progress-headline">not-started, 0.0 % of bytes</strong>' in html
    h = json.loads((plan_dir / "plan.json").read_text())["plan_hash"]
    (plan_dir / "validation").mkdir()
    (plan_dir / "validation" / "result.json").write_text(json.dumps({"status": "passed", "plan_hash": h}))
    write_validation_verdict(plan_dir, "passed", h)
    record_approval(plan_dir, "approved", "tester")
    request(plan_dir, "pause", by="<b>eve</b>", now=datetime(2026, 11, 24, 22, 0, tzinfo=UTC))
    plan = load_plan(plan_dir)
    gate = ExecutionGate(plan.path, plan.plan_hash, policy("2999-01-01T00:00Z/PT1H", []),
                         clock=lambda: datetime(2026, 11, 24, 22, 5, tzinfo=UTC))
    Executor(plan, SimAdmin(Simulator.from_snapshot(load_snapshot(sample_snapshot_path))), ExecSettings(), gate=gate).run().to_dict()
    html = write_report(plan_dir, sample_snapshot_path).read_text()
    assert '<strong id="progress-headline">paused, 0.0 % of bytes</strong>' in html
    assert "<td class=\"l\">pause</td><td class=\"l\">&lt;b&gt;eve&lt;/b&gt;</td><td class=\"l\">2026-11-24T22:00:00+00:00</td>" in html
    # the sample's plan has no reorder batch: the continuous schedule holds before its first step
    assert re.search(r'<tr><td class="l">2026-11-24T22:05:00\+00:00</td><td class="l">(batch \d+|continuous: step \d+ '
                     r'\([\w.-]+\)) not started</td><td class="l">paused</td>', html)
    batches = json.loads((plan_dir / "plan.json").read_text())["batches"]
    rows = re.findall(r'<tr data-progress-batch="(\d+)">.*?xp-(\w+)">', html)
    assert rows == [(b["id"], "pending") for b in batches]
    assert "next window 2999-01-01T00:00:00Z/2999-01-01T01:00:00Z" in html


def test_a_staged_plans_report_links_to_its_execution_page(tmp_path: Path, sample_snapshot_path: Path) -> None:
    plan_dir = planned(tmp_path, sample_snapshot_path)
    assert 'id="control-link"' not in write_report(plan_dir, sample_snapshot_path).read_text()  # not staged
    h = json.loads((plan_dir / "plan.json").read_text())["plan_hash"]
    (tmp_path / "plans" / "eu 1").mkdir(parents=True)
    staged = plan_dir.rename(tmp_path / "plans" / "eu 1" / h[:16])
    html = write_report(staged, sample_snapshot_path).read_text()
    # Served at /kafka-rebalance/plans/eu%201/<hash16>/report.html: three levels up is /kafka-rebalance/.
    assert f'<a href="../../../control/eu%201/{h[:16]}" id="control-link">' in html


def test_the_bytes_chart_shades_the_band_the_plan_was_made_with(tmp_path: Path, sample_snapshot_path: Path) -> None:
    snap = load_snapshot(sample_snapshot_path)
    for name, options, caption in (
        ("even", PlanOptions(byte_tolerance=0.1), "Shaded: mean ± 10% (the byte tolerance)."),
        ("floor", PlanOptions(byte_tolerance=0.1, byte_tolerance_below=0.25), "Shaded: mean - 25% .. + 10% (the byte tolerance)."),
    ):
        write_plan(make_plan(snap, options), tmp_path / name, str(sample_snapshot_path))
        html = write_report(tmp_path / name, sample_snapshot_path).read_text()
        assert caption in html, name
