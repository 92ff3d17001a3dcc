"""Between Arrow batches and items: inbound events for the tasklet, output batches for Spark.

Inbound frames come in one of three shapes (see ``frames.py``): no columns read (a source),
the single inbound edge's own columns, or ``__in_ordinal`` + ``__item`` (JSON) when several
edges share one partition stream, sorted by priority then ordinal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa

from jetspark.processor.runtime.tasklet import Event, Exhausted, Items
from worker.engine.state_columns import PARTITION, PROCESSOR

IN_ORDINAL = "__in_ordinal"
IN_PRIORITY = "__in_priority"
PACKED_ITEM = "__item"
OUT_ORDINAL = "__ordinal"

# Epoch runs (streaming jobs): the state a processor restores comes first in its input, and
# its output carries state entries and watermark reports besides the items (``__kind``).
STATE_KEY = "__state_key"
STATE_VALUE = "__state_value"
KIND = "__kind"
NUMBER = "__number"
ITEM, STATE, WATERMARKS, SUMMARY = 0, 1, 2, 3
EPOCH_FIELDS = (
    pa.field(KIND, pa.int32(), nullable=False),
    pa.field(PROCESSOR, pa.int32()),
    pa.field(PARTITION, pa.int32()),
    pa.field(STATE_KEY, pa.binary()),
    pa.field(STATE_VALUE, pa.binary()),
    pa.field(NUMBER, pa.int64()),
)
"""Appended to an epoch run's output: ``ITEM`` rows leave them null; a ``STATE`` row is one
snapshot entry of processor ``__processor`` (pickled key and value, the key's partition); a
``WATERMARKS`` row is a watermark it emitted (``__number``; ``__partition``: its position);
its one ``SUMMARY`` row says how many entries it saved (``__number``)."""


def source_events(batches: Iterator[pa.RecordBatch]) -> Iterator[Event]:
    """A source reads nothing; its input only gives the partition its place."""
    for _ in batches:
        pass
    return iter(())


def native_events(batches: Iterator[pa.RecordBatch], exhaust: bool = True) -> Iterator[Event]:
    """One inbound edge: each row becomes a dict of its columns.

    ``exhaust`` False (an epoch that is not the stream's last): the edge is not exhausted.
    """
    for batch in batches:
        if batch.num_rows:
            yield Items(0, _rows_as_dicts(batch))
    if exhaust:
        yield Exhausted(0)


def _rows_as_dicts(batch: pa.RecordBatch) -> list[dict[str, Any]]:
    names = batch.schema.names
    columns = [column.to_pylist() for column in batch.columns]
    if len(names) == 1:
        name = names[0]
        return [{name: value} for value in columns[0]]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def packed_events(
    batches: Iterator[pa.RecordBatch], order: Sequence[int], exhaust: bool = True
) -> Iterator[Event]:
    """Several edges in one stream sorted by (priority, ordinal); ``order`` is that order.

    An edge is exhausted once the stream moved past it, so ``Exhausted`` comes right after
    its last item, also for an edge with no items in this partition. With ``exhaust`` False
    (an epoch that is not the stream's last) no edge is: the items just follow each other.
    """
    if not exhaust:
        yield from _packed_items(batches)
        return
    position = 0  # index into ``order`` of the edge being read
    for batch in batches:
        ordinals = batch.column(IN_ORDINAL).to_pylist()
        packed = batch.column(PACKED_ITEM).to_pylist()
        start = 0
        while start < len(ordinals):
            ordinal = ordinals[start]
            while order[position] != ordinal:
                yield Exhausted(order[position])
                position += 1
            end = start
            while end < len(ordinals) and ordinals[end] == ordinal:
                end += 1
            yield Items(ordinal, [json.loads(text) for text in packed[start:end]])
            start = end
    for ordinal in order[position:]:
        yield Exhausted(ordinal)


def _packed_items(batches: Iterator[pa.RecordBatch]) -> Iterator[Event]:
    for batch in batches:
        ordinals = batch.column(IN_ORDINAL).to_pylist()
        packed = batch.column(PACKED_ITEM).to_pylist()
        start = 0
        while start < len(ordinals):
            end = start
            while end < len(ordinals) and ordinals[end] == ordinals[start]:
                end += 1
            yield Items(ordinals[start], [json.loads(text) for text in packed[start:end]])
            start = end


def split_restore(
    batches: Iterator[pa.RecordBatch],
) -> tuple[list[tuple[bytes, bytes]], Iterator[pa.RecordBatch]]:
    """The pickled state entries at the head of an epoch's input, and the item batches after
    them without the state columns (the input is sorted: entries first)."""
    entries: list[tuple[bytes, bytes]] = []
    for batch in batches:
        stated = batch.num_rows - batch.column(STATE_KEY).null_count
        if stated:
            keys = batch.column(STATE_KEY).slice(0, stated).to_pylist()
            values = batch.column(STATE_VALUE).slice(0, stated).to_pylist()
            entries.extend(zip(keys, values, strict=True))
        if stated < batch.num_rows:
            rest = _without_state(batch.slice(stated))
            return entries, _chain(rest, (_without_state(b) for b in batches))
    return entries, iter(())


def _without_state(batch: pa.RecordBatch) -> pa.RecordBatch:
    keep = [i for i, name in enumerate(batch.schema.names) if name not in (STATE_KEY, STATE_VALUE)]
    return batch.select(keep)


def _chain(first: pa.RecordBatch, rest: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    yield first
    yield from rest


class OutputBatches:
    """Collects drained outbox buckets and cuts them into Arrow batches of the fixed schema.

    An item is a dict by field name, a tuple in schema order, or (one field) the bare value.
    With several outbound ordinals every row carries ``__ordinal``.

    A batch holds at most ``batch_rows`` rows and about ``batch_bytes`` bytes: the row limit
    starts small and follows the bytes per row seen so far, so wide items still reach Spark
    (and downstream backpressure reaches the processor) a batch at a time.
    """

    def __init__(
        self,
        schema: pa.Schema,
        tagged: bool,
        batch_rows: int = 32_768,
        batch_bytes: int = 1 << 20,
        first_rows: int = 1024,
        epoch: bool = False,
    ) -> None:
        self.schema = schema
        internal = {OUT_ORDINAL, *(f.name for f in EPOCH_FIELDS)} if epoch else {OUT_ORDINAL}
        self.fields = [f for f in schema if f.name not in internal]
        self.tagged = tagged
        self.epoch = epoch
        self.batch_rows = batch_rows
        self.batch_bytes = batch_bytes
        self.limit = min(first_rows, batch_rows)
        self.pending: dict[int, list[Any]] = {}
        self.size = 0

    def add(self, ordinal: int, items: list[Any]) -> None:
        if ordinal in self.pending:
            self.pending[ordinal].extend(items)
        else:
            self.pending[ordinal] = items
        self.size += len(items)

    def full(self) -> bool:
        return self.size >= self.limit

    def flush(self) -> Iterator[pa.RecordBatch]:
        pending, self.pending, self.size = self.pending, {}, 0
        for ordinal, items in pending.items():
            if items:
                yield self._batch(ordinal, items)

    def _batch(self, ordinal: int, items: list[Any]) -> pa.RecordBatch:
        names = [f.name for f in self.fields]
        columns = _columns(items, names)
        try:
            arrays = [pa.array(c, type=f.type) for c, f in zip(columns, self.fields, strict=True)]
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            columns = _columns_mixed(items, names)  # explains a malformed item, or converts
            arrays = [pa.array(c, type=f.type) for c, f in zip(columns, self.fields, strict=True)]
        if self.tagged:
            arrays.append(pa.array([ordinal] * len(items), type=pa.int32()))
        if self.epoch:
            arrays.append(pa.array([ITEM] * len(items), type=pa.int32()))
            arrays.extend(pa.nulls(len(items), f.type) for f in EPOCH_FIELDS[1:])
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        per_row = max(1.0, batch.nbytes / len(items))
        self.limit = max(1, min(self.batch_rows, int(self.batch_bytes / per_row)))
        return batch

    def internal_batch(
        self, kind: int, columns: Mapping[str, list[Any]], rows: int
    ) -> pa.RecordBatch:
        """State entries or watermark reports: the items' fields null, ``__ordinal`` -1."""
        arrays = [pa.nulls(rows, f.type) for f in self.fields]
        if self.tagged:
            arrays.append(pa.array([-1] * rows, type=pa.int32()))
        arrays.append(pa.array([kind] * rows, type=pa.int32()))
        for f in EPOCH_FIELDS[1:]:
            values = columns.get(f.name)
            arrays.append(pa.nulls(rows, f.type) if values is None else pa.array(values, f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _columns(items: list[Any], names: list[str]) -> list[Sequence[Any]]:
    """Transpose items into columns; the common shapes go through comprehensions."""
    kind = type(items[0])
    if kind is dict or kind is tuple or kind is list:
        if all(type(item) is kind for item in items):
            if kind is dict:
                return [[item.get(name) for item in items] for name in names]
            _check_width(items, len(names))
            return list(zip(*items, strict=True))
    elif len(names) == 1:
        return [items]  # bare values; pyarrow rejects a stray dict or tuple among them
    return _columns_mixed(items, names)


def _columns_mixed(items: list[Any], names: list[str]) -> list[Sequence[Any]]:
    rows = [_as_row(item, names) for item in items]
    return [list(column) for column in zip(*rows, strict=True)]


def _as_row(item: Any, names: list[str]) -> Sequence[Any]:
    if isinstance(item, Mapping):
        return [item.get(name) for name in names]
    if isinstance(item, tuple | list):
        _check_width([item], len(names))
        return item
    if len(names) == 1:
        return [item]
    raise TypeError(
        f"an emitted item must be a dict, a tuple of {len(names)} fields or (one-field "
        f"schema) a value; got {type(item).__name__}"
    )


def _check_width(rows: list[Any], width: int) -> None:
    bad = next((row for row in rows if len(row) != width), None)
    if bad is not None:
        raise TypeError(f"emitted tuple {bad!r} has {len(bad)} fields; the schema has {width}")
