"""Callers of the HTTP service: API keys hashed at rest, bound to a tenant and a grant."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from extractor.cli import cli
from extractor.errors import KeyStoreError
from extractor.service import KeyStore, Scope, ServiceLimits, check_bind, create_app
from extractor.vocab import Capability

CONVERSATION = {"id": "c1", "messages": [{"role": "user", "content": "My manager is Alice."}]}


@pytest.fixture
def keys(tmp_path: Path) -> Iterator[KeyStore]:
    store = KeyStore(tmp_path / "keys.sqlite")
    yield store
    store.close()


@pytest.fixture
def client(keys: KeyStore, offline_extractor) -> Iterator[TestClient]:
    app = create_app(offline_extractor, keys=keys, service_limits=ServiceLimits(rate_per_s=None))
    with TestClient(app) as test_client:
        yield test_client


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_the_store_keeps_only_a_hash_of_each_key(keys: KeyStore, tmp_path: Path):
    key, token = keys.create(tenant="acme", caller="bot", purposes=[Capability.PERSONALIZATION])
    secret = token.rsplit("_", 1)[1]
    raw = (tmp_path / "keys.sqlite").read_bytes()
    assert secret.encode() not in raw and token.encode() not in raw
    with sqlite3.connect(tmp_path / "keys.sqlite") as db:
        (stored,) = db.execute("SELECT key_hash FROM api_keys").fetchone()
    assert stored.startswith("sha256:") and secret not in stored
    assert keys.authenticate(token) == key
    assert key.scopes == (Scope.EXTRACT, Scope.INGEST, Scope.READ)  # no revoke, no erase
    flipped = token[:-1] + ("1" if token[-1] == "0" else "0")
    for other in ["", flipped, token.upper(), f"{token} ", f"{token}\n", "mce_x_y"]:
        assert keys.authenticate(other) is None


def test_blank_store_has_the_documented_schema(keys: KeyStore, tmp_path: Path):
    with sqlite3.connect(tmp_path / "keys.sqlite") as db:
        columns = [row[1] for row in db.execute("PRAGMA table_info(api_keys)")]
        names = [row[0] for row in db.execute("SELECT name FROM migrations")]
    assert columns == ["key_id", "key_hash", "tenant", "caller", "scopes", "purposes",
                       "created_at", "revoked_at"]  # fmt: skip
    assert names == ["m001_api_keys"]
    KeyStore(tmp_path / "keys.sqlite").close()  # reopening applies nothing twice


def test_names_and_unknown_keys_are_clear_errors(keys: KeyStore, tmp_path: Path):
    with pytest.raises(KeyStoreError, match=r"--tenant 'a b' is not a valid tenant name"):
        keys.create(tenant="a b", caller="bot")
    with pytest.raises(KeyStoreError, match=r"no key 'nope'"):
        keys.revoke("nope")
    with pytest.raises(KeyStoreError, match=r"no key store at .*extractor keys create"):
        KeyStore(tmp_path / "missing.sqlite", create=False)


def test_no_key_or_a_bad_key_is_401_with_a_challenge(client: TestClient, keys: KeyStore):
    _, token = keys.create(tenant="acme", caller="bot")
    for headers in [{}, bearer("nope"), bearer(token + "0"), {"authorization": f"Basic {token}"},
                    {"authorization": token}]:  # fmt: skip
        response = client.post("/v1/extract", json=CONVERSATION, headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"] == "Bearer"
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"
    assert client.post("/v1/extract", json=CONVERSATION, headers=bearer(token)).status_code == 200


def test_a_revoked_key_is_refused_from_the_next_request_on(client: TestClient, keys: KeyStore):
    key, token = keys.create(tenant="acme", caller="bot")
    assert client.post("/v1/extract", json=CONVERSATION, headers=bearer(token)).status_code == 200
    revoked = keys.revoke(key.key_id)
    assert keys.revoke(key.key_id).revoked_at == revoked.revoked_at  # idempotent
    response = client.post("/v1/extract", json=CONVERSATION, headers=bearer(token))
    assert response.status_code == 401 and response.json()["error"]["code"] == "KEY_REVOKED"


def test_a_scope_outside_the_grant_is_403_naming_only_the_keys_own_grant(
    client: TestClient, keys: KeyStore
):
    _, token = keys.create(tenant="acme", caller="reader", scopes=[Scope.READ])
    response = client.post("/v1/extract", json=CONVERSATION, headers=bearer(token))
    assert response.status_code == 403
    assert response.json()["error"] == {
        "code": "FORBIDDEN", "field": None,
        "message": "this key's grant does not include scope 'extract' (its scopes: read)"}  # fmt: skip


def test_the_tenant_comes_from_the_key_never_from_the_body(client: TestClient, keys: KeyStore):
    _, token = keys.create(tenant="acme", caller="bot")
    response = client.post("/v1/extract", json=CONVERSATION, headers=bearer(token))
    assert response.json()["tenant"] == "acme"
    same = {**CONVERSATION, "metadata": {"tenant": "acme", "user_id": "u1"}}
    response = client.post("/v1/extract", json=same, headers=bearer(token))
    assert (response.json()["tenant"], response.json()["subject"]) == ("acme", "u1")
    other = {**CONVERSATION, "metadata": {"tenant": "globex"}}
    response = client.post("/v1/extract", json=other, headers=bearer(token))
    assert response.status_code == 403
    error = response.json()["error"]
    assert (error["code"], error["field"]) == ("TENANT_MISMATCH", "metadata.tenant")


def test_no_auth_serves_one_local_tenant_and_only_on_loopback(offline_extractor):
    with TestClient(create_app(offline_extractor, no_auth=True)) as local:
        response = local.post("/v1/extract", json=CONVERSATION)
        assert response.status_code == 200 and response.json()["tenant"] == "local"
        assert "securitySchemes" not in local.get("/openapi.json").json()["components"]
    for host in ["127.0.0.1", "::1", "[::1]", "localhost", "127.0.0.2"]:
        check_bind(host, no_auth=True)
    for host in ["0.0.0.0", "::", "192.168.1.5", "example.com"]:
        check_bind(host, no_auth=False)
        with pytest.raises(ValueError, match=r"--no-auth .* refused on --host"):
            check_bind(host, no_auth=True)
    with pytest.raises(ValueError, match=r"needs keys=KeyStore"):
        create_app(offline_extractor)


def test_serve_needs_keys_or_no_auth_and_refuses_no_auth_off_loopback(tmp_path: Path):
    runner = CliRunner()
    result = runner.invoke(cli, ["serve", "--port", "0"])
    assert result.exit_code == 2 and "needs --keys FILE" in result.stderr
    result = runner.invoke(cli, ["serve", "--no-auth", "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "refused on --host '0.0.0.0'" in result.stderr
    result = runner.invoke(cli, ["serve", "--keys", str(tmp_path / "none.sqlite")])
    assert result.exit_code == 2 and "no key store at" in result.stderr


def test_keys_cli_creates_lists_and_revokes(tmp_path: Path):
    runner = CliRunner()
    store = str(tmp_path / "keys.sqlite")
    created = runner.invoke(cli, ["keys", "create", "--keys", store, "--tenant", "acme",
                                  "--caller", "bot", "--scopes", "read,revoke",
                                  "--purposes", "PERSONALIZATION"])  # fmt: skip
    assert created.exit_code == 0, created.output
    token = created.stdout.strip()
    assert token.startswith("mce_") and "not shown again" in created.stderr
    listed = runner.invoke(cli, ["keys", "list", "--keys", store, "--json"])
    (entry,) = __import__("json").loads(listed.stdout)
    assert (entry["tenant"], entry["caller"], entry["scopes"], entry["purposes"]) == (
        "acme", "bot", ["read", "revoke"], ["PERSONALIZATION"])  # fmt: skip
    assert token not in listed.stdout and token.rsplit("_", 1)[1] not in listed.stdout
    revoked = runner.invoke(cli, ["keys", "revoke", "--keys", store, entry["key_id"]])
    assert revoked.exit_code == 0 and "revoked key" in revoked.stdout
    listed = runner.invoke(cli, ["keys", "list", "--keys", store])
    assert "revoked" in listed.stdout
    bad = runner.invoke(cli, ["keys", "create", "--keys", store, "--tenant", "acme",
                              "--caller", "bot", "--purposes", "READ_MINDS"])  # fmt: skip
    assert bad.exit_code == 2 and "'READ_MINDS': expected a comma-separated list" in bad.stderr


def test_created_at_and_revoked_at_come_from_the_clock(tmp_path: Path):
    moment = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
    store = KeyStore(tmp_path / "k.sqlite", clock=lambda: moment)
    key, _ = store.create(tenant="acme", caller="bot")
    assert key.created_at == moment and store.revoke(key.key_id).revoked_at == moment
    assert store.list(tenant="acme") == [store.revoke(key.key_id)]
    assert store.list(tenant="globex") == []
    store.close()
