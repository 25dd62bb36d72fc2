"""The tenant boundary: with tenant A's key, no sequence of requests ever returns, counts or
revokes a memory of tenant B, and nothing tells B's memories apart from memories that do not
exist."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractor.service import KeyStore, Scope, ServiceLimits, create_app
from extractor.store import MemoryStore
from extractor.vocab import Capability

SUBJECT = {"user_id": "u1"}
CONVERSATIONS = [
    {
        "id": "chat-1",
        "metadata": SUBJECT,
        "messages": [{"role": "user", "content": "My manager is Alice."}],
    },
    {
        "id": "chat-2",
        "metadata": SUBJECT,
        "messages": [{"role": "user", "content": "I like green tea and my manager is Bob."}],
    },
    {"metadata": SUBJECT, "messages": [{"role": "user", "content": "Always answer in Spanish."}]},
]
READ = {"query": "manager tea Spanish", "subject": "u1", "purpose": "PERSONALIZATION", "k": 50}
TENANTS = ("acme", "globex")


class Service:
    """The app over a fresh store, a key per tenant with every scope, and a client."""

    def __init__(self, extractor: Any, directory: Path, clock: Any = None) -> None:
        self.keys = KeyStore(":memory:")
        self.store = MemoryStore(directory / "memory.db", clock=clock)
        self.tokens = {t: self.keys.create(tenant=t, caller=f"{t}-app", scopes=list(Scope),
                                           purposes=[Capability.PERSONALIZATION])[1]
                       for t in TENANTS}  # fmt: skip
        app = create_app(extractor, keys=self.keys, store=self.store,
                         service_limits=ServiceLimits(rate_per_s=None))  # fmt: skip
        self.client = TestClient(app)

    def call(self, tenant: str, method: str, path: str, body: Any = None) -> Any:
        headers = {"authorization": f"Bearer {self.tokens[tenant]}"}
        return self.client.request(method, path, json=body, headers=headers)

    def close(self) -> None:
        self.client.close()
        self.store.close()
        self.keys.close()


@pytest.fixture
def service(offline_extractor, tmp_path: Path) -> Iterator[Service]:
    running = Service(offline_extractor, tmp_path)
    yield running
    running.close()


def ids_in(value: Any) -> set[str]:
    """Every memory id anywhere in a JSON value."""
    if isinstance(value, dict):
        return set().union(*(ids_in(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(ids_in(v) for v in value)) if value else set()
    return {value.split(":")[0]} if isinstance(value, str) and value.startswith("mem_") else set()


#: Routes that name one memory: (method, path suffix, body); all answer 404 outside the tenant.
BY_ID = {
    "get": ("GET", "", None),
    "why": ("GET", ":why", None),
    "lineage": ("GET", ":lineage", None),
    "revoke": ("POST", ":revoke", {"reason": "test"}),
}
OPS = st.lists(
    st.tuples(st.sampled_from(TENANTS),
              st.sampled_from(["ingest", "read", "erase", "erase-subject", *BY_ID]),
              st.integers(0, len(CONVERSATIONS) - 1), st.integers(0, 3)),
    min_size=1, max_size=8,
)  # fmt: skip


@settings(max_examples=examples(12), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_no_sequence_of_requests_crosses_tenants(offline_extractor, tmp_path_factory, ops):
    service = Service(offline_extractor, tmp_path_factory.mktemp("tenants"))
    owned: dict[str, set[str]] = {t: set() for t in TENANTS}
    erased: dict[str, set[str]] = {t: set() for t in TENANTS}
    ingested: dict[str, set[int]] = {t: set() for t in TENANTS}
    try:
        for tenant, op, conversation, pick in ops:
            other = TENANTS[1 - TENANTS.index(tenant)]
            known = sorted(owned[tenant] | owned[other])
            target = known[pick % len(known)] if known else "mem_00000000000000000000"
            if op == "ingest":
                response = service.call(tenant, "POST", "/v1/memories:ingest",
                                        CONVERSATIONS[conversation])  # fmt: skip
                assert response.status_code == 200, response.text
                report = response.json()
                assert report["tenant"] == tenant
                # the other tenant's ingests of the same conversation never show here
                if conversation not in ingested[tenant]:
                    assert report["already_stored"] == []
                else:
                    assert report["stored"] == []
                ingested[tenant].add(conversation)
                owned[tenant] |= set(report["stored"]) | set(report["already_stored"])
            elif op == "read":
                response = service.call(tenant, "POST", "/v1/memories:read", READ)
                assert response.status_code == 200, response.text
                assert {i["memory_id"] for i in response.json()["items"]} <= owned[tenant]
            elif op == "erase-subject":
                response = service.call(tenant, "POST", "/v1/memories:erase", {"subject": "u1"})
                assert response.status_code in (200, 404), response.text
                erased[tenant] |= ids_in(response.json().get("erased_claims", []))
            elif op == "erase":
                response = service.call(tenant, "POST", "/v1/memories:erase",
                                        {"memory_id": target})  # fmt: skip
                if target in owned[tenant] - erased[tenant]:
                    assert response.status_code == 200, response.text
                    erased[tenant] |= {target} | ids_in(response.json()["erased_claims"])
                elif target not in owned[tenant]:
                    assert (response.status_code, response.json()) == (404, not_found(target))
            else:
                method, suffix, body = BY_ID[op]
                response = service.call(tenant, method, f"/v1/memories/{target}{suffix}", body)
                if target in owned[tenant]:
                    assert response.status_code == 200, response.text
                else:
                    assert (response.status_code, response.json()) == (404, not_found(target))
            assert not ids_in(response.json()) & (owned[other] - owned[tenant])
        for tenant in TENANTS:  # the store agrees: every claim is in its ingesting tenant
            other = TENANTS[1 - TENANTS.index(tenant)]
            stored = {c.memory_id for c in service.store.claims(tenant=tenant)}
            assert stored == owned[tenant] and not stored & owned[other]
            gone = {c.memory_id for c in service.store.claims(tenant=tenant) if c.erased}
            assert gone == erased[tenant], "only the tenant's own erasures reached its memories"
        with sqlite3.connect(service.store.backend.location) as db:
            audited = set(db.execute("SELECT tenant, caller FROM reads").fetchall())
        assert audited <= {(t, f"{t}-app") for t in TENANTS}, "the read audit names the key"
    finally:
        service.close()


def not_found(memory_id: str) -> dict[str, Any]:
    return {"error": {"code": "NOT_FOUND", "message": f"no memory {memory_id!r}",
                      "field": "memory_id"}}  # fmt: skip


def test_another_tenants_memory_is_exactly_as_absent_as_no_memory(service: Service, caplog):
    caplog.set_level(logging.DEBUG)
    stored = service.call("globex", "POST", "/v1/memories:ingest", CONVERSATIONS[0]).json()
    theirs = stored["stored"][0]
    before = service.store.claims(tenant="globex")
    nowhere = "mem_" + "0" * 20
    caplog.clear()
    for target in (theirs, nowhere):
        got = service.call("acme", "GET", f"/v1/memories/{target}")
        revoked = service.call("acme", "POST", f"/v1/memories/{target}:revoke", {"reason": "x"})
        for response in (got, revoked):
            assert (response.status_code, response.json()) == (404, not_found(target))
            assert set(response.headers) == {"content-length", "content-type"}
    assert service.store.claims(tenant="globex") == before, "nothing of globex changed"
    service_logs = [r.getMessage() for r in caplog.records
                    if r.name.startswith(("extractor", "uvicorn", "fastapi", "starlette"))]  # fmt: skip
    assert not [line for line in service_logs if "globex" in line or theirs in line]


class Spy:
    """Records every call the service makes on the store and its backend: the method, the keys
    (not the values) of the mappings it passes and the SQL it runs: the shape of each query."""

    def __init__(self, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, ...]] = []
        for target, names in ((store, STORE_METHODS), (store.backend, BACKEND_METHODS)):
            for name in names:
                monkeypatch.setattr(target, name, self.wrap(name, getattr(target, name)))

    def wrap(self, name: str, method: Any) -> Any:
        def spied(*args: Any, **kwargs: Any) -> Any:
            shape = [
                ",".join(a)
                if isinstance(a, dict)
                else a
                if isinstance(a, str) and name == "execute"
                else type(a).__name__
                for a in args
            ]  # the SQL itself
            self.calls.append((name, *shape, *sorted(kwargs)))
            return method(*args, **kwargs)

        return spied

    def during(self, call: Any, *args: Any) -> tuple[Any, list[tuple[str, ...]]]:
        self.calls.clear()
        response = call(*args)
        return response, list(self.calls)


STORE_METHODS = ("claims", "claim", "why", "lineage", "revoke", "erase", "history", "ingest")
BACKEND_METHODS = ("current", "current_in", "select", "select_in", "history", "execute",
                   "events", "append_event", "transaction")  # fmt: skip


def test_not_found_and_another_tenants_take_the_same_code_path(service: Service, monkeypatch):
    stored = service.call("globex", "POST", "/v1/memories:ingest", CONVERSATIONS[0]).json()
    theirs, nowhere = stored["stored"][0], "mem_" + "0" * 20
    spy = Spy(service.store, monkeypatch)
    requests = {
        **{op: (method, f"/v1/memories/{{}}{suffix}", body)
           for op, (method, suffix, body) in BY_ID.items()},
        "erase": ("POST", "/v1/memories:erase", {"memory_id": "{}"}),
    }  # fmt: skip
    for op, (method, path, body) in requests.items():
        answers = []
        for target in (theirs, nowhere):
            filled = {k: v.format(target) for k, v in body.items()} if body else None
            answers.append(spy.during(service.call, "acme", method, path.format(target), filled))
        (mine, mine_calls), (none, none_calls) = answers
        assert (mine.status_code, none.status_code) == (404, 404), op
        assert mine.json() == not_found(theirs) and none.json() == not_found(nowhere), op
        assert dict(mine.headers) == dict(none.headers), op
        assert mine_calls == none_calls, op
        assert mine_calls == [
            ("select", "str", "tenant,memory_id"),
            ("execute", "SELECT * FROM memories WHERE tenant IS ? AND memory_id IS ?", "list"),
        ], "one tenant-first lookup, then the 404"
    subjects = [
        spy.during(service.call, "acme", "POST", "/v1/memories:erase", {"subject": subject})
        for subject in ("u1", "nobody")
    ]
    (a, a_calls), (b, b_calls) = subjects
    assert (a.status_code, b.status_code) == (404, 404) and a_calls == b_calls


def test_the_same_conversation_in_two_tenants_is_two_memories(service: Service):
    mine = service.call("acme", "POST", "/v1/memories:ingest", CONVERSATIONS[0]).json()
    theirs = service.call("globex", "POST", "/v1/memories:ingest", CONVERSATIONS[0]).json()
    assert mine["conversation_id"] == "acme/chat-1" and theirs["conversation_id"] == "globex/chat-1"
    assert mine["stored"] and theirs["stored"] and not set(mine["stored"]) & set(theirs["stored"])
    assert theirs["already_stored"] == [], "nothing says acme stored it first"


def test_revocation_needs_its_scope_and_records_the_keys_caller(service: Service):
    stored = service.call("acme", "POST", "/v1/memories:ingest", CONVERSATIONS[0]).json()
    memory = stored["stored"][0]
    _, reader = service.keys.create(tenant="acme", caller="reader")  # default: no revoke
    response = service.client.post(f"/v1/memories/{memory}:revoke", json={"reason": "x"},
                                   headers={"authorization": f"Bearer {reader}"})  # fmt: skip
    assert response.status_code == 403 and "scope 'revoke'" in response.json()["error"]["message"]
    response = service.call("acme", "POST", f"/v1/memories/{memory}:revoke", {"reason": "moved"})
    assert response.status_code == 200 and memory + ":c1" in response.json()["targets"]
    (event,) = [e for e in service.store.events() if e.kind == "REVOKE"]
    assert (event.actor, event.tenant) == ("acme-app", "acme")
    record = service.call("acme", "GET", f"/v1/memories/{memory}").json()
    assert record["claims"][0]["lifecycle_state"] == "REVOKED"
    blank = service.call("acme", "POST", f"/v1/memories/{memory}:revoke", {"reason": " "})
    assert blank.status_code == 422 and blank.json()["error"]["field"] == "reason"


def test_reads_are_bound_to_the_keys_purposes_and_audited_with_its_caller(service: Service):
    assert service.call("acme", "POST", "/v1/memories:ingest", CONVERSATIONS[0]).status_code == 200
    response = service.call("acme", "POST", "/v1/memories:read", READ)
    assert response.status_code == 200 and response.json()["items"]
    assert response.json()["request"]["caller"]["id"] == "acme-app"
    with sqlite3.connect(service.store.backend.location) as db:
        rows = db.execute("SELECT tenant, caller, purpose FROM reads").fetchall()
    assert rows == [("acme", "acme-app", "PERSONALIZATION")]
    factual = service.call(
        "acme", "POST", "/v1/memories:read", {**READ, "purpose": "FACTUAL_EVIDENCE"}
    )
    assert factual.status_code == 403
    assert factual.json()["error"] == {
        "code": "FORBIDDEN", "field": "purpose",
        "message": "this key may not request purpose 'FACTUAL_EVIDENCE' (its purposes: "
        "PERSONALIZATION)"}  # fmt: skip
    empty = service.call("globex", "POST", "/v1/memories:read", READ)
    assert (
        empty.status_code == 200 and empty.json()["items"] == [] and empty.json()["excluded"] == []
    )


STORE_WIDE_KEYS = {"event_seq", "cause_seq", "readmit"}
NOW = datetime(2026, 11, 30, 9, 5, tzinfo=UTC)


def keys_in(value: Any) -> set[str]:
    """Every object key anywhere in a JSON value."""
    if isinstance(value, dict):
        return set(value).union(*(keys_in(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(keys_in(v) for v in value))
    return set()


def tenant_a_sees(extractor: Any, directory: Path, *, b_writes: bool) -> list[Any]:
    """Tenant A's answers to one sequence of requests, with or without tenant B writing between
    them (a fixed clock: only the store's own state could tell the two runs apart)."""
    directory.mkdir()
    service = Service(extractor, directory, clock=lambda: NOW)
    seen: list[Any] = []

    def a(method: str, path: str, body: Any = None) -> Any:
        response = service.call("acme", method, path, body)
        assert response.status_code == 200, response.text
        seen.append(response.json())
        return seen[-1]

    try:
        first = a("POST", "/v1/memories:ingest", CONVERSATIONS[0])["stored"][0]
        if b_writes:
            for conversation in CONVERSATIONS:
                b = service.call("globex", "POST", "/v1/memories:ingest", conversation).json()
            service.call("globex", "POST", "/v1/memories:read", READ)
            service.call("globex", "POST", f"/v1/memories/{b['stored'][0]}:revoke", {"reason": "b"})
        second = a("POST", "/v1/memories:ingest", CONVERSATIONS[1])["stored"][0]
        a("POST", "/v1/memories:read", READ)
        a("POST", f"/v1/memories/{first}:revoke", {"reason": "corrected"})
        for memory in (first, second):
            for suffix in ("", ":why", ":lineage"):
                a("GET", f"/v1/memories/{memory}{suffix}")
    finally:
        service.close()
    read_ids = {item["read_id"] for answer in seen for item in _exposures(answer)}
    read_ids |= {answer["read_id"] for answer in seen if "read_id" in answer}
    text = json.dumps(seen)
    for number, read_id in enumerate(sorted(read_ids)):  # random ids, the same reads
        text = text.replace(read_id, f"read-{number}")
    return list(json.loads(text))


def _exposures(answer: Any) -> list[Any]:
    return answer.get("exposures", []) if isinstance(answer, dict) else []


def test_a_tenant_cannot_observe_another_tenants_writes(offline_extractor, tmp_path: Path):
    quiet = tenant_a_sees(offline_extractor, tmp_path / "quiet", b_writes=False)
    busy = tenant_a_sees(offline_extractor, tmp_path / "busy", b_writes=True)
    assert quiet == busy  # every answer A gets, byte for byte, whatever B did in between
    assert not keys_in(busy) & STORE_WIDE_KEYS
    assert any("history" in claim for answer in busy for claim in answer.get("claims", []))
