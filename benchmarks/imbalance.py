"""Benchmark: the Spark leader-imbalance analysis on generated fleets, against DuckDB.

    python benchmarks/imbalance.py [--sizes 1M,10M,30M,100M] [--scratch /tmp] [--master local[2]]
                                   [--fleet 100] [--standalone] [--driver-memory 2g]

For each size (replica rows; RF 3, so a third as many partitions) it generates a fleet
of Parquet snapshots with kafka_rebalance.generate (reused when already there), then
prints: rows, seconds of the analysis (the JVM is started before timing), the fixed cost
(a 30,000-row run on the warm session), rows per second, peak RSS of the driver (this
Python process + the JVM it started), the Spark jobs and stages the analysis ran (from
the status tracker), and the same per-broker computation by DuckDB on the same files in
the same run (best of two), with the time ratio and whether both engines agree on every
per-broker figure. Spark's time is its first run of that size; the same analysis is then
repeated (the "repeat" column: its generated code compiled by the JIT by then). DuckDB is
also timed with the same row checks as Spark's strict validation (malformed rows and
duplicate partitions). ``--fleet N`` adds N generated clusters analysed as one fleet (one job), checked
against a plain-Python count of the unbalanced ones; ``--standalone`` starts a Spark
master and two 1-core workers on free ports and runs the fleet and the smallest size
there too. The machine's load average is printed with every figure.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))

from kafka_rebalance.generate import ClusterSpec, generate
from kafka_rebalance.snapshot import read_parquet_header

RF = 3
WARM_ROWS = 30_000
MAX_PARTITIONS_PER_FILE = 5_000_000
CLUSTERS = {30_000: 1, 1_000_000: 2, 10_000_000: 4, 30_000_000: 8}


def parse_size(text: str) -> int:
    text = text.strip().upper()
    mult = {"K": 1_000, "M": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("KM")) * mult)


def fleet(scratch: Path, rows: int) -> Path:
    clusters = CLUSTERS.get(rows, max(1, -(-rows // (RF * 2_000_000))))
    partitions = rows // RF
    out = scratch / f"kafka-rebalance-bench-fleet-{rows}"
    out.mkdir(parents=True, exist_ok=True)
    for c in range(clusters):
        n = partitions // clusters + (1 if c < partitions % clusters else 0)
        assert n <= MAX_PARTITIONS_PER_FILE
        path = out / f"cluster-{c:03d}.parquet"
        if path.exists():
            continue
        spec = ClusterSpec(
            cluster_id=f"bench-{c:03d}", brokers=48 + 12 * c, racks=3, topics=300, partitions=n,
            replication_factor=RF, replica_skew=0.5, leader_skew=0.1, new_brokers=3, dead_brokers=1,
            under_replicated=0.01, threshold_percentage=10 if c % 2 else None, seed=c,
        )
        started = time.perf_counter()
        generate(spec, path)
        print(f"  generated {path.name}: {n:,} partitions in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return out


class PeakRss:
    """Samples RSS of this process and its children (the driver JVM) every 50 ms."""

    def __init__(self) -> None:
        self.proc = psutil.Process()
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> int:
        total = self.proc.memory_info().rss
        for child in self.proc.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self.sample())
            self._stop.wait(0.05)

    def __enter__(self) -> PeakRss:
        self.peak = self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.sample())


DUCKDB_SQL = """
WITH parts AS (
  SELECT f.cluster_id, p.replicas, coalesce(p.leader, -1) AS leader, coalesce(p.isr, []::INT[]) AS isr,
         coalesce(p.size_bytes, 0) AS size, coalesce(p.bytes_in_per_sec, 0)::DECIMAL(30, 6) AS rate,
         f.rack_count, f.rack_base, f.rack_index
  FROM read_parquet($files, filename = true) p JOIN files f ON p.filename = f.filename
), flagged AS (
  SELECT *, leader <> replicas[1] AS not_led, list_contains(isr, replicas[1]) AS pref_in_isr,
         len(isr) < len(replicas) AS urp,
         rack_count >= len(replicas) AND len(replicas) > 1
           AND len(list_distinct(list_transform(replicas, lambda r: rack_index[r - rack_base + 1]))) < len(replicas) AS rack_violation
  FROM parts
), reps AS (
  SELECT *, unnest(replicas) AS broker_id, generate_subscripts(replicas, 1) AS pos FROM flagged
)
SELECT cluster_id, broker_id,
       count(*) AS replicas,
       count(*) FILTER (broker_id = leader) AS leaders,
       sum(size)::BIGINT AS size_bytes,
       coalesce(sum(rate) FILTER (broker_id = leader), 0)::DOUBLE AS leader_bytes_in_per_sec,
       count(*) FILTER (pos = 1) AS preferred_partitions,
       count(*) FILTER (pos = 1 AND not_led) AS preferred_not_led,
       count(*) FILTER (urp) AS under_replicated_partitions,
       count(*) FILTER (pos = 1 AND pref_in_isr) AS preferred_in_isr,
       count(*) FILTER (pos = 1 AND rack_violation) AS rack_violations,
       count(*) FILTER (pos = 1 AND leader = -1) AS offline
