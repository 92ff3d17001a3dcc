"""jetspark: Hazelcast Jet-style dataflow DAGs served over HTTP and executed on Apache Spark."""

__version__ = "0.1.0"
