"""One estimate: the headline is the schedule that runs, its steps add up to it exactly, and every surface
(plan.json, approve, the approval text, the report, status --json) shows the same figure; after a simulated
run the report puts each batch's estimate beside its actual and explains a large gap from the run's records."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html import unescape
from pathlib import Path

import pytest

from kafka_rebalance.cluster.sim_admin import SimAdmin
from kafka_rebalance.estimates import RunFacts, gap_line, plan_estimate, running_shares, split_tenths, tenths
from kafka_rebalance.executor.executor import Executor
from kafka_rebalance.executor.results import RunStatus
from kafka_rebalance.executor.settings import ExecSettings
from kafka_rebalance.generate import ClusterSpec, generate_snapshot
from kafka_rebalance.orchestration.approval_text import approval_body
from kafka_rebalance.plan_approval import describe, plan_facts
from kafka_rebalance.plan_dir import SIM_STATE_FILE
from kafka_rebalance.plan_manifest import load_plan
from kafka_rebalance.report.html import write_report
from kafka_rebalance.snapshot import load_snapshot, write_snapshot
from kafka_rebalance.units import human_seconds
from tests.support.cli_inprocess import run_cli
from tests.support.plans import approve, judge, plan_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "sample-cluster.json"
MODES = ("continuous", "batches")


def test_rounding_to_tenths_keeps_the_total() -> None:
    # 1.26 + 1.24 + 0.05 = 2.55 -> 25.5 tenths rounds to 26 (half to even): floors 12, 12, 0 lose .6, .4, .5
    assert split_tenths([1.26, 1.24, 0.05]) == [1.3, 1.2, 0.1]
    assert split_tenths([0.04] * 10) == [0.1, 0.1, 0.1, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]  # 0.4 s in all
    assert split_tenths([]) == []
    # Shares of a schedule whose batches' last moves end at 69.1, 40, 91.64 and 12 s: the running latest end's rises.
    assert running_shares([69.1, 40.0, 91.64, 12.0]) == [69.1, 0.0, 22.5, 0.0]


def _plans(tmp_path: Path) -> list[tuple[Path, dict]]:
    sample = load_snapshot(SAMPLE)
    synthetic = generate_snapshot(ClusterSpec(brokers=7, racks=3, topics=6, partitions=90, replica_skew=0.6,
                                              new_brokers=1, mean_partition_mb=40.0, seed=3))
    cases = [(sample, {}), (sample, {"throttle_bytes_per_sec": 7 * 1024 * 1024, "max_partitions_per_batch": 4,
                                     "move_fixed_seconds": 0.0}), (synthetic, {"max_moves_per_broker": 1})]
    out = []
    for n, (snap, options) in enumerate(cases):
        d = tmp_path / f"plan{n}"
        out.append((d, plan_dir(snap, d, **options)))
    return out


def test_each_modes_steps_add_up_to_its_headline_on_several_plans(tmp_path: Path) -> None:
    for d, manifest in _plans(tmp_path):
        s = manifest["summary"]
        schedule = json.loads((d / "schedule.json").read_text())
        expected = {"continuous": s["continuous"]["estimated_seconds"], "batches": s["estimated_seconds_batches"]}
        # The continuous figure is the latest end in schedule.json; plan.json's headline is the default mode's.
        assert expected["continuous"] == max(step["estimated_end_s"] for step in schedule["steps"]) == s["estimated_seconds"]
        for mode in MODES:
            e = plan_estimate(manifest, mode)
            assert (e.mode, e.seconds) == (mode, expected[mode])
            assert [p.id for p in e.steps] == [b["id"] for b in manifest["batches"]]
            assert sum(tenths(p.seconds) for p in e.steps) == tenths(expected[mode]), (d, mode)
            assert round(sum(p.seconds for p in e.steps), 1) == expected[mode]
            assert e.steps[-1].done_by == expected[mode] and all(p.seconds >= 0 for p in e.steps)


def _approval_line(text: str) -> str:
    return re.search(r"- Estimated duration: \*\*([^*]*)\*\*", text).group(1)  # type: ignore[union-attr]


def test_every_surface_shows_the_same_headline_and_labels_the_other_mode(tmp_path: Path) -> None:
    d = tmp_path / "plan"
    manifest = plan_dir(load_snapshot(SAMPLE), d)
    judge(d, "passed")
    s = manifest["summary"]
    figure = {"continuous": s["continuous"]["estimated_seconds"], "batches": s["estimated_seconds_batches"]}
    label = {"continuous": "continuous schedule", "batches": "batches as waves"}
    now = datetime(2026, 1, 1, 1, tzinfo=UTC)
    for mode, other in (MODES, MODES[::-1]):
        said = f"about {human_seconds(figure[mode])} ({label[mode]}, the mode that runs); " \
               f"{human_seconds(figure[other])} if run as {label[other]}"
        text = approval_body(d, manifest, now=now, mode=mode)
        assert _approval_line(text).startswith(said)
        # The batch table's last row is the headline itself, to a tenth.
        assert f"| all | | | | | **{figure[mode]:,.1f} s** ({label[mode]}) | {human_seconds(figure[mode])} |" in text
        rows = re.findall(r"^\| \d{3} \|.*\| ([\d,.]+) s \| [^|]+ \|$", text, re.M)
        assert len(rows) == len(manifest["batches"]) and tenths(sum(float(r.replace(",", "")) for r in rows)) == tenths(figure[mode])
        assert f"  estimate: {said}" in describe(plan_facts(d, now, mode))
        html = write_report(d, SAMPLE, mode=mode).read_text()
        assert re.search(r'data-field="estimated_seconds">([^<]*)<', html).group(1) == human_seconds(figure[mode])  # type: ignore[union-attr]
        assert re.search(r'data-field="estimated_seconds_other">([^<]*)<', html).group(1) == human_seconds(figure[other])  # type: ignore[union-attr]
        cells = re.findall(r'<td data-col="estimated" data-value="([^"]+)">', html)
        assert len(cells) == len(manifest["batches"]) + 1 and float(cells[-1]) == figure[mode]
        assert tenths(sum(map(float, cells[:-1]))) == tenths(figure[mode])
    status = json.loads(run_cli("status", "--plan", str(d), "--json").stdout)  # not started: execute's default mode
    assert (status["estimated_seconds"], status["estimate_of"]) == (figure["continuous"], "continuous")
    assert (status["other_estimated_seconds"], status["other_estimate_of"]) == (figure["batches"], "batches")
    assert tenths(sum(b["estimated_seconds"] for b in status["batches"])) == tenths(figure["continuous"])
    line = run_cli("approve", "--plan", str(d), "--by", "tester", "--max-plan-age", "8784").stderr
    assert f"  estimate: about {human_seconds(figure['continuous'])} (continuous schedule, the mode that runs)" in line


@pytest.fixture(scope="module")
def slow_plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A plan that assumes the brokers deliver half the throttle, on a small cluster the simulator delivers in full."""
    base = tmp_path_factory.mktemp("gap")
    snap = generate_snapshot(ClusterSpec(brokers=4, racks=2, topics=2, partitions=24, replica_skew=0.8,
                                         mean_partition_mb=600.0, seed=5))
    write_snapshot(snap, base / "snapshot.json")
    d = base / "plan"
    plan_dir(snap, d, throttle_efficiency=0.5, move_fixed_seconds=0.0)
    judge(d, "passed")
    return d


