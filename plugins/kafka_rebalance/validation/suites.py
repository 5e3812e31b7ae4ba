"""The expectation suites: JSON files under ``expectations/``, reviewed like code."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kafka_rebalance.paths import EXPECTATIONS_DIR
from kafka_rebalance.validation.inputs import ValidationInputError, read_json

SUITE_NAMES = ("snapshot", "reassignment_plan", "projected_balance")
_ENV = "KAFKA_REBALANCE_EXPECTATIONS"


def suites_dir() -> Path:
    """``$KAFKA_REBALANCE_EXPECTATIONS``, else ``expectations/`` at the project root."""
    if os.environ.get(_ENV):
        return Path(os.environ[_ENV])
    return EXPECTATIONS_DIR


def load_suite_dict(name: str, directory: Path | None = None) -> dict[str, Any]:
    path = (directory or suites_dir()) / f"{name}.json"
    if not path.is_file():
        raise ValidationInputError(f"{path}: expectation suite file does not exist (set {_ENV} to the expectations/ directory)")
    raw = read_json(path)
    if not isinstance(raw, dict) or raw.get("name") != name or not isinstance(raw.get("expectations"), list):
        raise ValidationInputError(f"{path}: must hold {{\"name\": \"{name}\", \"expectations\": [...]}}")
    for i, e in enumerate(raw["expectations"]):
        if not (e.get("meta") or {}).get("description"):
            raise ValidationInputError(f"{path}: expectations[{i}] ({e.get('type')}) has no meta.description for operators")
    return raw


def build_suite(name: str, directory: Path | None = None) -> Any:
    """A GX ExpectationSuite from its JSON file (our custom types must be registered first)."""
    import great_expectations as gx
    from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

    import kafka_rebalance.validation.custom_expectations  # noqa: F401  registers our types

    raw = load_suite_dict(name, directory)
    expectations = [
        # Data Docs show an expectation's description: lead with its name so the page and
        # the CLI report speak of the same expectation.
        ExpectationConfiguration(
            type=e["type"], kwargs=e.get("kwargs", {}), meta=e["meta"],
            description=f"{e['type']}: {e['meta']['description']}",
        ).to_domain_obj()
        for e in raw["expectations"]
    ]
    return gx.ExpectationSuite(name=name, expectations=expectations, meta=raw.get("meta") or {})
