"""Sound lower bounds on replica moves and bytes moved, from the snapshot and the targets alone.

A "move" is one new replica (a data copy). Any plan that reaches the targets needs at least:

* per partition, the replicas it cannot keep: its target RF minus the most replicas
  it could keep on eligible brokers without crowding a rack (dead/decommissioned
  brokers and rack-violation repairs);
* the moves INTO brokers below target: sum over eligible brokers of
  max(count deficit, ceil(byte deficit / largest movable replica)), since every copy
  lands on one broker;
* the moves OUT of brokers above target (unless the RF shrinks, when dropping a
  replica needs no copy): max(count excess, ceil(byte excess / its largest movable
  replica)) per eligible broker, plus every movable replica on an ineligible broker.

The move bound is the largest of the three. Bytes: the largest of the forced copies'
sizes, the bytes INTO brokers and the bytes OUT of brokers:

* in: a broker that must gain d replicas receives d distinct partitions, at least the d
  smallest movable ones of the cluster, and at least its byte deficit under
  target*(1-tolerance);
* out (unless the RF shrinks, since then a removal needs no copy): a broker that must shed
  e replicas loses at least its own e smallest movable ones, and at least its byte excess
  over target*(1+tolerance); an ineligible broker loses all its movable bytes. With the RF
  kept or grown, every removed replica of a partition is matched by a new one of the same
  size, so the removed bytes bound the copied bytes.

Copies into different brokers are different copies (and removals from different brokers
different removals), so the per-broker terms add up.

The count terms only bind a plan that reaches the count targets, the byte terms one
that reaches the byte tolerance (some clusters cannot: 8 equal partitions over 3
brokers). ``finish`` keeps each only when this plan's projected state reaches that
goal, so the bounds hold for every plan that achieves what this one achieves, and
never exceed this plan's own moves.
"""

from __future__ import annotations

import numpy as np

from kafka_rebalance.planner.state import ClusterState


