"""One estimate: the figure of the schedule the executor will run, the other mode's figure beside it.

A plan carries two durations: its moves submitted continuously as schedule.json orders them (the
executor's default mode) and its batches run as waves (``execute --mode batches``, the runbook, or
Kafka's own tool). Every output headlines the figure of the mode that will run and labels the other,
read from plan.json through ``plan_estimate`` so that no two outputs pick differently.

The headline also comes per step, and the steps add up to it exactly (in tenths of a second, the
precision plan.json keeps): as waves, each batch's own figure; continuously, each batch's share of
the schedule, the time the schedule runs past the batches before it until this batch's last move ends
(the increase of the running latest end). The planner rounds both sets here (``split_tenths``,
``running_shares``) so that what plan.json records already sums.

Which mode runs (``mode_that_runs``): the one the ledger shows the plan running in once it started,
else the mode the executor is configured with (clusters.yaml ``executor.mode``, ``execute --mode``),
else the executor's default; a plan without a continuous figure (no schedule.json) runs as batches.

After a run, ``gap_line`` says in one line why a step took much longer or shorter than its estimate,
only from what the run recorded (its measured efficiency and fixed cost, its poll interval, its
clock, the bytes and times of the step), never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kafka_rebalance.throttle_model import ESTIMATE_TOLERANCE
from kafka_rebalance.units import human_rate, human_seconds

# The executor's modes (executor/settings.py checks a configured one against these); the first is its default.
MODES = ("continuous", "batches")
DEFAULT_MODE = MODES[0]
MODE_LABELS = {"continuous": "continuous schedule", "batches": "batches as waves"}
# What one step of each mode is called where the steps are listed.
STEP_LABELS = {"continuous": "share of the continuous schedule", "batches": "wave"}
TENTHS = 10  # plan.json keeps every estimate to a tenth of a second


def tenths(seconds: float) -> int:
    return int(round(seconds * TENTHS))


def split_tenths(raw: Sequence[float]) -> list[float]:
    """Each figure to a tenth of a second such that they add up exactly to the total's tenth.

    Largest remainder: every figure is floored, and the tenths the floors lost in all go one each to
    the figures that lost most (the earlier one on a tie), so no figure moves by a tenth or more.
    """
    scaled = [max(0.0, x) * TENTHS for x in raw]
    floors = [math.floor(x) for x in scaled]
    short = int(round(sum(scaled))) - sum(floors)
    for i in sorted(range(len(scaled)), key=lambda i: (floors[i] - scaled[i], i))[:max(0, short)]:
        floors[i] += 1
    return [f / TENTHS for f in floors]


def running_shares(ends: Sequence[float]) -> list[float]:
    """Each step's share of a schedule whose steps end (their last move) at ``ends`` seconds: how much later
    the schedule's latest end is after this step than before it. The shares add up to the latest end's tenth."""
    out, latest = [], 0
    for end in ends:
        t = max(latest, tenths(end))
        out.append((t - latest) / TENTHS)
        latest = t
    return out


@dataclass(frozen=True, slots=True)
class StepEstimate:
    id: str  # the batch
    seconds: float  # this step's part of the headline
    done_by: float  # the headline's running sum through this step: when it is expected done, from the start


@dataclass(frozen=True, slots=True)
class PlanEstimate:
    mode: str  # the mode that will run
    seconds: float | None  # its figure; None when the plan has none for it
    other_mode: str
    other_seconds: float | None
    steps: tuple[StepEstimate, ...] = ()  # the headline per step, summing to it; () for a plan that does not record them

    def text(self, why: str = "the mode that runs") -> str:
        """``about 1m18s (continuous schedule, the mode that runs); 1m48s if run as batches as waves``."""
        head = "unknown" if self.seconds is None else f"about {human_seconds(self.seconds)}"
        other = "" if self.other_seconds is None else \
            f"; {human_seconds(self.other_seconds)} if run as {MODE_LABELS[self.other_mode]}"
        return f"{head} ({MODE_LABELS[self.mode]}, {why}){other}"

    @property
    def step_label(self) -> str:
        return STEP_LABELS[self.mode]

    def as_json(self) -> dict[str, Any]:
        return {"estimated_seconds": self.seconds, "estimate_of": self.mode,
                "other_estimated_seconds": self.other_seconds, "other_estimate_of": self.other_mode}


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def mode_seconds(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """Each mode's estimate in plan.json's summary.

    Plans written before ``estimated_seconds_batches`` existed hold the batch figure in
    ``estimated_seconds``; later ones hold it in ``estimated_seconds_batches`` and the continuous
    figure (also ``continuous.estimated_seconds``) in ``estimated_seconds``.
    """
    c = summary.get("continuous")
    continuous = _number(c.get("estimated_seconds")) if isinstance(c, Mapping) else None
    batches = _number(summary["estimated_seconds_batches"]) if "estimated_seconds_batches" in summary \
        else _number(summary.get("estimated_seconds"))
    return {"continuous": continuous, "batches": batches}


# A batch row's share of the continuous schedule (plans made before it was recorded have none).
CONTINUOUS_STEP_FIELD = "estimated_seconds_continuous"
STEP_FIELDS = {"batches": "estimated_seconds", "continuous": CONTINUOUS_STEP_FIELD}


def _steps(batches: Sequence[Any], mode: str, headline: float | None) -> tuple[StepEstimate, ...]:
    key = STEP_FIELDS[mode]
    rows = [b for b in batches if isinstance(b, Mapping)]
    figures = [_number(b.get(key)) for b in rows]
    if headline is None or not rows or any(f is None for f in figures):
        return ()
    out, done = [], 0
    for b, f in zip(rows, figures):
        done += tenths(f or 0.0)
        out.append(StepEstimate(str(b.get("id")), f or 0.0, done / TENTHS))
    # Plans made before the figures were rounded to sum may be off by a few tenths: their steps are not the headline's.
    return tuple(out) if done == tenths(headline) else ()


def plan_estimate(manifest: Mapping[str, Any], mode: str | None = None) -> PlanEstimate:
    """The headline of plan.json ``manifest`` for ``mode`` (the mode that runs, ``mode_that_runs``; None: the
    executor's default), the other mode's figure, and the headline per batch.

    A plan without a continuous figure (no schedule.json) can only run as batches: that is its headline.
    """
    raw = manifest.get("summary")
    summary: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    figures = mode_seconds(summary)
    mode = mode or DEFAULT_MODE
    if figures[mode] is None and figures["batches"] is not None:
        mode = "batches"
    other = next(m for m in MODES if m != mode)
    batches = manifest.get("batches")
    return PlanEstimate(mode, figures[mode], other, figures[other],
                        _steps(batches if isinstance(batches, list) else [], mode, figures[mode]))


def ran_mode(ledger: Mapping[str, Any] | None, move_batches: Sequence[str]) -> str | None:
    """The mode the ledger shows the plan running in; None before any of its moves started.
    ``move_batches``: the ids of the plan's data-moving batches."""
    if not ledger:
        return None
    cont = ledger.get("continuous")
    if isinstance(cont, Mapping) and cont.get("started_at"):
        return "continuous"
    raw = ledger.get("batches")
    batches: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    started = [e for bid, e in batches.items()
               if bid in move_batches and isinstance(e, Mapping) and e.get("state", "pending") != "pending"]
    return "batches" if any(e.get("mode") != "continuous" for e in started) else None


def mode_that_runs(ledger: Mapping[str, Any] | None, move_batches: Sequence[str], configured: str | None = None) -> str:
    """The mode whose figure is the headline: the one the plan runs in once started, else the configured one."""
    return ran_mode(ledger, move_batches) or configured or DEFAULT_MODE


# --------------------------------------------------------------------------- after a run


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What a run recorded that can explain a step's time against its estimate (None: not recorded)."""

    simulated: bool | None = None  # the cluster was the simulator, whose clock is virtual
    poll_interval_seconds: float | None = None  # the longest wait between the executor's progress polls
    throttle_bytes_per_sec: float | None = None  # per broker, as the plan set it
    assumed_efficiency: float | None = None  # the plan's throttle_efficiency
    measured_efficiency: float | None = None  # what the continuous run's copies got of the throttle
    assumed_fixed_seconds: float | None = None  # the plan's move_fixed_seconds
    measured_fixed_seconds: float | None = None  # what the continuous run's moves took besides copying


def _flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def run_facts(entries: Sequence[Mapping[str, Any]], options: Mapping[str, Any]) -> RunFacts:
    """The facts the ledger ``entries`` (its continuous run, or its waves) and the plan's ``options`` record."""
    def first(key: str) -> Any:
        return next((e[key] for e in entries if e.get(key) is not None), None)

    return RunFacts(simulated=_flag(first("simulated_clock")), poll_interval_seconds=_number(first("poll_interval_seconds")),
                    throttle_bytes_per_sec=_number(options.get("throttle_bytes_per_sec")),
                    assumed_efficiency=_number(options.get("throttle_efficiency", 1.0)),
                    measured_efficiency=_number(first("measured_efficiency")),
                    assumed_fixed_seconds=_number(options.get("move_fixed_seconds")),
                    measured_fixed_seconds=_number(first("measured_move_fixed_seconds")))


def gap_line(estimated: float, actual: float, moved_bytes: int, facts: RunFacts, steps: int = 1) -> str | None:
    """One line on why a run of ``steps`` waves (or one continuous run) took ``actual`` seconds against its
    ``estimated`` (beyond ``ESTIMATE_TOLERANCE``), from the run's recorded facts only; None when the estimate held
    or nothing recorded explains it."""
    if actual <= 0 or abs(actual - estimated) <= ESTIMATE_TOLERANCE * max(actual, estimated):
        return None
    clock = "the simulator's virtual clock" if facts.simulated else "the cluster admin's clock"
    head = f"took {human_seconds(actual)} on {clock} against an estimate of {human_seconds(estimated)}"
    poll = facts.poll_interval_seconds
    # A wave is seen finished only at a poll: waves shorter than the poll interval take up to one interval more each.
    if poll is not None and steps and actual > estimated and actual - estimated <= steps * (poll + 1.0) \
            and estimated / steps < poll:
        return (f"{head}: the executor polled every {poll:g} s (poll_interval) and sees a wave finished only at a "
                f"poll, so each of the {steps} wave(s), shorter than that, took up to one interval more")
    if facts.measured_fixed_seconds is not None and facts.assumed_fixed_seconds is not None:
        return (f"{head}: the moves took {facts.measured_fixed_seconds:g} s each besides copying, the plan assumed "
                f"{facts.assumed_fixed_seconds:g} s (move_fixed_seconds)")
    if facts.measured_efficiency is not None and facts.assumed_efficiency is not None:
        return (f"{head}: the copies got {facts.measured_efficiency:g} of the throttle, the plan assumed "
                f"{facts.assumed_efficiency:g} (throttle_efficiency)")
    if moved_bytes > 0:
        measured, assumed = moved_bytes / actual, moved_bytes / estimated if estimated > 0 else None
        vs = "" if assumed is None else f" against the {human_rate(assumed)} the estimate implies"
        cap = "" if facts.throttle_bytes_per_sec is None else f" (throttle {human_rate(facts.throttle_bytes_per_sec)} per broker)"
        return f"{head}: its bytes moved at {human_rate(measured)} measured{vs}{cap}"
    return None