@pytest.mark.parametrize("mode", MODES)
def test_the_report_after_a_simulated_run_puts_estimates_beside_actuals_and_explains_the_gap(slow_plan: Path, tmp_path: Path,
                                                                                             mode: str) -> None:
    import shutil

    d = tmp_path / "plan"
    shutil.copytree(slow_plan, d)
    approve(d)
    snapshot = slow_plan.parent / "snapshot.json"
    ex = Executor(load_plan(d, require_approval=True), SimAdmin.open(load_snapshot(snapshot), d / SIM_STATE_FILE),
                  ExecSettings(poll_interval=5.0, mode=mode))
    assert ex.run().status is RunStatus.COMPLETE
    ledger = json.loads((d / "ledger.json").read_text())
    html = write_report(d, snapshot, mode="continuous").read_text()  # the ledger's mode wins over the configured one
    manifest = json.loads((d / "plan.json").read_text())
    estimate = plan_estimate(manifest, mode)
    head = re.search(r"<td>estimated duration \(([^,]*),", html).group(1)  # type: ignore[union-attr]
    assert head == {"continuous": "continuous schedule", "batches": "batches as waves"}[mode]
    actual_cells = re.findall(r'<td data-col="actual" data-value="([^"]+)">', html)
    assert len(actual_cells) == len(manifest["batches"])
    gap = unescape(re.search(r'<p id="estimate-gap">Estimate against the run: (.*)\.</p>', html).group(1))  # type: ignore[union-attr]
    assert "the simulator's virtual clock" in gap and f"against an estimate of {human_seconds(estimate.seconds)}" in gap
    if mode == "continuous":
        measured = ledger["continuous"]["measured_efficiency"]
        assert measured > 0.5
        assert f"the copies got {measured:g} of the throttle, the plan assumed 0.5 (throttle_efficiency)" in gap
        took = ledger["continuous"]["actual_seconds"]
    else:
        assert "its bytes moved at" in gap and "measured against the" in gap and "(throttle 50.0 MiB/s per broker)" in gap
        took = sum(e["actual_seconds"] for e in ledger["batches"].values() if "actual_seconds" in e)
    assert gap.startswith(f"took {human_seconds(took)} on ")
    assert took < 0.75 * estimate.seconds  # the gap is real: the simulator delivered the whole throttle


