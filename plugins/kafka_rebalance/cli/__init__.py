"""``kafka-rebalance``: one command per job, explicit flags, Kafka's own file formats."""

from __future__ import annotations

from kafka_rebalance.cli._app import EXIT_USAGE, app  # noqa: F401 - EXIT_USAGE is part of the CLI's API
from kafka_rebalance.executor.interrupt import exit_on_signals

# Command modules register themselves on `app` when imported.
from kafka_rebalance.cli import analyze, approve, control, execute, gather, plan, report, sandbox, snapshots, status, topology, validate  # noqa: F401  isort: skip


def main() -> None:
    # Errors become one line and exit 2 inside the app (cli/_app.OneLineErrors), so
    # in-process runners (tests, CliRunner) see exactly what the console shows. A SIGTERM or
    # SIGINT unwinds the command, so no key material written for its client outlives it.
    with exit_on_signals():
        app()
