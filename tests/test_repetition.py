"""Repetition inside one conversation is one candidate with every span as evidence, and never
more authority than one statement has."""

from __future__ import annotations

from typing import Any

from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor import Extractor
from extractor.candidates import MemoryCandidate
from extractor.repetition import fold_repeats

FILLER = ["What's the weather like?", "Tell me a joke.", "I prefer tea.", "Thanks!"]


def chat(statements: list[str]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    for text in statements:
        messages += [{"role": "user", "content": text}, {"role": "assistant", "content": "OK."}]
    return {"id": "rep", "messages": messages}


def decisions_by_type(result: Any) -> dict[str, Any]:
    types = {c.memory_id: c.memory_type.value for c in result.candidates}
    return {
        types[d.memory_id]: (d.lifecycle_state, d.persist, d.allowed_uses, d.forbidden_uses)
        for d in result.decisions
    }


def test_seventeen_times_the_same_statement_is_one_candidate_with_seventeen_spans() -> None:
    statements = []
    for i in range(17):
        statements += ["I live in Denver.", FILLER[i % 4]]
    result = Extractor().process(chat(statements))
    denver = [c for c in result.candidates if "Denver" in c.content]
    assert sorted(c.memory_type.value for c in denver) == ["ASSERTION_EVENT", "WORLD_PROPOSITION"]
    said_at = [f"m{4 * i}" for i in range(17)]
    for candidate in denver:
        assert candidate.evidence_ids == said_at
        assert [s.message_id for s in [candidate.source_span, *candidate.repeated_spans]] == said_at
    event = next(c for c in denver if c.memory_type.value == "ASSERTION_EVENT")
    proposition = next(c for c in denver if c.memory_type.value == "WORLD_PROPOSITION")
    assert proposition.parent_memory_ids == [event.memory_id]
    ids = [c.memory_id for c in result.candidates]
    assert len(ids) == len(set(ids)) and {d.memory_id for d in result.decisions} == set(ids)


def test_repetition_never_upgrades_provenance() -> None:
    once = Extractor().process(chat(["I live in Denver."]))
    many = Extractor().process(chat(["I live in Denver."] * 9))
    assert [(c.verification_state, c.origin_kind) for c in many.candidates] == [
        (c.verification_state, c.origin_kind) for c in once.candidates
    ]
    assert decisions_by_type(many) == decisions_by_type(once)


def test_different_statements_are_not_folded() -> None:
    result = Extractor().process(chat(["I live in Denver.", "I live in Boston."]))
    assert all(not c.repeated_spans for c in result.candidates)
    assert sum("Denver" in c.content for c in result.candidates) == 2


SENTENCES = ["I live in Denver.", "I live in Boston.", "I think I live in Denver.",
             "I prefer tea.", "My sister lives in Denver."]  # fmt: skip


@settings(max_examples=examples(15), deadline=None)
@given(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=10))
def test_folding_keeps_every_span_once_and_every_parent_resolvable(statements: list[str]) -> None:
    extractor = Extractor()
    conv = extractor.coerce(chat(statements))
    raw = Extractor().process(conv)
    candidates: list[MemoryCandidate] = raw.candidates
    again = fold_repeats(candidates)
    assert again == candidates, "folding is idempotent"
    spans = [
        (s.message_id, s.start, s.end, c.memory_type)
        for c in candidates
        for s in [c.source_span, *c.repeated_spans]
    ]
    assert len(spans) == len(set(spans)), "a span is evidence of one candidate only"
    ids = {c.memory_id for c in candidates}
    assert all(p in ids and p != c.memory_id for c in candidates for p in c.parent_memory_ids)
