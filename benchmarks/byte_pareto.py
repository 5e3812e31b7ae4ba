"""What evenness costs: bytes and replica moves against byte max/mean, one plan per --byte-tolerance.

    python benchmarks/byte_pareto.py                                     # the two clusters of docs/PLANNER.md
    python benchmarks/byte_pareto.py --clusters samples/sample-cluster.json,uneven-4-4-3 \\
        --tolerances 0.1,0.05,0.042

A cluster is a snapshot file (.json or .parquet), a corpus member (kafka_rebalance.testing.corpus),
or ``generated:<brokers>/<partitions>/<racks>/<new brokers>`` (kafka_rebalance.generate, seed 7,
replica skew 0.5, 64 MiB partitions: ``generated:50/50000/3/2`` is 50 brokers in 3 racks, 2 of them
new). Each is planned with the default options at every tolerance; per plan it prints the bytes and
replica moves, the fullest and emptiest eligible broker over their mean (what operators compare, and
what Cruise Control's figures are), whether the bands were reached, the leader changes and the CPU
seconds of planning.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins"))

DEFAULT_CLUSTERS = "generated:12/2000/3/2,generated:50/50000/3/2"
DEFAULT_TOLERANCES = "0.1,0.089,0.08,0.07,0.06,0.05,0.042"


def load(spec: str):
    from kafka_rebalance.snapshot import load_snapshot
    from kafka_rebalance.testing import corpus

    if spec.startswith("generated:"):
        from kafka_rebalance.generate import ClusterSpec, generate

        brokers, partitions, racks, new = (int(x) for x in spec.split(":", 1)[1].split("/"))
        path = Path(tempfile.mkdtemp()) / "snapshot.json"
        generate(ClusterSpec(cluster_id=f"pareto-{brokers}", brokers=brokers, racks=racks, topics=max(20, partitions // 1000),
                             partitions=partitions, replica_skew=0.5, leader_skew=0.1, new_brokers=new,
                             mean_partition_mb=64, seed=7), path)
        return load_snapshot(path), {}
    if spec.endswith((".json", ".parquet")):
        return load_snapshot(spec), {}
    member = corpus.member(spec)
    return member.snapshot, member.options


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clusters", default=DEFAULT_CLUSTERS, help="snapshot files, corpus members or generated:B/P/R/N")
    ap.add_argument("--tolerances", default=DEFAULT_TOLERANCES, help="--byte-tolerance values, comma-separated")
    args = ap.parse_args()
    from kafka_rebalance.planner import PlanOptions, make_plan

    print("| cluster | byte tolerance | bytes moved (GB) | replica moves | byte max/mean | byte min/mean "
          "| bands reached | leader changes | plan CPU s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for spec in args.clusters.split(","):
        snapshot, options = load(spec)
        for tol in (float(x) for x in args.tolerances.split(",")):
            c0 = time.process_time()
            plan = make_plan(snapshot, PlanOptions(**{**options, "byte_tolerance": tol}))
            cpu = time.process_time() - c0
            s = plan.summary
            eligible = {int(b) for b in s["targets"]["byte_bands"]}
            sizes = [r["size_bytes"] for r in s["projected"] if r["broker_id"] in eligible]
            mean = sum(sizes) / len(sizes) if sizes else 0.0
            print(f"| {spec} | {tol:g} | {s['bytes_moved'] / 1e9:,.2f} | {s['replica_moves']:,} "
                  f"| {max(sizes) / mean if mean else 1.0:.4f} | {min(sizes) / mean if mean else 1.0:.4f} "
                  f"| {'yes' if s['targets']['bytes_reached'] else 'no'} | {s['leader_changes']:,} | {cpu:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
