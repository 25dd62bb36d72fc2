"""The OpenAPI document is the contract: published, complete, and held by schemathesis."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import examples, loopback, schema_validator
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from extractor.clients.offline import OfflineClient
from extractor.conversation import ISO_TIMESTAMP_PATTERN, conversation_from_data
from extractor.errors import InputError
from extractor.pipeline import Extractor
from extractor.resultline import encode
from extractor.schemas import schema_for
from extractor.service import KeyStore, Scope, ServiceLimits, create_app, openapi, serve_in_thread
from extractor.store import MemoryStore
from extractor.testing import fixed_clock
from extractor.vocab import Capability

ROOT = Path(__file__).resolve().parents[1]
SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"
PUBLISHED = json.loads((ROOT / "schemas" / "openapi.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    scratch = tmp_path_factory.mktemp("service")
    keys = KeyStore(scratch / "keys.sqlite")
    _, token = keys.create(tenant="acme", caller="fuzzer", scopes=list(Scope),
                           purposes=list(Capability))  # fmt: skip
    extractor = Extractor(OfflineClient(), clock=fixed_clock)
    store = MemoryStore(scratch / "memory.db")
    app = create_app(extractor, keys=keys, store=store,
                     service_limits=ServiceLimits(rate_per_s=None))  # fmt: skip
    with serve_in_thread(app) as url:
        yield url, token
    keys.close()
    store.close()


def test_the_published_document_is_what_the_service_serves(service: tuple[str, str]):
    url, _ = service
    assert loopback().get(f"{url}/openapi.json").json() == PUBLISHED
    assert not openapi.drifted(ROOT / "schemas"), "run 'extractor schema --write'"


def operations() -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in PUBLISHED["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def test_every_post_declares_the_published_conversation_schema_as_its_body():
    for _path, method, operation in operations():
        if method == "post":
            body = operation["requestBody"]
            assert body["required"] is True
            media = body["content"]["application/json"]
            assert media["schema"]["$ref"] in ("#/components/schemas/ConversationInput",
                                               "#/components/schemas/ReadBody",
                                               "#/components/schemas/RevokeRequest",
                                               "#/components/schemas/EraseRequest")  # fmt: skip
            assert media["example"]
    component = PUBLISHED["components"]["schemas"]["ConversationObject"]
    assert component["required"] == ["messages"]


def test_every_response_has_its_schema_and_an_example_valid_against_it():
    for path, method, operation in operations():
        for status, response in operation["responses"].items():
            media = response["content"]["application/json"]
            schema = {**media["schema"], "components": PUBLISHED["components"]}
            errors = list(Draft202012Validator(schema).iter_errors(media["example"]))
            assert not errors, (path, method, status, errors[0].message)
            if status != "200":
                assert media["example"]["error"]["code"]


def test_routes_that_do_work_declare_auth_and_every_error_status():
    security = PUBLISHED["components"]["securitySchemes"]["ApiKey"]
    assert (security["type"], security["scheme"]) == ("http", "bearer")
    extract = PUBLISHED["paths"]["/v1/extract"]["post"]
    for path, method, operation in operations():
        if path.startswith(("/v1/extract", "/v1/memories")):
            assert operation["security"] == [{"ApiKey": []}], (path, method)
            assert {"401", "403", "429"} <= set(operation["responses"]), (path, method)
    assert set(extract["responses"]) == {"200", "400", "401", "403", "413", "415", "422", "429",
                                         "500", "502", "503", "504"}  # fmt: skip
    assert extract["responses"]["401"]["headers"]["WWW-Authenticate"]["required"]
    assert extract["responses"]["429"]["headers"]["Retry-After"]["required"]
    for path in ("/healthz", "/v1/schemas/{name}"):
        assert "security" not in PUBLISHED["paths"][path]["get"]
    for suffix in ("", ":why", ":lineage"):  # the audit routes' own errors are their examples
        responses = PUBLISHED["paths"][f"/v1/memories/{{memory_id}}{suffix}"]["get"]["responses"]
        assert responses["404"]["content"]["application/json"]["example"]["error"]["field"] == (
            "memory_id"
        )
        assert (
            "'audit'"
            in responses["403"]["content"]["application/json"]["example"]["error"]["message"]
        )


#: The stateful phase runs longer scenarios than the default (6 steps), so that a chain of four
#: linked calls (ingest -> read -> revoke -> read) fits in one with room for detours.
SCHEMATHESIS_CONFIG = """
[phases.stateful]
max-steps = 10

