"""Execution benchmark: how long a plan really takes against its estimate, continuous vs waves.

    python benchmarks/execution.py                          # simulator: 12/2000 and 50/50000
    python benchmarks/execution.py --sizes 200/200000       # bigger (minutes)
    python benchmarks/execution.py --real-kafka             # real Apache Kafka: calibrate, then plan with it

Simulator: a generated cluster (skewed, with new brokers, produce traffic) is planned with the
default options at --throttle, then executed twice on the simulator's virtual clock through the
real executor: continuously (schedule.json, the default) and as waves (--mode batches, the
baseline, measured in the same run). Prints, per size: steps, the schedule's estimate and the
physical bound, the actual continuous duration and its ratio to the estimate, the waves' actual
duration, and the wall seconds each simulated execution took.

--real-kafka starts a 3-broker Apache Kafka sandbox (`kafka-rebalance sandbox up`: Maven
Central jars), seeds topics packed onto the first brokers and fills them with records, then
gathers, plans (--kafka-throttle), validates through the gate and executes through the CLI
with --bootstrap-server, as an operator would; prints moves, bytes, the estimate and the
actual duration of the moves, and stops exactly the sandbox it started. The first run is planned
at --throttle-efficiency 1 and measures what the brokers deliver; the runs of --kafka-then (other
throttles and partition sizes, each on a fresh sandbox) are planned with that measured figure, as an
operator would plan a cluster's next rebalance, so their actual/estimate tests the calibrated model.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins"))

MIB = 1024 * 1024
SIZES = {(12, 2_000): (3, 3), (50, 50_000): (5, 5), (200, 200_000): (5, 10)}  # racks, new brokers


def simulate_size(brokers: int, partitions: int, throttle: int, poll: float) -> dict:
    from kafka_rebalance.cluster.sim_admin import SimAdmin
    from kafka_rebalance.cluster.simulator import Simulator
    from kafka_rebalance.executor.executor import Executor
    from kafka_rebalance.executor.settings import ExecSettings
    from kafka_rebalance.generate import ClusterSpec, generate_snapshot
    from kafka_rebalance.plan_manifest import load_plan
    from kafka_rebalance.planner import PlanOptions, make_plan, write_plan
    from kafka_rebalance.snapshot import write_snapshot

    racks, new = SIZES.get((brokers, partitions), (3, max(1, brokers // 10)))
    snap = generate_snapshot(ClusterSpec(brokers=brokers, racks=racks, partitions=partitions, topics=max(10, partitions // 500),
                                         new_brokers=new, replica_skew=0.5, seed=1))
    work = Path(tempfile.mkdtemp(prefix="bench-exec-"))
    row: dict = {"size": f"{brokers}/{partitions}"}
    write_snapshot(snap, work / "snapshot.json")
    t = time.perf_counter()
    write_plan(make_plan(snap, PlanOptions(throttle_bytes_per_sec=throttle)), work / "plan", str(work / "snapshot.json"))
    row["plan_s"] = round(time.perf_counter() - t, 1)
    # The executor runs only what the gate passed, as in production.
    gate = subprocess.run([sys.executable, "-m", "kafka_rebalance.cli", "validate", "--snapshot", str(work / "snapshot.json"),
                           "--plan", str(work / "plan")], capture_output=True, text=True,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT / "plugins")})
    if gate.returncode != 0:
        raise SystemExit(f"validate failed: {gate.stdout[-1000:]}{gate.stderr[-1000:]}")
    plan = load_plan(work / "plan")
    sched = plan.schedule
    row.update(steps=len(sched.moves), estimate_s=sched.estimated_seconds, bound_s=sched.physical_bound_seconds,
               waves_estimate_s=round(sum(b.estimated_seconds or 0 for b in plan.batches), 1))
    for mode in ("continuous", "batches"):
        ledger = work / "plan" / "ledger.json"
        if ledger.exists():
            ledger.unlink()  # a benchmark's own scratch plan: each mode starts from the first move
        admin = SimAdmin(Simulator.from_snapshot(snap))
        t = time.perf_counter()
        report = Executor(plan, admin, ExecSettings(poll_interval=poll, stall_seconds=3600.0, mode=mode)).run()
        wall = time.perf_counter() - t
        assert report["status"] == "complete", (mode, report["status"])
        if mode == "continuous":
            row.update(actual_s=report["continuous"]["actual_seconds"], continuous_wall_s=round(wall, 1))
        else:
            row.update(waves_actual_s=round(sum(b["actual_seconds"] for b in report["batches"]), 1), waves_wall_s=round(wall, 1))
    row["actual/estimate"] = round(row["actual_s"] / row["estimate_s"], 3) if row["estimate_s"] else None
    row["actual/bound"] = round(row["actual_s"] / row["bound_s"], 3) if row["bound_s"] else None
    row["waves/continuous"] = round(row["waves_actual_s"] / row["actual_s"], 3) if row["actual_s"] else None
    return row


def real_kafka(throttle: int, topics: int, partitions: int, mb: float, efficiency: float = 1.0) -> dict:
    """A throttled plan of >= 5 moves on real brokers; the CLI does what an operator would."""
    import os

    cli = [sys.executable, "-m", "kafka_rebalance.cli"]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    work = Path(tempfile.mkdtemp(prefix="bench-exec-kafka-"))
    sandbox = work / "sandbox"

    def run(*a: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([*cli, *a], env=env, capture_output=True, text=True, timeout=1800)
        if check and done.returncode != 0:
            raise SystemExit(f"{a[0]} failed: {done.stderr.strip()[-1500:]}")
        return done

    bootstrap = run("sandbox", "up", "--dir", str(sandbox), "--brokers", "3").stdout.strip()
    try:
        # Every replica packed on the first brokers (skew 1): the plan moves onto the empty one.
        run("sandbox", "seed", "--dir", str(sandbox), "--topics", str(topics), "--partitions", str(partitions),
            "--mb-per-partition", str(mb), "--skew", "1.0", "--replication-factor", "2")
        run("gather", "--bootstrap-server", bootstrap, "--cluster-id", "bench", "--out", str(work / "before.json"))
        run("plan", "--snapshot", str(work / "before.json"), "--out", str(work / "plan"), "--throttle", str(throttle),
            "--throttle-efficiency", str(efficiency))
        run("validate", "--snapshot", str(work / "before.json"), "--plan", str(work / "plan"))
        manifest = json.loads((work / "plan" / "plan.json").read_text())
        t = time.perf_counter()
        done = run("execute", "--plan", str(work / "plan"), "--bootstrap-server", bootstrap, "--poll-interval", "1")
        wall = time.perf_counter() - t
        cont = json.loads(done.stdout)["continuous"]
        summary = manifest["summary"]
        return {"size": f"real Kafka, 3 brokers, {topics}x{partitions} partitions of {mb:g} MiB, RF 2",
                "steps": cont["steps"], "replica_moves": summary["replica_moves"], "bytes": summary["bytes_moved"],
                "throttle_B_s": throttle, "efficiency_planned": efficiency, "estimate_s": cont["estimated_seconds"],
                "bound_s": summary["continuous"]["physical_bound_seconds"], "actual_s": cont["actual_seconds"],
                "actual/estimate": round(cont["actual_seconds"] / cont["estimated_seconds"], 3),
                "efficiency_measured": cont["measured_efficiency"],
                "execute_command_wall_s": round(wall, 1)}
    finally:
        run("sandbox", "down", "--dir", str(sandbox), check=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="12/2000,50/50000", help="brokers/partitions,... on the simulator")
    ap.add_argument("--throttle", type=int, default=50 * MIB, help="bytes/s (simulator)")
    ap.add_argument("--poll-interval", type=float, default=10.0, help="the executor's poll interval (simulator)")
    ap.add_argument("--real-kafka", action="store_true", help="run a throttled plan on a real 3-broker sandbox instead")
    ap.add_argument("--kafka-throttle", type=int, default=2 * MIB, help="bytes/s (real Kafka)")
    ap.add_argument("--kafka-topics", type=int, default=2, help="topics of the real-Kafka plan (RF 2)")
    ap.add_argument("--kafka-partitions", type=int, default=6, help="partitions per topic (real Kafka)")
    ap.add_argument("--kafka-mb", type=float, default=8.0, help="MiB per partition (real Kafka)")
    ap.add_argument("--kafka-efficiency", type=float, default=None,
                    help="plan every real-Kafka run with this --throttle-efficiency instead of calibrating on the first")
    ap.add_argument("--kafka-then", default="8388608:32,1048576:4",
                    help="further real-Kafka runs, THROTTLE:MIB_PER_PARTITION,..., each planned with the efficiency the "
                         "first run measured (each on a fresh sandbox)")
    args = ap.parse_args()
    if args.real_kafka:
        # The first run calibrates: planned at efficiency 1 (or the one given), it measures what this
        # machine's brokers deliver; the others are different plans (throttle, sizes) planned with that figure.
        first = real_kafka(args.kafka_throttle, args.kafka_topics, args.kafka_partitions, args.kafka_mb,
                           args.kafka_efficiency or 1.0)
        rows = [{"run": "calibration", **first}]
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
        efficiency = args.kafka_efficiency or min(1.0, first["efficiency_measured"])
        for spec in filter(None, args.kafka_then.split(",")):
            throttle, mb = spec.split(":")
            rows.append({"run": "calibrated", **real_kafka(int(throttle), args.kafka_topics, args.kafka_partitions,
                                                           float(mb), efficiency)})
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    else:
        rows = []
        for spec in args.sizes.split(","):
            b, p = (int(x) for x in spec.split("/"))
            rows.append(simulate_size(b, p, args.throttle, args.poll_interval))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    print(" | ".join(keys))
    for r in rows:
        print(" | ".join(str(r.get(k, "")) for k in keys))


if __name__ == "__main__":
    main()
