"""The memory store's first job: persist what the write gate admitted, and nothing else."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from store_helpers import Clock, result, user_says

from extractor import MemoryStore, StoreError
from extractor.errors import UnknownMemory
from extractor.hashing import canonical_json
from extractor.store import (
    PROJECTION_TABLES,
    DerivedClaim,
    migration_names,
    migrations,
    store_memory_id,
)
from extractor.vocab import LifecycleState


def test_ingest_persists_exactly_the_decisions_that_say_persist():
    r = result(
        "c1",
        ("user", "I live in Paris. I prefer tea.", "2026-06-01T10:00:00"),
        ("assistant", "Q3 revenue was approximately $46 million."),
    )
    persisted = {d.memory_id for d in r.decisions if d.persist}
    with MemoryStore(clock=Clock()) as store:
        report = store.ingest(r, tenant="acme", subject="u1")
        claims = store.claims()
    assert set(report.stored) == {store_memory_id("acme", m) for m in persisted}
    assert {c.external_id for c in claims} == persisted
    decisions = {d.memory_id: d for d in r.decisions}
    for c in claims:
        d = decisions[c.external_id]
        assert c.claim_id == c.memory_id + ":c1"
        assert c.lifecycle_state == d.lifecycle_state
        assert c.allowed_uses == d.allowed_uses
        assert c.tenant == "acme" and c.subject == "u1"
        assert c.support_label == "IN"


def test_model_output_is_stored_quarantined_never_as_evidence():
    r = result("c1", ("assistant", "Q3 revenue was approximately $46 million."))
    with MemoryStore(clock=Clock()) as store:
        store.ingest(r)
        (claim,) = store.claims()
    assert claim.origin_kind == "MODEL_OUTPUT"
    assert claim.lifecycle_state == "QUARANTINED"
    assert "FACTUAL_EVIDENCE" not in claim.allowed_uses
    assert claim.tenant == "default"


def test_a_decision_with_persist_false_is_never_stored():
    r = user_says("c1", "I live in Paris.")
    first = r.decisions[0].model_copy(
        update={"persist": False, "lifecycle_state": LifecycleState.EPHEMERAL}
    )
    r = r.model_copy(update={"decisions": [first, *r.decisions[1:]]})
    with MemoryStore(clock=Clock()) as store:
        report = store.ingest(r)
        ids = {c.external_id for c in store.claims()}
    assert report.not_persisted == [first.memory_id]
    assert first.memory_id not in ids and ids


def test_ingesting_the_same_result_twice_changes_nothing(tmp_path: Path):
    r = user_says("c1", "I live in Paris.")
    with MemoryStore(tmp_path / "m.db", clock=Clock()) as store:
        first = store.ingest(r, subject="u1")
        before = (store.state_hash(), len(list(store.events())))
        second = store.ingest(r, subject="u1")
        after = (store.state_hash(), len(list(store.events())))
    assert first.stored and second.stored == []
    assert second.already_stored == first.stored and second.event_seq is None
    assert before == after


def test_tenant_and_subject_scope_every_claim():
    r = user_says("c1", "I live in Paris.")
    with MemoryStore(clock=Clock()) as store:
        store.ingest(r, tenant="t1", subject="s1")
        store.ingest(user_says("c2", "I prefer tea."), tenant="t2")
        by_tenant = {(c.tenant, c.subject) for c in store.claims()}
    assert by_tenant == {("t1", "s1"), ("t2", None)}


def test_the_same_content_in_two_tenants_gets_two_memories_and_neither_sees_the_other():
    r = user_says("c1", "I live in Paris.")
    with MemoryStore(clock=Clock()) as store:
        a = store.ingest(r, tenant="a", subject="u1")
        b = store.ingest(r, tenant="b", subject="u1")
        assert a.stored and b.stored and not set(a.stored) & set(b.stored)
        assert store.ingest(r, tenant="b").already_stored == b.stored  # idempotent per tenant
        for tenant, report in (("a", a), ("b", b)):
            mine = store.claims(tenant=tenant)
            assert {c.memory_id for c in mine} == set(report.stored)
            assert {c.external_id for c in mine} == {d.memory_id for d in r.decisions if d.persist}
            # the result-file id resolves inside the tenant, never to the other tenant's memory
            candidate = r.candidates[0].memory_id
            assert [c.memory_id for c in store.claims(tenant=tenant, memory_id=candidate)] == [
                store_memory_id(tenant, candidate)
            ]
        # another tenant's memory is not there for a caller of this tenant
        assert store.claims(tenant="b", memory_id=a.stored[0]) == []


def test_a_tenants_own_ids_resolve_first_and_another_tenants_are_unknown():
    from read_store_helpers import candidate, conversation, handmade

    with MemoryStore(clock=Clock()) as store:
        b_conv = conversation("b-chat", "My manager is Bob.", "I like tea.", tenant="b")
        b = store.ingest(handmade(b_conv, [candidate(b_conv, 0), candidate(b_conv, 1)]), tenant="b")
        theirs, other = b.stored
        # tenant a's own memory whose id outside the store happens to spell b's store id
        a_conv = conversation("a-chat", "My manager is Alice.", tenant="a")
        spelled = handmade(a_conv, [candidate(a_conv, 0, memory_id=theirs)])
        (mine,) = store.ingest(spelled, tenant="a").stored
        assert mine != theirs
        assert store.resolve(theirs, tenant="a") == mine  # a's own id, not b's memory
        assert [c.memory_id for c in store.claims(tenant="a", memory_id=theirs)] == [mine]
        # b's ids are, to tenant a, exactly ids that do not exist
        for ref in (other, other + ":c1", "mem_00000000000000000000:c1"):
            assert store.resolve(ref, tenant="a") == ref
            assert store.claims(tenant="a", memory_id=ref) == []
            with pytest.raises(UnknownMemory) as err:
                store.erase(memory_id=ref, tenant="a")
            assert "tenant" not in str(err.value)
        assert store.claim(other + ":c1").content  # b's memory is untouched
        assert store.resolve(theirs, tenant="b") == theirs


def test_no_error_names_or_hints_at_another_tenant():
    r = user_says("c1", "I live in Paris.")
    with MemoryStore(clock=Clock()) as store:
        a = store.ingest(r, tenant="tenant-a", subject="u1")
        b = store.ingest(user_says("c2", "I prefer tea."), tenant="tenant-b", subject="u2")
        theirs = a.stored[0] + ":c1"
        report = store.derive([DerivedClaim(content="User lives in Paris.", requires=[theirs])],
                              produced_by="summarizer", tenant="tenant-b")  # fmt: skip
        (rejected,) = report.rejected
        assert rejected.code == "PARENT_UNKNOWN" and "tenant-a" not in rejected.message
        assert "tenant" not in rejected.message
        with pytest.raises(UnknownMemory) as err:
            store.support(b.stored[0] + ":c1", by=[theirs], informant="test")
        assert "tenant" not in str(err.value)
        # a result-file id stored for two tenants names neither when asked without a tenant
        store.ingest(r, tenant="tenant-b", subject="u2")
        with pytest.raises(UnknownMemory) as err:
            store.claim(r.candidates[0].memory_id)
        assert "tenant" not in str(err.value)


def test_a_store_written_before_tenant_scoped_ids_keeps_its_ids_and_stays_idempotent(
    tmp_path: Path,
):
    """s007_tenant_scoped_ids on a file whose events predate it: its memories keep their ids
    (external id = memory id), ingesting the same result again adds nothing, rebuild agrees."""
    path = tmp_path / "old.db"
    r = user_says("c1", "I live in Paris. I prefer tea.")
    with MemoryStore(path, clock=Clock()) as store:
        store.ingest(r, tenant="acme", subject="u1")
    db = sqlite3.connect(path, isolation_level=None)
    ((seq, body),) = db.execute("SELECT seq, payload_json FROM memory_events").fetchall()
    payload = json.loads(body)
    for m in payload["memories"]:  # the payload as the store wrote it before s007
        m["memory_id"] = m.pop("external_id")
    db.execute("UPDATE memory_events SET payload_json = ? WHERE seq = ?",
               (canonical_json(payload), seq))  # fmt: skip
    for table in [*PROJECTION_TABLES][::-1]:
        db.execute(f"DELETE FROM {table}")
    db.execute("DROP VIEW memory_current")
    db.execute("DROP VIEW claim_history")
    db.execute("DROP INDEX idx_memories_tenant_external_id")
    db.execute("ALTER TABLE memories DROP COLUMN external_id")
    for statement in migrations._VIEWS:
        db.execute(statement)
    db.execute("DELETE FROM store_migrations WHERE name = 's007_tenant_scoped_ids'")
    db.close()
    with MemoryStore(path, clock=Clock()) as store:
        assert "s007_tenant_scoped_ids" in store.migrations
        store.rebuild()
        persisted = {d.memory_id for d in r.decisions if d.persist}
        claims = store.claims(tenant="acme")
        assert {c.external_id for c in claims} == persisted == {c.external_id for c in claims}
        again = store.ingest(r, tenant="acme", subject="u1")
        assert again.event_seq is None and set(again.already_stored) == persisted
        assert store.rebuild().identical


def test_rebuild_reproduces_the_state_hash_byte_for_byte(tmp_path: Path):
    with MemoryStore(tmp_path / "m.db", clock=Clock()) as store:
        store.ingest(user_says("c1", "I live in Paris. I prefer tea."), subject="u1")
        store.ingest(result("c2", ("assistant", "Q3 revenue was approximately $46 million.")))
        report = store.rebuild()
    assert report.events == 2 and report.identical
    assert report.state_hash_before == report.state_hash_after


def test_a_blank_file_gets_exactly_the_named_migrations_and_tables(tmp_path: Path):
    with MemoryStore(tmp_path / "m.db") as store:
        assert (
            store.migrations
            == migration_names()
            == [
                "s001_memory_store",
                "s002_read_audit",
                "s003_source_derivation",
                "s004_read_replay",
                "s005_claim_evidence_scope",
                "s006_claim_embeddings",
                "s009_claims_by_subject",
                "s007_tenant_scoped_ids",
                "s008_readmit_event",
                "s010_memory_lookup",
            ]
        )
    db = sqlite3.connect(tmp_path / "m.db")
    names = {
        r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")
    }
    expected = {
        "store_migrations",
        "memory_events",
        "memory_current",
        "claim_history",
        "reads",
        "read_items",
        "claim_embeddings",
        "claims_fts",
        *PROJECTION_TABLES,
    }
    assert expected <= names
    assert {n for n in names if not n.startswith("claims_fts_")} == expected
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_reopening_applies_nothing_and_keeps_the_data(tmp_path: Path):
    with MemoryStore(tmp_path / "m.db", clock=Clock()) as store:
        store.ingest(user_says("c1", "I live in Paris."))
        digest = store.state_hash()
    with MemoryStore(tmp_path / "m.db", create=False) as store:
        assert store.backend.applied_now == []  # type: ignore[attr-defined]
        assert store.state_hash() == digest


def test_opening_a_missing_file_without_create_names_the_file(tmp_path: Path):
    with pytest.raises(StoreError, match="no memory store file here"):
        MemoryStore(tmp_path / "nope.db", create=False)


def test_the_fts_index_finds_ingested_claims():
    with MemoryStore(clock=Clock()) as store:
        store.ingest(user_says("c1", "I live in Paris."))
        rows = store.backend.execute(  # type: ignore[attr-defined]
            "SELECT m.claim_id FROM claims_fts JOIN memory_current AS m "
            "ON m.claim_rowid = claims_fts.rowid WHERE claims_fts MATCH 'Paris'"
        )
    assert rows and all(r["claim_id"].endswith(":c1") for r in rows)


def test_valid_time_and_system_time_are_recorded_on_every_claim():
    with MemoryStore(clock=Clock()) as store:
        store.ingest(user_says("c1", "I live in Paris.", "2026-06-01T10:00:00"))
        claims = store.claims()
    event = next(c for c in claims if c.memory_type == "ASSERTION_EVENT")
    assert event.valid_from == "2026-06-01T10:00:00"
    assert event.valid_to == "2026-06-01T10:00:01"  # half-open: the instant it was said
    assert all(c.recorded_at == c.sys_from == "2026-07-01T09:00:01.000000+00:00" for c in claims)
    assert all(c.observed_at == "2026-06-01T10:00:00.000000+00:00" for c in claims)


def test_tenant_and_subject_default_to_the_results_own_fields():
    r = result(
        "c1", ("user", "I live in Paris.", "2026-06-01T10:00:00"), tenant="acme", user_id="u9"
    )
    assert (r.tenant, r.subject) == ("acme", "u9")
    with MemoryStore(clock=Clock()) as store:
        store.ingest(r)
        store.ingest(user_says("c2", "I prefer tea."), tenant="other", subject="u1")
        owners = {(c.tenant, c.subject) for c in store.claims()}
    assert owners == {("acme", "u9"), ("other", "u1")}
