"""Invariants of the read path over a store with every kind of state, across tenants, subjects,
purposes, as-of times, callers and erasures: no read ever returns a memory for a purpose it
forbids, and nothing ineligible ever reaches a ranker."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import datetime

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from read_store_helpers import Clock, Transcripts, candidate, conversation, handmade, pipeline

from extractor import MemoryStore
from extractor.read import CONTEXT_ONLY, Caller, MemoryReader, load_read_policy, parse_context
from extractor.read.rank import LexicalRanker
from extractor.vocab import Capability, Origin, VerificationState

WORDS = ["revenue", "manager", "alice", "lisbon", "tea", "phone", "sister", "report", "piano", "q3"]
TEXTS = [
    "My manager is Alice.",
    "I live in Lisbon.",
    "I prefer tea to coffee.",
    "My sister's phone number is +44 20 7946 0958.",
    "Q3 revenue was approximately $46 million.",
    "I play the piano every evening.",
    "The report is due on Friday.",
]
POLICY = load_read_policy()
STATES = [
    "ACTIVE",
    "PROVISIONAL",
    "QUARANTINED",
    "REVOKED",
    "NEEDS_REVALIDATION",
    "SUPERSEDED",
    "ARCHIVED",
]


class Spy:
    name = "spy"

    def __init__(self, db):
        self.inner = LexicalRanker(db, index="claims_fts")
        self.seen: list[str] = []

    def rank(self, query, eligible, k):
        self.seen.extend(eligible.claim_ids)
        return self.inner.rank(query, eligible, k)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Two tenants x two subjects, real pipeline memories and hand-made verified ones, then
    random lifecycle changes, supersessions, unsupported claims and erasures (as the store's
    maintenance writes them)."""
    rng = random.Random(12)
    path = tmp_path_factory.mktemp("props") / "memory.db"
    transcripts = Transcripts()
    with MemoryStore(path, clock=Clock()) as store:
        for tenant in ("acme", "globex"):
            for user in ("u1", "u2"):
                for n, text in enumerate(rng.sample(TEXTS, 5)):
                    store.ingest(pipeline(f"{tenant}-{user}-{n}", text, tenant=tenant, user=user))
                conv = conversation(
                    f"{tenant}-{user}-v",
                    *(f"Verified: {t}" for t in rng.sample(TEXTS, 3)),
                    tenant=tenant,
                    user=user,
                )
                transcripts.add(conv)
                specs = [
                    candidate(conv, i)
                    if i % 2 == 0
                    else candidate(
                        conv,
                        i,
                        origin_kind=Origin.USER,
                        verification_state=VerificationState.UNVERIFIED,
                    )
                    for i in range(3)
                ]
                store.ingest(handmade(conv, specs))
    db = sqlite3.connect(path)
    ids = [r[0] for r in db.execute("SELECT claim_id FROM claims ORDER BY claim_id")]
    for claim_id in rng.sample(ids, len(ids) // 3):
        change = rng.choice(["state", "erase", "supersede", "out", "valid"])
        if change == "state":
            db.execute(
                "UPDATE claim_versions SET lifecycle_state = ? WHERE claim_id = ?",
                (rng.choice(STATES), claim_id),
            )
        elif change == "erase":
            db.execute("UPDATE claims SET erased = 1, content = '' WHERE claim_id = ?", (claim_id,))
        elif change == "supersede":
            db.execute(
                "UPDATE claim_versions SET lifecycle_state = 'SUPERSEDED', superseded_by = ?, "
                "valid_from = '2026-01-01T00:00:00', valid_to = '2026-06-01T00:00:00' WHERE claim_id = ?",
                (ids[0], claim_id),
            )
        elif change == "out":
            db.execute(
                "UPDATE claim_versions SET support_label = 'OUT' WHERE claim_id = ?", (claim_id,)
            )
        else:
            db.execute(
                "UPDATE claim_versions SET valid_from = '2026-09-01T00:00:00', valid_to = "
                "'2026-10-01T00:00:00' WHERE claim_id = ?",
                (claim_id,),
            )
    db.commit()
    state = {
        r[0]: r
        for r in db.execute(
            "SELECT claim_id, tenant, subject, lifecycle_state, allowed_uses, forbidden_uses, erased, support_label, "
            "superseded_by, flags FROM memory_current"
        )
    }
    db.close()
    return path, transcripts, state


#: A read request of either tenant, for either subject, for any purpose, at any time.
READ_REQUESTS = {
    "tenant": st.sampled_from(["acme", "globex"]),
    "subject": st.sampled_from(["u1", "u2"]),
    "purpose": st.sampled_from(list(Capability)),
    "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    "as_of": st.one_of(
        st.none(), st.datetimes(min_value=datetime(2025, 1, 1), max_value=datetime(2027, 1, 1))
    ),
    "acting": st.booleans(),
    "k": st.integers(1, 12),
}


