"""Builders for read-path tests over a real memory store.

``pipeline(cid, text)`` runs the real pipeline (offline model, default admission policy);
``handmade(conv, specs, policy=)`` stores candidates with chosen origin and verification whose
spans point into a real transcript, decided by a real admission policy, so the read path's
evidence check has something true (or tampered) to dereference.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from strategies import PROVENANCE

from extractor import Extractor, OfflineClient
from extractor.admission import admit, parse_policy
from extractor.candidates import MemoryCandidate
from extractor.conversation import Conversation, conversation_from_data
from extractor.extraction import SourceSpan, TemporalScope, Uncertainty
from extractor.results import ConversationResult
from extractor.vocab import CandidateKind, MemoryType, Origin, VerificationState

EXTRACTOR = Extractor(client=OfflineClient())
WHEN = "2026-06-01T10:00:00"

#: An admission policy for hand-made cases: each rule grants exactly what its name says.
HANDMADE_POLICY = parse_policy(
    """
id = "test-admission"
version = "1"

[[rules]]
id = "verified-external-active"
reason = "verified external claims are evidence"
match = { origin_kind = ["EXTERNAL_SOURCE"], verification_state = ["VERIFIED"] }
effect = { lifecycle = "ACTIVE", allow = ["FACTUAL_EVIDENCE", "CONVERSATIONAL_CONTEXT", "PERSONALIZATION", "AUTONOMOUS_ACTION_JUSTIFICATION"] }

[[rules]]
id = "unverified-quarantined-personalization"
reason = "unverified claims are quarantined, usable only to personalize"
match = { verification_state = ["UNVERIFIED"] }
effect = { lifecycle = "QUARANTINED", max_lifecycle = "QUARANTINED", allow = ["PERSONALIZATION"], forbid = ["FACTUAL_EVIDENCE", "AUTONOMOUS_ACTION_JUSTIFICATION"] }
""",
    source="<test admission policy>",
)


class Clock:
    def __init__(self, start: datetime = datetime(2026, 7, 1, 9, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


class Transcripts:
    """A transcript source over conversations kept in memory (the ledger's role)."""

    def __init__(self, *conversations: Conversation) -> None:
        self.by_hash = {c.content_hash(): c for c in conversations}

    def add(self, conversation: Conversation) -> None:
        self.by_hash[conversation.content_hash()] = conversation

    def transcript(self, conversation_hash: str) -> Conversation | None:
        return self.by_hash.get(conversation_hash)


def conversation(cid: str, *texts: str, tenant: str = "acme", user: str = "u1") -> Conversation:
    messages = [{"role": "user", "content": t, "timestamp": WHEN} for t in texts]
    return conversation_from_data(
        {"id": cid, "messages": messages, "metadata": {"tenant": tenant, "user_id": user}}
    )


def pipeline(cid: str, *texts: str, tenant: str = "acme", user: str = "u1") -> ConversationResult:
    conv = conversation(cid, *texts, tenant=tenant, user=user)
    return EXTRACTOR.process(conv.model_dump(mode="json", exclude_none=True))


def candidate(conv: Conversation, index: int, **fields: Any) -> MemoryCandidate:
    """A candidate quoting all of message ``index``; ``fields`` override origin, state, type."""
    message = conv.messages[index]
    text = message.text
    values: dict[str, Any] = {
        "memory_id": f"mem_{conv.id}_{index}",
        "conversation_id": conv.id,
        "candidate_id": f"c{index}",
        "content": text,
        "memory_type": MemoryType.EXTERNAL_SOURCE_CLAIM,
        "kind": CandidateKind.PROPOSITION,
        "origin_kind": Origin.EXTERNAL_SOURCE,
        "verification_state": VerificationState.VERIFIED,
        "evidence_ids": [message.id],
        "source_span": SourceSpan(message_id=message.id, quote=text, start=0, end=len(text)),
        "temporal": TemporalScope(),
        "uncertainty": Uncertainty(),
        "observed_at": datetime(2026, 6, 1, 10),
        "recorded_at": datetime(2026, 6, 1, 10, 1),
        "provenance": PROVENANCE,
    }
    values.update(fields)
    return MemoryCandidate(**values)


def handmade(conv: Conversation, candidates: list[MemoryCandidate]) -> ConversationResult:
    """A result for ``conv`` holding exactly ``candidates``, decided by the test policy."""
    base = EXTRACTOR.process(conv.model_dump(mode="json", exclude_none=True))
    decisions = admit(candidates, HANDMADE_POLICY)
    return base.model_copy(update={"candidates": candidates, "decisions": decisions})
