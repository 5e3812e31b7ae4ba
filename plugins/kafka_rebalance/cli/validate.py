"""``validate``: the quality gate a staged plan must pass before anyone can approve or execute it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kafka_rebalance.cli._app import app, fail, stderr
from kafka_rebalance.cli.meter import stages
from kafka_rebalance.errors import RebalanceError


@app.command()
def validate(
    plan: Annotated[Path, typer.Option("--plan", help="Staged plan directory (holds plan.json and batches/)")],
    snapshot: Annotated[Path, typer.Option("--snapshot", help="The snapshot the plan was made from (.json or .parquet)")],
    engine: Annotated[str, typer.Option("--engine", help="pandas (default) or spark (local SparkSession)")] = "pandas",
) -> None:
    """Run the snapshot, reassignment_plan and projected_balance suites; exit 0 pass, 1 fail, 2 unusable input.

    Writes PLAN/validation/result.json and Data Docs under PLAN/validation/data_docs/,
    and records the verdict in PLAN/validation/verdict.json, naming the plan hash it judged
    (a failed plan can never be executed).
    """
    from kafka_rebalance.plan_dir import VALIDATION_DIR, check_output

    try:
        # validate writes only PLAN/validation/; the snapshot it reads must not be one of those files.
        check_output(plan / VALIDATION_DIR, "--plan", inputs=[("--snapshot", snapshot)], directory=True,
                     may_write=(f"{VALIDATION_DIR}",))
        with stages("validate", ["loading Great Expectations"]) as begin:
            begin("loading Great Expectations")
            from kafka_rebalance.validation import validate_plan
            from kafka_rebalance.validation.runner import stage_names

            begin.expect(len(stage_names()))
            outcome = validate_plan(plan, snapshot, engine=engine, begin=begin)
    except RebalanceError as exc:
        fail(str(exc))
    except Exception as exc:
        fail(f"validation could not run ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); plan not approved")
    print(outcome.report())
    stderr.print(f"wrote {outcome.result_path} and {outcome.docs_index}")
    raise typer.Exit(outcome.exit_code)
