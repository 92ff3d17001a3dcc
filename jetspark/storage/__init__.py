"""Partitioned, replicated state storage (the seeds' IMap on Redis)."""
