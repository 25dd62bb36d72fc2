"""The audit routes (stored record, why, lineage) and erasure over HTTP, inside the key's tenant."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from extractor.service import KeyStore, Scope, ServiceLimits, create_app
from extractor.store import MemoryStore
from extractor.store.derivation import DerivedClaim
from extractor.vocab import Capability

ALICE = {"id": "chat-1", "metadata": {"user_id": "u1"},
         "messages": [{"role": "user", "content": "My manager is Alice Fernsby."}]}  # fmt: skip
TEA = {"id": "chat-2", "metadata": {"user_id": "u2"},
       "messages": [{"role": "user", "content": "I like green tea from Uji."}]}  # fmt: skip


class Service:
    def __init__(self, extractor: Any, directory: Path) -> None:
        self.keys = KeyStore(":memory:")
        self.store = MemoryStore(directory / "memory.db")
        self.app = create_app(extractor, keys=self.keys, store=self.store,
                              service_limits=ServiceLimits(rate_per_s=None))  # fmt: skip
        self.client = TestClient(self.app)
        self.tokens = {t: self.key(t, *Scope) for t in ("acme", "globex")}

    def key(self, tenant: str, *scopes: Scope) -> str:
        return self.keys.create(tenant=tenant, caller=f"{tenant}-app", scopes=scopes,
                                purposes=[Capability.PERSONALIZATION])[1]  # fmt: skip

    def call(self, who: str, method: str, path: str, body: Any = None) -> Any:
        token = self.tokens.get(who, who)
        return self.client.request(method, path, json=body,
                                   headers={"authorization": f"Bearer {token}"})  # fmt: skip

    def ingest(self, tenant: str, conversation: dict[str, Any]) -> list[str]:
        response = self.call(tenant, "POST", "/v1/memories:ingest", conversation)
        assert response.status_code == 200, response.text
        return list(response.json()["stored"])


@pytest.fixture
def service(offline_extractor, tmp_path: Path) -> Iterator[Service]:
    running = Service(offline_extractor, tmp_path)
    yield running
    running.client.close()
    running.store.close()
    running.keys.close()


def test_the_audit_routes_need_the_audit_scope_not_a_purpose(service: Service):
    memory = service.ingest("acme", ALICE)[0]
    reader = service.key("acme", Scope.READ)
    auditor = service.key("acme", Scope.AUDIT)
    for suffix in ("", ":why", ":lineage"):
        refused = service.call(reader, "GET", f"/v1/memories/{memory}{suffix}")
        assert refused.status_code == 403
        assert "scope 'audit' (its scopes: read)" in refused.json()["error"]["message"]
        assert service.call(auditor, "GET", f"/v1/memories/{memory}{suffix}").status_code == 200
    read = {"query": "manager", "subject": "u1", "purpose": "PERSONALIZATION"}
    assert service.call(auditor, "POST", "/v1/memories:read", read).status_code == 403
    assert service.call(reader, "POST", "/v1/memories:read", read).status_code == 200


def test_why_explains_each_claim_with_rules_support_families_and_lineage(service: Service):
    memory = service.ingest("acme", ALICE)[0]
    why = service.call("acme", "GET", f"/v1/memories/{memory}:why").json()
    (claim,) = why["claims"]
    assert why["memory_id"] == memory and claim["claim"]["memory_id"] == memory
    assert claim["rules"], "the admission rules behind its capabilities"
    assert claim["claim"]["allowed_uses"] and claim["history"]
    assert claim["lineage"]["claim_id"] == claim["claim"]["claim_id"]
    # the store's record, less the store-wide event numbers (docs/server.md)
    stored = service.store.why(claim["claim"]["claim_id"]).model_dump(mode="json")
    for version in stored["history"]:
        assert version.pop("cause_seq") > 0
    assert claim == stored


def test_lineage_follows_derivations_inside_the_tenant(service: Service):
    parent_id = service.ingest("acme", ALICE)[0]
    derived = service.store.derive(
        [DerivedClaim(content="My manager is Alice Fernsby.", requires=[parent_id])],
        produced_by="summarizer", tenant="acme",
    ).memory_id  # fmt: skip
    lineage = service.call("acme", "GET", f"/v1/memories/{derived}:lineage").json()
    (claim,) = lineage["claims"]
    assert {e["parent_claim_id"] for e in claim["ancestors"]} == {f"{parent_id}:c1"}
    parent = service.call("acme", "GET", f"/v1/memories/{parent_id}:lineage").json()
    assert f"{derived}:c1" in {e["child_claim_id"] for e in parent["claims"][0]["descendants"]}
    assert service.call("globex", "GET", f"/v1/memories/{derived}:lineage").status_code == 404


def test_erasure_needs_its_own_grant_and_stays_in_the_tenant(service: Service):
    mine = service.ingest("acme", ALICE)
    theirs = service.ingest("globex", ALICE)
    everything_but_erase = service.key("acme", *(s for s in Scope if s != Scope.ERASE))
    refused = service.call(everything_but_erase, "POST", "/v1/memories:erase", {"subject": "u1"})
    assert refused.status_code == 403 and "scope 'erase'" in refused.json()["error"]["message"]
    service.ingest("globex", TEA)  # u2 and chat-2 exist, in globex only
    before = service.store.claims(tenant="globex")
    for selector in ({"memory_id": theirs[0]}, {"memory_id": "mem_" + "0" * 20}):
        response = service.call("acme", "POST", "/v1/memories:erase", selector)
        assert response.status_code == 404
        assert response.json()["error"] == {
            "code": "NOT_FOUND",
            "field": "memory_id",
            "message": f"no memory {selector['memory_id']!r}",
        }
    for selector in ({"subject": "u2"}, {"subject": "nobody"}, {"conversation": "chat-2"},
                     {"conversation": "globex/chat-2"}):  # fmt: skip
        response = service.call("acme", "POST", "/v1/memories:erase", selector)
        ((field, value),) = selector.items()
        assert response.status_code == 404
        assert response.json()["error"] == {
            "code": "NOT_FOUND", "field": field,
            "message": f"no {field} {value!r} with stored (unerased) memories"}  # fmt: skip
    erased = service.call("acme", "POST", "/v1/memories:erase", {"conversation": "chat-1"})
    assert erased.status_code == 200, erased.text
    receipt = erased.json()
    assert receipt["selector_kind"] == "conversation"
    assert {c.split(":")[0] for c in receipt["erased_claims"]} == set(mine)
    assert set(receipt) == {
        "erasure_id",
        "selector_kind",
        "erased_claims",
        "derived_claims",
        "revalidated",
        "events_redacted",
    }, "no file paths, no residue"
    assert service.store.claims(tenant="globex") == before, "globex's copy is untouched"
    (event,) = [e for e in service.store.events() if e.kind == "ERASE"]
    assert (event.tenant, event.actor) == ("acme", "acme-app")
    again = service.call("acme", "POST", "/v1/memories:erase", {"subject": "u1"})
    assert again.status_code == 404, "nothing of u1 is left to erase in acme"
    assert (
        service.call("globex", "POST", "/v1/memories:erase", {"subject": "u1"}).status_code == 200
    )


def test_the_residue_scan_would_tell_a_tenant_what_another_stores(service: Service):
    """Why the receipt leaves the store report's residue out: the scan reads the whole file."""
    service.ingest("globex", ALICE)
    service.ingest("acme", ALICE)
    report = service.store.erase(subject="u1", tenant="acme")
    assert report.residue, "globex's identical text is found: a byte scan cannot tell whose"
    service.ingest("acme", TEA)
    receipt = service.call("acme", "POST", "/v1/memories:erase", {"subject": "u2"}).json()
    assert "residue" not in receipt and "files_scanned" not in receipt


