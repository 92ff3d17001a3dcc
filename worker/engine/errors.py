"""Errors the engine raises while building a job's Spark plan."""


class EngineError(Exception):
    """A vertex could not be built or run."""