[phases.stateful.generation]
max-examples = 40
"""


@pytest.mark.slow  # fuzzes every operation and the stateful chain: ~15 s of CPU
def test_schemathesis_finds_no_failure_with_every_check(service: tuple[str, str], tmp_path: Path):
    url, token = service
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "schemathesis_hooks",
           "PYTHONPATH": str(ROOT / "tests")}  # fmt: skip
    (tmp_path / "schemathesis.toml").write_text(SCHEMATHESIS_CONFIG, encoding="utf-8")
    har = tmp_path / "run.har"
    command = [str(SCHEMATHESIS), "run", f"{url}/openapi.json", "--checks", "all",
               "--header", f"Authorization: Bearer {token}", "--max-examples", "15",
               "--seed", "20261201", "--generation-database", "none", "--no-color",
               "--workers", "1", "--report", "har", "--report-har-path", str(har)]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    summary = done.stdout.strip().splitlines()[-1]
    assert "failure" not in summary and "error" not in summary, summary
    assert "Stateful" in done.stdout and "0 covered" not in done.stdout
    entries = json.loads(har.read_text(encoding="utf-8"))["log"]["entries"]
    stored, read, revoked, reread = chain(entries)
    assert reread, (f"no memory went ingest -> read -> revoke -> read: {len(stored)} stored, "
                    f"{len(read)} read, {len(revoked)} revoked")  # fmt: skip


def chain(entries: list[dict[str, Any]]) -> tuple[set[str], ...]:
    """Memory ids (of the fuzzer's successful calls, in order) that were stored by an ingest,
    then returned by a read, then revoked, then read about again (the same subject): a revoked
    memory is never returned again."""
    stored: set[str] = set()
    subject_of: dict[str, str] = {}
    revoked: set[str] = set()
    reread: set[str] = set()
    for entry in entries:
        if entry["response"]["status"] != 200:
            continue
        url = entry["request"]["url"]
        body = json.loads(entry["response"]["content"]["text"])
        if url.endswith("/v1/memories:ingest"):
            stored |= set(body["stored"]) | set(body["already_stored"])
        elif url.endswith("/v1/memories:read"):
            subject, returned = body["request"]["subject"], {i["memory_id"] for i in body["items"]}
            assert not returned & revoked, f"a revoked memory was read: {returned & revoked}"
            reread |= {m for m in revoked if subject_of[m] == subject}
            subject_of.update((m, subject) for m in returned & stored)
        elif url.endswith(":revoke"):
            memory = url.rsplit("/", 1)[1].split(":")[0]
            if memory in subject_of:
                revoked.add(memory)
    return stored, set(subject_of), revoked, reread


def test_the_stateful_chain_is_linked_in_the_document():
    def links(path: str, method: str) -> dict[str, Any]:
        return PUBLISHED["paths"][path][method]["responses"]["200"]["links"]

    ingest = links("/v1/memories:ingest", "post")
    assert {link["operationId"] for link in ingest.values()} == {
        "readMemories", "getMemory", "explainMemory", "revokeMemory", "eraseMemories"}  # fmt: skip
    assert ingest["ReadIngestedSubject"]["requestBody"]["subject"] == "$response.body#/subject"
    read = links("/v1/memories:read", "post")
    assert read["RevokeReadMemory"] == {
        "operationId": "revokeMemory",
        "parameters": {"memory_id": "$response.body#/items/0/memory_id"}}  # fmt: skip
    assert read["ReadAgain"]["operationId"] == "readMemories"
    revoke = links("/v1/memories/{memory_id}:revoke", "post")
    assert revoke["GetRevokedMemory"]["operationId"] == "getMemory"


@settings(max_examples=examples(50))
@given(st.from_regex(ISO_TIMESTAMP_PATTERN, fullmatch=True))
def test_every_timestamp_the_schema_accepts_the_loader_accepts(timestamp: str):
    conversation = {"messages": [{"role": "user", "content": "hi", "timestamp": timestamp}]}
    assert schema_validator("conversation").is_valid(conversation)
    assert conversation_from_data(conversation).messages[0].timestamp is not None


EDGES = [-62_135_596_800_000, -100_000_000_000, -62_135_596_800, 100_000_000_000,
         253_402_300_800_000]  # fmt: skip


@settings(max_examples=examples(75))
@given(
    st.floats(allow_nan=False, allow_infinity=False)
    | st.integers()
    | st.sampled_from(EDGES).flatmap(lambda edge: st.floats(edge - 2, edge + 2))
    | st.sampled_from(EDGES).flatmap(lambda edge: st.integers(edge - 2, edge + 2))
)
def test_schema_and_loader_agree_on_epoch_timestamps(epoch: float):
    conversation = {"messages": [{"role": "user", "content": "hi", "timestamp": epoch}]}
    try:
        conversation_from_data(conversation)
        loaded = True
    except InputError:
        loaded = False
    assert schema_validator("conversation").is_valid(conversation) == loaded


def test_date_times_are_published_as_this_package_writes_them(offline_extractor):
    naive = {"messages": [{"role": "user", "content": "My manager is Alice.",
                           "timestamp": "2024-05-10T09:00:00"}]}  # fmt: skip
    line = offline_extractor.process(naive).model_dump(mode="json")
    assert line["candidates"][0]["observed_at"] == "2024-05-10T09:00:00"
    assert list(Draft202012Validator(schema_for("result-expanded")).iter_errors(line)) == []
    lean = encode(offline_extractor.process(naive))
    assert list(Draft202012Validator(schema_for("result")).iter_errors(lean)) == []
    # RFC 3339 date-time requires an offset, which a naive message timestamp does not have:
    # no published document may promise it (the pattern above is what is checked instead).
    for path in (ROOT / "schemas").glob("*.json"):
        assert '"date-time"' not in path.read_text(encoding="utf-8"), path.name
