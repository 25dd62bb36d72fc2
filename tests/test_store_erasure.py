"""Privacy erasure is not epistemic revocation (seed §14): the content is gone, byte for byte,
from the store file, its WAL, the FTS index, the events, the ledger and the cache; a
content-free tombstone stays."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import pytest
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import _EXTRACTOR, Clock, user_says

from extractor import MemoryStore, StoreError, UnknownMemory
from extractor.conversation import conversation_from_data
from extractor.ledger import Ledger
from extractor.store import DerivedClaim

SECRET = "42 Wallaby Way in Sydney"


def setup(store: MemoryStore) -> dict[str, str]:
    home = store.ingest(user_says("c-home", f"I live at {SECRET}."), subject="u1").stored
    job = store.ingest(user_says("c-job", "I work at Quillfeather Labs."), subject="u1").stored
    other = store.ingest(user_says("c-other", "I prefer green tea."), subject="u2").stored
    home_prop = next(m + ":c1" for m in home if store.claim(m).kind == "PROPOSITION")
    job_prop = next(m + ":c1" for m in job if store.claim(m).kind == "PROPOSITION")
    summary = store.derive(
        [
            DerivedClaim(content=f"User lives at {SECRET}.", requires=[home_prop]),
            DerivedClaim(content="User works at Quillfeather Labs.", requires=[job_prop]),
        ],
        activity="PROFILE",
        produced_by="profiler",
    )
    leaning = store.derive(
        [DerivedClaim(content="User prefers green tea.", requires=[other[-1] + ":c1"])],
        produced_by="p",
    ).stored[0]
    store.support(leaning.claim_id, by=[home_prop], informant="recommender")
    return {
        "home": home_prop,
        "job": job_prop,
        "profile_home": summary.stored[0].claim_id,
        "profile_job": summary.stored[1].claim_id,
        "leaning": leaning.claim_id,
    }


def test_erasing_a_conversation_leaves_no_byte_of_it_and_a_content_free_tombstone(tmp_path: Path):
    db = tmp_path / "m.db"
    with MemoryStore(db, clock=Clock()) as store:
        ids = setup(store)
        assert store.verify_erasure([SECRET]).residue  # it is there before: the scan sees it
        report = store.erase(conversation="c-home")
        assert report.residue == [] and str(db) in report.files_scanned
        assert ids["home"] in report.erased_claims
        assert ids["profile_home"] in report.derived_claims  # the summary that stated it
        assert ids["profile_job"] not in report.erased_claims  # its sibling avoids the root
        assert store.claim(ids["profile_job"]).content == "User works at Quillfeather Labs."
        assert ids["leaning"] in report.revalidated  # lost a support, kept its own
        assert store.claim(ids["leaning"]).support_label == "IN"
        erased = store.claim(ids["home"])
        assert erased.erased and erased.content == "" and erased.lifecycle_state == "REVOKED"
        assert erased.subject is None and erased.allowed_uses == []
        check = store.verify_erasure([SECRET, f"I live at {SECRET}."])
        assert check.clean and check.index_consistent
        assert store.rebuild().identical
        (tomb,) = store.backend.select("erasures")
        assert SECRET not in json.dumps(tomb) and tomb["selector_kind"] == "conversation"
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert SECRET.encode() not in raw


def test_an_erased_memory_is_not_brought_back_by_ingesting_it_again(tmp_path: Path):
    with MemoryStore(tmp_path / "m.db", clock=Clock()) as store:
        store.ingest(user_says("c-home", f"I live at {SECRET}."), subject="u1")
        store.erase(subject="u1")
        again = store.ingest(user_says("c-home", f"I live at {SECRET}."), subject="u1")
        assert again.stored == [] and again.already_stored
        assert store.verify_erasure([SECRET]).clean


def test_erasure_reaches_the_ledger_and_the_cache(tmp_path: Path):
    data = {
        "id": "c-home",
        "messages": [
            {"role": "user", "content": f"I live at {SECRET}.", "timestamp": "2026-06-01T10:00:00"}
        ],
    }
    result = _EXTRACTOR.process(data)
    ledger_path = tmp_path / "ledger.db"
    with Ledger(ledger_path) as ledger:
        run = ledger.start_run(result.provenance, {"out": str(tmp_path / "results.jsonl")})
        ledger.record_result(run, result, conversation=conversation_from_data(data))
        ledger.finish_run(run, summary={})
    cache = tmp_path / "cache" / "ab"
    cache.mkdir(parents=True)
    (cache / "entry.json").write_text(json.dumps({"text": f"I live at {SECRET}."}))
    (cache / "keep.json").write_text(json.dumps({"text": "unrelated"}))
    with MemoryStore(tmp_path / "m.db", clock=Clock()) as store:
        store.ingest(result, subject="u1")
        report = store.erase(subject="u1", ledger=ledger_path, cache_dir=tmp_path / "cache")
        assert report.residue == [] and report.ledger_rows_scrubbed > 0
        assert report.cache_entries_removed == 1 and (cache / "keep.json").exists()
        assert str(tmp_path / "results.jsonl") in report.unreachable
        assert store.verify_erasure(
            [SECRET], ledger=ledger_path, cache_dir=tmp_path / "cache"
        ).clean
    db = sqlite3.connect(ledger_path)
    (doc,) = db.execute("SELECT conversation_json FROM transcripts").fetchone()
    assert SECRET not in doc and json.loads(doc)  # still valid JSON, content gone


def test_erase_needs_exactly_one_selector_and_names_what_it_could_not_find():
    with MemoryStore(clock=Clock()) as store:
        with pytest.raises(StoreError, match="exactly one selector"):
            store.erase()
        with pytest.raises(StoreError, match="exactly one selector"):
            store.erase(subject="a", conversation="b")
        with pytest.raises(StoreError, match="'nobody'"):
            store.erase(subject="nobody")


def test_revocation_is_not_erasure_the_content_stays():
    with MemoryStore(clock=Clock()) as store:
        (m, *_) = store.ingest(user_says("c", f"I live at {SECRET}."), subject="u1").stored
        store.revoke(m, reason="wrong")
        assert SECRET in store.claim(m).content and store.claim(m).lifecycle_state == "REVOKED"


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["home", "job", "profile_home", "leaning"]), st.booleans())
def test_erasure_leaves_zero_residue_whatever_is_erased(target, by_subject):
    with (
        tempfile.TemporaryDirectory() as tmp,
        MemoryStore(Path(tmp) / "m.db", clock=Clock()) as store,
    ):
        ids = setup(store)
        texts = {c.claim_id: c.content for c in store.claims()}
        report = store.erase(subject="u1") if by_subject else store.erase(memory_id=ids[target])
        kept = {c.content for c in store.claims() if not c.erased}
        gone = [texts[c] for c in report.erased_claims if not any(texts[c] in k for k in kept)]
        assert report.erased_claims and store.verify_erasure(gone).clean
        assert store.rebuild().identical
        for c in store.claims():
            assert c.erased == (c.claim_id in report.erased_claims)


def test_erasing_claims_without_a_structural_key_touches_only_their_rows(tmp_path: Path):
    """No replay of the log: only the erased claims, their dependents and the tombstone are
    written; rebuild still reproduces the state hash, and the scan still finds zero residue.
    The hooks the read path registers are told which claims went."""
    db = tmp_path / "m.db"
    secret = "Ottoline the tortoise"
    with MemoryStore(db, clock=Clock()) as store:
        ids = setup(store)
        pet = store.ingest(user_says("c-pet", f"I adore {secret}."), subject="u3").stored
        dependent = store.derive(
            [DerivedClaim(content=f"User adores {secret}.", requires=[pet[0] + ":c1"])],
            produced_by="p",
        ).stored[0]
        untouched = {c.claim_id: c.version for c in store.claims() if c.subject != "u3"}
        told: list[list[str]] = []
        store.on_erase(told.append)

        def no_replay() -> None:
            raise AssertionError("an incremental erasure must not rebuild the projection")

        real = store.backend.clear_projection
        store.backend.clear_projection = no_replay  # type: ignore[method-assign]
        report = store.erase(conversation="c-pet")
        store.backend.clear_projection = real  # type: ignore[method-assign]
        assert report.projection == "incremental" and report.residue == []
        assert dependent.claim_id in report.erased_claims  # it carried the content
        assert told == [sorted(report.erased_claims)]
        assert {c.claim_id: c.version for c in store.claims() if c.claim_id in untouched} == (
            untouched
        )
        assert store.rebuild().identical and store.consistent()
        assert store.verify_erasure([secret]).clean
        # a claim with a structural key changes its neighbours' supersession history: replayed
        store.ingest(user_says("c-city", "I live in Lisbon."), subject="u1")
        store.ingest(user_says("c-move", "I moved to Porto.", "2026-08-01T10:00:00"), subject="u1")
        assert store.erase(conversation="c-move").projection == "replayed"
        assert ids["home"] and store.rebuild().identical


def test_a_claim_alone_under_its_structural_key_is_erased_without_a_replay(tmp_path: Path):
    """A keyed claim that no other claim shares its key with took part in no supersession or
    conflict: the ERASE applier alone reaches the replayed state (rebuild agrees)."""
    with MemoryStore(tmp_path / "m.db", clock=Clock()) as store:
        setup(store)
        store.ingest(user_says("c-post", "I work at Zanzibar Ledger."), subject="u7")
        rows = store.backend.select("claims", {"subject": "u7"})
        assert [r["key_relation"] for r in rows if r["key_relation"]] == ["works_at"]
        untouched = {c.claim_id: c.version for c in store.claims() if c.subject != "u7"}
        replays: list[None] = []
        real = store.backend.clear_projection
        store.backend.clear_projection = lambda: replays.append(None)  # type: ignore[method-assign]
        report = store.erase(conversation="c-post")
        store.backend.clear_projection = real  # type: ignore[method-assign]
        assert (report.projection, replays, report.residue) == ("incremental", [], [])
        assert {c.claim_id: c.version for c in store.claims() if c.claim_id in untouched} == (
            untouched
        )
        assert store.rebuild().identical and store.consistent()
        # under a key another claim holds (even a revoked one), the erasure still replays
        store.ingest(user_says("c-post2", "I work at Acme Rockets."), subject="u8")
        store.ingest(user_says("c-post3", "I work at Beta Labs.", "2026-08-01T10:00:00"),
                     subject="u8")  # fmt: skip
        keyed = sorted((r["recorded_at"], r["claim_id"]) for r in store.backend.select(
            "claims", {"subject": "u8"}) if r["key_relation"])  # fmt: skip
        first = keyed[0][1]
        store.revoke(first, reason="wrong")
        assert store.erase(conversation="c-post3").projection == "replayed"
        assert store.rebuild().identical


# -- erasure within a tenant: sources are store-wide, a tenant's erasure is not --------------------

SHARED = "I live in Lisbon and I prefer tea."


def _tenant_view(store: MemoryStore, tenant: str) -> list[tuple[object, ...]]:
    """What a tenant's claims are: content, lifecycle, support and evidence count."""
    return [
        (c.claim_id, c.content, c.lifecycle_state, c.support_label, c.erased,
         len(store.backend.select("evidence", {"claim_id": c.claim_id})))
        for c in store.claims(tenant=tenant)
    ]  # fmt: skip


