"""Per-broker leader imbalance and skew of one Kafka cluster or a fleet, as a plain PySpark job.

    spark-submit spark_jobs/leader_imbalance.py --snapshot PATH --out DIR [--threshold-percentage N] [--byte-tolerance F] [--replica-tolerance F]

PATH is one snapshot (.json or .parquet) or a directory of them, one cluster each.
Writes DIR/broker_metrics.parquet and DIR/summary.json (docs/ANALYSIS.md). The master
comes from spark-submit. Only the driver imports kafka_rebalance; executors run
Spark SQL expressions only. Bad input: one line on stderr, exit code 2.
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="leader_imbalance.py", description=__doc__.splitlines()[0])
    parser.add_argument("--snapshot", required=True, help="snapshot file or fleet directory")
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--threshold-percentage", type=float, default=None,
                        help="used for clusters whose snapshot does not report the config (default 10)")
    parser.add_argument("--byte-tolerance", type=float, default=None,
                        help="allowed byte deviation from the mean, as a fraction (default 0.1, as the planner's)")
    parser.add_argument("--replica-tolerance", type=float, default=None,
                        help="allowed replica-count deviation from the even share, as a fraction (default as the planner's)")
    args = parser.parse_args(argv)

    from kafka_rebalance.analysis.job import build_session, run
    from kafka_rebalance.analysis.summary import describe_cluster
    from kafka_rebalance.balance import Tolerances
    from kafka_rebalance.errors import RebalanceError

    try:
        given = {k: v for k, v in (("byte_tolerance", args.byte_tolerance), ("replica_tolerance", args.replica_tolerance))
                 if v is not None}
        tolerances = Tolerances(**given)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    spark = build_session(master=None, app_name="kafka-rebalance-leader-imbalance")
    try:
        result = run(spark, args.snapshot, args.out, args.threshold_percentage, tolerances)
    except RebalanceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    for entry in result.summary["clusters"]:
        print(describe_cluster(entry), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
