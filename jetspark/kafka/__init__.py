"""Kafka topics as sources and sinks: operator-named clusters (``clusters``)."""
