"""Dereferencing a hit to its original evidence (seed §10): span, hash, source status."""

from __future__ import annotations

import pytest

from extractor.conversation import conversation_from_data
from extractor.hashing import text_hash
from extractor.read.evidence import check_evidence, parse_ref
from extractor.read.models import EvidenceStatus

CONV = conversation_from_data(
    {"id": "c1", "messages": [{"role": "user", "content": "Hi. My manager is Alice."}]}
)
H = CONV.content_hash()
QUOTE = "My manager is Alice."
REF = f"{H}#m0[4:24]"
QUOTE_HASH = text_hash(QUOTE)


class Transcripts:
    def __init__(self, *conversations):
        self.by_hash = {c.content_hash(): c for c in conversations}
        self.asked = []

    def transcript(self, conversation_hash):
        self.asked.append(conversation_hash)
        return self.by_hash.get(conversation_hash)


def _check(ref=REF, quote_hash=QUOTE_HASH, transcripts=None, sources_admissible=True):
    return check_evidence(
        ref,
        quote_hash,
        transcripts=transcripts or Transcripts(CONV),
        sources_admissible=sources_admissible,
    )


def test_the_quote_is_found_again_at_its_span():
    assert CONV.messages[0].text[4:24] == QUOTE
    assert _check() is EvidenceStatus.VERIFIED


def test_a_different_quote_hash_is_a_mismatch():
    assert _check(quote_hash=text_hash("My manager is Bob.")) is EvidenceStatus.HASH_MISMATCH


def test_a_span_outside_the_message_or_an_unknown_message_is_a_mismatch():
    assert _check(ref=f"{H}#m0[4:99]") is EvidenceStatus.HASH_MISMATCH
    assert _check(ref=f"{H}#m7[4:24]") is EvidenceStatus.HASH_MISMATCH


def test_a_transcript_that_no_longer_hashes_to_its_key_is_a_mismatch():
    tampered = conversation_from_data(
        {"id": "c1", "messages": [{"role": "user", "content": "Hi. My manager is Alice!"}]}
    )

    class Lying(Transcripts):
        def transcript(self, conversation_hash):
            return tampered

    assert _check(transcripts=Lying()) is EvidenceStatus.HASH_MISMATCH


def test_no_stored_transcript_or_no_reference_is_missing():
    assert _check(transcripts=Transcripts()) is EvidenceStatus.MISSING
    assert _check(ref=None) is EvidenceStatus.MISSING
    assert _check(quote_hash=None) is EvidenceStatus.MISSING


def test_a_revoked_source_wins_and_nothing_is_fetched():
    t = Transcripts(CONV)
    assert _check(transcripts=t, sources_admissible=False) is EvidenceStatus.SOURCE_INADMISSIBLE
    assert t.asked == []


def test_without_a_transcript_source_nothing_is_checked():
    assert (
        check_evidence(REF, text_hash(QUOTE), transcripts=None, sources_admissible=True)
        is EvidenceStatus.NOT_CHECKED
    )


@pytest.mark.parametrize("ref", ["", "nohash[1:2]", "h#m0[5:5]", "h#m0[x:2]", "h#m0"])
def test_unreadable_references(ref):
    assert parse_ref(ref) is None
