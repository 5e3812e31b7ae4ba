"""Kafka's KRaft replica placement (StripedReplicaPlacer) and the Java pieces it needs to be exact.

AdminUtils' placement (ZooKeeper-era tools, ``--generate`` before 4.1) stays in
``kafka_rebalance.assignment``.
"""

from kafka_rebalance.placement.java_random import JavaRandom, java_shuffle
from kafka_rebalance.placement.striped import UsableBroker, place_striped

__all__ = ["JavaRandom", "UsableBroker", "java_shuffle", "place_striped"]