FROM reps GROUP BY cluster_id, broker_id ORDER BY cluster_id, broker_id
"""


# The same per-broker query plus the row checks the Spark job makes on every row (malformed
# keys, replica lists, leaders, ISRs, sizes; duplicate partitions; replica lists longer than
# the rack check's unrolled four), so that the second ratio compares equal work.
def _extended(sql: str, *edits: tuple[str, str]) -> str:
    """``sql`` with each anchor replaced; an anchor that is gone is an error, not a silently
    unchecked query."""
    for anchor, replacement in edits:
        if anchor not in sql:
            raise SystemExit(f"benchmarks/imbalance.py: DUCKDB_SQL no longer contains {anchor!r}")
        sql = sql.replace(anchor, replacement)
    return sql


DUCKDB_CHECKED_SQL = _extended(
    DUCKDB_SQL,
    ("len(isr) < len(replicas) AS urp,",
     """len(isr) < len(replicas) AS urp,
         topic IS NULL OR topic = '' OR p_partition IS NULL OR p_partition < 0 AS bad_key,
         replicas IS NULL OR len(replicas) = 0 OR list_has_any(replicas, [NULL]::INT[])
           OR len(list_distinct(replicas)) <> len(replicas) AS bad_replicas,
         leader <> -1 AND NOT coalesce(list_contains(replicas, leader), false) AS bad_leader,
         len(list_intersect(coalesce(replicas, []::INT[]), isr)) <> len(isr)
           OR len(list_distinct(isr)) <> len(isr) AS bad_isr,
         size < 0 OR isnan(raw_rate) OR raw_rate < 0 OR raw_rate > 1e12 AS bad_size,
         len(replicas) > 4 AS long_replicas,"""),
    ("SELECT f.cluster_id, p.replicas,",
     "SELECT f.cluster_id, p.topic, p.partition AS p_partition, coalesce(p.bytes_in_per_sec, 0) AS raw_rate, p.replicas,"),
    ("count(*) FILTER (pos = 1 AND leader = -1) AS offline",
     """count(*) FILTER (pos = 1 AND leader = -1) AS offline,
       count(*) FILTER (pos = 1 AND (bad_key OR bad_replicas OR bad_leader OR bad_isr OR bad_size OR long_replicas)) AS bad"""),
)
DUCKDB_DUPLICATES_SQL = """
SELECT filename, topic, partition, count(*) FROM read_parquet($files, filename = true)
GROUP BY ALL HAVING count(*) > 1 LIMIT 5
"""


def duckdb_run(files: list[Path], checked: bool = False) -> tuple[float, dict]:
    import duckdb
    import pandas as pd

    con = duckdb.connect()
    con.execute("SET threads = 2")
    rows = []
    for f in files:
        head = read_parquet_header(f)
        racks = sorted({b["rack"] for b in head["brokers"] if b.get("rack")})
        by_id = {b["id"]: racks.index(b["rack"]) for b in head["brokers"] if b.get("rack")}
        base = min(by_id) if by_id else 0
        dense = [by_id.get(i) for i in range(base, max(by_id) + 1)] if by_id else []
        rows.append({"filename": str(f), "cluster_id": head["cluster_id"], "rack_count": len(racks),
                     "rack_base": base, "rack_index": dense})
    files_df = pd.DataFrame(rows)
    con.register("files", files_df)
    started = time.perf_counter()
    names = {"files": [str(f) for f in files]}
    result = con.execute(DUCKDB_CHECKED_SQL if checked else DUCKDB_SQL, names).fetchall()
    if checked:
        dupes = con.execute(DUCKDB_DUPLICATES_SQL, names).fetchall()
        bad = sum(r[-1] for r in result)
        if dupes or bad:
            raise SystemExit(f"DuckDB found malformed rows in generated data: {bad} flagged, duplicates {dupes}")
    elapsed = time.perf_counter() - started
    return elapsed, {(r[0], r[1]): r[2:9] for r in result}


def load() -> str:
    return open("/proc/loadavg").read().split()[0]


def profiled(spark, group: str, fn):
    """Run fn() under a job group; return its result, seconds, Spark jobs and distinct stages."""
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        t0 = time.perf_counter()
        out = fn()
        elapsed = time.perf_counter() - t0
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    jobs = sc.statusTracker().getJobIdsForGroup(group)
    stages = {st for j in jobs for st in (sc.statusTracker().getJobInfo(j).stageIds if sc.statusTracker().getJobInfo(j) else [])}
    return out, elapsed, len(jobs), len(stages)


def generated_fleet(scratch: Path, clusters: int, partitions: int) -> Path:
    """``clusters`` generated clusters; every other one with leader skew (so some are flagged, some not)."""
    out = scratch / f"kafka-rebalance-bench-fleet-{clusters}x{partitions}"
    out.mkdir(parents=True, exist_ok=True)
    for c in range(clusters):
        path = out / f"cluster-{c:03d}.parquet"
        if not path.exists():
            generate(ClusterSpec(cluster_id=f"fleet-{c:03d}", brokers=12, racks=3, topics=20, partitions=partitions,
                                 leader_skew=0.2 if c % 2 else 0.0, seed=c), path)
    return out


def oracle_unbalanced(path: Path) -> set[str]:
    """Plain Python, no Spark: the planner's definition of balanced over kafka_rebalance.metrics' per-broker loads."""
    from kafka_rebalance.balance import bytes_balanced, counts_balanced
    from kafka_rebalance.metrics import broker_loads, threshold_percentage
    from kafka_rebalance.snapshot import load_snapshot

    flagged = set()
    for f in sorted(path.glob("*.parquet")):
        snap = load_snapshot(f)
        pct, _ = threshold_percentage(snap, None)
        loads = broker_loads(snap)
        live = [b for b in loads if b.alive]
        over = any(b.imbalance_ratio is not None and b.preferred_not_led * 100.0 > pct * b.preferred_partitions
                   for b in loads)
        ok = (not over and counts_balanced([b.replicas for b in live])
              and counts_balanced([b.preferred_partitions for b in live])
              and bytes_balanced([b.size_bytes for b in live]))
        if not ok:
            flagged.add(snap.cluster_id)
    return flagged


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def standalone_cluster(workers: int = 2):
    """A Spark master and ``workers`` 1-core workers on 127.0.0.1 (free ports), stopped by process group."""
    import pyspark

    bin_dir = Path(pyspark.__file__).parent / "bin"
    work = Path(tempfile.mkdtemp(prefix="kafka-rebalance-bench-standalone-"))
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(work)}
    port, ui = _free_port(), _free_port()
    procs = []

    def launch(name: str, *args: str) -> None:
        procs.append(subprocess.Popen([str(bin_dir / "spark-class"), *args], env=env, start_new_session=True,
                                      stdout=(work / f"{name}.log").open("wb"), stderr=subprocess.STDOUT))

    try:
        launch("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
               "--webui-port", str(ui))
        for i in range(workers):
            launch(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}", "--host",
                   "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port", str(_free_port()),
                   "--work-dir", str(work / f"w{i}"))
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as resp:
                    import json

                    if json.load(resp).get("aliveworkers", 0) >= workers:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline or any(p.poll() is not None for p in procs):
                raise RuntimeError(f"standalone cluster did not come up; logs in {work}")
            time.sleep(0.5)
        yield f"spark://127.0.0.1:{port}"
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,10M,30M,100M", help="replica rows per fleet, comma-separated")
    parser.add_argument("--scratch", default="/tmp", help="where the generated fleets go (reused between runs)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="2g", help="spark.driver.memory (local mode: the whole heap)")
    parser.add_argument("--fleet", type=int, default=100, help="clusters in the fleet run (0: skip)")
    parser.add_argument("--fleet-partitions", type=int, default=10_000, help="partitions per fleet cluster")
    parser.add_argument("--standalone", action="store_true", help="also run on a 2-worker standalone cluster")
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",") if s]
    scratch = Path(args.scratch)

    from kafka_rebalance.analysis.job import analyze, build_session, write_outputs

    @dataclass
    class Line:
        rows: int
        spark_s: float
        repeat_s: float
        peak: int
        jobs: int
        stages: int
        duck_s: float
        checked_s: float
        agree: bool
        load: str

    started = time.perf_counter()
    spark = build_session(args.master, conf={"spark.driver.memory": args.driver_memory})
    print(f"JVM + SparkSession start: {time.perf_counter() - started:.1f}s (excluded below), master {args.master}, "
          f"driver memory {args.driver_memory}, load {load()}", file=sys.stderr)
    warm = fleet(scratch, WARM_ROWS)
    _, first, jobs, stages = profiled(spark, "first", lambda: analyze(spark, warm))
    print(f"first run on {WARM_ROWS:,} rows (class loading, JIT, code generation): {first:.1f}s, "
          f"{jobs} jobs / {stages} stages, load {load()}", file=sys.stderr)
    fixed = []
    for i in range(3):
        _, sec, jobs, stages = profiled(spark, f"warm-{i}", lambda: analyze(spark, warm))
        fixed.append(sec)
    fixed_s = min(fixed)
    print(f"fixed cost = {WARM_ROWS:,} rows on the warm session: {fixed_s:.2f}s (best of 3: "
          f"{', '.join(f'{x:.2f}' for x in fixed)}), {jobs} jobs / {stages} stages, load {load()}", file=sys.stderr)

    lines = []
    for rows in sizes:
        path = fleet(scratch, rows)
        files = sorted(path.glob("*.parquet"))
        with PeakRss() as rss:
            result, spark_s, jobs, stages = profiled(spark, f"size-{rows}", lambda: analyze(spark, path))  # noqa: B023 - called within this iteration
            t0 = time.perf_counter()
            write_outputs(result, scratch / f"kafka-rebalance-bench-out-{rows}")
            spark_s += time.perf_counter() - t0
            # The same query again: the JIT has then compiled its generated code, as it has in
            # any long-lived driver (a fleet DAG's later clusters, a notebook).
            _, repeat_s, _, _ = profiled(spark, f"size-{rows}-repeat", lambda: analyze(spark, path))  # noqa: B023 - called within this iteration
        duck_s, duck = min(duckdb_run(files), duckdb_run(files), key=lambda run: run[0])
        checked_s, checked = duckdb_run(files, checked=True)
        spark_view = {
            (r["cluster_id"], r["broker_id"]): (
                r["replicas"], r["leaders"], r["size_bytes"], r["leader_bytes_in_per_sec"],
                r["preferred_partitions"], r["preferred_not_led"], r["under_replicated_partitions"],
            )
            for r in result.broker_rows if r["replicas"]
        }
        total = sum(c["replicas"] for c in result.summary["clusters"])
        agree = spark_view == duck == checked and total == sum(v[0] for v in duck.values())
        lines.append(Line(total, spark_s, repeat_s, rss.peak, jobs, stages, duck_s, checked_s, agree, load()))
        print(f"  {total:,} rows: spark {spark_s:.1f}s ({jobs} jobs, {stages} stages), repeated {repeat_s:.1f}s, "
              f"duckdb {duck_s:.1f}s (best of 2), "
              f"duckdb with the same row checks {checked_s:.1f}s, "
              f"agree={agree}, load {load()}", file=sys.stderr)

    print(f"fixed cost ({WARM_ROWS:,} rows, warm session): {fixed_s:.2f}s; first run after JVM start {first:.1f}s")
    print(f"{'replica rows':>14} {'spark s':>8} {'rows/s':>12} {'driver peak':>12} {'jobs':>5} {'stages':>6} "
          f"{'duckdb s':>9} {'spark/duckdb':>12} {'repeat s':>8} {'repeat/duckdb':>13} "
          f"{'duckdb+checks s':>15} {'spark/(duckdb+checks)':>21} "
          f"{'agree':>6} {'load':>6}")
    for ln in lines:
        print(f"{ln.rows:>14,} {ln.spark_s:>8.2f} {ln.rows / ln.spark_s:>12,.0f} {ln.peak / 2**30:>10.2f}Gi "
              f"{ln.jobs:>5} {ln.stages:>6} {ln.duck_s:>9.2f} {ln.spark_s / ln.duck_s:>11.2f}x "
              f"{ln.repeat_s:>8.2f} {ln.repeat_s / ln.duck_s:>12.2f}x "
              f"{ln.checked_s:>15.1f} {ln.spark_s / ln.checked_s:>20.2f}x "
              f"{'yes' if ln.agree else 'NO':>6} {ln.load:>6}")
    for a, b in zip(lines, lines[1:]):
        print(f"growth {a.rows:,} -> {b.rows:,}: {b.rows / a.rows:.1f}x rows, {b.spark_s / a.spark_s:.2f}x Spark time, "
              f"{b.duck_s / a.duck_s:.2f}x DuckDB time")
    ok = all(ln.agree for ln in lines)

    def fleet_run(session, label: str) -> bool:
        path = generated_fleet(scratch, args.fleet, args.fleet_partitions)
        result, sec, jobs, stages = profiled(session, f"fleet-{label}", lambda: analyze(session, path))
        flagged = {c["cluster_id"] for c in result.summary["clusters"] if not c["balanced"]}
        expected = oracle_unbalanced(path)
        rows = sum(c["replicas"] for c in result.summary["clusters"])
        print(f"fleet [{label}]: {args.fleet} clusters, {rows:,} replica rows, {sec:.1f}s, {jobs} jobs / {stages} stages, "
              f"{len(flagged)} flagged, equal to the plain-Python oracle: {flagged == expected}, load {load()}")
        return flagged == expected

    if args.fleet:
        ok &= fleet_run(spark, args.master)
    spark.stop()
    if args.standalone:
        with standalone_cluster() as url:
            remote = build_session(url, conf={"spark.executor.memory": "768m", "spark.cores.max": "2"})
            warm_path = fleet(scratch, WARM_ROWS)
            analyze(remote, warm_path)
            _, sec, jobs, stages = profiled(remote, "standalone-warm", lambda: analyze(remote, warm_path))
            print(f"standalone [{url}, 2 workers x 1 core]: fixed cost {sec:.2f}s ({jobs} jobs / {stages} stages), "
                  f"load {load()}")
            if sizes:
                path = fleet(scratch, sizes[0])
                result, sec, jobs, stages = profiled(remote, "standalone-size", lambda: analyze(remote, path))
                local = next(ln for ln in lines if ln.rows == sum(c["replicas"] for c in result.summary["clusters"]))
                print(f"standalone: {local.rows:,} rows {sec:.1f}s ({jobs} jobs / {stages} stages) vs local "
                      f"{local.spark_s:.1f}s, load {load()}")
            if args.fleet:
                ok &= fleet_run(remote, "standalone")
            remote.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
