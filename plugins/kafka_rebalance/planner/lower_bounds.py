"""Sound lower bounds on replica moves and bytes moved, from the snapshot and the targets alone.

A "move" is one new replica (a data copy). Any plan that reaches the targets needs at least:

* per partition, the replicas it cannot keep: its target RF minus the most replicas
  it could keep on eligible brokers without crowding a rack (dead/decommissioned
  brokers and rack-violation repairs), and at least one per rack it must span and
  does not (min(RF, racks) racks);
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

With the counts and the band both reached, a broker's bytes in and out are tied: in - out
is at least its band's bottom less its bytes, and out - in at least its bytes less the
band's top, so each side is at least the other side's count bound plus that difference
(a broker that must shed its e smallest replicas yet end higher in bytes receives both).

The count terms only bind a plan that reaches the count targets, a broker's byte terms one
that brings that broker into its band (some clusters cannot: 8 equal partitions over 3
brokers). ``finish`` keeps the count terms only when this plan's projected state reaches
the counts, and ``summed`` counts the byte terms of the brokers it brings into their band
only, so the bounds hold for every plan that achieves what this one achieves (the counts,
if this one reaches them, and at least the same brokers inside their band), and never
exceed this plan's own moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kafka_rebalance.planner.state import ClusterState


def forced_copies(state: ClusterState) -> np.ndarray:
    """Per partition: replicas that must be created whatever else the plan does."""
    R = state.R
    valid = R >= 0
    elig = valid & state.eligible_arr[np.maximum(R, 0)]
    target = state.rf_target
    short = np.zeros(len(target), dtype=np.int64)  # racks still to span (none without racks)
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
        # Every rack the partition must span and does not yet (min(RF, racks) of them) gets a new replica too:
        # RF 4 on three racks as 2 + 2 + 0 keeps all four under the cap of 2 and still needs one copy.
        spanned = ((rank == 0) & elig).sum(axis=1)
        short = np.maximum(0, np.minimum(target, max(state.n_racks, 1)) - spanned)
    copies = np.maximum(short, target - np.minimum(keep, target))
    copies[state.frozen] = 0
    return copies


@dataclass(frozen=True)
class Terms:
    """What each eligible broker (``state.eligible_idx`` order) needs, and the cluster-wide parts."""

    forced_moves: int
    forced_bytes: int
    count_deficit: np.ndarray  # replicas below lo
    count_excess: np.ndarray  # replicas above hi
    byte_deficit_moves: np.ndarray  # moves in its byte deficit needs, at the cluster's largest replica each
    byte_moves: np.ndarray  # moves out its byte excess needs, at its own largest replica each
    cheapest_in: np.ndarray  # bytes in for its count deficit
    cheapest_out: np.ndarray  # bytes out for its count excess
    deficit_bytes: np.ndarray  # bytes in to reach its band's bottom
    excess_bytes: np.ndarray  # bytes out to reach its band's top
    both_in: np.ndarray  # bytes in with its count and band both reached
    both_out: np.ndarray
    leave: int  # moves off ineligible brokers (0 when the RF shrinks)
    leaving_bytes: float
    shrinking: bool


def compute(state: ClusterState) -> dict[str, dict[str, int]]:
    """Call after targets are set and before any goal changes the state."""
    return summed(terms(state))


def terms(state: ClusterState) -> Terms:
    """The per-broker terms of ``compute``; call after targets are set and before any goal changes the state."""
    copies = forced_copies(state)
    movable = ~state.frozen
    upper, lower = state.byte_hi, state.byte_lo
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

    # Both reached: a broker's bytes in and out are tied by its band, in - out >= lower - bytes and
    # out - in >= bytes - upper, so each side is also at least the other side's bound plus that
    # difference: a broker that must shed replicas (its smallest, at least) but end higher in bytes
    # receives both, and one that must take replicas but stay under its top sheds what they bring.
    cur = byte[elig]
    both_in = np.maximum(np.maximum(cheapest_in, deficit_bytes), cheapest_out + (lower[elig] - cur))
    both_out = np.maximum(np.maximum(cheapest_out, excess_bytes), cheapest_in + (cur - upper[elig]))

    return Terms(
        forced, forced_bytes, count_deficit, count_excess, byte_deficit_moves, byte_moves, cheapest_in, cheapest_out,
        deficit_bytes, excess_bytes, both_in, both_out, leave, leaving_bytes, shrinking,
    )


def summed(t: Terms, in_band: np.ndarray | None = None) -> dict[str, dict[str, int]]:
    """The bounds of ``compute``. With ``in_band`` (per eligible broker: inside its byte band in the
    plan), the byte terms count only those brokers: they then bind every plan that puts at least
    the same brokers inside their band, whether or not it reaches every band. A broker's byte
    deficit or excess, and its in/out tie ``both_in``/``both_out``, only hold for a plan that
    brings that broker into its band; for the others the count terms alone remain. Per broker
    the terms are still counted once each side (copies into different brokers are different
    copies), so the sums stay sound."""
    n = len(t.count_deficit)
    band = np.ones(n, dtype=bool) if in_band is None else np.asarray(in_band, dtype=bool)
    shrinking, leave = t.shrinking, t.leave

    def out(per_broker: np.ndarray) -> float:
        return 0.0 if shrinking else float(per_broker.sum()) + t.leaving_bytes

    def bytes_bound(per_in: np.ndarray, per_out: np.ndarray) -> int:
        return int(_ceil(np.float64(max(float(per_in.sum()), out(per_out))))) if n else 0

    zero = np.zeros(n)
    return {
        "forced": {"replica_moves": t.forced_moves, "bytes_moved": t.forced_bytes},
        # each term binds only plans that reach the goal it comes from (see ``finish``)
        "counts": {
            "replica_moves": max(int(t.count_deficit.sum()), 0 if shrinking else int(t.count_excess.sum()) + leave),
            "bytes_moved": bytes_bound(t.cheapest_in, t.cheapest_out),
        },
        "bytes": {
            "replica_moves": max(int(np.where(band, t.byte_deficit_moves, 0).sum()),
                                 0 if shrinking else int(np.where(band, t.byte_moves, 0).sum()) + leave),
            "bytes_moved": bytes_bound(np.where(band, t.deficit_bytes, zero), np.where(band, t.excess_bytes, zero)),
        },
        "both": {
            "replica_moves": max(
                int(np.where(band, np.maximum(t.count_deficit, t.byte_deficit_moves), t.count_deficit).sum()),
                0 if shrinking else int(np.where(band, np.maximum(t.count_excess, t.byte_moves), t.count_excess).sum()) + leave,
            ),
            "bytes_moved": bytes_bound(np.where(band, t.both_in, t.cheapest_in), np.where(band, t.both_out, t.cheapest_out)),
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
