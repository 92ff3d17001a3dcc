"""The Redis side of the job queue: a Stream with one consumer group. PostgreSQL is the truth."""