def _allowed(row, use: str) -> bool:
    return use in json.loads(row[4]) and use not in json.loads(row[5])


@settings(max_examples=examples(20))
@given(**READ_REQUESTS)
def test_no_read_returns_a_memory_for_a_purpose_it_forbids(
    world, tenant, subject, purpose, words, as_of, acting, k
):
    path, transcripts, state = world
    spies = []

    def factory(db):
        spies.append(Spy(db))
        return spies[-1]

    caller = Caller(id="prop", acting_for=subject if acting else None)
    with MemoryReader(path, ranker=factory, transcripts=transcripts, clock=Clock()) as reader:
        result = reader.read(
            " ".join(words),
            tenant=tenant,
            subject=subject,
            caller=caller,
            purpose=purpose,
            as_of=as_of,
            k=k,
        )
    lifecycles = {str(s) for s in POLICY.purpose(purpose).lifecycles}
    for claim_id in spies[0].seen:  # stage 1 held: only eligible claims reached the ranker
        row = state[claim_id]
        assert (row[1], row[2]) == (tenant, subject) and row[6] == 0 and row[7] == "IN"
        assert _allowed(row, purpose.value)
        assert row[3] in lifecycles or (row[3] == "SUPERSEDED" and as_of is not None)
        assert row[8] is None or as_of is not None
        if "THIRD_PARTY_PERSONAL_DATA" in row[9]:
            assert acting
    assert len(result.items) <= k
    for item in result.items:
        row = state[item.claim_id]
        assert (row[1], row[2]) == (tenant, subject) and row[6] == 0
        assert item.use in (purpose.value, CONTEXT_ONLY)
        assert _allowed(row, purpose.value)
        if item.use == CONTEXT_ONLY:
            assert _allowed(row, "CONVERSATIONAL_CONTEXT")
    # the context is exactly the items, with their restrictions
    lines = parse_context(result.text, purpose=purpose.value)
    assert [line.use for line in lines] == [i.use for i in result.items]
    assert [line.content for line in lines] == [i.content for i in result.items]
    excluded_other = [e for e in result.excluded if state[e.claim_id][1:3] != (tenant, subject)]
    assert excluded_other == []


@settings(max_examples=examples(25))
@given(**READ_REQUESTS)
def test_replay_under_the_same_policy_reproduces_every_recorded_decision(
    world, tenant, subject, purpose, words, as_of, acting, k
):
    path, transcripts, _ = world
    caller = Caller(id="prop", acting_for=subject if acting else None)
    with MemoryReader(path, transcripts=transcripts, clock=Clock()) as reader:
        result = reader.read(" ".join(words), tenant=tenant, subject=subject, caller=caller,
                             purpose=purpose, as_of=as_of, k=k)  # fmt: skip
        report = reader.replay(result.read_id)
    assert report.changed == []
    assert (
        report.admitted_replayed == report.admitted_recorded == [i.claim_id for i in result.items]
    )
    decided = {i.claim_id: i.decision for i in result.items}
    for item in report.items:
        assert item.replayed == item.recorded
        if item.claim_id in decided:  # the full decision, rules and all
            assert item.decision == decided[item.claim_id]
    judged_out = {e.claim_id for e in result.excluded if e.stage in ("ADMISSIBILITY", "RELEVANCE")}
    assert {i.claim_id for i in report.items} == set(decided) | judged_out
