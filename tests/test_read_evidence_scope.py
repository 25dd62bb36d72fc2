"""What stage 3 is told about a hit's evidence: independent families (derived claims get their
parents', never more), evidence known at ``known_at`` only, and admission's evidence scope."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
from read_store_helpers import Clock, Transcripts, candidate, conversation, handmade

from extractor import MemoryStore
from extractor.admission import admit
from extractor.extraction import TemporalScope
from extractor.read import Caller, MemoryReader, parse_read_policy
from extractor.read.policy import DEFAULT_READ_POLICY_PATH
from extractor.read.views import load_hits
from extractor.store import DerivedClaim
from extractor.vocab import MemoryType, Origin, TemporalKind, VerificationState

AGENT = Caller(id="agent:support")


@pytest.fixture
def store(tmp_path: Path):
    with MemoryStore(tmp_path / "memory.db", clock=Clock()) as s:
        yield s


def _families(store: MemoryStore, *claim_ids: str, known_at: str | None = None) -> list[int]:
    db = sqlite3.connect(store.backend.location)
    hits = load_hits(db, "memory_current", [], list(claim_ids), known_at=known_at)
    return [hits[c].view.independent_families for c in claim_ids]


def _agreed(store: MemoryStore, *claim_ids: str) -> list[int]:
    """The read path's family counts, checked against the store's ``corroboration``."""
    families = _families(store, *claim_ids)
    assert [store.corroboration(c).families for c in claim_ids] == families
    return families


def _verified(store: MemoryStore, cid: str, text: str) -> tuple[object, str]:
    conv = conversation(cid, text)
    (stored,) = store.ingest(handmade(conv, [candidate(conv, 0)])).stored
    return conv, f"{stored}:c1"


def test_a_derived_claim_has_its_parents_families_and_never_more(store):
    _, a = _verified(store, "a", "Q2 revenue was $43.8M.")
    _, b = _verified(store, "b", "Q2 costs were $12M.")
    _, c = _verified(store, "c", "Q2 margin was 72%.")
    # c's message is a copy of b's: one family, whatever the number of sources.
    store.link_sources(
        store.corroboration(c).family_ids[0],
        store.corroboration(b).family_ids[0],
        relation="COPIED_FROM",
    )
    one = store.derive([DerivedClaim(content="Q2 revenue was $43.8M.", requires=[a])],
                       produced_by="summarizer")  # fmt: skip
    two = store.derive(
        [DerivedClaim(content="Q2: revenue $43.8M, costs $12M, margin 72%.", requires=[a, b, c])],
        produced_by="summarizer",
    )
    (s1,), (s2,) = [r.stored for r in (one, two)]
    assert _agreed(store, a, b, c) == [1, 1, 1]
    assert _agreed(store, s1.claim_id, s2.claim_id) == [1, 2]  # not 0, and not 3
    # Evidence attached to the summary itself adds nothing: never more than its parents.
    store.add_source("press-release", kind="DOCUMENT", uri="https://example.com/pr")
    store.add_evidence(s1.claim_id, source="press-release", quote="Q2 revenue was $43.8M.")
    # A summary of summaries has the families of the claims they were made from.
    top = store.derive(
        [DerivedClaim(content="Q2 in brief.", requires=[s1.claim_id, s2.claim_id])],
        produced_by="summarizer",
    ).stored[0]
    assert _agreed(store, s1.claim_id, top.claim_id) == [1, 2]
    # A parent's revoked source no longer counts for the parent, nor for what was made from it.
    db = sqlite3.connect(store.backend.location)
    db.execute("UPDATE sources SET status = 'REVOKED' WHERE source_id = ?",
               (store.corroboration(a).family_ids[0],))  # fmt: skip
    db.commit()
    assert _agreed(store, a, s2.claim_id, top.claim_id) == [0, 1, 1]


def test_context_parents_give_no_family(store):
    _, a = _verified(store, "a", "Q2 revenue was $43.8M.")
    _, b = _verified(store, "b", "Q2 costs were $12M.")
    (s,) = store.derive(
        [DerivedClaim(content="Q2 revenue was $43.8M.", requires=[a], context=[b])],
        produced_by="summarizer",
    ).stored
    assert _agreed(store, s.claim_id) == [1]


def _two_families_policy() -> object:
    text = DEFAULT_READ_POLICY_PATH.read_text(encoding="utf-8")
    return parse_read_policy(
        text.replace('version = "2026.12.01.1"', 'version = "test-two-families"')
        + """
