"""Dereferencing a memory to its original evidence (seed §10).

    memory hit -> dereference original evidence -> verify source still admissible -> use source

A memory names its evidence as ``<conversation hash>#<message id>[<start>:<end>]`` (the store's
and the ledger's ``evidence_ref``). :func:`check_evidence` fetches the stored transcript with that
content hash, re-checks that the transcript still hashes to it, that the span is still inside
the message and holds exactly the quote the memory was admitted with (by hash), and that no
source of the memory was revoked or erased. Memory helps find evidence; it does not become the
evidence: a hit whose evidence cannot be reached does not count for a high-risk purpose.

Any object with ``transcript(conversation_hash) -> Conversation | None`` is a
:class:`TranscriptSource`; :class:`extractor.ledger.Ledger` is one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..conversation import Conversation
from ..hashing import text_hash
from .models import EvidenceStatus

_REF = re.compile(r"(?P<hash>[^#]+)#(?P<message>.+)\[(?P<start>[0-9]+):(?P<end>[0-9]+)\]")


class TranscriptSource(Protocol):
    def transcript(self, conversation_hash: str) -> Conversation | None: ...


@runtime_checkable
class MaskedTranscripts(Protocol):
    """A source that stores transcripts with secrets masked (the ledger): it says what each
    stored transcript hashes to, so a masked one is still checked to be the one recorded."""

    def stored_transcript_hash(self, conversation_hash: str) -> str | None: ...


@dataclass(frozen=True)
class Span:
    conversation_hash: str
    message_id: str
    start: int
    end: int


def parse_ref(ref: str | None) -> Span | None:
    """``<hash>#<message id>[start:end]`` as a :class:`Span`; ``None`` when unreadable."""
    found = _REF.fullmatch(ref) if ref else None
    if found is None:
        return None
    start, end = int(found["start"]), int(found["end"])
    return Span(found["hash"], found["message"], start, end) if start < end else None


class TranscriptCache:
    """Fetches each transcript once and checks once that it still hashes to its key.

    The read path keeps one per read: several hits from one long conversation then cost one
    fetch and one hash, not one each.
    """

    def __init__(self, source: TranscriptSource) -> None:
        self._source = source
        self._seen: dict[str, tuple[Conversation | None, bool]] = {}

    def verified(self, conversation_hash: str) -> tuple[Conversation | None, bool]:
        """``(transcript or None, whether it still hashes to conversation_hash)``."""
        if conversation_hash not in self._seen:
            found = self._source.transcript(conversation_hash)
            expected = {conversation_hash}
            if found is not None and isinstance(self._source, MaskedTranscripts):
                expected.add(self._source.stored_transcript_hash(conversation_hash) or "")
            intact = found is not None and found.content_hash() in expected
            self._seen[conversation_hash] = (found, intact)
        return self._seen[conversation_hash]


def check_span(
    conversation: Conversation | None, span: Span, quote_hash: str, *, intact: bool | None = None
) -> EvidenceStatus:
    """Is the quote still at ``span`` in this stored transcript, byte for byte? ``intact``:
    whether the transcript still hashes to its key, when already known."""
    if conversation is None:
        return EvidenceStatus.MISSING
    if intact is None:
        intact = conversation.content_hash() == span.conversation_hash
    if not intact:
        return EvidenceStatus.HASH_MISMATCH
    message = conversation.message(span.message_id)
    if message is None or span.end > len(message.text):
        return EvidenceStatus.HASH_MISMATCH
    if text_hash(message.text[span.start : span.end]) != quote_hash:
        return EvidenceStatus.HASH_MISMATCH
    return EvidenceStatus.VERIFIED


def check_evidence(
    ref: str | None,
    quote_hash: str | None,
    *,
    transcripts: TranscriptSource | TranscriptCache | None,
    sources_admissible: bool,
) -> EvidenceStatus:
    """The :class:`EvidenceStatus` of one memory's evidence, checked against its transcript.

    ``sources_admissible`` is the store's answer: no source of the memory is revoked or erased.
    Without ``transcripts`` nothing can be dereferenced: ``NOT_CHECKED``, which the shipped read
    policy refuses for high-risk purposes (fail closed).
    """
    if not sources_admissible:
        return EvidenceStatus.SOURCE_INADMISSIBLE
    if transcripts is None:
        return EvidenceStatus.NOT_CHECKED
    span = parse_ref(ref)
    if span is None or quote_hash is None:
        return EvidenceStatus.MISSING
    cache = (
        transcripts if isinstance(transcripts, TranscriptCache) else TranscriptCache(transcripts)
    )
    conversation, intact = cache.verified(span.conversation_hash)
    return check_span(conversation, span, quote_hash, intact=intact)
