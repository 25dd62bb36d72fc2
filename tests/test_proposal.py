"""Output format 2: the model writes only what only a model can say; the system builds the rest
(events behind claims, offsets of a quote that occurs once, defaults) and the same gate judges it.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import examples, loopback
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import PROVENANCE

from extractor.candidates import build_candidates
from extractor.conversation import Conversation, conversation_from_data
from extractor.evaluation import load_evalset
from extractor.evaluation.msc import iter_msc
from extractor.mockserver import MockServer
from extractor.offline import offline_extract, offline_proposal
from extractor.proposal.expand import expand
from extractor.validation import validate_extraction

MSC = Path(__file__).resolve().parents[2] / "shared" / "data" / "msc-valid.jsonl"
AT = datetime(2026, 1, 1, tzinfo=UTC)
CONV = conversation_from_data({"id": "c", "messages": [
    {"role": "user", "content": "I like tea. I like tea. My manager is Alice.",
     "timestamp": "2026-11-30T09:00:00Z"},
    {"role": "assistant", "content": "Noted."},
]})  # fmt: skip


def records(conv: Conversation, output: dict[str, Any]) -> list[str]:
    report = validate_extraction(output, conv)
    assert report.rejections == [], report.feedback()
    built = build_candidates(report.accepted, conv, provenance=PROVENANCE, recorded_at=AT)
    return [json.dumps(r.model_dump(mode="json", exclude={"candidate_id"})) for r in built]


def test_the_offline_models_answer_carries_the_same_information_in_format_2() -> None:
    """What the gate builds from format 2 is what it built from the full units: the same memory
    ids, contents, parents, spans, time, entities, uses -- in the same order."""
    for case in load_evalset():
        conv = case.conversation
        assert records(conv, offline_proposal(conv)) == records(conv, offline_extract(conv))


@pytest.mark.slow  # real data (docs/testing.md); the gold-set twin above runs by default
@pytest.mark.skipif(not MSC.exists(), reason="../shared/data/msc-valid.jsonl is not present")
def test_the_same_information_on_real_chats() -> None:
    for item in iter_msc(MSC, limit=10):
        conv = item.conversation
        assert records(conv, offline_proposal(conv)) == records(conv, offline_extract(conv))


def test_a_claim_alone_gets_its_event_and_a_unique_quote_its_offsets() -> None:
    output = {"candidates": [{"message_id": "m0", "quote": "My manager is Alice.",
                              "content": "User's manager is Alice."}]}  # fmt: skip
    report = validate_extraction(output, CONV)
    event, claim = report.accepted
    assert (event.id, event.memory_type.value, event.content) == (
        "c1.event",
        "ASSERTION_EVENT",
        'User stated: "My manager is Alice."',
    )
    assert claim.parent_ids == ["c1.event"] and claim.span.start == 24 and not report.corrections
    assert event.temporal.kind.value == "POINT_IN_TIME" and claim.requested_uses
    assert claim.origin.value == "USER" and claim.kind.value == "PROPOSITION"


def test_an_ambiguous_quote_needs_its_start_and_the_rejection_says_so() -> None:
    claim = {"message_id": "m0", "quote": "I like tea.", "memory_type": "PREFERENCE",
             "content": "User likes tea."}  # fmt: skip
    (rejection,) = validate_extraction({"candidates": [claim]}, CONV).rejections
    assert (rejection.code.value, rejection.field) == ("SPAN_OFFSETS_AMBIGUOUS", "start")
    assert "give its start" in rejection.message and rejection.raw == claim
    report = validate_extraction({"candidates": [{**claim, "start": 12}]}, CONV)
    assert [u.span.start for u in report.accepted] == [12, 12] and not report.rejections


def test_rejections_name_the_fields_the_model_wrote() -> None:
    bad = [
        {"message_id": "m0", "quote": "I was born on the Moon.", "content": "User was."},
        {"message_id": "m0", "quote": "My manager is Alice."},  # a claim with no content
        {"message_id": "m9", "quote": "x", "content": "y"},
    ]
    got = [(r.index, r.code.value, r.field) for r in validate_extraction(
        {"candidates": bad}, CONV).rejections]  # fmt: skip
    assert got == [
        (0, "SPAN_NOT_FOUND", "quote"),
        (1, "SCHEMA_INVALID", "content"),
        (2, "SPAN_UNKNOWN_MESSAGE", "message_id"),
    ]


def test_a_rejected_model_event_never_takes_a_claim_with_it() -> None:
    quote = {"message_id": "m0", "quote": "My manager is Alice."}
    hostile = {**quote, "memory_type": "ASSERTION_EVENT", "verification": "VERIFIED"}
    claim = {**quote, "content": "User's manager is Alice."}
    report = validate_extraction({"candidates": [hostile, claim]}, CONV)
    assert [r.code.value for r in report.rejections] == ["EXTRACTOR_CLAIMED_VERIFIED"]
    assert [u.memory_type.value for u in report.accepted] == [
        "ASSERTION_EVENT",
        "WORLD_PROPOSITION",
    ]


def test_a_model_event_of_the_same_span_is_the_claims_parent_not_a_duplicate() -> None:
    quote = {"message_id": "m0", "quote": "My manager is Alice."}
    event = {**quote, "id": "e", "memory_type": "ASSERTION_EVENT"}
    claim = {**quote, "content": "User's manager is Alice."}
    report = validate_extraction({"candidates": [event, claim]}, CONV)
    assert not report.rejections and [u.id for u in report.accepted] == ["e", "c2"]
    assert report.accepted[1].parent_ids == ["e"]


ITEMS = st.lists(
    st.fixed_dictionaries(
        {"message_id": st.sampled_from(["m0", "m1", "m7"]),
         "quote": st.sampled_from(["I like tea.", "Alice", "Noted.", "nope", ""])},
        optional={"content": st.text(max_size=8), "start": st.integers(-1, 30),
                  "memory_type": st.sampled_from(["ASSERTION_EVENT", "PREFERENCE", "BOGUS"]),
                  "parent_ids": st.lists(st.sampled_from(["c1", "c2", "x"]), max_size=2)},
    ) | st.integers() | st.none(),
    max_size=6,
)  # fmt: skip


@settings(max_examples=examples(50), deadline=None)
@given(ITEMS)
def test_expanding_an_expansion_changes_nothing_and_every_item_is_judged(items: list[Any]) -> None:
    once = expand(items, CONV)
    assert expand(once.items, CONV).items == once.items
    assert set(once.sources) == set(range(len(items)))
    report = validate_extraction({"candidates": items}, CONV)
    accepted = {u.id for u in report.accepted}
    rejected = {r.index for r in report.rejections}
    for k, item in enumerate(once.items):  # every item of the model is accepted or rejected
        if k not in once.built:
            got = isinstance(item, dict) and item.get("id") in accepted
            assert got or once.sources[k] in rejected


def test_generation_time_mode_waits_per_output_token() -> None:
    conv = {"id": "g", "messages": [{"role": "user", "content": "My manager is Alice."}]}
    from extractor.prompts import load_prompt

    body = {"model": "m", "messages": load_prompt().render(conversation_from_data(conv))}
    with MockServer(token_latency=0.002) as server:
        started = time.monotonic()
        answer = (
            loopback().post(f"{server.base_url}/chat/completions", json=body, timeout=60).json()
        )
        elapsed = time.monotonic() - started
    assert elapsed >= 0.002 * answer["usage"]["completion_tokens"]


def test_a_claim_at_wrong_offsets_gets_its_event_where_its_quote_is() -> None:
    """The quote occurs once, elsewhere: the gate corrects the claim's offsets, and the event
    behind it is built there (the claim was rejected PROPOSITION_UNLINKED before: that code is
    retired, no rejection can be it)."""
    conv = conversation_from_data(
        {"id": "x", "messages": [{"role": "user", "content": "Hi. My manager is Alice."}]}
    )
    claim = {"id": "c1", "span": {"message_id": "m0", "quote": "My manager is Alice.", "start": 0,
             "end": 20}, "kind": "PROPOSITION", "memory_type": "WORLD_PROPOSITION",
             "origin": "USER", "content": "User's manager is Alice."}  # fmt: skip
    report = validate_extraction({"candidates": [claim]}, conv)
    assert report.rejections == []
    event, accepted = report.accepted
    assert (event.memory_type.value, event.span.start, event.span.end) == ("ASSERTION_EVENT", 4, 24)
    assert accepted.parent_ids == [event.id] and accepted.span.start == 4
    assert [c.candidate_id for c in report.corrections] == ["c1"]
