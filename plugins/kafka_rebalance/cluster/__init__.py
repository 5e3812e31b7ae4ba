"""Talking to a Kafka cluster: the ClusterAdmin interface, the kafka-python adapter, connection settings,
the gather step that snapshots a live cluster, and the simulator that stands in for one at scale."""
