"""kafka_rebalance: minimal-movement, throttled, verified rebalancing for Apache Kafka."""

__version__ = "0.1.0"
