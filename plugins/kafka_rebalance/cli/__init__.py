"""``kafka-rebalance``: one command per job, explicit flags, Kafka's own file formats."""

from __future__ import annotations

import sys

from kafka_rebalance.cli._app import EXIT_USAGE, app
from kafka_rebalance.errors import RebalanceError

# Command modules register themselves on `app` when imported.
from kafka_rebalance.cli import analyze, execute, gather, plan, report, sandbox, snapshots, topology, validate  # noqa: E402,F401  isort: skip


def main() -> None:
    try:
        app()
    except RebalanceError as exc:
        # Messages carry broker lists like [4, 4, 7]: print plainly, not as Rich markup.
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
