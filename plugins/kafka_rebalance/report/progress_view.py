"""How a ``Progress`` (executor/progress.py) reads to a person: the one wording of every surface.

``status`` prints ``headline`` and ``figures``; the execution page, the report and the plans
list render the same figures through ``templates/progress.html.j2`` (the page and the report) or
``headline`` (the list). A figure is worded here once, so the surfaces cannot drift apart.
Pure: no clock (the CLI alone adds how far the ETA is from now).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka_rebalance.estimates import PlanEstimate
from kafka_rebalance.executor.progress import ExecState, Progress
from kafka_rebalance.units import human_bytes, human_rate, human_seconds


@dataclass(frozen=True, slots=True)
class Figure:
    key: str  # a stable id (the HTML row id is ``progress-figure-<key>``)
    label: str
    value: str


INTERRUPTED_NOTE = ("the run acting on this plan was killed before it finished and none acts now; moves it submitted "
                    "may still be copying in Kafka; running execute again (an Airflow retry does) resumes from the ledger")


def headline(p: Progress) -> str:
    """``finished, 100.0 % of bytes``: the state and how far, in one phrase."""
    return f"{p.state.value}, {p.percent_bytes:.1f} % of bytes"


def eta_text(p: Progress) -> str | None:
    """The ETA while running (None otherwise): when, at the measured rate, or why it is not known yet."""
    if p.state is not ExecState.RUNNING:
        return None
    if p.eta_at is None:
        return "unknown until a move of this run finishes"
    return f"{p.eta_at} ({human_seconds(p.eta_seconds)} after the last finished move, at the measured rate)"


def figures(p: Progress) -> list[Figure]:
    """The progress as labelled values, in the order every surface shows them."""
    out = [
        Figure("state", "state", p.state.value),
        *([Figure("interrupted", "why", INTERRUPTED_NOTE)] if p.state is ExecState.INTERRUPTED else []),
        Figure("percent", "done", f"{p.percent_bytes:.1f} % of bytes"),
        Figure("moves", "moves", f"{p.moves_done} done, {p.moves_in_flight} in flight, {p.moves_pending} pending"
               + (f", {p.moves_failed} failed" if p.moves_failed else "") + f" (of {p.moves_total})"),
        Figure("bytes", "bytes", f"{human_bytes(p.bytes_done)} done, {human_bytes(p.bytes_left)} left "
               f"(of {human_bytes(p.bytes_total)})"),
    ]
    if p.elections_total:
        out.append(Figure("elections", "leader elections", f"{p.elections_requested}/{p.elections_total} requested"))
    out.append(Figure("rate", "measured rate",
                      "not measured yet" if p.rate_bytes_per_sec is None else human_rate(p.rate_bytes_per_sec)))
    if p.estimate_of is not None and p.other_estimate_of is not None:
        estimate = PlanEstimate(p.estimate_of, p.estimated_seconds, p.other_estimate_of, p.other_estimated_seconds)
        out.append(Figure("estimate", "estimated duration", estimate.text()))
    eta = eta_text(p)
    if eta is not None:
        out.append(Figure("eta", "ETA", eta))
    if p.window is not None:
        out.append(Figure("window", "window", p.window + (f"; next window {p.next_window}" if p.next_window else "")))
    if p.updated_at is not None:
        out.append(Figure("updated", "ledger last updated", p.updated_at))
    return out
