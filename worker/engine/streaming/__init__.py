"""What a stream's epochs are made of, under the ops and the epoch loop that runs them.

Source planners (``source_planners``: each source's input range per epoch), the epoch scope
the ops read (``scope``), watermarks, the snapshot store (``state_store``), backups and epoch
profiles. The loop itself, which plans, runs every vertex with the batch ops and ends at a
snapshot barrier committed with the epoch's results, is ``worker.engine.epoch_loop``: this
package imports neither it nor the ops (tests/test_layers.py).
"""
