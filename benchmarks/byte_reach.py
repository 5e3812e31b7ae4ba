"""The byte promise on clusters the generator does not make (issue #31).

    python benchmarks/byte_reach.py                       # 12, 50 and 200 brokers
    python benchmarks/byte_reach.py --sizes 12/1000,50/50000 --optimizer heuristic

Each cluster comes from tests/support/skewed.py (racks of unequal sizes, log-normal or
Pareto sizes, skewed placement) and is planned with the default options; it prints the
fullest and emptiest eligible broker against the byte mean, whether the byte band was
reached, the plan's moves and bytes against their bounds, the gap, planning seconds and,
for a broker left outside its band, the reason the plan gives.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "plugins"))
sys.path.insert(0, str(ROOT))

# tests/support/skewed.py's keywords, one cluster per entry, at every size
VARIANTS = [
    {"sizes": "lognormal", "seed": 1},
    {"sizes": "pareto", "seed": 2},
    {"sizes": "lognormal", "seed": 3, "skew": 1.0},
    {"sizes": "lognormal", "seed": 4, "rf_mix": {1: 0.1, 2: 0.3, 3: 0.6}, "new_brokers": 2},
]


def run(brokers: int, partitions: int, optimizer: str, variants: list[dict]) -> None:
    from kafka_rebalance.planner import PlanOptions, make_plan
    from tests.support.skewed import skewed_snapshot

    for kw in variants:
        t0 = time.perf_counter()
        snap = skewed_snapshot(brokers, partitions, **kw)
        t1 = time.perf_counter()
        plan = make_plan(snap, PlanOptions(optimizer=optimizer))
        t2 = time.perf_counter()
        s = plan.summary
        tg = s["targets"]
        after = {r["broker_id"]: r["size_bytes"] for r in s["projected"]}
        before = {r["broker_id"]: r["size_bytes"] for r in s["before"]}
        targets = {int(b): t for b, t in tg["byte_targets"].items()}
        mean = sum(targets.values()) / len(targets)
        over = max(after[b] / targets[b] for b in targets)
        under = min(after[b] / targets[b] for b in targets)
        over0 = max(before[b] / targets[b] for b in targets)
        opt = s["optimizer"]
        desc = ",".join(f"{k}={v}" for k, v in kw.items())
        print(f"{brokers}/{partitions} {desc}: make {t1 - t0:.1f}s plan {t2 - t1:.1f}s")
        print(f"   bytes max/mean {max(after[b] for b in targets) / mean:.3f} (before {max(before[b] for b in targets) / mean:.3f}),"
              f" worst vs own target +{over - 1:.3f}/-{1 - under:.3f} (before +{over0 - 1:.3f}),"
              f" bytes_reached {tg['bytes_reached']}, replicas_reached {tg['replicas_reached']}, clamped {tg['clamped_racks']}")
        print(f"   moves {s['replica_moves']:,} (bound {s['lower_bounds']['replica_moves']:,}), bytes moved {s['bytes_moved']:,}"
              f" (bound {opt['bytes_bound']:,}, gap {opt['gap_percent']} %, used {opt['used']})")
        for miss in tg.get("byte_misses", [])[:5]:
            print(f"   miss {miss}")
        sys.stdout.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="12/1000,50/50000,200/200000")
    ap.add_argument("--optimizer", default="auto")
    ap.add_argument("--variant", type=int, action="append", help="only these VARIANTS (0-based)")
    args = ap.parse_args()
    variants = [VARIANTS[i] for i in args.variant] if args.variant else VARIANTS
    for item in args.sizes.split(","):
        b, p = (int(x) for x in item.split("/"))
        run(b, p, args.optimizer, variants)


if __name__ == "__main__":
    main()