def _message_source(store: MemoryStore) -> str:
    (source,) = [r["source_id"] for r in store.backend.select("sources")]
    return source


@settings(max_examples=examples(8), deadline=None)
@given(
    selector=st.sampled_from(["source", "conversation"]),
    first=st.sampled_from(["A", "B"]),
    eraser=st.sampled_from(["A", "B"]),
)
def test_erasing_a_shared_source_or_conversation_in_one_tenant_leaves_the_other_as_it_was(
    selector: str, first: str, eraser: str
):
    """Two tenants stored the same conversation, so they share its message source (whichever
    stored it first recorded it). An erasure within one tenant erases that tenant's claims
    held by it -- all of them, whoever recorded the source -- and changes nothing of the other
    tenant's: not its claims, their support, nor their evidence."""
    other = "B" if eraser == "A" else "A"
    with MemoryStore(":memory:", clock=Clock()) as store:
        for tenant in (first, "B" if first == "A" else "A"):
            store.ingest(user_says("c-shared", SHARED), tenant=tenant, subject="u")
        before = _tenant_view(store, other)
        mine = {c.claim_id for c in store.claims(tenant=eraser)}
        value = _message_source(store) if selector == "source" else "c-shared"
        report = store.erase(**{selector: value}, tenant=eraser)  # type: ignore[arg-type]
        assert set(report.erased_claims) == mine
        assert all(c.erased for c in store.claims(tenant=eraser))
        assert _tenant_view(store, other) == before
        assert store.backend.select("sources")[0]["status"] == "ACTIVE"  # the other's still
        assert store.rebuild().identical


