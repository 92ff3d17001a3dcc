"""An epoch's ``source.sequence`` rows made by Spark's ``range`` (``epoch_sequence_frame``):
every item once, processor g holding every P-th item from ``start + g``, each stamped with
the time it is due, as the Python sequence stamps it (``Stamps.of``)."""

from __future__ import annotations

import numpy as np
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from tests.engine.generated_code import generated_code
from worker.engine.sequence import Stamps, epoch_sequence_frame

pytestmark = pytest.mark.spark

T0 = 1_700_000_000_123


@pytest.mark.parametrize(
    ("start", "count", "parallelism", "rate"),
    [
        (0, 10, 2, 1000.0),
        (1_000, 12_345, 2, 1_000_000.0),
        (7, 5, 3, 3.0),  # fewer items than a whole round of processors: ids dropped
        (2**40, 1_001, 4, 7_777.7),  # past int32, a rate that is no power of ten
        (5, 2, 4, None),  # fewer items than processors; no rate: one stamp for all
        (9, 0, 2, 10.0),  # an empty epoch
    ],
)
def test_an_epochs_items_are_each_on_its_processor_once_with_their_due_time(
    spark: SparkSession, start: int, count: int, parallelism: int, rate: float | None
) -> None:
    stamps = Stamps(origin=3, t0_ms=T0, rate_per_s=rate, stamp_ms=T0 + 42)
    frame = epoch_sequence_frame(
        spark, start=start, count=count, parallelism=parallelism, stamps=stamps
    )
    assert frame.rdd.getNumPartitions() == parallelism
    rows = frame.select(F.spark_partition_id().alias("g"), "seq", "ts").collect()
    seq = np.array(sorted(r["seq"] for r in rows), dtype=np.int64)
    assert seq.tolist() == list(range(start, start + count))
    assert all((r["seq"] - start) % parallelism == r["g"] for r in rows)
    by_seq = {r["seq"]: r["ts"] for r in rows}
    assert [by_seq[s] for s in seq.tolist()] == stamps.of(seq).tolist()  # the Python sequence's
    assert [f.dataType.simpleString() for f in frame.schema.fields] == ["bigint", "bigint"]


def test_the_next_epochs_items_run_the_same_compiled_code(spark: SparkSession) -> None:
    """Only the range's length, rounded up to a power of two, is written into the code: an
    epoch's first items, end and stamp are data (``epoch_values``), so Spark compiles the
    code once, not every epoch (~10 ms a class)."""

    def epoch(start: int, count: int, stamp_ms: int) -> list[str]:
        stamps = Stamps(origin=0, t0_ms=T0, rate_per_s=None, stamp_ms=stamp_ms)
        return generated_code(
            epoch_sequence_frame(spark, start=start, count=count, parallelism=2, stamps=stamps)
        )

    first = epoch(0, 1_000, T0)
    assert first, "no code-generated stage"
    assert epoch(1_000, 900, T0 + 100) == first
    assert epoch(10**12, 1_024, T0 + 200) == first
    assert epoch(0, 3_000, T0) != first  # another power of two: another range length
