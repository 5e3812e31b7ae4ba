"""The registry: every goal, found in this package, in priority order.

A goal registers itself by being a ``Goal`` subclass with a ``priority`` in a module of
``kafka_rebalance.planner.goals``; nothing else names it. ``--goals`` (options.py) picks
and orders the soft ones; the hard ones always apply, first. Replica goals run before
leader goals, which choose leadership on the final replica sets.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Sequence
from functools import cache

from kafka_rebalance.errors import PlanError
from kafka_rebalance.planner import goals as _package
from kafka_rebalance.planner.goals.base import Goal


def _subclasses(cls: type[Goal]) -> list[type[Goal]]:
    out = []
    for sub in cls.__subclasses__():
        out.append(sub)
        out.extend(_subclasses(sub))
    return out


@cache
def registered() -> tuple[type[Goal], ...]:
    """Every registered goal class, by priority (then name, so two equal priorities stay ordered)."""
    for info in sorted(pkgutil.iter_modules(_package.__path__), key=lambda m: m.name):
        importlib.import_module(f"{_package.__name__}.{info.name}")
    found = {c for c in _subclasses(Goal) if c.priority is not None}
    names = [c.name for c in found]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise TypeError(f"two goals share the name {clash[0]!r}")
    return tuple(sorted(found, key=lambda c: (c.priority, c.name)))


def names() -> tuple[str, ...]:
    return tuple(c.name for c in registered())


def hard_names() -> tuple[str, ...]:
    return tuple(c.name for c in registered() if c.hard)


def soft_names() -> tuple[str, ...]:
    return tuple(c.name for c in registered() if not c.hard)


def default_names() -> tuple[str, ...]:
    """The soft goals a plan runs when --goals names none (opt-in goals only when named)."""
    return tuple(c.name for c in registered() if not c.hard and c.default)


def unknown(selection: Sequence[str]) -> list[str]:
    known = set(names())
    return [n for n in selection if n not in known]


def selected(selection: Sequence[str], relieve: bool = False) -> tuple[str, ...]:
    """The goals a plan optimises, in order: the hard ones, then the replica goals and the leader
    goals of ``selection`` in its order (every default soft goal in the registry's order when empty).
    In relief mode (``--relieve``) only the goals of ``selection`` that have a limit to relieve (``Goal.relief``)
    join the hard ones: nothing is balanced."""
    bad = unknown(selection)
    if bad:
        raise PlanError(f"--goals: unknown goal(s) {', '.join(bad)} (goals: {', '.join(names())})")
    by_name = {c.name: c for c in registered()}
    if relieve:
        return (*hard_names(), *[n for n in dict.fromkeys(selection) if not by_name[n].hard and by_name[n].relief])
    chosen = [n for n in dict.fromkeys(selection) if not by_name[n].hard] or list(default_names())
    replica = [n for n in chosen if not by_name[n].leader_goal]
    leader = [n for n in chosen if by_name[n].leader_goal]
    return (*hard_names(), *replica, *leader)


def goal_class(name: str) -> type[Goal]:
    return {c.name: c for c in registered()}[name]


def replica_goals(selection: Sequence[str] = (), relieve: bool = False) -> list[Goal]:
    """Fresh instances of the selected replica goals (hard ones included), in order."""
    return [goal_class(n)() for n in selected(selection, relieve) if not goal_class(n).leader_goal]