def test_an_erasure_scrubs_the_services_response_cache(offline_extractor, tmp_path: Path):
    cache = tmp_path / "cache"
    entry = cache / "ab" / "abcdef.json"
    entry.parent.mkdir(parents=True)
    entry.write_text('{"content": "My manager is Alice Fernsby."}', encoding="utf-8")
    unrelated = cache / "cd" / "cdef01.json"
    unrelated.parent.mkdir(parents=True)
    unrelated.write_text('{"content": "The weather is mild."}', encoding="utf-8")
    keys = KeyStore(":memory:")
    _, token = keys.create(tenant="acme", caller="privacy", scopes=list(Scope))
    with MemoryStore(tmp_path / "memory.db") as store:
        app = create_app(offline_extractor, keys=keys, store=store, cache_dir=cache,
                         service_limits=ServiceLimits(rate_per_s=None))  # fmt: skip
        with TestClient(app) as client:
            headers = {"authorization": f"Bearer {token}"}
            assert client.post("/v1/memories:ingest", json=ALICE, headers=headers).is_success
            erased = client.post("/v1/memories:erase", json={"subject": "u1"}, headers=headers)
    keys.close()
    assert erased.status_code == 200, erased.text
    assert not entry.exists() and unrelated.exists()


@pytest.mark.parametrize(
    "body, field",
    [({}, None), ({"subject": "u1", "memory_id": "mem_x"}, None), ({"subject": None}, "subject"),
     ({"subject": " "}, "subject"), ({"memory_id": "mem:x"}, "memory_id"), ({"tenant": "x"}, None)],
)  # fmt: skip
def test_an_erasure_names_exactly_one_selector(service: Service, body: Any, field: str | None):
    response = service.call("acme", "POST", "/v1/memories:erase", body)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "SCHEMA_INVALID"
    assert response.json()["error"]["field"] == field
