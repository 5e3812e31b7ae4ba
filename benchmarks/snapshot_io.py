"""Snapshot loading and fingerprinting speed (kafka_rebalance.snapshot), with the raw read as baseline.

    .venv/bin/python benchmarks/snapshot_io.py [--partitions 1000000] [--scratch /tmp]

Generates a Parquet snapshot (400 brokers, 5 racks, RF 3), then times in this process:
pyarrow's read_table alone (the floor), load_snapshot (read + strict validation + objects),
and Snapshot.fingerprint(). Prints seconds and rows per second for each.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))

from kafka_rebalance.generate import ClusterSpec, generate
from kafka_rebalance.snapshot import load_snapshot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=1_000_000)
    ap.add_argument("--scratch", type=Path, default=Path("/tmp"))
    args = ap.parse_args()
    path = args.scratch / f"snapshot-io-{args.partitions}.parquet"
    if not path.exists():
        generate(ClusterSpec(brokers=400, racks=5, topics=500, partitions=args.partitions, seed=3), path)
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    pq.read_table(path)
    t1 = time.perf_counter()
    snap = load_snapshot(path)
    t2 = time.perf_counter()
    snap.fingerprint()
    t3 = time.perf_counter()
    n = len(snap.partitions)
    for name, secs in (("pyarrow read_table (baseline)", t1 - t0), ("load_snapshot", t2 - t1), ("fingerprint", t3 - t2)):
        print(f"{name:32s} {secs:7.2f} s  {n / secs:12,.0f} partitions/s")


if __name__ == "__main__":
    main()
