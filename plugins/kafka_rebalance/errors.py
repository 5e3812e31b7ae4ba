"""Exceptions that carry a message an operator can act on.

Every error the CLI and the DAG tasks surface derives from ``RebalanceError``;
the CLI prints ``str(error)`` on one line and exits 2, never a bare traceback.
"""

from __future__ import annotations


class RebalanceError(Exception):
    """Base class: the message names the file, field and value at fault."""


class SnapshotError(RebalanceError):
    """A snapshot is unusable. Collects every problem, not just the first."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = list(problems)
        shown = self.problems[:20]
        more = len(self.problems) - len(shown)
        lines = "; ".join(shown) + (f"; ... and {more} more" if more > 0 else "")
        super().__init__(f"{source}: invalid snapshot ({len(self.problems)} problem(s)): {lines}")


class AssignmentError(RebalanceError):
    """Kafka's AdminOperationException / InvalidReplicationFactorException / InvalidPartitionsException.

    ``kafka_exception`` names the Java exception Kafka's own code throws with the same message, so
    differential tests compare the kind of error as well as its text.
    """

    def __init__(self, message: str, *, kafka_exception: str = "AdminOperationException") -> None:
        super().__init__(message)
        self.kafka_exception = kafka_exception


class PlanError(RebalanceError):
    """The snapshot cannot be balanced under the options given (or an option is unusable)."""
