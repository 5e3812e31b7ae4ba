"""A cluster's approval policy (``approval_policy`` in clusters.yaml): which staged plans approve themselves.

    approval_policy:
      rules:                      # the first rule whose every condition holds approves the plan
        - name: leaders-only      # recorded as the approver: policy:leaders-only
          when: {max_replica_moves: 0}
        - name: small-moves
          when: {max_bytes: 50GiB, within_window: true}
      otherwise: human            # no rule holds: the DAG's approval step waits for a person

The policy only decides; the approval it allows is recorded by ``plan_approval.decide``, the same call a
person's approval goes through (validated for this hash, young enough, signed with the approval key), with
the approver ``policy:<rule>``, the rule and the figures it judged. ``judge`` is pure: plan figures in, a
verdict out, no clock and no cluster.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from kafka_rebalance.executor.windows import WindowMode, WindowPolicy
from kafka_rebalance.units import human_bytes, human_seconds, parse_bytes

# Lowercase words joined by hyphens: the name is recorded as the approver (policy:<name>) and read in logs.
RULE_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_RULE_NAME = 64
APPROVER_PREFIX = "policy:"


class _Strict(BaseModel):
    """Unknown keys are refused with the key, its value and the keys that exist (a typo never turns a limit off)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = [k for k in data if k not in cls.model_fields]
            if unknown:
                named = ", ".join(f"{k!r} (value {data[k]!r})" for k in unknown)
                raise ValueError(f"unknown key {named}; the keys are {', '.join(cls.model_fields)}")
        elif data is not None and not isinstance(data, BaseModel):
            raise ValueError(f"expected a mapping of {', '.join(cls.model_fields)}, got {data!r}")
        return data


def _size(value: Any) -> Any:
    """A size as the CLI's flags read one (bytes, or 50GiB, 50GB); a rate (/s) is not a size."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"expected bytes or a size such as 50GiB, got {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value!r} is negative; a size is at least 0")
        return value
    if "/" in value:
        raise ValueError(f"{value!r} is a rate; max_bytes is a size such as 50GiB")
    try:
        return parse_bytes(value, "max_bytes")
    except ValueError as exc:
        raise ValueError(str(exc).removeprefix("max_bytes: ")) from None


Count = Annotated[int, Field(strict=True, ge=0)]


class PolicyConditions(_Strict):
    """What a plan must stay within for a rule to approve it; every condition given must hold."""

    max_replica_moves: Count | None = None
    max_bytes: Annotated[int | None, BeforeValidator(_size)] = None  # bytes copied by the whole plan
    max_leader_elections: Count | None = None
    # Moves start only inside a maintenance window (the cluster's, or the run's interval), and the plan's
    # estimate fits in the longest one less the window margin: it cannot spill into business hours.
    within_window: bool = False

    @model_validator(mode="after")
    def _some(self) -> PolicyConditions:
        if self.model_dump(exclude_defaults=True) == {}:
            raise ValueError("a rule needs at least one condition (max_replica_moves, max_bytes, max_leader_elections "
                             "or within_window: true); a rule without one would approve every plan")
        return self


class PolicyRule(_Strict):
    name: str
    when: PolicyConditions

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, v: Any) -> Any:
        if not isinstance(v, str) or len(v) > MAX_RULE_NAME or not RULE_NAME.fullmatch(v):
            raise ValueError(f"{v!r} is no rule name; use lowercase letters, digits and single hyphens, at most "
                             f"{MAX_RULE_NAME} characters (it is recorded as the approver policy:<name>), e.g. small-moves")
        return v


class ApprovalPolicy(_Strict):
    rules: list[PolicyRule] = Field(default_factory=list)
    # What happens to a plan no rule approves: the DAG's approval step asks a person.
    otherwise: Literal["human"] = "human"

    @model_validator(mode="after")
    def _unique(self) -> ApprovalPolicy:
        names = [r.name for r in self.rules]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"rule name {', '.join(map(repr, dupes))} used more than once; each rule is recorded by its name")
        return self


# ----------------------------------------------------------------------------- the decision


@dataclass(frozen=True, slots=True)
class PlanFigures:
    """What the policy judges a staged plan by (from plan_approval.PlanFacts, and the run's windows)."""

    replica_moves: int
    bytes_moved: int
    leader_elections: int
    estimated_seconds: float | None  # the headline for the cluster's executor mode; None: no estimate
    estimate_of: str
    # Seconds of the longest window moves may run in, less the window margin; None: moves may start any time.
    window_seconds: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Outcome(str, Enum):
    APPROVED = "approved"
    HELD = "held"  # for a person: the DAG's approval step


@dataclass(frozen=True, slots=True)
class PolicyVerdict:
    outcome: Outcome
    rule: PolicyRule | None  # the rule that approved; None when held
    figures: PlanFigures
    misses: tuple[str, ...]  # for each rule that did not approve (all of them, when held): why

    @property
    def approver(self) -> str | None:
        return None if self.rule is None else APPROVER_PREFIX + self.rule.name

    def record(self) -> dict[str, Any]:
        """What approval.json keeps of an automatic approval: the rule, its conditions and the figures judged."""
        assert self.rule is not None, "only an approval is recorded"
        return {"rule": self.rule.name, "when": self.rule.when.model_dump(exclude_defaults=True),
                "figures": self.figures.to_dict()}

    def describe(self) -> str:
        if self.rule is not None:
            return f"approved by rule {self.rule.name}"
        return "held for a person: " + ("; ".join(self.misses) or "the policy has no rules")

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome.value, "rule": None if self.rule is None else self.rule.name,
                "approved_by": self.approver, "figures": self.figures.to_dict(), "misses": list(self.misses),
                "text": self.describe()}


