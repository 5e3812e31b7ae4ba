"""Stand-ins used by tests and demos, not by the product: the Kafka-wire-protocol test server over the
simulator, and the client that answers Airflow's approval step over its API."""