[[rules]]
id = "two-families-for-facts"
reason = "test: factual evidence needs two independent families"
match = { purpose = ["FACTUAL_EVIDENCE"], independent_families_below = 2 }
effect = { admit = false }
"""
    )


def test_evidence_recorded_after_known_at_does_not_count(store):
    conv, a = _verified(store, "a", "Q2 revenue was $43.8M.")
    before = max(datetime.fromisoformat(c.sys_from) for c in store.claims(tenant="acme"))
    store.add_source("filing", kind="DOCUMENT", uri="https://example.com/10-q")
    store.add_evidence(a, source="filing", quote="Q2 revenue was $43.8M.")
    known = before.isoformat(timespec="microseconds")
    assert _families(store, a) == [2]
    assert _families(store, a, known_at=known) == [1]

    def factual(**kw):
        with MemoryReader(store, clock=Clock(), policy=_two_families_policy(),
                          transcripts=Transcripts(conv)) as reader:  # fmt: skip
            return reader.read("Q2 revenue", tenant="acme", subject="u1", caller=AGENT,
                               purpose="FACTUAL_EVIDENCE", **kw)  # fmt: skip

    assert [i.claim_id for i in factual().items] == [a]
    then = factual(known_at=before)
    assert then.items == []
    assert {e.claim_id: e.rule_id for e in then.excluded}[a] == "two-families-for-facts"
    # A source revoked now is not admissible for a look back either (fail closed) ...
    db = sqlite3.connect(store.backend.location)
    db.execute("UPDATE sources SET status = 'REVOKED' WHERE source_id = 'filing'")
    db.commit()
    assert [i.claim_id for i in factual().items] == []
    # ... but evidence not yet known at known_at is not looked at at all.
    with MemoryReader(store, clock=Clock(), transcripts=Transcripts(conv)) as reader:
        assert [i.claim_id for i in reader.read(
            "Q2 revenue", tenant="acme", subject="u1", caller=AGENT,
            purpose="FACTUAL_EVIDENCE", known_at=before).items] == [a]  # fmt: skip


def test_the_store_keeps_the_admission_evidence_scope_and_the_read_path_judges_it(store):
    conv = conversation(
        "scoped", "git status: working tree clean", "I worked at Acme until March 2024."
    )
    tool = candidate(conv, 0, origin_kind=Origin.TOOL, memory_type=MemoryType.TOOL_OBSERVATION,
                     verification_state=VerificationState.VERIFIED_OBSERVATION_OF_EVENT,
                     kind="OBSERVATION")  # fmt: skip
    stale = candidate(conv, 1, origin_kind=Origin.USER, memory_type=MemoryType.WORLD_PROPOSITION,
                      verification_state=VerificationState.UNVERIFIED,
                      temporal=TemporalScope(kind=TemporalKind.PAST, valid_to="2024-03"))  # fmt: skip
    decisions = admit([tool, stale])
    assert [d.evidence_as_of for d in decisions] == ["2026-06-01T10:00:00", "2024-03"]
    result = handmade(conv, [tool, stale]).model_copy(update={"decisions": decisions})
    stored = store.ingest(result).stored
    by_external = dict(zip([c.memory_id for c in (tool, stale)], stored, strict=True))
    ids = [f"{by_external[f'mem_scoped_{i}']}:c1" for i in (0, 1)]
    db = sqlite3.connect(store.backend.location)
    marks = ",".join("?" * len(ids))
    rows = dict(db.execute(
        f"SELECT claim_id, evidence_as_of FROM claims WHERE claim_id IN ({marks})", ids))  # fmt: skip
    assert [rows[c] for c in ids] == ["2026-06-01T10:00:00", "2024-03"]
    hits = load_hits(db, "memory_current", [], ids)
    assert [hits[c].view.evidence_as_of for c in ids] == ["2026-06-01T10:00:00", "2024-03"]
    assert store.rebuild().identical  # kept in the events, so a rebuild keeps it too
