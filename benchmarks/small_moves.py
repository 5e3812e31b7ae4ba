"""Small moves on a fresh 3-node sandbox: what each move costs besides its bytes (docs/PERFORMANCE.md).

    .venv/bin/python benchmarks/small_moves.py WORKDIR FIXED:POLL:N:KIB [...]

Per run: N single-replica partitions of KIB KiB on broker 1, planned with --decommission-brokers 1
and --move-fixed-seconds FIXED, gated, approved and executed (--poll-interval POLL) through the CLI;
prints the estimate, the actual time, the per-move seconds from the ledger and what execute measured.
The sandbox is stopped (by the pids it recorded) at the end.
"""
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "plugins")]
from kafka_rebalance.sandbox import cluster  # noqa: E402
from tests.support.kafka import admin, cli, gather, plan_validate_and_approve  # noqa: E402

MIB = 1024 * 1024
work = Path(sys.argv[1])
work.mkdir(parents=True, exist_ok=True)
runs = [a.split(":") for a in sys.argv[2:]]  # fixed:poll:count:kib
sb = cluster.up(work / "sandbox", brokers=3, racks=3)
print(f"sandbox Kafka {sb.kafka_version} up in {sb.start_seconds:.1f}s", flush=True)
try:
    from kafka import KafkaProducer
    from kafka.admin import NewTopic
    for n, (fixed, poll, count, kib) in enumerate(runs):
        count, kib = int(count), int(kib)
        topic = f"m{n}"
        c = admin(sb)
        c.create_topics([NewTopic(topic, replica_assignments={p: [1] for p in range(count)})])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            parts = c.describe_topics([topic])[0]["partitions"]
            if len(parts) == count and all(p["leader_id"] == 1 for p in parts):
                break
            time.sleep(0.3)
        c.close()
        if kib:
            pr = KafkaProducer(bootstrap_servers=sb.bootstrap_servers, acks=1, max_request_size=2_000_000)
            payload = os.urandom(64 * 1024)
            for p in range(count):
                for _ in range(max(1, kib // 64)):
                    pr.send(topic, payload, partition=p)
            pr.flush()
            pr.close()
        d = work / f"run{n}"
        snap = gather(sb, d / "before.json", topic)
        m = plan_validate_and_approve(snap, d / "plan", "--decommission-brokers", "1", "--move-fixed-seconds", fixed)
        t0 = time.monotonic()
        done = cli("execute", "--plan", str(d / "plan"), "--bootstrap-server", sb.bootstrap_servers, "--poll-interval", poll)
        wall = time.monotonic() - t0
        rep = json.loads(done.stdout)
        led = json.loads((d / "plan" / "ledger.json").read_text())["continuous"]["steps"]
        secs = sorted(e["seconds"] for e in led.values())
        cont = rep["continuous"]
        print(json.dumps({"run": n, "fixed": float(fixed), "poll": float(poll), "moves": count, "kib": kib,
                          "estimate": cont["estimated_seconds"], "actual": cont["actual_seconds"], "wall": round(wall, 1),
                          "step_s": {"min": secs[0], "median": statistics.median(secs), "max": secs[-1]},
                          "measured_eff": cont["measured_efficiency"], "measured_fixed": cont["measured_move_fixed_seconds"],
                          "miss": cont["estimate_miss"], "status": rep["status"]}), flush=True)
        advice = [line for line in done.stderr.splitlines() if "this cluster" in line]
        print("  ", advice[-1] if advice else done.stderr[-500:], flush=True)
finally:
    cluster.down(work / "sandbox")
    print("sandbox down", flush=True)
