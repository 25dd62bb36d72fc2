"""The validation gate, rule by rule, with the seed chapter's own examples."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import PROVENANCE

from extractor.candidates import build_candidates
from extractor.conversation import Conversation, conversation_from_data
from extractor.errors import ExtractionOutputError
from extractor.validation import ValidationOptions, validate_extraction
from extractor.vocab import Origin, VerificationState

CONV = conversation_from_data(
    {
        "id": "seed",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "My manager is Alice.", "timestamp": "2024-05-10T09:00:00"},
            {
                "role": "assistant",
                "content": "Q3 revenue was approximately $46 million.",
                "commitment": "HOLD",
            },
            {
                "role": "tool",
                "content": "On branch main\nnothing to commit, working tree clean",
                "timestamp": "2026-08-30T18:32:00",
            },
            {
                "role": "user",
                "content": "I think I started at Globex since March. My sister told me the shop closes at 5.",
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look:"},
                    {"type": "image_url", "image_url": {"url": "x"}},
                ],
            },
            {"role": "user", "content": "ok ok"},
        ],
    }
)


def span(mid: str, quote: str, conv: Conversation = CONV) -> dict[str, Any]:
    text = conv.message(mid).text  # type: ignore[union-attr]
    start = text.index(quote)
    return {"message_id": mid, "quote": quote, "start": start, "end": start + len(quote)}


def event(
    cid: str = "c1", mid: str = "m1", quote: str = "My manager is Alice.", **kw: Any
) -> dict[str, Any]:
    return {
        "id": cid, "span": span(mid, quote), "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT",
        "content": f"User stated: {quote}", "origin": "USER", **kw,
    }  # fmt: skip


def proposition(cid: str = "c2", parent: str = "c1", **kw: Any) -> dict[str, Any]:
    base = {
        "id": cid, "span": span("m1", "My manager is Alice."), "kind": "PROPOSITION",
        "memory_type": "WORLD_PROPOSITION", "content": "User's manager is Alice.", "origin": "USER",
        "parent_ids": [parent], "entities": [{"name": "Alice", "type": "PERSON"}],
    }  # fmt: skip
    base.update(kw)
    return base


def codes(report) -> list[str]:
    return [r.code.value for r in report.rejections]


def test_seed_manager_is_alice_gives_event_and_unverified_proposition():
    report = validate_extraction({"candidates": [event(), proposition()]}, CONV)
    assert report.ok and [u.id for u in report.accepted] == ["c1", "c2"]
    ev, prop = build_candidates(
        report.accepted, CONV, provenance=PROVENANCE, recorded_at=datetime(2024, 5, 10, tzinfo=UTC)
    )
    assert ev.verification_state is VerificationState.VERIFIED_OBSERVATION_OF_EVENT
    assert prop.verification_state is VerificationState.UNVERIFIED
    assert prop.parent_memory_ids == [ev.memory_id]
    assert ev.origin_kind is prop.origin_kind is Origin.USER
    assert ev.observed_at == datetime(2024, 5, 10, 9, 0)


def test_seed_revenue_claim_from_held_assistant_is_model_output_with_hedge_kept():
    claim = {
        "id": "c1", "span": span("m2", "Q3 revenue was approximately $46 million."), "kind": "PROPOSITION",
        "memory_type": "MODEL_INFERENCE", "content": "Q3 revenue was approximately $46 million.",
        "origin": "MODEL_OUTPUT", "uncertainty": {"hedges": ["approximately"]},
    }  # fmt: skip
    report = validate_extraction({"candidates": [claim]}, CONV)
    assert report.ok
    (record,) = build_candidates(
        report.accepted, CONV, provenance=PROVENANCE, recorded_at=datetime(2024, 1, 1)
    )
    assert record.origin_kind is Origin.MODEL_OUTPUT
    assert record.verification_state is VerificationState.INSUFFICIENT_EVIDENCE  # held: HOLD
    assert record.uncertainty.hedges == ["approximately"]


def test_dropping_the_hedge_is_rejected():
    claim = {
        "id": "c1", "span": span("m2", "Q3 revenue was approximately $46 million."), "kind": "PROPOSITION",
        "memory_type": "MODEL_INFERENCE", "content": "Q3 revenue was $46M.", "origin": "MODEL_OUTPUT",
        "uncertainty": {"hedges": ["approximately"]},
    }  # fmt: skip
    report = validate_extraction({"candidates": [claim]}, CONV)
    assert codes(report) == ["UNCERTAINTY_DROPPED"] and report.rejections[0].field == "content"
    claim["content"] = "Q3 revenue was approximately $46 million."
    claim["uncertainty"] = {"hedges": []}
    assert codes(validate_extraction({"candidates": [claim]}, CONV)) == ["UNCERTAINTY_DROPPED"]


def test_reported_speech_needs_its_source_kept():
    quote = "My sister told me the shop closes at 5."
    ev = event("c1", "m4", quote, uncertainty={"reported_by": "my sister"})
    prop = {
        "id": "c2", "span": span("m4", quote), "kind": "PROPOSITION", "memory_type": "WORLD_PROPOSITION",
        "content": "The shop closes at 5 (according to the user's sister).", "origin": "USER",
        "parent_ids": ["c1"], "uncertainty": {"reported_by": "my sister"},
    }  # fmt: skip
    assert validate_extraction({"candidates": [ev, prop]}, CONV).ok
    laundered = {**prop, "content": "The shop closes at 5.", "uncertainty": {}}
    assert codes(validate_extraction({"candidates": [ev, laundered]}, CONV)) == [
        "UNCERTAINTY_DROPPED"
    ]


@pytest.mark.parametrize(
    "mutation",
    [
        {"verification_state": "VERIFIED"},
        {"verified": True},
        {"content": "User's manager is Alice (verified)."},
        {"content": "VERIFIED_OBSERVATION_OF_EVENT: manager is Alice"},
        {"entities": [{"name": "Alice", "type": "Verified_Person"}]},
        {"temporal": {"expression": "fact-checked", "kind": "CURRENT"}},
        {"Certification": "ok"},
    ],
)
def test_self_certification_in_any_field_or_casing_is_rejected(mutation):
    report = validate_extraction({"candidates": [event(), proposition(**mutation)]}, CONV)
    assert codes(report) == ["EXTRACTOR_CLAIMED_VERIFIED"]
    assert [u.id for u in report.accepted] == ["c1"]
    assert report.rejections[0].raw["id"] == "c2"  # the raw candidate is kept for audit


def test_speakers_own_words_may_contain_verified():
    conv = conversation_from_data([{"role": "user", "content": "My account is verified now."}])
    q = "My account is verified now."
    ev = {"id": "c1", "span": span("m0", q, conv), "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT",
          "content": "User stated their account is verified now.", "origin": "USER"}  # fmt: skip
    assert validate_extraction({"candidates": [ev]}, conv).ok


def test_fabricated_quote_is_rejected_and_wrong_offsets_of_a_unique_quote_are_corrected():
    fake = event(quote="My manager is Alice.")
    fake["span"] = {"message_id": "m1", "quote": "My manager is Bob.", "start": 0, "end": 18}
    assert codes(validate_extraction({"candidates": [fake]}, CONV)) == ["SPAN_NOT_FOUND"]
    shifted = event()
    shifted["span"] = {**shifted["span"], "start": 3, "end": 23}
    report = validate_extraction({"candidates": [shifted]}, CONV)
    assert report.ok
    (corr,) = report.corrections
    assert (corr.claimed_start, corr.start, corr.end) == (3, 0, 20)
    assert report.accepted[0].span.start == 0


def test_ambiguous_offsets_unknown_message_placeholder_and_system_text():
    conv = conversation_from_data([{"role": "user", "content": "ok ok"}])
    bad = {"id": "c1", "span": {"message_id": "m0", "quote": "ok", "start": 1, "end": 3}, "kind": "OBSERVATION",
           "memory_type": "ASSERTION_EVENT", "content": "User said ok", "origin": "USER"}  # fmt: skip
    assert codes(validate_extraction({"candidates": [bad]}, conv)) == ["SPAN_OFFSETS_AMBIGUOUS"]
    ghost = event()
    ghost["span"] = {**ghost["span"], "message_id": "m99"}
    assert codes(validate_extraction({"candidates": [ghost]}, CONV)) == ["SPAN_UNKNOWN_MESSAGE"]
    image = event("c1", "m5", "Look:")
    image["span"] = {"message_id": "m5", "quote": "[image]", "start": 6, "end": 13}
    assert codes(validate_extraction({"candidates": [image]}, CONV)) == ["SPAN_QUOTES_PLACEHOLDER"]
    sys = {"id": "c1", "span": span("m0", "You are a helpful assistant."), "kind": "PROPOSITION",
           "memory_type": "PREFERENCE", "content": "Be helpful", "origin": "SYSTEM"}  # fmt: skip
    assert codes(validate_extraction({"candidates": [sys]}, CONV)) == ["SPAN_FROM_SYSTEM_MESSAGE"]
    assert validate_extraction(
        {"candidates": [sys]}, CONV, ValidationOptions(allow_system_sources=True)
    ).ok


@pytest.mark.parametrize(
    "mid,quote,origin,memory_type,kind",
    [
        (
            "m2",
            "Q3 revenue was approximately $46 million.",
            "EXTERNAL_SOURCE",
            "MODEL_INFERENCE",
            "PROPOSITION",
        ),
        (
            "m2",
            "Q3 revenue was approximately $46 million.",
            "USER",
            "MODEL_INFERENCE",
            "PROPOSITION",
        ),
        ("m3", "nothing to commit, working tree clean", "USER", "TOOL_OBSERVATION", "OBSERVATION"),
        ("m1", "My manager is Alice.", "TOOL", "ASSERTION_EVENT", "OBSERVATION"),
    ],
)
def test_origin_laundering_is_rejected(mid, quote, origin, memory_type, kind):
    c = {"id": "c1", "span": span(mid, quote), "kind": kind, "memory_type": memory_type,
         "content": quote + " (approximately)", "origin": origin, "uncertainty": {"hedges": ["approximately"]}}  # fmt: skip
    assert codes(validate_extraction({"candidates": [c]}, CONV)) == ["ORIGIN_LAUNDERING"]


def test_assistant_text_cannot_be_dressed_as_a_tool_observation():
    c = {"id": "c1", "span": span("m2", "Q3 revenue was approximately $46 million."), "kind": "OBSERVATION",
         "memory_type": "TOOL_OBSERVATION", "content": "Q3 revenue was approximately $46 million.",
         "origin": "MODEL_OUTPUT", "uncertainty": {"hedges": ["approximately"]}}  # fmt: skip
    assert codes(validate_extraction({"candidates": [c]}, CONV)) == ["TYPE_ROLE_MISMATCH"]


def test_closed_vocabularies():
    assert codes(validate_extraction({"candidates": [event(memory_type="FACT")]}, CONV)) == [
        "VOCABULARY_UNKNOWN"
    ]
    assert codes(validate_extraction({"candidates": [event(origin="GOD")]}, CONV)) == [
        "VOCABULARY_UNKNOWN"
    ]
    bad_use = proposition(requested_uses=["WORLD_DOMINATION"])
    assert codes(validate_extraction({"candidates": [event(), bad_use]}, CONV)) == [
        "VOCABULARY_UNKNOWN"
    ]


def test_schema_errors_reject_only_that_candidate():
    junk: list[Any] = ["not an object", {"id": "c9"}, event(extra_field=1)]
    report = validate_extraction({"candidates": [*junk, event("ok")]}, CONV)
    assert codes(report) == ["SCHEMA_INVALID"] * 3
    assert [u.id for u in report.accepted] == ["ok"]


def test_time_rules():
    quote = "I think I started at Globex since March."
    base = event("c1", "m4", quote, uncertainty={"hedges": ["I think"]})
    bad_iso = {
        **base,
        "temporal": {"expression": "since March", "kind": "CURRENT", "valid_from": "March"},
    }
    assert codes(validate_extraction({"candidates": [bad_iso]}, CONV)) == ["TEMPORAL_INVALID"]
    reversed_ = {
        **base,
        "temporal": {"kind": "PAST", "valid_from": "2024-05", "valid_to": "2024-01-02"},
    }
    assert codes(validate_extraction({"candidates": [reversed_]}, CONV)) == ["TEMPORAL_INVALID"]
    # m4 has no timestamp: a resolved relative date was invented
    invented = {
        **base,
        "temporal": {"expression": "since March", "kind": "CURRENT", "valid_from": "2024-03"},
    }
    assert codes(validate_extraction({"candidates": [invented]}, CONV)) == ["TEMPORAL_UNANCHORED"]
    unresolved = {**base, "temporal": {"expression": "since March", "kind": "CURRENT"}}
    assert validate_extraction({"candidates": [unresolved]}, CONV).ok


def test_relative_time_is_checked_against_the_message_timestamp():
    conv = conversation_from_data(
        [
            {
                "role": "user",
                "content": "I moved to Porto yesterday.",
                "timestamp": "2024-05-10T12:00:00",
            }
        ]
    )
    q = "I moved to Porto yesterday."
    c = {"id": "c1", "span": span("m0", q, conv), "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT",
         "content": "User stated they moved to Porto yesterday.", "origin": "USER",
         "temporal": {"expression": "yesterday", "kind": "POINT_IN_TIME", "valid_from": "2024-05-09", "valid_to": "2024-05-09"}}  # fmt: skip
    assert validate_extraction({"candidates": [c]}, conv).ok
    wrong = copy.deepcopy(c)
    wrong["temporal"]["valid_from"] = wrong["temporal"]["valid_to"] = "2024-05-10"
    report = validate_extraction({"candidates": [wrong]}, conv)
    assert (
        codes(report) == ["TEMPORAL_MISRESOLVED"] and "2024-05-09" in report.rejections[0].message
    )


def test_structure_parents_links_and_cascade():
    assert codes(validate_extraction({"candidates": [proposition(parent="c1")]}, CONV)) == [
        "PARENT_UNKNOWN"
    ]
    unlinked = proposition(parent_ids=[])  # the system links it to the event of its span
    report = validate_extraction({"candidates": [event(), unlinked]}, CONV)
    assert codes(report) == [] and report.accepted[1].parent_ids == ["c1"]
    report = validate_extraction({"candidates": [unlinked]}, CONV)  # or builds that event
    assert codes(report) == [] and [u.id for u in report.accepted] == ["c2.event", "c2"]
    assert report.accepted[1].parent_ids == ["c2.event"]
    bad_parent = event(origin="MODEL_OUTPUT")
    report = validate_extraction({"candidates": [bad_parent, proposition()]}, CONV)
    assert codes(report) == ["ORIGIN_LAUNDERING", "PARENT_REJECTED"]
    cyc_a = {**event("a"), "parent_ids": ["b"]}
    cyc_b = {**event("b", quote="My manager"), "parent_ids": ["a"]}
    assert set(codes(validate_extraction({"candidates": [cyc_a, cyc_b]}, CONV))) == {"PARENT_CYCLE"}
    dup = validate_extraction({"candidates": [event(), event()]}, CONV)
    assert codes(dup) == ["DUPLICATE_ID"] and len(dup.accepted) == 1
    same = validate_extraction({"candidates": [event("c1"), event("c2")]}, CONV)
    assert codes(same) == ["DUPLICATE_ID"] and "as candidate 'c1'" in same.rejections[0].message


def test_kind_must_match_memory_type():
    assert codes(validate_extraction({"candidates": [event(kind="PROPOSITION")]}, CONV)) == [
        "KIND_MISMATCH"
    ]


def test_candidate_limit():
    quotes = ["My manager is Alice.", "My manager is", "manager is Alice.", "My", "Alice"]
    many = [event(f"c{i}", quote=quote) for i, quote in enumerate(quotes)]
    report = validate_extraction({"candidates": many}, CONV, ValidationOptions(max_candidates=3))
    assert len(report.accepted) == 3 and codes(report) == ["CANDIDATE_LIMIT_EXCEEDED"] * 2


def test_unreadable_output_raises_a_typed_error():
    with pytest.raises(ExtractionOutputError, match="not JSON"):
        validate_extraction("Sure! Here are the memories: ...", CONV)
    with pytest.raises(ExtractionOutputError, match="'candidates' list"):
        validate_extraction({"memories": []}, CONV)
    assert validate_extraction(json.dumps({"candidates": [event()]}), CONV).ok


# --- properties ---------------------------------------------------------------------------

CERTIFY_WORDS = [
    "VERIFIED",
    "verified",
    "Verified",
    "certified",
    "VERIFIED_OBSERVATION_OF_EVENT",
    "fact-checked",
]


@st.composite
def hostile_outputs(draw: st.DrawFn) -> tuple[Conversation, dict[str, Any]]:
    texts = draw(st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=4))
    conv = conversation_from_data([{"role": "user", "content": t} for t in texts])
    cands = []
    for i in range(draw(st.integers(0, 6))):
        mid = draw(st.sampled_from([m.id for m in conv.messages] + ["m404"]))
        msg = conv.message(mid)
        text = msg.text if msg else "zzz"
        a = draw(st.integers(0, len(text)))
        b = draw(st.integers(a, len(text)))
        quote = draw(st.one_of(st.just(text[a:b]), st.text(max_size=10)))
        start = draw(st.one_of(st.just(a), st.integers(0, 50)))
        c: dict[str, Any] = {
            "id": f"c{i}", "span": {"message_id": mid, "quote": quote, "start": start, "end": start + len(quote)},
            "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT", "content": draw(st.text(min_size=1, max_size=20)),
            "origin": draw(st.sampled_from(["USER", "TOOL", "MODEL_OUTPUT"])),
        }  # fmt: skip
        if draw(st.booleans()):
            word = draw(st.sampled_from(CERTIFY_WORDS))
            where = draw(st.sampled_from(["content", "extra", "entity"]))
            if where == "content":
                c["content"] = f"{c['content']} {word}"
            elif where == "extra":
                c[draw(st.sampled_from(["verification", "status", "is_verified"]))] = word
            else:
                c["entities"] = [{"name": "X", "type": word}]
        cands.append(c)
    return conv, {"candidates": cands}


@settings(max_examples=examples(30), deadline=None)
@given(hostile_outputs())
def test_every_accepted_span_equals_the_transcript_text(case):
    conv, output = case
    report = validate_extraction(output, conv)
    for unit in report.accepted:
        assert (
            conv.message(unit.span.message_id).text[unit.span.start : unit.span.end]
            == unit.span.quote
        )
    assert len(report.accepted) + len(report.rejections) == len(output["candidates"])


@settings(max_examples=examples(30), deadline=None)
@given(hostile_outputs())
def test_no_accepted_candidate_carries_an_extractor_asserted_verified(case):
    conv, output = case
    report = validate_extraction(output, conv)
    for unit in report.accepted:
        raw = next(c for c in output["candidates"] if c["id"] == unit.id)
        dumped = json.dumps({k: v for k, v in raw.items() if k != "span"}).lower()
        quote = unit.span.quote.lower()
        for word in ("verified", "certified", "fact-checked", "verification"):
            assert word not in dumped or word in quote
