"""The Python processor runtime in each Spark task (``task``, ``arrow_io``, ``frames``);
the op that starts it is ``worker.engine.ops.python``."""
