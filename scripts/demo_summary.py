"""Demo only: print the staged plan, its validation and the final verification of the newest run."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(root: Path, cluster: str) -> int:
    plans = sorted((root / "plans" / cluster).glob("*/plan.json"), key=lambda p: p.stat().st_mtime)
    if not plans:
        print("error: no staged plan found", file=sys.stderr)
        return 1
    staged = plans[-1].parent
    m = json.loads((staged / "plan.json").read_text())
    s = m["summary"]
    v = json.loads((staged / "verification.json").read_text())
    from kafka_rebalance.plan_dir import VALIDATION_VERDICT

    verdict_path = staged / VALIDATION_VERDICT
    verdict = json.loads(verdict_path.read_text())
    print(f"plan            {staged}")
    print(f"                {s['replica_moves']} replica moves (lower bound {s['lower_bounds']['replica_moves']}), "
          f"{s['bytes_moved'] / 2**20:,.0f} MiB, {len(m['batches'])} batches, estimated {s['estimated_seconds']:,.0f}s")
    print(f"validation      {verdict['status']} for plan {verdict['plan_hash'][:16]}  -> {verdict_path}")
    print(f"                Data Docs: {staged / 'validation' / 'data_docs' / 'index.html'}")
    print(f"verification    {v['status']}; brokers over threshold: {v['brokers_over_threshold'] or 'none'}; "
          f"throttles left: {v['throttles_left'] or 'none'}  -> {staged / 'verification.json'}")
    if (staged / "report.html").exists():
        print(f"report          {staged / 'report.html'}")
    print(f"final snapshot  {v['final_snapshot']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