def forced_copies(state: ClusterState) -> np.ndarray:
    """Per partition: replicas that must be created whatever else the plan does."""
    R = state.R
    valid = R >= 0
    elig = valid & state.eligible_arr[np.maximum(R, 0)]
    target = state.rf_target
    if not state.has_racks:
        keep = elig.sum(axis=1)
    else:
        rack_arr = np.asarray(state.rack, dtype=np.int64)
        # Ineligible and padding entries get distinct sentinel racks so they never "share".
        RK = np.where(elig, rack_arr[np.maximum(R, 0)], -1 - np.arange(R.shape[1])[None, :])
        caps = -(-target // max(state.n_racks, 1))
        rank = np.zeros(R.shape, dtype=np.int64)
        for j in range(R.shape[1]):
            for k in range(j):
                rank[:, j] += RK[:, k] == RK[:, j]
        keep = ((rank < caps[:, None]) & elig).sum(axis=1)
    copies = np.maximum(0, target - np.minimum(keep, target))
    copies[state.frozen] = 0
    return copies


def compute(state: ClusterState) -> dict[str, dict[str, int]]:
    """Call after targets are set and before any goal changes the state."""
    copies = forced_copies(state)
    movable = ~state.frozen
    tol = state.options.byte_tolerance
    upper, lower = state.byte_target * (1 + tol), state.byte_target * (1 - tol)
    elig = np.asarray(state.eligible_idx, dtype=np.int64)
    inelig = np.asarray([b for b in range(state.n_brokers) if not state.eligible[b]], dtype=np.int64)

    R = state.R
    valid = R >= 0
    mov_rows = valid & movable[:, None]
    owners = R[mov_rows]
    sizes_rep = np.broadcast_to(state.sizes[:, None], R.shape)[mov_rows]
    movable_count = np.bincount(owners, minlength=state.n_brokers)
    movable_bytes = np.bincount(owners, weights=sizes_rep, minlength=state.n_brokers)
    max_size = np.zeros(state.n_brokers, dtype=np.float64)
    if len(owners):
        np.maximum.at(max_size, owners, sizes_rep.astype(np.float64))
    biggest = float(max_size.max()) if len(owners) else 0.0

    counts = state.counts
    byte = state.bytes.astype(np.float64)
    deficit_bytes = np.maximum(0.0, lower[elig] - byte[elig])
    count_deficit = np.maximum(0, state.lo[elig] - counts[elig])
    byte_deficit_moves = _ceil(deficit_bytes / biggest) if biggest > 0 else np.zeros(len(elig))
    excess_bytes = np.maximum(0.0, byte[elig] - upper[elig])
    with np.errstate(divide="ignore", invalid="ignore"):
        byte_moves = np.where(max_size[elig] > 0, _ceil(excess_bytes / np.maximum(max_size[elig], 1)), 0)
    count_excess = np.maximum(0, counts[elig] - state.hi[elig])
    leaving = int(movable_count[inelig].sum())
    shrinking = bool((state.rf_target < state.rf).any())
    forced = int(copies.sum())
    leave = 0 if shrinking else leaving
    forced_bytes = int((copies * state.sizes).sum())
    leaving_bytes = float(movable_bytes[inelig].sum())

    # Cheapest bytes for a count change: the smallest movable partitions of the cluster (in),
    # a broker's own smallest movable replicas (out).
    part_sizes = np.sort(state.sizes[movable].astype(np.float64))
    smallest = np.concatenate(([0.0], np.cumsum(part_sizes)))
    cheapest_in = smallest[np.minimum(count_deficit, len(part_sizes))]
    by_owner = np.lexsort((sizes_rep, owners))
    own_sorted = sizes_rep[by_owner].astype(np.float64)
    own_prefix = np.concatenate(([0.0], np.cumsum(own_sorted)))
    start = np.searchsorted(owners[by_owner], np.arange(state.n_brokers))
    take = np.minimum(count_excess, movable_count[elig])
    cheapest_out = own_prefix[start[elig] + take] - own_prefix[start[elig]]

    def out(per_broker: np.ndarray) -> float:
        return 0.0 if shrinking else float(per_broker.sum()) + leaving_bytes

    def bytes_bound(per_in: np.ndarray, per_out: np.ndarray) -> int:
        return int(_ceil(np.float64(max(float(per_in.sum()), out(per_out))))) if len(elig) else 0

    return {
        "forced": {"replica_moves": forced, "bytes_moved": forced_bytes},
        # each term binds only plans that reach the goal it comes from (see ``finish``)
        "counts": {
            "replica_moves": max(int(count_deficit.sum()), 0 if shrinking else int(count_excess.sum()) + leave),
            "bytes_moved": bytes_bound(cheapest_in, cheapest_out),
        },
        "bytes": {
            "replica_moves": max(int(byte_deficit_moves.sum()), 0 if shrinking else int(byte_moves.sum()) + leave),
            "bytes_moved": bytes_bound(deficit_bytes, excess_bytes),
        },
        "both": {
            "replica_moves": max(
                int(np.maximum(count_deficit, byte_deficit_moves).sum()),
                0 if shrinking else int(np.maximum(count_excess, byte_moves).sum()) + leave,
            ),
            "bytes_moved": bytes_bound(np.maximum(cheapest_in, deficit_bytes), np.maximum(cheapest_out, excess_bytes)),
        },
    }


def _ceil(x: np.ndarray | np.float64) -> np.ndarray:
    """Round a bound up to whole bytes or moves, except a value within a float's rounding error of a
    whole number, which is that number: a byte target of 15 GiB computed as 16106127360.000002 must not
    claim that 16106127361 bytes are unavoidable, nor an exact 3 GiB that only 3221225469 are."""
    nearest = np.rint(x)
    return np.where(np.abs(x - nearest) <= 1e-9 * np.abs(x), nearest, np.ceil(x))


def finish(bounds: dict[str, dict[str, int]], counts_reached: bool, bytes_reached: bool) -> dict[str, int]:
    """The bounds that hold for every plan reaching what this plan reaches (counts, bytes, both)."""
    moves, moved = bounds["forced"]["replica_moves"], bounds["forced"]["bytes_moved"]
    reached = {"counts": counts_reached, "bytes": bytes_reached, "both": counts_reached and bytes_reached}
    for term, holds in reached.items():
        if holds:
            moves = max(moves, bounds[term]["replica_moves"])
            moved = max(moved, bounds[term]["bytes_moved"])
    return {"replica_moves": moves, "bytes_moved": moved}
