"""How long a batch takes under the throttle.

Each broker receives its new replicas' bytes through its follower throttle and each
leader sends them through its leader throttle, both at ``rate`` bytes/s. While a
replica catches up, the partition keeps receiving produce traffic at
``bytes_in_per_sec``, which the new replica must also copy: a broker receiving S
bytes of partitions whose produce rates sum to P needs S / (rate - P) seconds
(never, when P >= rate). The batch lasts as long as its slowest broker, plus one move's fixed
cost (``move_fixed_seconds``, throttle_model.py): a batch's moves are submitted together, so their
metadata rounds, fetcher starts and ISR joins overlap rather than add up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from kafka_rebalance.estimates import running_shares, split_tenths
from kafka_rebalance.planner.dispatch import Columns, columns
from kafka_rebalance.planner.steps import Step, step_fields

if TYPE_CHECKING:
    from kafka_rebalance.planner.batching import PlannedBatch
    from kafka_rebalance.planner.schedule import Schedule


def batch_seconds(steps: Iterable[Step], rate: float, fixed_seconds: float = 0.0) -> float:
    """How long one batch of ``steps`` takes (the module's rule); inf where produce traffic reaches ``rate``."""
    steps = list(steps)
    c = columns(steps, None)
    return float(waves_seconds(c, np.arange(len(steps), dtype=np.int64), np.array([0, len(steps)], dtype=np.int64),
                               rate, fixed_seconds)[0])


def waves_seconds(c: Columns, order: np.ndarray, group_at: np.ndarray, rate: float,
                  fixed_seconds: float = 0.0) -> np.ndarray:  # fmt: skip
    """``batch_seconds`` of every batch at once: batch g holds the steps ``order[group_at[g]:group_at[g + 1]]`` of
    ``c`` (``dispatch.columns``), in its order."""
    return _waves(order, group_at, len(c.ids), c.size, c.rate, c.leader, c.adds_at, c.adds, float(rate),
                  float(fixed_seconds))


@njit(cache=True)
def _waves(order: np.ndarray, group_at: np.ndarray, n_ids: int, size: np.ndarray, rate: np.ndarray,
           leader: np.ndarray, adds_at: np.ndarray, adds: np.ndarray, limit: float, fixed: float) -> np.ndarray:  # fmt: skip
    """Each group's seconds: per broker, the bytes and produce rates it receives (each new replica) and sends (as
    leader, to each new replica), summed in the group's order (the floats as a sum step by step makes them), then its
    slowest broker."""
    out = np.zeros(group_at.shape[0] - 1)
    recv, send = np.zeros(n_ids, np.int64), np.zeros(n_ids, np.int64)
    recv_rate, send_rate = np.zeros(n_ids), np.zeros(n_ids)
    used_r, used_s = np.zeros(n_ids, np.bool_), np.zeros(n_ids, np.bool_)
    listed = np.empty(2 * n_ids, np.int64)  # the brokers the group touched (senders + n_ids), to read and reset
    for g in range(out.shape[0]):
        n_listed = 0
        copies = False
        for k in range(group_at[g], group_at[g + 1]):
            s = order[k]
            lead = leader[s]
            for x in range(adds_at[s], adds_at[s + 1]):
                copies = True
                b = adds[x]
                recv[b] += size[s]
                recv_rate[b] += rate[s]
                send[lead] += size[s]
                send_rate[lead] += rate[s]
                if not used_r[b]:
                    used_r[b] = True
                    listed[n_listed] = b
                    n_listed += 1
                if not used_s[lead]:
                    used_s[lead] = True
                    listed[n_listed] = n_ids + lead
                    n_listed += 1
        worst = 0.0
        for i in range(n_listed):
            b = listed[i]
            if b < n_ids:
                headroom, moved = limit - recv_rate[b], recv[b]
            else:
                headroom, moved = limit - send_rate[b - n_ids], send[b - n_ids]
            if headroom <= 0:
                worst = np.inf
            elif worst < np.inf:
                worst = max(worst, moved / headroom)
        out[g] = worst + fixed if copies and worst < np.inf else worst
        for i in range(n_listed):
            b = listed[i]
            if b < n_ids:
                recv[b], recv_rate[b], used_r[b] = 0, 0.0, False
            else:
                send[b - n_ids], send_rate[b - n_ids], used_s[b - n_ids] = 0, 0.0, False
    return out


@dataclass(frozen=True, slots=True)
class StepFigures:
    """plan.json's figure per batch for each mode, to a tenth of a second, adding up exactly to that mode's headline."""

    waves: list[float]  # each batch run as a wave
    shares: list[float]  # each batch's share of the continuous schedule (estimates.running_shares)


def step_figures(batches: Sequence[PlannedBatch], schedule: Schedule) -> StepFigures:
    n_steps = [len(b.steps) for b in batches]
    mine = step_fields([s for b in batches for s in b.steps], "p", "seq")
    theirs = step_fields([x.step for x in schedule.steps], "p", "seq")
    # each scheduled step's batch, matched on (partition, step number): the last batch holding it (a log-dir batch may
    # hold a step of the same number, before the moves)
    width = max(mine["seq"], default=0) + 1
    keys = np.array(mine["p"], dtype=np.int64) * width + np.array(mine["seq"], dtype=np.int64)
    wanted = np.array(theirs["p"], dtype=np.int64) * width + np.array(theirs["seq"], dtype=np.int64)
    by = np.argsort(keys, kind="stable")
    at = by[np.maximum(np.searchsorted(keys[by], wanted, side="right") - 1, 0)] if len(keys) else by[:0]
    if not np.array_equal(keys[at], wanted):
        raise ValueError("the schedule holds a step no batch does")
    ends = np.zeros(len(batches))
    np.maximum.at(ends, np.repeat(np.arange(len(batches)), n_steps)[at], np.array([x.end for x in schedule.steps], dtype=np.float64))
    return StepFigures(split_tenths([b.seconds for b in batches]), running_shares(ends.tolist()))
