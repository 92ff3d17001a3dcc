"""The epoch engine: unbounded DAGs run as a sequence of bounded Spark runs.

Each epoch plans its sources' input ranges, runs every vertex over them with the batch ops,
carries stateful vertices' state to the next epoch and, under a processing guarantee, ends at
a snapshot barrier whose metadata PostgreSQL commits together with the epoch's results.
"""
