"""The Python processor runtime on Spark: ``PythonOp`` runs a user processor per partition."""

from worker.engine.python.op import PythonOp

__all__ = ["PythonOp"]
