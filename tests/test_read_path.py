"""The read path end to end on a real memory store: access before relevance, admissibility
after, the seed's exercises 5 and 6, the audit record, and what never leaks."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import datetime
from pathlib import Path

import pytest
from read_store_helpers import Clock, Transcripts, candidate, conversation, handmade, pipeline

from extractor import MemoryStore
from extractor.errors import ReadDenied, StoreError
from extractor.read import Caller, HashingEmbedder, MemoryReader, VectorRanker, parse_context
from extractor.read.rank import EligibleSlice, HybridRanker, LexicalRanker
from extractor.store import store_memory_id
from extractor.vocab import Capability, Origin, VerificationState

AGENT = Caller(id="agent:support")
USER = Caller(id="user:u1", acting_for="u1")


@pytest.fixture
def store(tmp_path: Path):
    with MemoryStore(tmp_path / "memory.db", clock=Clock()) as s:
        yield s


def _reader(store, **kw):
    return MemoryReader(store, clock=Clock(), **kw)


def _read(reader, query, caller, purpose, **kw):
    """One read of subject u1 of tenant acme."""
    return reader.read(query, tenant="acme", subject="u1", caller=caller, purpose=purpose, **kw)


class Spy:
    """A ranker that records everything it is given, then ranks lexically."""

    name = "spy"

    def __init__(self, db):
        self.inner = LexicalRanker(db, index="claims_fts")
        self.seen: set[str] = set()
        self.texts: set[str] = set()

    def rank(self, query, eligible: EligibleSlice, k):
        self.seen |= set(eligible.claim_ids)
        self.texts |= set(eligible.texts(list(eligible.claim_ids)).values())
        return self.inner.rank(query, eligible, k)


def _exercise5(store):
    conv = conversation(
        "ex5",
        "Q3 revenue was approximately $46 million, Q3 revenue $46 million.",
        "Q3 revenue was $43.8 million according to the filing.",
    )
    quarantined = candidate(
        conv,
        0,
        origin_kind=Origin.USER,
        verification_state=VerificationState.UNVERIFIED,
        memory_type="WORLD_PROPOSITION",
    )
    verified = candidate(conv, 1)
    store.ingest(handmade(conv, [quarantined, verified]))
    return conv, _claim_id("acme", quarantined.memory_id), _claim_id("acme", verified.memory_id)


def _claim_id(tenant: str, candidate_id: str) -> str:
    """The store's claim id of a candidate's one claim (memory ids are tenant-scoped)."""
    return store_memory_id(tenant, candidate_id) + ":c1"


def test_exercise_5_relevance_versus_admissibility(store):
    conv, q_id, v_id = _exercise5(store)
    db = sqlite3.connect(store.backend.location)
    everything = LexicalRanker(db, index="claims_fts").rank(
        "What was Q3 revenue?", EligibleSlice((q_id, v_id), lambda ids: {}), 2
    )
    assert [h.claim_id for h in everything] == [
        q_id,
        v_id,
    ]  # highest similarity: the quarantined one
    claims = {c.claim_id: c for c in store.claims(tenant="acme", subject="u1")}
    assert (claims[q_id].lifecycle_state, claims[q_id].verification_state) == (
        "QUARANTINED",
        "UNVERIFIED",
    )
    assert (claims[v_id].lifecycle_state, claims[v_id].verification_state) == ("ACTIVE", "VERIFIED")

    with _reader(store, transcripts=Transcripts(conv)) as reader:
        factual = _read(reader, "What was Q3 revenue?", AGENT, "FACTUAL_EVIDENCE")
        personal = _read(reader, "What was Q3 revenue?", AGENT, "PERSONALIZATION")
    assert [i.claim_id for i in factual.items] == [v_id]
    assert factual.items[0].decision.evidence == "VERIFIED"
    # A message is not a named source, so the verified memory shows its origin (the plain
    # "[source: ...]" form is for named sources; see test_read_serialize).
    assert factual.text == (
        '<memory origin="EXTERNAL_SOURCE" verification="VERIFIED" use="FACTUAL_EVIDENCE">'
        "Q3 revenue was $43.8 million according to the filing.</memory>"
    )
    stage1 = {e.claim_id: e for e in factual.excluded}
    assert stage1[q_id].stage == "ELIGIBILITY" and stage1[q_id].rule_id == "purpose-forbidden"
    # The personalization read may differ: the quarantined memory allows it and ranks first.
    assert [i.claim_id for i in personal.items] == [q_id, v_id]
    assert personal.text.split("\n")[0].startswith(
        '<memory origin="USER" verification="UNVERIFIED" use="PERSONALIZATION">Q3 revenue was approximately'
    )


def test_exercise_6_assertion_event_and_proposition_answer_purposes_differently(store):
    r = pipeline("ex6", "My manager is Alice.")
    conv = conversation("ex6", "My manager is Alice.")
    store.ingest(r)
    event, proposition = (_claim_id("acme", c.memory_id) for c in r.candidates)
    assert [c.memory_type for c in r.candidates] == ["ASSERTION_EVENT", "WORLD_PROPOSITION"]
    with _reader(store, transcripts=Transcripts(conv)) as reader:
        factual = _read(reader, "manager Alice", AGENT, "FACTUAL_EVIDENCE")
        personal = _read(reader, "manager Alice", AGENT, "PERSONALIZATION")
    assert [i.claim_id for i in factual.items] == [event]
    assert factual.text == (
        '<memory origin="USER" verification="VERIFIED_OBSERVATION_OF_EVENT" use="FACTUAL_EVIDENCE">'
        'User stated: "My manager is Alice."</memory>'
    )
    assert {e.claim_id: e.rule_id for e in factual.excluded}[proposition] == "purpose-forbidden"
    assert {i.claim_id for i in personal.items} == {event, proposition}
    lines = parse_context(personal.text, purpose="PERSONALIZATION")
    by_content = {line.content: line for line in lines}
    assert by_content["User's manager is Alice."].verification == "UNVERIFIED"
    assert by_content["User's manager is Alice."].use == "PERSONALIZATION"


def test_a_spying_ranker_never_sees_an_ineligible_memory(store):
    _, q_id, v_id = _exercise5(store)
    store.ingest(pipeline("other-subject", "Q3 revenue was $99 million.", user="u2"))
    store.ingest(pipeline("other-tenant", "Q3 revenue was $77 million.", tenant="globex"))
    spies = []

    def factory(db):
        spies.append(Spy(db))
        return spies[-1]

    with _reader(store, ranker=factory) as reader:
        result = _read(reader, "Q3 revenue", AGENT, "FACTUAL_EVIDENCE")
    spy = spies[0]
    eligible = {
        c.claim_id
        for c in store.claims(tenant="acme", subject="u1")
        if "FACTUAL_EVIDENCE" in c.allowed_uses and c.lifecycle_state == "ACTIVE"
    }
    assert spy.seen == eligible == {v_id}
    assert not any("99" in t or "77" in t or "approximately" in t for t in spy.texts)
    assert result.eligible_count == 1
    # stage 1 reports the subject's own ineligible match; other subjects and tenants are not
    # even reported in the audit (v is excluded later: no transcript to dereference)
    assert {e.claim_id for e in result.excluded if e.stage == "ELIGIBILITY"} == {q_id}
    assert {e.claim_id for e in result.excluded} == {q_id, v_id}


def test_every_read_is_recorded_with_the_stages_each_claim_reached(store):
    conv, q_id, v_id = _exercise5(store)
    with _reader(store, transcripts=Transcripts(conv)) as reader:
        result = _read(reader, "Q3 revenue", AGENT, "PERSONALIZATION", k=1)
    db = sqlite3.connect(store.backend.location)
    (row,) = db.execute(
        "SELECT read_id, tenant, caller, purpose, query_hash, read_policy_id FROM reads"
    ).fetchall()
    assert row[:4] == (result.read_id, "acme", "agent:support", "PERSONALIZATION")
    assert row[4].startswith("sha256:") and "Q3" not in row[4] and row[5] == "memory-read"
    items = db.execute(
        "SELECT claim_id, stage, rank, rules_fired FROM read_items ORDER BY claim_id, stage"
    ).fetchall()
    stages = {(c, s) for c, s, _, _ in items}
    assert stages == {
        (q_id, "RETRIEVED"),
        (q_id, "ADMITTED"),
        (q_id, "SERIALIZED"),
        (v_id, "RETRIEVED"),
    }
    assert all(isinstance(json.loads(r), list) for *_, r in items)
    assert {e.claim_id: e.stage for e in result.excluded}[v_id] == "RELEVANCE"


def test_a_token_budget_excludes_whole_items_and_records_them(store):
    _exercise5(store)
    with _reader(store) as reader:
        result = _read(reader, "Q3 revenue", AGENT, "PERSONALIZATION", token_budget=50)
    assert len(result.items) == 1 and result.tokens <= 50
    assert [e.rule_id for e in result.excluded if e.stage == "SERIALIZATION"] == ["token-budget"]


def test_an_unauthorized_caller_reads_nothing(store):
    _exercise5(store)
    limited = Caller(id="agent:ads", purposes=frozenset({"PERSONALIZATION"}))
    with (
        _reader(store) as reader,
        pytest.raises(
            ReadDenied, match="'agent:ads' is not authorized to read for FACTUAL_EVIDENCE"
        ),
    ):
        _read(reader, "Q3", limited, "FACTUAL_EVIDENCE")
    db = sqlite3.connect(store.backend.location)
    assert db.execute("SELECT count(*) FROM reads").fetchone() == (0,)


def test_third_party_personal_data_is_read_only_for_the_user_who_shared_it(store):
    r = pipeline("tp", "My sister's phone number is +44 20 7946 0958.")
    store.ingest(r)
    scoped = [
        c
        for c in store.claims(tenant="acme", subject="u1")
        if "THIRD_PARTY_PERSONAL_DATA" in c.flags
    ]
    assert scoped
    with _reader(store) as reader:
        agent = _read(reader, "sister phone", AGENT, "PERSONALIZATION")
        user = _read(reader, "sister phone", USER, "PERSONALIZATION")
    ids = {c.claim_id for c in scoped}
    assert not ids & {i.claim_id for i in agent.items}
    assert {e.rule_id for e in agent.excluded if e.claim_id in ids} == {"third-party-personal-data"}
    assert ids <= {i.claim_id for i in user.items}


def test_high_risk_reads_dereference_evidence_and_fail_closed(store):
    conv, _, v_id = _exercise5(store)
    tampered = conversation(
        "ex5",
        "Q3 revenue was approximately $46 million, Q3 revenue $46 million.",
        "Q3 revenue was $53.8 million according to the filing.",
    )

    class Lying(Transcripts):
        def transcript(self, conversation_hash):
            return tampered

    def factual(**kw):
        with _reader(store, **kw) as reader:
            return _read(reader, "Q3 revenue", AGENT, "FACTUAL_EVIDENCE")

    assert [i.claim_id for i in factual(transcripts=Transcripts(conv)).items] == [v_id]
    for kw, status in [
        ({}, "NOT_CHECKED"),
        ({"transcripts": Transcripts()}, "MISSING"),
        ({"transcripts": Lying()}, "HASH_MISMATCH"),
    ]:
        result = factual(**kw)
        assert result.items == [] and result.text == ""
        (e,) = [e for e in result.excluded if e.claim_id == v_id]
        assert (e.stage, e.rule_id) == ("ADMISSIBILITY", "high-risk-dereferences-evidence"), status
    db = sqlite3.connect(store.backend.location)
    db.execute("UPDATE sources SET status = 'REVOKED'")
    db.commit()
    result = factual(transcripts=Transcripts(conv))
    assert result.items == []


def test_a_read_of_a_memory_only_store_is_refused_with_a_message():
    with (
        MemoryStore(":memory:") as s,
        pytest.raises(StoreError, match="needs a memory store on a SQLite file"),
    ):
        MemoryReader(s)


def test_system_time_known_at_reads_what_the_store_believed_then(store):
    conv, _, v_id = _exercise5(store)
    first = store.claims(tenant="acme", subject="u1")
    known = max(datetime.fromisoformat(c.sys_from) for c in first)
    db = sqlite3.connect(store.backend.location)
    # A later maintenance version (as revocation writes it): v is no longer ACTIVE.
    db.execute(
        "UPDATE claim_versions SET sys_to = '2026-07-02T00:00:00.000000+00:00' WHERE claim_id = ?",
        (v_id,),
    )
    db.execute(
        "INSERT INTO claim_versions SELECT claim_id, version + 1, '2026-07-02T00:00:00.000000+00:00', NULL, "
        "'NEEDS_REVALIDATION', verification_state, allowed_uses, forbidden_uses, allowed_mask, forbidden_mask, "
        "flags, support_label, valid_from, valid_to, superseded_at, superseded_by, 'test', cause_seq, cause_kind "
        "FROM claim_versions WHERE claim_id = ?",
        (v_id,),
    )
    db.commit()
    with _reader(store, transcripts=Transcripts(conv)) as reader:
        now = _read(reader, "Q3 revenue", AGENT, "FACTUAL_EVIDENCE")
        then = _read(reader, "Q3 revenue", AGENT, "FACTUAL_EVIDENCE", known_at=known)
    assert now.items == []
    assert [i.claim_id for i in then.items] == [v_id]


def test_revocation_reports_the_reads_that_consumed_the_claim_and_later_reads_exclude_it(
    tmp_path: Path,
):
    clock = Clock()
    with MemoryStore(tmp_path / "memory.db", clock=clock) as store:
        _, q_id, _ = _exercise5(store)
        with MemoryReader(store, clock=clock) as reader:
            before = _read(reader, "Q3 revenue", AGENT, "PERSONALIZATION")
            assert q_id in {i.claim_id for i in before.items}
            report = store.revoke(q_id, reason="the rumour was retracted")
            after = _read(reader, "Q3 revenue", AGENT, "PERSONALIZATION")
    exposed = {(e.read_id, e.claim_id, e.stage) for e in report.exposures}
    assert exposed == {(before.read_id, q_id, "ADMITTED"), (before.read_id, q_id, "SERIALIZED")}
    assert q_id not in {i.claim_id for i in after.items}
    assert {e.claim_id: e.stage for e in after.excluded}[q_id] == "ELIGIBILITY"


def test_decide_explains_any_claim_without_reading_it(store):
    conv, q_id, v_id = _exercise5(store)
    store.ingest(pipeline("elsewhere", "I live in Lisbon.", user="u2"))
    with _reader(store, transcripts=Transcripts(conv)) as reader:
        ids = [c.claim_id for c in store.claims(tenant="acme")]
        verdict = reader.decide(
            ids, tenant="acme", subject="u1", caller=AGENT, purpose="FACTUAL_EVIDENCE"
        )
    assert set(verdict) == {q_id, v_id}  # the other subject's claims are left out
    assert verdict[q_id].rule_id == "purpose-forbidden"
    assert verdict[v_id].admissible and verdict[v_id].evidence == "VERIFIED"
    db = sqlite3.connect(store.backend.location)
    assert db.execute("SELECT count(*) FROM reads").fetchone() == (0,)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"purpose": "EVERYTHING"}, "purpose 'EVERYTHING' is not one of PERSONALIZATION"),
        ({"k": 0}, "invalid read request: k: Input should be greater than or equal to 1"),
        ({"tenant": ""}, "invalid read request: tenant"),
    ],
)
def test_a_bad_read_request_names_the_argument(store, kw, message):
    args = {"tenant": "acme", "subject": "u1", "caller": AGENT, "purpose": "PERSONALIZATION", **kw}
    with _reader(store) as reader, pytest.raises(StoreError, match=message):
        reader.read("Q3", **args)


def test_with_a_one_percent_eligible_slice_the_top_k_is_exact_search_over_that_slice(store):
    rng = random.Random(5)
    words = [
        "revenue",
        "quarter",
        "manager",
        "alice",
        "tea",
        "lisbon",
        "piano",
        "report",
        "dog",
        "jazz",
    ]
    texts = [" ".join(rng.choice(words) for _ in range(6)) for _ in range(500)]
    conv = conversation("slice", *texts)
    eligible_idx = set(rng.sample(range(500), 5))  # 1%: verified, ACTIVE; the rest quarantined
    specs = [
        candidate(conv, i)
        if i in eligible_idx
        else candidate(
            conv, i, origin_kind=Origin.USER, verification_state=VerificationState.UNVERIFIED
        )
        for i in range(500)
    ]
    store.ingest(handmade(conv, specs))
    embedder = HashingEmbedder(64)
    with _reader(store, ranker=lambda db: VectorRanker(embedder)) as reader:
        result = _read(reader, "alice manager report", AGENT, "CONVERSATIONAL_CONTEXT", k=3)
    assert result.eligible_count == 5
    q = embedder.embed(["alice manager report"])[0]
    exact = sorted(
        (
            -sum(a * b for a, b in zip(embedder.embed([texts[i]])[0], q, strict=True)),
            _claim_id("acme", f"mem_slice_{i}"),
        )
        for i in eligible_idx
    )[:3]
    assert [i.claim_id for i in result.items] == [c for _, c in exact]


def test_after_the_store_erases_a_conversation_no_read_returns_or_reports_its_content(
    tmp_path: Path,
):
    clock = Clock()
    with MemoryStore(tmp_path / "memory.db", clock=clock) as store:
        store.ingest(pipeline("c1", "My sister's name is Zelda and I live in Lisbon."))
        store.ingest(pipeline("c2", "I prefer tea in Lisbon."))
        with MemoryReader(store, clock=clock) as reader:
            before = _read(reader, "Zelda Lisbon tea", USER, "PERSONALIZATION")
            assert "Zelda" in before.text
        store.erase(conversation="c1")
        with MemoryReader(store, clock=clock) as reader:
            after = _read(reader, "Zelda Lisbon tea", USER, "PERSONALIZATION")
    assert "Zelda" not in after.text
    assert not any("Zelda" in i.content for i in after.items)
    assert "Zelda" not in json.dumps([e.model_dump(mode="json") for e in after.excluded])
    assert "tea" in after.text


def test_an_erased_memory_s_vector_survives_in_no_cache_and_verify_erasure_checks_it(
    tmp_path: Path,
):
    clock = Clock()
    embedder = HashingEmbedder(64)
    rankers: list[VectorRanker] = []

    def hybrid(db):
        rankers.append(VectorRanker(embedder, db=db))
        return HybridRanker([LexicalRanker(db, index="claims_fts"), rankers[-1]])

    def ask(reader):
        return _read(reader, "Zelda Lisbon tea", USER, "PERSONALIZATION")

    with MemoryStore(tmp_path / "memory.db", clock=clock) as store:
        store.ingest(pipeline("c1", "My sister's name is Zelda and I live in Lisbon."))
        store.ingest(pipeline("c2", "I prefer tea in Lisbon."))
        erased = {c.claim_id for c in store.claims(tenant="acme") if "Zelda" in c.content}
        db = sqlite3.connect(store.backend.location)
        with MemoryReader(store, clock=clock, ranker=hybrid) as reader:
            assert "Zelda" in ask(reader).text
            (vectors,) = rankers
            assert erased <= vectors.cached
            stored = {r[0] for r in db.execute("SELECT claim_id FROM claim_embeddings")}
            assert erased <= stored  # persisted in the store file
            report = store.erase(conversation="c1")  # through the store's own connection
            assert set(report.erased_claims) >= erased and report.residue == []
            left = {r[0] for r in db.execute("SELECT claim_id FROM claim_embeddings")}
            assert not erased & left and left  # the store deleted them; the others stay
            after = ask(reader)  # the reader sees the erasure epoch move and drops its copies
            assert not erased & vectors.cached and "tea" in after.text
        assert store.verify_erasure(["My sister's name is Zelda"]).embeddings_clean
        # A vector of an erased claim left behind (say, by an older reader) is residue.
        db.execute("INSERT INTO claim_embeddings VALUES (?, 'm', 1, x'00000000')", (min(erased),))
        db.commit()
        check = store.verify_erasure(["My sister's name is Zelda"])
        assert not check.embeddings_clean and not check.clean
        assert any("claim_embeddings" in r for r in check.residue)


def test_a_reader_that_keeps_the_eligible_slice_sees_every_change_of_the_store(tmp_path: Path):
    clock = Clock()
    with MemoryStore(tmp_path / "memory.db", clock=clock) as store:
        _, q_id, v_id = _exercise5(store)
        with MemoryReader(store, clock=clock, embedder=HashingEmbedder(64)) as reader:

            def ids():
                result = _read(reader, "Q3 revenue million", AGENT, "PERSONALIZATION")
                return [i.claim_id for i in result.items], result.eligible_count

            assert ids() == ids()  # the second read reuses the slice: same answer
            assert set(ids()[0]) == {q_id, v_id}
            store.revoke(q_id, reason="retracted")  # another connection writes
            assert ids() == ([v_id], 1)
            # a result decided under another policy re-admits the store first: the reader sees
            # that too (the verified claim keeps PERSONALIZATION only if the new policy says so)
            store.ingest(pipeline("later", "Q3 revenue was $44 million, my manager said."))
            found, count = ids()
            still = Capability.PERSONALIZATION in store.claim(v_id).allowed_uses
            assert (v_id in found) == still and len(found) > 1 and count == len(found)