def test_erasing_a_source_with_no_tenant_given_still_erases_it_store_wide():
    with MemoryStore(":memory:", clock=Clock()) as store:
        for tenant in ("A", "B"):
            store.ingest(user_says("c-shared", SHARED), tenant=tenant, subject="u")
        report = store.erase(source=_message_source(store))
        assert len(report.erased_claims) == len(store.claims())
        assert store.backend.select("sources")[0]["status"] == "ERASED"


def test_a_source_only_another_tenant_uses_is_unknown_to_a_tenant_erasure():
    with MemoryStore(":memory:", clock=Clock()) as store:
        store.ingest(user_says("c-a", SHARED), tenant="A", subject="u")
        store.ingest(user_says("c-b", "I prefer green tea."), tenant="B", subject="u")
        source = _message_source_of(store, "A")
        before = _tenant_view(store, "A")
        with pytest.raises(UnknownMemory) as caught:
            store.erase(source=source, tenant="B")
        made_up = str(_unknown(store, "B")).replace("msg:no-such-source", source)
        assert str(caught.value) == made_up  # exactly as a source that does not exist
        assert _tenant_view(store, "A") == before


def _message_source_of(store: MemoryStore, tenant: str) -> str:
    (source,) = {r["source_id"] for r in store.backend.select("sources", {"tenant": tenant})}
    return source


