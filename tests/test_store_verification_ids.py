"""Verification ids tell a tenant nothing of other tenants: a claim's verifications are named
``<claim>/verify/v<n>`` (its n-th), not by the store-wide event seq, which counted every
tenant's events in between. Stores whose verifications carry the old ids keep them."""

from __future__ import annotations

import json

from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Clock, user_says

from extractor import MemoryStore


def _verified(store: MemoryStore, busy: tuple[int, int]) -> tuple[list[str], list[str]]:
    """Tenant A's claim verified twice by the operator, with ``busy`` events of tenant B before
    each verification; what A's ``why`` shows of its verifications."""
    memory = store.ingest(user_says("c-a", "I live in Lisbon."), tenant="A", subject="u").stored[0]
    claim = f"{memory}:c1"
    for n, source in enumerate(("doc:a1", "doc:a2")):
        store.add_source(source, kind="DOCUMENT", tenant="A")
        for m in range(busy[n]):
            store.ingest(user_says(f"b{n}-{m}", f"I prefer tea no. {m}."), tenant="B", subject="u")
        assert store.verify(claim, source=source, verifier="ops").accepted
    why = store.why(claim)
    return why.verified_by, [j.just_id for j in why.support if j.kind == "VERIFICATION"]


@settings(max_examples=examples(6), deadline=None)
@given(busy=st.tuples(st.integers(0, 4), st.integers(0, 4)))
def test_a_tenants_verification_ids_do_not_count_other_tenants_events(busy: tuple[int, int]):
    with (
        MemoryStore(":memory:", clock=Clock()) as quiet,
        MemoryStore(":memory:", clock=Clock()) as b,
    ):
        alone = _verified(quiet, (0, 0))
        assert _verified(b, busy) == alone
        ids = alone[1]
        assert [i.rsplit("/", 1)[1] for i in ids] == ["v1", "v2"]
        assert b.rebuild().identical


def test_a_store_with_seq_named_verifications_keeps_them_and_names_new_ones_per_claim():
    """A VERIFY event recorded before verifications were named (no ``verification_id`` in its
    payload) replays to its old id, ``<claim>/verify/<seq>``; the next verification is the
    claim's second, and the later one (by event, not by id) decides the claim."""
    with MemoryStore(":memory:", clock=Clock()) as store:
        memory = store.ingest(user_says("c-a", "I live in Lisbon."), tenant="A").stored[0]
        claim = f"{memory}:c1"
        store.add_source("doc:a1", kind="DOCUMENT", tenant="A")
        seq = store.verify(claim, source="doc:a1", verifier="ops").event_seq
        (row,) = store.backend.select("memory_events", {"seq": seq})
        payload = json.loads(row["payload_json"])
        del payload["verification_id"]  # as the store recorded it before
        store.backend.update("memory_events", {"seq": seq}, {"payload_json": json.dumps(payload)})
        store._replay()  # the projection of the old log
        assert [v["verification_id"] for v in store.backend.select("verifications")] == [
            f"{claim}/verify/{seq}"
        ]
        assert store.rebuild().identical
        store.add_source("doc:a2", kind="DOCUMENT", tenant="A")
        store.verify(claim, source="doc:a2", verifier="ops")
        ids = sorted(v["verification_id"] for v in store.backend.select("verifications"))
        assert ids == sorted([f"{claim}/verify/{seq}", f"{claim}/verify/v2"])
        store.revoke("doc:a2", reason="withdrawn", trigger="SOURCE_REVOKED")
        assert "FACTUAL_EVIDENCE" in store.claim(claim).allowed_uses  # the old one holds it
        assert store.rebuild().identical
