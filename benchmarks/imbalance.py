"""Benchmark: the Spark leader-imbalance analysis on generated fleets, against DuckDB.

    python benchmarks/imbalance.py [--sizes 1M,10M,30M] [--scratch /tmp] [--master local[2]]

For each size (replica rows; RF 3, so a third as many partitions) it generates a fleet
of Parquet snapshots with kafka_rebalance.generate (reused when already there), then
prints: rows, wall seconds of the analysis (the JVM is started before timing), rows per
second, peak RSS of the driver (this Python process + the JVM it started), and the same
per-broker computation by DuckDB on the same files, with the time ratio and whether
both engines agree on every per-broker figure.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))

from kafka_rebalance.generate import ClusterSpec, generate  # noqa: E402
from kafka_rebalance.snapshot import read_parquet_header  # noqa: E402

RF = 3
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


def duckdb_run(files: list[Path]) -> tuple[float, dict]:
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
    files_df = pd.DataFrame(rows)  # noqa: F841 - read by DuckDB's replacement scan
    con.register("files", files_df)
    started = time.perf_counter()
    result = con.execute(DUCKDB_SQL, {"files": [str(f) for f in files]}).fetchall()
    elapsed = time.perf_counter() - started
    return elapsed, {(r[0], r[1]): r[2:9] for r in result}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1M,10M,30M", help="replica rows per fleet, comma-separated")
    parser.add_argument("--scratch", default="/tmp", help="where the generated fleets go (reused between runs)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="2g", help="spark.driver.memory (local mode: the whole heap)")
    args = parser.parse_args()
    sizes = [parse_size(s) for s in args.sizes.split(",")]

    from kafka_rebalance.analysis.job import analyze, build_session, write_outputs

    @dataclass
    class Line:
        rows: int
        spark_s: float
        peak: int
        duck_s: float
        agree: bool

    started = time.perf_counter()
    spark = build_session(args.master, conf={"spark.driver.memory": args.driver_memory})
    print(f"JVM + SparkSession start: {time.perf_counter() - started:.1f}s (excluded below), master {args.master}, "
          f"driver memory {args.driver_memory}", file=sys.stderr)
    # One small run first, so class loading and JIT of Spark's own code count as start-up, not as work.
    warm = fleet(Path(args.scratch), 30_000)
    started = time.perf_counter()
    analyze(spark, warm)
    print(f"warm-up on 30,000 rows: {time.perf_counter() - started:.1f}s (excluded below)", file=sys.stderr)
    lines = []
    for rows in sizes:
        path = fleet(Path(args.scratch), rows)
        files = sorted(path.glob("*.parquet"))
        with PeakRss() as rss:
            t0 = time.perf_counter()
            result = analyze(spark, path)
            write_outputs(result, Path(args.scratch) / f"kafka-rebalance-bench-out-{rows}")
            spark_s = time.perf_counter() - t0
        duck_s, duck = duckdb_run(files)
        spark_view = {
            (r["cluster_id"], r["broker_id"]): (
                r["replicas"], r["leaders"], r["size_bytes"], r["leader_bytes_in_per_sec"],
                r["preferred_partitions"], r["preferred_not_led"], r["under_replicated_partitions"],
            )
            for r in result.broker_rows if r["replicas"]
        }
        total = sum(c["replicas"] for c in result.summary["clusters"])
        agree = spark_view == duck and total == sum(v[0] for v in duck.values())
        lines.append(Line(total, spark_s, rss.peak, duck_s, agree))
        print(f"  {total:,} rows: spark {spark_s:.1f}s, duckdb {duck_s:.1f}s, agree={agree}", file=sys.stderr)

    print(f"{'replica rows':>14} {'spark s':>8} {'rows/s':>12} {'driver peak':>12} {'duckdb s':>9} "
          f"{'spark/duckdb':>12} {'agree':>6}")
    for ln in lines:
        print(f"{ln.rows:>14,} {ln.spark_s:>8.1f} {ln.rows / ln.spark_s:>12,.0f} {ln.peak / 2**30:>10.2f}Gi "
              f"{ln.duck_s:>9.1f} {ln.spark_s / ln.duck_s:>11.1f}x {'yes' if ln.agree else 'NO':>6}")
    spark.stop()
    return 0 if all(ln.agree for ln in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
