"""Shared pieces of the hostile tests: a conversation with every role, candidate builders, and
the batch-level gate check every hostile run must pass.

Import from tests as ``from hostile import ...``.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from helpers import read_lines

from extractor.conversation import Conversation, conversation_from_data
from extractor.resultline import decode
from extractor.results import ConversationResult, FailureRecord
from extractor.toolorigin import text_origin
from extractor.validation import uncertainty_cues
from extractor.vocab import CandidateKind, Capability, Origin, Role, VerificationState

#: Every role, a hedge, an approximation, and a repeated word (for ambiguous offsets).
MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "My manager is Alice. I think the budget is approximately $46M."},
    {
        "role": "assistant",
        "content": "Q3 revenue was approximately $46M. The deploy is safe to run.",
    },
    {"role": "tool", "name": "search", "content": "Acme's CEO is Bob Stone (acme.com, 2024)."},
    {"role": "user", "content": "ok ok"},
]
BASE = conversation_from_data({"id": "base", "messages": MESSAGES})
DEFAULTS = {
    Role.USER: ("OBSERVATION", "ASSERTION_EVENT", "USER", 'User stated: "{quote}"'),
    Role.ASSISTANT: ("PROPOSITION", "MODEL_INFERENCE", "MODEL_OUTPUT", "{quote}"),
    Role.TOOL: ("OBSERVATION", "TOOL_OBSERVATION", "TOOL", 'Tool search returned: "{quote}"'),
}
#: Origins the transcript supports for text of each role.
SUPPORTED_ORIGINS = {
    Role.USER: {Origin.USER},
    Role.ASSISTANT: {Origin.MODEL_OUTPUT},
    Role.TOOL: {Origin.TOOL, Origin.EXTERNAL_SOURCE},
    Role.SYSTEM: {Origin.SYSTEM},
}
AUTHORITY = {Capability.FACTUAL_EVIDENCE, Capability.AUTONOMOUS_ACTION_JUSTIFICATION}


def conversation(cid: str, messages: list[dict[str, Any]] = MESSAGES) -> dict[str, Any]:
    return {"id": cid, "messages": messages}


def candidate(
    cid: str, mid: str, quote: str, conv: Conversation = BASE, **fields: Any
) -> dict[str, Any]:
    """A well-formed candidate quoting ``quote`` from message ``mid`` at its true offsets;
    ``fields`` override anything (that is how the hostile variants are made)."""
    message = conv.message(mid)
    assert message is not None and quote in message.text, (mid, quote)
    kind, memory_type, origin, content = DEFAULTS[message.role]
    start = message.text.index(quote)
    unit: dict[str, Any] = {
        "id": cid,
        "span": {"message_id": mid, "quote": quote, "start": start, "end": start + len(quote)},
        "kind": kind,
        "memory_type": memory_type,
        "content": content.format(quote=quote),
        "origin": origin,
    }
    unit.update(fields)
    return unit


#: A valid candidate every scripted output carries, to show valid work survives hostile work.
VALID = candidate("c1", "m0", "My manager is Alice.")


def assert_each_exactly_once(
    expected_ids: Iterable[str], results: list[dict[str, Any]], failures: list[dict[str, Any]]
) -> None:
    """Every input conversation appears exactly once across the results and failures files."""
    seen = Counter(r["conversation_id"] for r in results + failures)
    expected = Counter(list(expected_ids))
    assert seen == expected, f"extra: {seen - expected}, missing: {expected - seen}"


def assert_gate_held(result: ConversationResult, conv: Conversation) -> None:
    """Nothing unsafe in an accepted candidate or an admission decision.

    * every span is the transcript's exact text; the origin is the speaker's;
    * nothing is VERIFIED (the extractor never certifies; the system assigns at most
      VERIFIED_OBSERVATION_OF_EVENT, to a user's or tool's observed event);
    * a hedged or approximate quote keeps its hedge; parents exist and are not the candidate;
    * model output never gets FACTUAL_EVIDENCE or AUTONOMOUS_ACTION_JUSTIFICATION, and
      nothing unverified does either, nor text a tool relayed (origin EXTERNAL_SOURCE);
    * tool text has origin TOOL only when its tool was declared observing;
    * nothing from tool, external-source or model text may be imitated as a procedure.
    """
    ids = [c.memory_id for c in result.candidates]
    assert len(set(ids)) == len(ids), "one record per memory"
    assert [d.memory_id for d in result.decisions] == ids
    for cand, decision in zip(result.candidates, result.decisions, strict=True):
        span = cand.source_span
        message = conv.message(span.message_id)
        assert message is not None
        assert message.text[span.start : span.end] == span.quote != ""
        assert cand.origin_kind in SUPPORTED_ORIGINS[message.role]
        assert cand.verification_state is not VerificationState.VERIFIED
        if cand.verification_state is VerificationState.VERIFIED_OBSERVATION_OF_EVENT:
            assert cand.kind is CandidateKind.OBSERVATION
            assert cand.origin_kind in (Origin.USER, Origin.TOOL, Origin.EXTERNAL_SOURCE)
        if message.role is Role.TOOL and cand.origin_kind is Origin.TOOL:
            assert text_origin(message, conv) is Origin.TOOL, "relayed text kept origin TOOL"
        cues = uncertainty_cues(span.quote)
        if cues.hedged or cues.approximate:
            assert cand.uncertainty.hedges or span.quote in cand.content
        assert set(cand.parent_memory_ids) <= set(ids) - {cand.memory_id}
        authority = AUTHORITY & set(decision.allowed_uses)
        if cand.origin_kind is Origin.MODEL_OUTPUT:
            assert not authority and set(decision.forbidden_uses) >= AUTHORITY
        if authority:
            assert cand.verification_state is VerificationState.VERIFIED_OBSERVATION_OF_EVENT
            assert cand.origin_kind is not Origin.EXTERNAL_SOURCE
        if cand.origin_kind is not Origin.USER and cand.origin_kind is not Origin.SYSTEM:
            assert Capability.PROCEDURE_IMITATION not in decision.allowed_uses
    certifying = re.compile(r"verif|certif", re.IGNORECASE)
    for record in (*result.candidates, *result.decisions):
        keys = _keys(record.model_dump(mode="json"))
        assert {k for k in keys if certifying.search(k)} <= {"verification_state"}


def _keys(value: Any) -> Iterable[str]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _keys(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner)


def assert_run_gate_held(
    out: Path, failures: Path, conversations: dict[str, Conversation]
) -> tuple[dict[str, ConversationResult], dict[str, FailureRecord]]:
    """The batch-level guarantee over a run's two files: each conversation exactly once, each
    line a valid record, and :func:`assert_gate_held` for every result."""
    result_lines, failure_lines = read_lines(out), read_lines(failures)
    assert_each_exactly_once(conversations, result_lines, failure_lines)
    results = {
        r["conversation_id"]: ConversationResult.model_validate(decode(r)) for r in result_lines
    }
    failed = {f["conversation_id"]: FailureRecord.model_validate(f) for f in failure_lines}
    for cid, result in results.items():
        assert_gate_held(result, conversations[cid])
    return results, failed


def assert_ledger_consistent(
    path: Path, results: list[dict[str, Any]], failures: list[dict[str, Any]]
) -> tuple[Counter[tuple[str, str]], Counter[str | None]]:
    """The ledger holds what the files hold: intact, no orphans, every line recorded. Returns
    the ledger's (conversation id, hash) rows and failure ids, for exact checks."""
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        orphans = db.execute(
            "SELECT count(*) FROM decisions d LEFT JOIN candidates c "
            "ON c.result_key = d.result_key AND c.memory_id = d.memory_id "
            "WHERE c.memory_id IS NULL"
        ).fetchone()[0]
        assert orphans == 0
        recorded = Counter(
            (cid, h)
            for cid, h in db.execute("SELECT conversation_id, conversation_hash FROM conversations")
        )
        failed = Counter(row[0] for row in db.execute("SELECT conversation_id FROM failures"))
    finally:
        db.close()
    written = Counter((r["conversation_id"], r["conversation_hash"]) for r in results)
    assert written - recorded == Counter(), "a result line the ledger does not hold"
    assert Counter(f["conversation_id"] for f in failures) - failed == Counter()
    return recorded, failed
