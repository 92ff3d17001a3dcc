"""The outer package: composes the API (``api``) and the worker (``worker``) into programs.

The ``jetspark`` console script (``launcher.entry:main``, running ``launcher.main:app``) is
the core's CLI with the server commands that start those programs (``up``, ``api``,
``worker``, ``migrate``); the example scripts' ``main`` (``launcher.script``) prints, runs
here or submits a DAG. Nothing imports this package but its own modules
(tests/test_layers.py).
"""