def test_a_gap_is_explained_only_by_what_the_run_recorded() -> None:
    facts = RunFacts(simulated=True, poll_interval_seconds=10.0, throttle_bytes_per_sec=4 * 1024 * 1024)
    # The case: waves estimated at 3 s each that took 33 s in all, polled every 10 s.
    line = gap_line(9.3, 33.0, 3 * 1024 * 1024, facts, steps=3)
    assert line == ("took 33s on the simulator's virtual clock against an estimate of 9s: the executor polled every 10 s "
                    "(poll_interval) and sees a wave finished only at a poll, so each of the 3 wave(s), shorter than "
                    "that, took up to one interval more")
    assert gap_line(9.3, 10.0, 1, facts, steps=3) is None  # within 25 %: the estimate held
    # No poll interval recorded and no measured figure: the measured rate, nothing invented.
    bare = gap_line(10.0, 40.0, 40 * 1024 * 1024, RunFacts(), steps=1)
    assert bare == ("took 40s on the cluster admin's clock against an estimate of 10s: its bytes moved at 1.0 MiB/s "
                    "measured against the 4.0 MiB/s the estimate implies")
    assert gap_line(10.0, 40.0, 0, RunFacts()) is None


@pytest.mark.parametrize("mode", MODES)
def test_the_time_left_before_a_run_is_the_headline_of_the_mode_that_runs(slow_plan: Path, tmp_path: Path, mode: str) -> None:
    import shutil

    d = tmp_path / "plan"
    shutil.copytree(slow_plan, d)
    approve(d)
    snapshot = load_snapshot(slow_plan.parent / "snapshot.json")
    ex = Executor(load_plan(d, require_approval=True), SimAdmin.open(snapshot, d / SIM_STATE_FILE), ExecSettings(mode=mode))
    left = ex.progress_summary()["remaining_estimated_seconds"]  # what the window ETA is computed from
    assert round(left, 1) == plan_estimate(json.loads((d / "plan.json").read_text()), mode).seconds
