"""The HTTP service over a real loopback socket: uvicorn in a thread, httpx as the client."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from extractor.conversation import Limits
from extractor.schemas import schema_for
from extractor.server import create_app, serve_in_thread
from extractor.service import ServiceLimits
from extractor.testing import mock_llm_extractor_for

CONVERSATION = {
    "id": "chat-1",
    "messages": [
        {"role": "user", "content": "My manager is Alice.", "timestamp": "2024-05-10T09:00:00"},
        {"role": "assistant", "content": "Got it."},
    ],
}


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    from extractor.offline import OfflineClient
    from extractor.pipeline import Extractor
    from extractor.testing import fixed_clock

    extractor = Extractor(OfflineClient(), clock=fixed_clock, limits=Limits(max_messages=20))
    limits = ServiceLimits(max_body_bytes=4096, rate_per_s=None)
    app = create_app(extractor, no_auth=True, service_limits=limits)
    with serve_in_thread(app) as url:
        yield url


@pytest.fixture(scope="module")
def http(base_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield client


def error_of(response: httpx.Response) -> dict[str, Any]:
    return response.json()["error"]


def test_healthz_names_model_and_policy(http: httpx.Client):
    response = http.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["model"].startswith("offline") and "@" in body["policy"]


def test_extract_returns_a_result_valid_against_the_published_schema(
    http: httpx.Client, offline_extractor
):
    response = http.post("/v1/extract", json=CONVERSATION)
    assert response.status_code == 200, response.text
    body = response.json()  # every record whole: result-expanded, not the lean file line
    assert list(Draft202012Validator(schema_for("result-expanded")).iter_errors(body)) == []
    expected = offline_extractor.process(CONVERSATION).model_dump(mode="json")
    for key in ("conversation_id", "conversation_hash", "candidates", "decisions", "rejections"):
        assert body[key] == expected[key]
    assert body["candidates"], "the offline model finds the manager statement"


def test_a_bare_message_list_is_a_conversation(http: httpx.Client):
    response = http.post("/v1/extract", json=CONVERSATION["messages"])
    assert response.status_code == 200
    assert response.json()["conversation_id"].startswith("conv-")


def test_content_length_over_the_limit_is_413_before_reading(http: httpx.Client):
    big = {"messages": [{"role": "user", "content": "x" * 5000}]}
    response = http.post("/v1/extract", json=big)
    assert response.status_code == 413
    assert error_of(response)["code"] == "BODY_TOO_LARGE"
    assert "exceeds the limit of 4096 bytes" in error_of(response)["message"]


def test_chunked_body_over_the_limit_is_413_while_streaming(http: httpx.Client):
    def chunks() -> Iterator[bytes]:
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(10):
            yield b"y" * 1000
        yield b'"}]}'

    response = http.post("/v1/extract", content=chunks(),
                         headers={"content-type": "application/json"})  # fmt: skip
    assert response.status_code == 413
    assert error_of(response)["code"] == "BODY_TOO_LARGE"


def test_invalid_json_is_400_with_position(http: httpx.Client):
    response = http.post("/v1/extract", content=b'{"messages": [}',
                         headers={"content-type": "application/json"})  # fmt: skip
    assert response.status_code == 400
    assert error_of(response)["code"] == "INVALID_JSON"
    assert "line 1 column 15" in error_of(response)["message"]


def test_non_json_media_type_is_415(http: httpx.Client):
    response = http.post("/v1/extract", content=b"hello", headers={"content-type": "text/plain"})
    assert response.status_code == 415
    assert "'text/plain'" in error_of(response)["message"]


@pytest.mark.parametrize(
    ("body", "field", "fragment"),
    [
        ({"messages": [{"role": "wizard", "content": "hi"}]}, "messages[0].role", "wizard"),
        ({"messages": []}, "messages", "should be non-empty"),
        ({"id": "x", "messages": [{"role": "user", "content": 5}]}, "messages[0].content", "5"),
        (
            {"messages": [{"role": "user", "content": "hi", "timestamp": "yesterday"}]},
            "messages[0].timestamp",
            "yesterday",
        ),
    ],
)
def test_schema_violations_are_422_naming_the_field(
    http: httpx.Client, body: Any, field: str, fragment: str
):
    response = http.post("/v1/extract", json=body)
    assert response.status_code == 422, response.text
    error = error_of(response)
    assert (error["code"], error["field"]) == ("SCHEMA_INVALID", field)
    assert fragment in error["message"]


def test_loader_errors_are_422_naming_the_field(http: httpx.Client):
    twice = {"id": "d", "messages": [{"id": "a", "role": "user", "content": "x"},
                                     {"id": "a", "role": "user", "content": "y"}]}  # fmt: skip
    response = http.post("/v1/extract", json=twice)
    assert response.status_code == 422
    assert error_of(response) == {
        "code": "INPUT_INVALID",
        "field": "messages[1].id",
        "message": "conversation 'd', field messages[1].id: duplicate message id 'a'",
    }
    many = {"messages": [{"role": "user", "content": "hi"}] * 21}
    response = http.post("/v1/extract", json=many)
    assert response.status_code == 422
    assert error_of(response)["code"] == "LIMIT_EXCEEDED"
    assert "21 messages exceed the limit of 20" in error_of(response)["message"]


def test_published_schemas_are_served(http: httpx.Client):
    root = Path(__file__).resolve().parents[1] / "schemas"
    response = http.get("/v1/schemas/conversation")
    assert response.json() == json.loads((root / "conversation.schema.json").read_text())
    response = http.get("/v1/schemas/nope")
    assert response.status_code == 404 and error_of(response)["field"] == "name"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool", "system", "developer", "bot"]),
     "content": st.text(max_size=60) | st.none()},
    optional={"id": st.text(max_size=3), "name": st.text(max_size=5)},
)  # fmt: skip


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    body=JSON
    | st.lists(MESSAGE, max_size=4)
    | st.fixed_dictionaries({"messages": st.lists(MESSAGE, max_size=4)})
)
def test_any_json_body_gets_200_or_a_clear_4xx(http: httpx.Client, body: Any):
    payload = json.dumps(body).encode()
    response = http.post(
        "/v1/extract", content=payload, headers={"content-type": "application/json"}
    )
    assert response.status_code in (200, 413, 422), response.text
    if response.status_code != 200:
        error = error_of(response)
        assert error["code"] and error["message"]


# -- model errors, through the mock LLM server ---------------------------------------------------


@pytest.fixture
def served(request: pytest.FixtureRequest, mock_llm_server) -> Iterator[httpx.Client]:
    options = getattr(request, "param", {})
    extractor = mock_llm_extractor_for(mock_llm_server, max_rate_limit_retries=0, **options)
    app = create_app(extractor, no_auth=True)
    with serve_in_thread(app) as url, httpx.Client(base_url=url) as client:
        yield client


@pytest.mark.mock_llm_faults("rate_limit:always", retry_after=7)
def test_rate_limited_model_is_503_with_retry_after(served: httpx.Client):
    response = served.post("/v1/extract", json=CONVERSATION)
    assert response.status_code == 503
    assert response.headers["retry-after"] == "7"
    assert error_of(response)["code"] == "MODEL_RATE_LIMITED"


@pytest.mark.mock_llm_faults("server_error:always")
def test_failing_model_server_is_502(served: httpx.Client):
    response = served.post("/v1/extract", json=CONVERSATION)
    assert response.status_code == 502
    assert error_of(response)["code"] == "MODEL_ERROR"
    assert "HTTP 500" in error_of(response)["message"]


@pytest.mark.mock_llm_faults("refusal")
def test_refusing_model_is_502(served: httpx.Client):
    response = served.post("/v1/extract", json=CONVERSATION)
    assert (response.status_code, error_of(response)["code"]) == (502, "MODEL_REFUSED")


# the model answers long after the service's timeout, however loaded the machine is
@pytest.mark.mock_llm_faults(latency=30.0)
@pytest.mark.parametrize("served", [{"timeout": 0.2}], indirect=True)
def test_slow_model_is_504(served: httpx.Client):
    response = served.post("/v1/extract", json=CONVERSATION)
    assert (response.status_code, error_of(response)["code"]) == (504, "MODEL_TIMEOUT")


@pytest.mark.mock_llm_faults("rate_limit:1")
def test_a_retried_rate_limit_is_invisible_to_the_caller(served: httpx.Client, mock_llm_server):
    response = served.post("/v1/extract", json=CONVERSATION)
    assert response.status_code == 503  # no retries configured here: the caller sees it
    response = served.post("/v1/extract", json=CONVERSATION)
    assert response.status_code == 200 and response.json()["candidates"]
    assert len(mock_llm_server.requests) == 2


# -- the optional extra -----------------------------------------------------------------------


def test_without_fastapi_the_plugin_loads_and_serve_explains(monkeypatch):
    monkeypatch.setitem(sys.modules, "fastapi", None)
    for name in [
        n for n in sys.modules if n == "extractor.server" or n.startswith("extractor.service")
    ]:
        monkeypatch.delitem(sys.modules, name)
    importlib.reload(importlib.import_module("extractor.testing"))
    with pytest.raises(ImportError, match=r"needs the 'server' extra"):
        importlib.import_module("extractor.server")
    from extractor.cli import cli

    result = CliRunner().invoke(cli, ["serve", "--port", "0", "--no-auth"])
    assert result.exit_code == 2
    assert "pip install 'memory-candidate-extractor[server]'" in result.stderr


def test_serve_takes_the_model_options_of_run_with_the_same_checks() -> None:
    from extractor.cli import cli

    result = CliRunner().invoke(
        cli, ["serve", "--no-auth", "--model", "m", "--base-url", "http://127.0.0.1:9", "--api-key", "k",
              "--mode", "telepathy", "--limit-candidates", "3"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "telepathy" in result.stderr
