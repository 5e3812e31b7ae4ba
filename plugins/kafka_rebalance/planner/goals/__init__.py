"""Balancing goals, Cruise Control style: one class per rule, found by registry.py.

Each goal proposes actions to reach its own target and may veto the actions of
goals optimised after it that would undo its work. Hard goals (placement, rack
safety) veto everything from the start. Each also owns its terms in the exact model
and the check that plan.json's summary, the quality gate and "needs a plan?" read.
"""

from kafka_rebalance.planner.goals.base import Goal
from kafka_rebalance.planner.goals.byte_balance import ByteBalanceGoal
from kafka_rebalance.planner.goals.byte_trim import ByteTrimGoal
from kafka_rebalance.planner.goals.leader_imbalance import LeaderImbalanceGoal
from kafka_rebalance.planner.goals.placement import PlacementGoal, RackSafetyGoal
from kafka_rebalance.planner.goals.preferred_leader import PreferredLeaderGoal
from kafka_rebalance.planner.goals.replica_count import ReplicaCountGoal

__all__ = ["Goal", "PlacementGoal", "RackSafetyGoal", "ReplicaCountGoal", "ByteBalanceGoal", "ByteTrimGoal",
           "PreferredLeaderGoal", "LeaderImbalanceGoal"]
