"""The public Python processor API (SPEC §5): Jet's processor model in Python names.

The runtime that drives processors inside Spark tasks lives apart, in ``worker.engine.python``;
``jetspark.processor.testing.verify_processor`` proves a processor cooperative.
"""

from jetspark.processor.abstract import AbstractProcessor, FlatMapper
from jetspark.processor.context import Context
from jetspark.processor.inbox import Inbox
from jetspark.processor.outbox import ALL, Outbox
from jetspark.processor.processor import Processor

__all__ = ["ALL", "AbstractProcessor", "Context", "FlatMapper", "Inbox", "Outbox", "Processor"]
