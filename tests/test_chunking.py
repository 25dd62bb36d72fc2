"""Long conversations: chunk bounds, whole-message coordinates, and merging overlaps."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extractor.chunking import (
    chunk_bounds,
    extract_chunked,
    merge_candidates,
    merge_results,
    split_conversation,
)
from extractor.clients.base import ClientResult, Usage
from extractor.conversation import Conversation, conversation_from_data
from extractor.errors import ModelRefused
from extractor.offline import OfflineClient
from extractor.prompts import Prompt, load_prompt, render_message
from extractor.validation import ValidationOptions, validate_extraction

PROMPT = load_prompt()
OPTIONS = ValidationOptions()
FACTS = [
    "My manager is Alice.",
    "I live in Lisbon.",
    "I think I prefer tea over coffee.",
    "My sister told me the bakery closes at six.",
    "I work at a hospital as a nurse.",
    "What if I moved to Berlin?",
    "I have two cats named Miso and Tofu.",
    "I started learning Portuguese last year.",
]


def long_conversation(repeat: int = 2) -> Conversation:
    messages: list[dict[str, str]] = []
    for text in FACTS * repeat:
        messages.append({"role": "user", "content": text})
        messages.append({"role": "assistant", "content": "Thanks for telling me."})
    return conversation_from_data({"id": "long", "messages": messages})


@given(
    st.lists(st.integers(min_value=1, max_value=50), min_size=1, max_size=40),
    st.integers(min_value=1, max_value=120),
    st.integers(min_value=0, max_value=5),
)
def test_chunk_bounds_cover_everything_in_order_within_budget(
    sizes: list[int], max_chars: int, overlap: int
) -> None:
    bounds = chunk_bounds(sizes, max_chars, overlap)
    assert bounds[0].start == 0 and bounds[-1].stop == len(sizes)
    covered = set().union(*(set(b) for b in bounds))
    assert covered == set(range(len(sizes)))
    for before, after in itertools.pairwise(bounds):
        assert before.start < after.start < before.stop + 1  # progress, no gap
        assert before.stop - after.start <= overlap  # never more overlap than asked
    for b in bounds:
        assert len(b) == 1 or sum(sizes[i] for i in b) <= max_chars


def test_overlap_repeats_the_last_messages_of_the_previous_chunk() -> None:
    assert chunk_bounds([10] * 10, 40, 2) == [range(0, 4), range(2, 6), range(4, 8), range(6, 10)]
    assert chunk_bounds([10] * 3, 100, 2) == [range(0, 3)]
    assert chunk_bounds([500, 10], 40, 1) == [range(0, 1), range(1, 2)]


def test_bad_budgets_are_refused() -> None:
    with pytest.raises(ValueError, match="max_chars"):
        chunk_bounds([1], 0, 0)


def test_split_keeps_ids_texts_and_the_conversation_id() -> None:
    conv = long_conversation()
    budget = sum(len(render_message(m)) + 1 for m in conv.messages) // 3
    chunks = split_conversation(conv, max_chars=budget, overlap_messages=2)
    assert len(chunks) > 2
    for chunk in chunks:
        assert chunk.id == conv.id
        for message in chunk.messages:
            assert conv.message(message.id) == message  # type: ignore[arg-type]
    assert split_conversation(conv, max_chars=10**9) == [conv]


def run_chunked(conv: Conversation, client: Any = None, **options: Any) -> tuple[ClientResult, int]:
    return asyncio.run(extract_chunked(client or OfflineClient(), conv, PROMPT, OPTIONS, **options))


def _found(output: Any, conv: Conversation) -> set[tuple[str, str, str]]:
    report = validate_extraction(output, conv)
    assert report.rejections == []
    return {(u.span.message_id, u.span.quote, u.memory_type.value) for u in report.accepted}


@pytest.mark.parametrize("overlap", [0, 1, 3])
def test_chunked_extraction_finds_what_whole_extraction_finds(overlap: int) -> None:
    conv = long_conversation()
    whole, one = run_chunked(conv)
    chunked, count = run_chunked(conv, max_chars=600, overlap_messages=overlap)
    assert one == 1 and count > 3
    assert _found(chunked.output, conv) == _found(whole.output, conv)
    ids = [c["id"] for c in chunked.output["candidates"]]
    assert len(ids) == len(set(ids))
    assert chunked.attempts == count


def test_candidates_found_twice_in_an_overlap_are_merged() -> None:
    span = {"message_id": "m1", "quote": "I live in Lisbon.", "start": 0, "end": 17}
    event = {"id": "c1", "span": span, "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT"}
    prop = {**event, "id": "c2", "kind": "PROPOSITION", "memory_type": "WORLD_PROPOSITION",
            "parent_ids": ["c1"]}  # fmt: skip
    other = {**event, "id": "c2", "span": {**span, "message_id": "m3"}}
    merged = merge_candidates([(1, [event, prop]), (2, [event, other, {**prop, "id": "c3"}])])
    assert [c["id"] for c in merged] == ["k1-c1", "k1-c2", "k2-c2"]
    assert merged[1]["parent_ids"] == ["k1-c1"]


def test_parents_of_a_merged_duplicate_point_to_the_kept_candidate() -> None:
    span = {"message_id": "m1", "quote": "x"}
    event = {"id": "c1", "span": span, "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT"}
    child = {"id": "c2", "span": {"message_id": "m2", "quote": "y"}, "kind": "PROPOSITION",
             "memory_type": "WORLD_PROPOSITION", "parent_ids": ["c1"]}  # fmt: skip
    merged = merge_candidates([(1, [event]), (2, [event, child])])
    assert merged[-1]["parent_ids"] == ["k1-c1"]


def test_junk_items_pass_through_for_validation_to_reject() -> None:
    assert merge_candidates([(1, ["junk", {"no": "id"}])]) == ["junk", {"no": "id"}]


def test_an_unreadable_chunk_is_recorded_and_the_others_kept() -> None:
    conv = long_conversation()
    chunks = split_conversation(conv, max_chars=600)
    good = ClientResult(output={"candidates": []}, model="m", usage=Usage(total_tokens=5))
    bad = ClientResult(output="not json", raw_text="not json", model="m", attempts=3)
    results = [good, bad] + [good] * (len(chunks) - 2)
    merged = merge_results(results, chunks, "m")
    assert merged.output == {"candidates": []}
    (record,) = merged.failed_attempts
    assert record.error.startswith(f"chunk 2/{len(chunks)} (messages ")
    assert record.raw_output == "not json"
    assert merged.usage.total_tokens == 5 * (len(chunks) - 1)
    assert merge_results([bad, bad], chunks[:2], "m").output == "not json"


class RefusesChunk:
    """Refuses the chunk holding one message; counts the chunks it saw."""

    model_name = "refuser"

    def __init__(self, refused: str) -> None:
        self.refused = refused
        self.seen = 0

    async def extract(self, conv: Conversation, prompt: Prompt, options: Any) -> ClientResult:
        self.seen += 1
        if conv.message(self.refused) is not None:
            raise ModelRefused("no")
        return await OfflineClient().extract(conv, prompt, options)


def test_a_failing_chunk_fails_the_conversation_after_all_chunks_ran() -> None:
    conv = long_conversation()
    client = RefusesChunk(refused="m0")
    with pytest.raises(ModelRefused):
        run_chunked(conv, client, max_chars=600, overlap_messages=0)
    assert client.seen == len(split_conversation(conv, max_chars=600, overlap_messages=0))
