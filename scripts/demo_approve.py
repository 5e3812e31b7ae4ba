"""Demo only: approve the rebalance DAG's pending request through Airflow's REST API.

`make demo` starts this beside `airflow dags test` so the run reaches execution and final
verification without anyone at the UI. In production a person approves in the UI.
"""

from __future__ import annotations

import sys

from kafka_rebalance.testing.hitl_client import Approver


def main() -> int:
    dag_id = sys.argv[1]
    approver = Approver(dag_id, "Approve", log=lambda line: print(f"[demo approver] {line}", flush=True))
    approver.run()
    if approver.error is not None:
        print(f"[demo approver] error: {approver.error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