def window_seconds(windows: WindowPolicy, margin_seconds: float) -> float | None:
    """How long the longest window moves may run in lasts, less the margin; None when moves may start any time."""
    if windows.unrestricted:
        return None
    if windows.mode is WindowMode.INTERVAL:
        assert windows.interval is not None
        longest = (windows.interval.end - windows.interval.start).total_seconds()
    else:
        longest = max(w.duration.total_seconds() for w in windows.windows)
    return max(0.0, longest - margin_seconds)


def misses(when: PolicyConditions, figures: PlanFigures) -> list[str]:
    """Every condition of ``when`` the plan breaks, each as a figure against its limit (empty: the rule holds)."""
    out = []
    if when.max_replica_moves is not None and figures.replica_moves > when.max_replica_moves:
        out.append(f"{figures.replica_moves} replica moves > max_replica_moves {when.max_replica_moves}")
    if when.max_bytes is not None and figures.bytes_moved > when.max_bytes:
        out.append(f"{human_bytes(figures.bytes_moved)} to copy > max_bytes {human_bytes(when.max_bytes)}")
    if when.max_leader_elections is not None and figures.leader_elections > when.max_leader_elections:
        out.append(f"{figures.leader_elections} leader elections > max_leader_elections {when.max_leader_elections}")
    if when.within_window:
        if figures.window_seconds is None:
            out.append("within_window: moves may start at any time (no maintenance window configured, or the run's "
                       "window is 'now')")
        elif figures.estimated_seconds is None:
            out.append("within_window: the plan has no time estimate to fit in a window")
        elif figures.estimated_seconds > figures.window_seconds:
            out.append(f"within_window: estimated {human_seconds(figures.estimated_seconds)} > the longest window "
                       f"less its margin, {human_seconds(figures.window_seconds)}")
    return out


def judge(policy: ApprovalPolicy, figures: PlanFigures) -> PolicyVerdict:
    """The first rule the plan stays within approves it; otherwise it is held for a person."""
    missed: list[str] = []
    for rule in policy.rules:
        broken = misses(rule.when, figures)
        if not broken:
            return PolicyVerdict(Outcome.APPROVED, rule, figures, tuple(missed))
        missed.append(f"rule {rule.name}: {', '.join(broken)}")
    return PolicyVerdict(Outcome.HELD, None, figures, tuple(missed))
