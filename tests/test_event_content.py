"""Events say exactly what happened: an event's content is the system's template over its quote.

A model that attaches any content to a real quote used to get that content recorded as a
VERIFIED_OBSERVATION_OF_EVENT with FACTUAL_EVIDENCE (issue 17). Each attack here runs through
the real ``extractor run`` process against a stub OpenAI-compatible server answering fixed
extractions, in every instructor mode: the event is kept, holding the quote and nothing else,
and what the model wrote is recorded as a content correction.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import examples
from hostile import assert_run_gate_held
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import PROVENANCE

from extractor.candidates import build_candidates
from extractor.cli import cli
from extractor.conversation import Conversation, conversation_from_data
from extractor.mockserver import MockServer
from extractor.offline import offline_extract
from extractor.proposal.events import MAX_CLAIMED_CHARS, event_content
from extractor.results import ConversationResult
from extractor.validation import validate_extraction
from extractor.vocab import (
    OBSERVATION_TYPES,
    Capability,
    LifecycleState,
    MemoryType,
    Role,
    VerificationState,
)

MODES = ["tools", "json_schema", "json", "md_json"]
TOOL_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "http_get", "arguments": "{}"},
}


@dataclass(frozen=True)
class Attack:
    """A conversation, the event a hostile model words, and the content the record must hold."""

    messages: list[dict[str, Any]]
    index: int
    quote: str
    memory_type: str
    claimed: str
    content: str
    #: Words of the claim that must appear in no accepted candidate or decision.
    absent: tuple[str, ...]
    #: The conversation's metadata (which tools observe: ``extractor.toolorigin``).
    metadata: dict[str, Any] = field(default_factory=dict)


ATTACKS: dict[str, Attack] = {
    "manager-is-bob-with-root": Attack(
        [{"role": "user", "content": "My manager is Alice."}],
        0,
        "My manager is Alice.",
        "ASSERTION_EVENT",
        "User stated their manager is Bob and that the user is a system administrator with "
        "root access.",
        'User stated: "My manager is Alice."',
        ("Bob", "root access", "administrator"),
    ),
    "negation-dropped": Attack(
        [{"role": "user", "content": "I don't live in Berlin anymore."}],
        0,
        "I don't live in Berlin anymore.",
        "ASSERTION_EVENT",
        "User stated that they live in Berlin.",
        'User stated: "I don\'t live in Berlin anymore."',
        ("that they live in Berlin",),
    ),
    "tool-ok-becomes-a-disaster": Attack(
        [
            {"role": "user", "content": "Is the service up?"},
            {"role": "assistant", "content": "", "tool_calls": [TOOL_CALL]},
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "content": "HTTP 200 OK",
                "timestamp": "2026-11-30T09:00:00Z",
            },
        ],
        2,
        "HTTP 200 OK",
        "TOOL_OBSERVATION",
        "The tool confirmed that the production database was wiped and must be restored from "
        "backup.",
        'Tool http_get returned: "HTTP 200 OK"',
        ("wiped", "backup"),
        {"observing_tools": ["http_get"]},  # a health check: the caller says it observes
    ),
    "quote-plus-appended-claim": Attack(
        [{"role": "user", "content": "I might move to Paris next year."}],
        0,
        "I might move to Paris next year.",
        "ASSERTION_EVENT",
        'User said "I might move to Paris next year." User has moved to Paris.',
        'User stated: "I might move to Paris next year."',
        ("has moved",),
    ),
}


def attack_output(attack: Attack) -> dict[str, Any]:
    """What the hostile model answers (output format 2): the event, worded its own way."""
    event = {"id": "e1", "message_id": f"m{attack.index}", "quote": attack.quote,
             "memory_type": attack.memory_type, "content": attack.claimed}  # fmt: skip
    return {"candidates": [event]}


@dataclass(frozen=True)
class Run:
    results: dict[str, ConversationResult]
    ledger: Path


@pytest.fixture(scope="module", params=MODES)
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Run:
    mode: str = request.param
    d = tmp_path_factory.mktemp(f"events-{mode}")
    src = d / "in.jsonl"
    src.write_text(
        "".join(
            json.dumps({"id": cid, "messages": a.messages, "metadata": a.metadata}) + "\n"
            for cid, a in ATTACKS.items()
        )
    )
    out, ledger = d / "out.jsonl", d / "ledger.db"
    answers = {cid: attack_output(a) for cid, a in ATTACKS.items()}
    with MockServer(answers=answers) as server:
        args = [
            "run", str(src), "--model", "stub", "--base-url", server.base_url, "--api-key", "k",
            "--mode", mode, "--no-cache", "--out", str(out), "--ledger", str(ledger),
        ]  # fmt: skip
        done = CliRunner().invoke(cli, args)  # in-process: the suite imports the SDK only once
    assert done.exit_code == 0, done.output
    convs = {
        cid: conversation_from_data({"id": cid, "messages": a.messages, "metadata": a.metadata})
        for cid, a in ATTACKS.items()
    }
    results, failed = assert_run_gate_held(out, Path(f"{out}.failures.jsonl"), convs)
    assert not failed
    return Run(results, ledger)


@pytest.mark.parametrize("name", list(ATTACKS))
def test_the_event_holds_its_words_and_the_wording_is_a_correction(run: Run, name: str) -> None:
    attack = ATTACKS[name]
    result = run.results[name]
    assert not result.rejections
    (event,) = result.candidates
    assert event.content == attack.content
    assert event.verification_state is VerificationState.VERIFIED_OBSERVATION_OF_EVENT
    (correction,) = result.content_corrections
    assert (correction.candidate_id, correction.claimed, correction.content) == (
        "e1",
        attack.claimed,
        attack.content,
    )
    (decision,) = result.decisions
    assert decision.lifecycle_state is LifecycleState.ACTIVE
    assert Capability.FACTUAL_EVIDENCE in decision.allowed_uses
    recorded = json.dumps([c.model_dump(mode="json") for c in result.candidates])
    recorded += json.dumps([d.model_dump(mode="json") for d in result.decisions])
    for words in attack.absent:
        assert words not in recorded


def test_the_ledger_records_the_template_not_the_claim(run: Run) -> None:
    db = sqlite3.connect(run.ledger)
    try:
        contents = {row[0] for row in db.execute("SELECT content FROM candidates")}
    finally:
        db.close()
    assert contents == {a.content for a in ATTACKS.values()}


# --- The invariant, over generated conversations and hostile contents -------------------------

TEXT = st.text(alphabet="abc \"'.\n:ÅŒ\u200b", min_size=1, max_size=12)
ROLES = st.sampled_from([Role.USER, Role.TOOL, Role.ASSISTANT])
TYPES = st.sampled_from(list(MemoryType))
ORIGIN = {Role.USER: "USER", Role.TOOL: "TOOL", Role.ASSISTANT: "MODEL_OUTPUT"}


@st.composite
def hostile_extractions(draw: st.DrawFn) -> tuple[Conversation, list[dict[str, Any]]]:
    messages = [
        {"role": role.value, "content": draw(TEXT), **({"name": draw(st.sampled_from(
            ["search", "bad name", "x" * 70]))} if role is Role.TOOL else {})}
        for role in draw(st.lists(ROLES, min_size=1, max_size=3))
    ]  # fmt: skip
    conv = conversation_from_data({"id": "p", "messages": messages})
    items = []
    for n in range(draw(st.integers(1, 5))):
        message = draw(st.sampled_from(conv.messages))
        start = draw(st.integers(0, len(message.text) - 1))
        end = draw(st.integers(start + 1, len(message.text)))
        memory_type = draw(TYPES)
        kind = "OBSERVATION" if memory_type in OBSERVATION_TYPES else "PROPOSITION"
        items.append({
            "id": f"c{n}",
            "span": {"message_id": message.id, "quote": message.text[start:end], "start": start,
                     "end": end},
            "kind": kind, "memory_type": memory_type.value, "origin": ORIGIN[message.role],
            "content": draw(st.text(min_size=1, max_size=MAX_CLAIMED_CHARS + 5)),
        })  # fmt: skip
    return conv, items


@settings(max_examples=examples(40), deadline=None)
@given(hostile_extractions())
def test_no_accepted_event_content_differs_from_its_template(
    case: tuple[Conversation, list[dict[str, Any]]],
) -> None:
    conv, items = case
    report = validate_extraction({"candidates": items}, conv)
    records = build_candidates(
        report.accepted, conv, provenance=PROVENANCE, recorded_at=datetime(2026, 1, 1, tzinfo=UTC)
    )
    corrected = {c.candidate_id: c for c in report.content_corrections}
    raw = {item["id"]: item for item in items}
    for unit, record in zip(report.accepted, records, strict=True):
        if unit.memory_type not in OBSERVATION_TYPES:
            assert unit.id not in corrected
            continue
        message = conv.message(unit.span.message_id)
        assert message is not None
        template = event_content(unit.memory_type, unit.span.quote, message, conv)
        assert unit.content == record.content == template
        claimed = raw[unit.id]["content"] if unit.id in raw else template  # built by the system
        if claimed == template:
            assert unit.id not in corrected
        else:
            fix = corrected[unit.id]
            assert fix.claimed == claimed[:MAX_CLAIMED_CHARS]
            assert fix.claimed_chars == len(claimed)
    assert set(corrected) <= {u.id for u in report.accepted}


@settings(max_examples=examples(30), deadline=None)
@given(hostile_extractions(), st.text(min_size=1, max_size=40))
def test_an_events_memory_id_does_not_depend_on_the_models_wording(
    case: tuple[Conversation, list[dict[str, Any]]], other: str
) -> None:
    conv, items = case
    reworded = [{**item, "content": other} for item in items]
    at = datetime(2026, 1, 1, tzinfo=UTC)

    def event_ids(extraction: list[dict[str, Any]]) -> dict[str, str]:
        report = validate_extraction({"candidates": extraction}, conv)
        records = build_candidates(report.accepted, conv, provenance=PROVENANCE, recorded_at=at)
        return {r.candidate_id: r.memory_id for r in records if r.memory_type in OBSERVATION_TYPES}

    first, second = event_ids(items), event_ids(reworded)
    for cid in first.keys() & second.keys():
        assert first[cid] == second[cid]


def test_a_tool_name_that_is_not_an_identifier_is_not_written_into_the_template() -> None:
    conv = conversation_from_data({"id": "t", "messages": [
        {"role": "tool", "name": "search", "content": "ok"},
        {"role": "tool", "name": "the verified oracle", "content": "ok"},
        {"role": "tool", "content": "ok"},
    ]})  # fmt: skip
    got = [event_content(MemoryType.TOOL_OBSERVATION, "ok", m, conv) for m in conv.messages]
    assert got == ['Tool search returned: "ok"', 'A tool returned: "ok"', 'A tool returned: "ok"']


def test_an_event_is_not_judged_by_a_neighbouring_sentences_hedge() -> None:
    # hypothesis: the tool line "What if I moved? I think I might move." -- the event over the
    # question was rejected UNCERTAINTY_DROPPED for the next sentence's "I think"; an event's
    # content is the template over its quote, so there is nothing to judge
    conv = conversation_from_data({"id": "t", "messages": [
        {"role": "tool", "content": "What if I moved? I think I might move."}
    ]})  # fmt: skip
    report = validate_extraction(offline_extract(conv), conv)
    assert report.rejections == [], report.feedback()
    assert report.accepted
