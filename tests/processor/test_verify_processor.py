"""verify_processor proves the example processors cooperative and catches ones that are not."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from jetspark.example_processors.diagnostics import PartitionProbe
from jetspark.example_processors.enrich import LookupEnricher
from jetspark.example_processors.sources import Numbers
from jetspark.example_processors.words import Accumulator, Tokenizer
from jetspark.processor import AbstractProcessor, Inbox, Processor
from jetspark.processor.outbox import ALL
from jetspark.processor.runtime.outbox import RuntimeOutbox
from jetspark.processor.testing import verify_processor

LINES = [{"line": "To be or not to be"}, {"line": ""}, {"line": "that is the Question"}]
WORDS = "to be or not to be that is the question".split()


def test_tokenizer_emits_every_word_in_order_at_any_capacity() -> None:
    verify_processor(Tokenizer, inputs=LINES, expected=WORDS)


def test_tokenizer_reads_the_field_named_in_args() -> None:
    verify_processor(
        Tokenizer, inputs=[{"text": "A b"}], expected=["a", "b"], args={"field": "text"}
    )


def test_accumulator_counts_and_a_second_stage_combines_partial_counts() -> None:
    counts = Counter(WORDS)
    verify_processor(
        Accumulator,
        inputs=[{"word": w} for w in WORDS],
        expected=list(counts.items()),
        ordered=False,
    )
    partials = [{"key": k, "count": c} for k, c in counts.items()] * 2
    verify_processor(
        Accumulator,
        inputs=partials,
        expected=[(k, 2 * c) for k, c in counts.items()],
        ordered=False,
        args={"key": "key", "add": "count"},
    )


def test_enricher_reads_the_table_edge_first_and_emits_per_stream_item() -> None:
    verify_processor(
        LookupEnricher,
        inputs={1: [{"key": "a"}, {"key": "z"}], 0: [{"key": "a", "value": "1"}]},
        priorities={0: 0, 1: 1},
        expected=[("a", "1"), ("z", None)],
    )


def test_enricher_fails_when_the_stream_edge_comes_first() -> None:
    with pytest.raises(AssertionError, match="PriorityViolation"):
        verify_processor(
            LookupEnricher,
            inputs={1: [{"key": "a"}], 0: [{"key": "a", "value": "1"}]},
            priorities={0: 5, 1: 1},
            expected=[("a", "1")],
        )


def test_a_source_emits_in_complete_and_resumes_where_refused() -> None:
    verify_processor(Numbers, args={"count": 5}, expected=[(i, 0) for i in range(5)])


def test_a_processor_emitting_several_copies_per_item_resumes_at_the_refused_copy() -> None:
    verify_processor(
        PartitionProbe,
        inputs=[{"seq": 1}, {"seq": 2}],
        args={"copies": 3},
        expected=[(s, c, 0, -1) for s in (1, 2) for c in range(3)],
    )


def test_offering_to_all_ordinals_is_all_or_nothing() -> None:
    outbox = RuntimeOutbox([2, 1])
    assert outbox.offer(ALL, "a")
    assert not outbox.offer(ALL, "b")  # ordinal 1 is full: ordinal 0 must not get "b"
    assert outbox.buckets == [["a"], ["a"]] and outbox.refusals == 1
    assert outbox.offer(0, "c") and not outbox.offer(0, "d")
    assert outbox.offer_batch(ALL, ["x"]) == 0


class IgnoresRefusals(AbstractProcessor):
    """Buggy: emits every word without looking at what the outbox says."""

    output_schema = "word string"

    def try_process0(self, item: Any) -> bool:
        for word in item["line"].split():
            self.try_emit(word)
        return True


class RemovesBeforeEmitting(Processor):
    """Buggy: takes the item out of the inbox even when its output was refused."""

    output_schema = "word string"

    def process(self, ordinal: int, inbox: Inbox) -> None:
        while (item := inbox.poll()) is not None:
            if not self.outbox.offer(ALL, item["line"]):
                return


class RepeatsOnResume(AbstractProcessor):
    """Buggy: on resume, emits the item's outputs again from the start."""

    output_schema = "word string"

    def try_process0(self, item: Any) -> bool:
        words = item["line"].split()
        accepted = self.outbox.offer_batch(ALL, words)
        return accepted == len(words)


class NeverFinishes(Processor):
    """Buggy: complete() never returns True and emits nothing."""

    output_schema = "word string"

    def complete(self) -> bool:
        return False


@pytest.mark.parametrize(
    ("processor", "complaint"),
    [
        (IgnoresRefusals, "offered again after the outbox refused"),
        (RemovesBeforeEmitting, r"missing \['b'\]"),
        (RepeatsOnResume, "duplicates"),
        (NeverFinishes, "NoProgress"),
    ],
)
def test_the_harness_catches_processors_that_are_not_cooperative(
    processor: type[Processor], complaint: str
) -> None:
    lines = LINES if processor is not RemovesBeforeEmitting else [{"line": w} for w in "abc"]
    expected = WORDS if processor is not RemovesBeforeEmitting else list("abc")
    if processor is RepeatsOnResume:
        lines = [{"line": line["line"].lower()} for line in LINES]
    if processor is NeverFinishes:
        lines, expected = [], []
    with pytest.raises(AssertionError, match=complaint) as failure:
        verify_processor(processor, inputs=lines, expected=expected)
    assert "outbox capacity 1" in str(failure.value)


class ForgetsItsCounts(Accumulator):
    """Buggy: keeps state but saves none of it to the snapshot."""

    def save_to_snapshot(self) -> bool:
        return True


def test_the_harness_catches_state_lost_across_snapshot_and_restore() -> None:
    words = [{"word": w} for w in WORDS]
    expected = list(Counter(WORDS).items())
    with pytest.raises(AssertionError, match="inbox batches of 1, ordinal 0: expected 8 items"):
        verify_processor(ForgetsItsCounts, inputs=words, expected=expected, ordered=False)
    verify_processor(
        ForgetsItsCounts, inputs=words, expected=expected, ordered=False, snapshot_restore=False
    )
