"""Balancing goals in priority order, Cruise Control style.

Each goal proposes actions to reach its own target and may veto the actions of
goals optimised after it that would undo its work. Hard goals (placement, rack
safety) veto everything from the start.
"""

from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal
from kafka_rebalance.planner.goals.byte_trim import ByteTrimGoal
from kafka_rebalance.planner.goals.placement import PlacementGoal, RackSafetyGoal
from kafka_rebalance.planner.goals.preferred_leader import PreferredLeaderGoal
from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal

__all__ = ["Goal", "PlacementGoal", "RackSafetyGoal", "ReplicaCountGoal", "ByteBalanceGoal", "ByteTrimGoal", "PreferredLeaderGoal"]
