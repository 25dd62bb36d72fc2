"""The shipped gold set: size, coverage, and that every gold quote names one range of its message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extractor.conversation import iter_inputs
from extractor.errors import InputError
from extractor.evaluation import default_evalset_path, load_evalset
from extractor.evaluation.gold import SCORED_TYPES
from extractor.temporal import interval
from extractor.vocab import Commitment, Role

#: Every situation the issue asks the gold set to cover.
REQUIRED_CATEGORIES = {
    "first_person_fact", "relationship", "preference", "hedged", "reported", "question",
    "hypothetical", "sarcasm", "negation", "change_over_time", "supersession", "repetition",
    "assistant_hallucination", "assistant_echo", "tool_observation", "tool_error", "hold",
    "injection_user", "injection_tool", "third_party", "non_english", "emoji", "non_ascii",
    "multipart", "system_prompt", "empty", "very_long",
}  # fmt: skip


@pytest.fixture(scope="module")
def cases():
    return load_evalset()


def test_at_least_sixty_conversations_with_unique_ids(cases):
    assert len(cases) >= 60
    assert len({c.id for c in cases}) == len(cases)


def test_every_required_category_is_covered(cases):
    covered = {cat for c in cases for cat in c.gold.categories}
    assert covered >= REQUIRED_CATEGORIES


def test_categories_match_the_conversations(cases):
    """A category label is backed by the conversation's actual shape."""
    for case in cases:
        cats, msgs = set(case.gold.categories), case.conversation.messages
        if "hold" in cats:
            assert any(m.commitment is Commitment.HOLD for m in msgs), case.id
        if {"tool_observation", "tool_error", "injection_tool"} & cats:
            assert any(m.role is Role.TOOL for m in msgs), case.id
        if "system_prompt" in cats:
            assert msgs[0].role is Role.SYSTEM, case.id
        if "multipart" in cats:
            assert any(isinstance(m.content, list) for m in msgs), case.id
        if "injection_user" in cats or "injection_tool" in cats:
            assert case.gold.injections, case.id
        if "very_long" in cats:
            assert len(msgs) >= 200 or max(len(m.text) for m in msgs) >= 10_000, case.id
        if "empty" in cats:
            assert not [e for e in case.gold.expected if not e.optional], case.id


def test_gold_quotes_resolve_to_the_quoted_text(cases):
    for case in cases:
        items = [(e, r[0]) for e, r in zip(case.gold.expected, case.expected_ranges, strict=True)]
        items += list(zip(case.gold.forbidden, case.forbidden_ranges, strict=True))
        items += list(zip(case.gold.injections, case.injection_ranges, strict=True))
        for item, where in items:
            message = case.conversation.message(where.message_id)
            assert message is not None
            assert message.text[where.start : where.end] == item.quote, (case.id, item.quote)


def test_gold_is_well_formed(cases):
    for case in cases:
        for item in case.gold.expected:
            assert item.memory_type in SCORED_TYPES, (case.id, item.quote)
            if item.temporal is not None:
                for value in (item.temporal.valid_from, item.temporal.valid_to):
                    assert value is None or interval(value) is not None, (case.id, value)
        for injection in case.gold.injections:
            message = case.conversation.message(injection.message_id)
            assert message is not None and message.role in (Role.USER, Role.TOOL)


def test_temporal_gold_has_timestamps_to_resolve_against(cases):
    for case in cases:
        for item in case.gold.expected:
            if item.temporal and (item.temporal.valid_from or item.temporal.valid_to):
                message = case.conversation.message(item.message_id)
                assert message is not None and message.timestamp is not None, case.id


def test_the_set_is_ordinary_extractor_input():
    """``extractor run`` reads the gold file as it is: the loader ignores ``gold``."""
    loaded = list(iter_inputs([default_evalset_path()]))
    assert loaded and not [c for c in loaded if isinstance(c, InputError)]


def _write(tmp_path: Path, line: dict) -> Path:
    path = tmp_path / "gold.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path


def _case(**gold) -> dict:
    return {
        "id": "c1",
        "messages": [{"role": "user", "content": "I live in Oslo. I live in Oslo."}],
        "gold": gold,
    }


@pytest.mark.parametrize(
    ("gold", "message", "field"),
    [
        (
            {"expected": [{"message_id": "m0", "memory_type": "WORLD_PROPOSITION",
                           "quote": "Bergen"}]},
            "does not occur", "gold.expected[0]",
        ),
        (
            {"expected": [{"message_id": "m0", "memory_type": "WORLD_PROPOSITION",
                           "quote": "I live in Oslo"}]},
            "more than once", "gold.expected[0]",
        ),
        (
            {"forbidden": [{"message_id": "m9", "quote": "Oslo", "reason": "x"}]},
            "no message with id 'm9'", "gold.forbidden[0]",
        ),
        (
            {"expected": [{"message_id": "m0", "memory_type": "FACT", "quote": "Oslo"}]},
            "", "gold.expected.0.memory_type",
        ),
    ],
)  # fmt: skip
def test_bad_gold_names_file_line_conversation_and_field(tmp_path, gold, message, field):
    path = _write(tmp_path, _case(**gold))
    with pytest.raises(InputError) as info:
        load_evalset(path)
    text = str(info.value)
    assert f"{path}:1" in text and "'c1'" in text and field in text and message in text


def test_a_line_without_gold_is_refused(tmp_path):
    path = _write(tmp_path, {"id": "c1", "messages": [{"role": "user", "content": "hi"}]})
    with pytest.raises(InputError, match="needs a 'gold' object"):
        load_evalset(path)


def test_missing_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot read gold set"):
        load_evalset(tmp_path / "absent.jsonl")