def _unknown(store: MemoryStore, tenant: str) -> UnknownMemory:
    try:
        store.erase(source="msg:no-such-source", tenant=tenant)
    except UnknownMemory as exc:
        return exc
    raise AssertionError("a made-up source was erased")


def test_a_claim_with_other_evidence_is_detached_from_a_shared_source_not_erased():
    """Within a tenant, a claim that a shared source and another source both hold up survives
    the source's erasure as it survives an ERASED source: without that source's evidence and
    support, resting on the other source; the other tenant keeps the shared source."""
    with MemoryStore(":memory:", clock=Clock()) as store:
        for tenant in ("A", "B"):
            store.ingest(user_says("c-shared", SHARED), tenant=tenant, subject="u")
        shared = _message_source(store)
        store.add_source("doc:atlas", kind="DOCUMENT", tenant="A")
        kept = store.claims(tenant="A")[0].claim_id
        store.add_evidence(kept, source="doc:atlas", quote="Lisbon")
        before = _tenant_view(store, "B")
        report = store.erase(source=shared, tenant="A")
        assert kept not in report.erased_claims and kept in report.revalidated
        assert [e["source_id"] for e in store.backend.select("evidence", {"claim_id": kept})] == [
            "doc:atlas"
        ]
        assert shared not in json.dumps(store.why(kept).model_dump())
        assert _tenant_view(store, "B") == before
        assert store.rebuild().identical
