"""``max_processor_accumulated_records`` (SPEC §3): a processor that holds more records than
the job allows fails the job, as Jet's ``AccumulationLimitExceededException`` does.

What a built-in holds is what it gathers before it emits: an aggregate's or a window's groups,
a hash join's build items, a sort's items. Those rows sit on the processor's own partition,
so each one's index in its partition counts what the processor holds so far: the guard is a
filter that raises past the limit, computed with the frame (no job of its own).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from worker.engine.routing import row_in_partition


def bounded(frame: DataFrame, limit: int | None, vertex: str, what: str) -> DataFrame:
    """``frame`` (processor g's rows on partition g), failing once a processor has more
    than ``limit`` rows; the frame as it is without a limit."""
    if limit is None:
        return frame
    message = (
        f"vertex {vertex!r}: a processor holds more than {limit} {what}, over the job's "
        "max_processor_accumulated_records"
    )
    over = row_in_partition() >= F.lit(limit)
    return frame.where(F.when(over, F.raise_error(F.lit(message))).otherwise(F.lit(True)))
