"""Fixtures for the quality-gate tests: a known-good small plan."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.plans import small_plan


@pytest.fixture
def good_plan(tmp_path: Path) -> tuple[Path, Path]:
    """(plan dir, snapshot path) of a hand-built plan that passes every expectation."""
    return small_plan(tmp_path)

# The Spark engine test uses the session-wide `spark` fixture of tests/conftest.py (one JVM per test session).
