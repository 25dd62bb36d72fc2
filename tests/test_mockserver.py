"""The mock OpenAI-compatible server: response shapes per instructor mode, and every fault."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from helpers import loopback
from hypothesis import given
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion

from extractor.conversation import Conversation, conversation_from_data
from extractor.errors import ExtractionOutputError
from extractor.mockserver import FABRICATED_QUOTE, REFUSAL_TEXT, MockServer, parse_faults
from extractor.offline import offline_proposal
from extractor.prompts import load_prompt
from extractor.validation import Code, validate_extraction

CONV = conversation_from_data(
    {
        "id": "mock-1",
        "messages": [
            {"role": "user", "content": "My manager is Alice."},
            {"role": "assistant", "content": "Q3 revenue was approximately $46 million."},
            {"role": "user", "content": "I think I prefer tea over coffee."},
        ],
    }
)
SCHEMA = {"type": "object", "properties": {"candidates": {"type": "array"}}}


def body(mode: str = "tools", conv: Conversation = CONV, **extra: Any) -> dict[str, Any]:
    request: dict[str, Any] = {"model": "offline", "messages": load_prompt().render(conv)}
    if mode == "tools":
        request["tools"] = [
            {"type": "function", "function": {"name": "ExtractionOutput", "parameters": SCHEMA}}
        ]
        request["tool_choice"] = {"type": "function", "function": {"name": "ExtractionOutput"}}
    elif mode == "json_schema":
        request["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "ExtractionOutput", "schema": SCHEMA},
        }
    elif mode == "json":
        request["response_format"] = {"type": "json_object"}
    return {**request, **extra}


@pytest.fixture(scope="module")
def server() -> Iterator[MockServer]:
    with MockServer() as running:
        yield running


def post(server: MockServer, request: dict[str, Any], **headers: str) -> httpx.Response:
    return loopback().post(f"{server.base_url}/chat/completions", json=request, headers=headers)


def answer_of(completion: ChatCompletion) -> Any:
    message = completion.choices[0].message
    if message.tool_calls:
        return json.loads(message.tool_calls[0].function.arguments)  # type: ignore[union-attr]
    text = message.content or ""
    return json.loads(text.removeprefix("```json\n").removesuffix("\n```"))


@pytest.mark.parametrize("mode", ["tools", "json_schema", "json", "md_json"])
def test_each_mode_answers_in_the_openai_shape_with_the_offline_output(
    server: MockServer, mode: str
) -> None:
    response = post(server, body(mode))
    assert response.status_code == 200
    completion = ChatCompletion.model_validate(response.json())
    choice = completion.choices[0]
    assert answer_of(completion) == offline_proposal(CONV)
    assert completion.usage is not None
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert choice.message.role == "assistant"
    if mode == "tools":
        assert choice.message.content is None
        assert choice.message.tool_calls[0].function.name == "ExtractionOutput"  # type: ignore[index,union-attr]
        assert choice.finish_reason == "stop"  # a named tool_choice finishes with "stop"
    else:
        assert choice.message.tool_calls is None
        assert choice.finish_reason == "stop"
    if mode == "md_json":
        assert choice.message.content.startswith("```json\n")  # type: ignore[union-attr]


def test_tool_choice_required_finishes_with_tool_calls(server: MockServer) -> None:
    response = post(server, body("tools", tool_choice="required"))
    assert response.json()["choices"][0]["finish_reason"] == "tool_calls"


def test_models_lists_the_offline_model(server: MockServer) -> None:
    response = loopback().get(f"{server.base_url}/models")
    assert response.status_code == 200
    assert [m["id"] for m in response.json()["data"]] == ["offline", "mock"]


@pytest.mark.parametrize(
    ("send", "status"),
    [
        (lambda url: loopback().post(f"{url}/chat/completions", content=b"{not json"), 400),
        (lambda url: loopback().post(f"{url}/chat/completions", json={"model": "x"}), 400),
        (lambda url: loopback().get(f"{url}/embeddings"), 404),
    ],
)
def test_bad_requests_get_openai_style_errors(server: MockServer, send: Any, status: int) -> None:
    response = send(server.base_url)
    assert response.status_code == status
    assert response.json()["error"]["message"]


def test_unknown_fault_in_a_request_is_a_400(server: MockServer) -> None:
    response = post(server, body(), **{"X-Mock-Fault": "teleport"})
    assert response.status_code == 400
    assert "teleport" in response.json()["error"]["message"]


def test_the_server_sees_template_syntax_and_markup_exactly() -> None:
    text = "Call me {{ name }} {% if x %}</conversation>{% endif %} & <b>"
    conv = conversation_from_data({"id": "jinja", "messages": [{"role": "user", "content": text}]})
    with MockServer() as running:
        assert post(running, body("json", conv)).status_code == 200
        seen = running.requests[0]["messages"][1]["content"]
    assert seen == load_prompt().render(conv)[1]["content"]


# --- faults ---------------------------------------------------------------------------------


def test_rate_limit_sends_429_with_retry_after_then_recovers_per_body() -> None:
    with MockServer(faults="rate_limit:1", retry_after=7) as running:
        first = post(running, body())
        second = post(running, body())
        other = post(running, body("json"))  # a different body has its own count
    assert first.status_code == 429
    assert first.headers["retry-after"] == "7"
    assert first.json()["error"]["code"] == "rate_limit_exceeded"
    assert second.status_code == 200
    assert other.status_code == 429


def test_server_error_always_and_retry_after_header_override() -> None:
    with MockServer(faults="server_error") as running:
        assert [post(running, body()).status_code for _ in range(3)] == [500, 500, 500]
        limited = post(
            running, body(), **{"X-Mock-Fault": "rate_limit", "X-Mock-Retry-After": "2.5"}
        )
    assert limited.status_code == 429
    assert limited.headers["retry-after"] == "2.5"


def test_malformed_content_is_not_json(server: MockServer) -> None:
    response = post(server, body("json"), **{"X-Mock-Fault": "malformed"})
    content = response.json()["choices"][0]["message"]["content"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(content)
    with pytest.raises(ExtractionOutputError):
        validate_extraction(content, CONV)


@pytest.mark.parametrize("mode", ["tools", "json"])
def test_truncated_output_finishes_with_length(server: MockServer, mode: str) -> None:
    response = post(server, body(mode), **{"X-Mock-Fault": "truncated"})
    completion = ChatCompletion.model_validate(response.json())
    assert completion.choices[0].finish_reason == "length"
    full = json.dumps(offline_proposal(CONV), ensure_ascii=False, separators=(",", ":"))
    message = completion.choices[0].message
    text = message.tool_calls[0].function.arguments if message.tool_calls else message.content  # type: ignore[union-attr]
    assert text and full.startswith(text) and len(text) < len(full)


def test_refusal_sets_refusal_and_nothing_else(server: MockServer) -> None:
    response = post(server, body("tools"), **{"X-Mock-Fault": "refusal"})
    message = ChatCompletion.model_validate(response.json()).choices[0].message
    assert message.refusal == REFUSAL_TEXT
    assert message.content is None
    assert message.tool_calls is None


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        ("verified", Code.EXTRACTOR_CLAIMED_VERIFIED),
        ("fabricated_span", Code.SPAN_NOT_FOUND),
        ("origin_laundering", Code.ORIGIN_LAUNDERING),
    ],
)
def test_candidate_faults_add_one_bad_candidate_and_keep_the_rest(
    server: MockServer, fault: str, code: Code
) -> None:
    response = post(server, body("json", model=f"offline+{fault}"))
    output = json.loads(response.json()["choices"][0]["message"]["content"])
    report = validate_extraction(output, CONV)
    good = validate_extraction(offline_proposal(CONV), CONV)
    assert [r.code for r in report.rejections] == [code]
    assert report.accepted == good.accepted
    if fault == "fabricated_span":
        assert report.rejections[0].raw["quote"] == FABRICATED_QUOTE


def _reask(request: dict[str, Any], bad: str, feedback: str) -> dict[str, Any]:
    messages = [*request["messages"], {"role": "assistant", "content": bad}]
    return {**request, "messages": [*messages, {"role": "user", "content": feedback}]}


def test_candidate_fault_stops_once_the_reask_names_its_code(server: MockServer) -> None:
    request = body("json", model="offline+verified")
    bad = post(server, request).json()["choices"][0]["message"]["content"]
    vague = post(server, _reask(request, bad, "Something is wrong."))
    told = post(server, _reask(request, bad, "- candidate c9: EXTRACTOR_CLAIMED_VERIFIED"))
    assert "VERIFIED" in vague.json()["choices"][0]["message"]["content"]
    assert json.loads(told.json()["choices"][0]["message"]["content"]) == offline_proposal(CONV)


def test_always_and_counted_faults_ignore_feedback(server: MockServer) -> None:
    told = "EXTRACTOR_CLAIMED_VERIFIED"
    request = body("json", model="offline+verified:always")
    bad = post(server, request).json()["choices"][0]["message"]["content"]
    again = post(server, _reask(request, bad, told)).json()["choices"][0]["message"]["content"]
    assert "VERIFIED" in again and again != bad  # a re-ask gets another text, still wrong
    repeated = body("json", model="offline+verified:always+repeat")
    first = post(server, repeated).json()["choices"][0]["message"]["content"]
    same = post(server, _reask(repeated, first, told)).json()["choices"][0]["message"]["content"]
    assert same == first  # ``repeat``: the same bytes, as at temperature 0
    counted = body("json", model="offline+malformed:1")
    first = post(server, counted).json()["choices"][0]["message"]["content"]
    second = post(server, _reask(counted, first, "fix it")).json()["choices"][0]["message"]
    assert json.loads(second["content"]) == offline_proposal(CONV)


def test_fault_precedence_request_then_conversation_then_server() -> None:
    other = conversation_from_data(
        {"id": "mock-2", "messages": [{"role": "user", "content": "I live in Lisbon."}]}
    )
    with MockServer(faults="server_error", conversation_faults={"mock-2": "refusal"}) as running:
        assert post(running, body("json")).status_code == 500
        refused = post(running, body("json", other)).json()["choices"][0]["message"]
        by_header = post(running, body("json", other), **{"X-Mock-Fault": "malformed"})
    assert refused["refusal"] == REFUSAL_TEXT
    assert by_header.json()["choices"][0]["message"]["content"].startswith("{'candidates'")


def test_parse_faults_rejects_unknown_names_and_counts() -> None:
    assert [f.name for f in parse_faults("verified, rate_limit:2")] == ["verified", "rate_limit"]
    assert parse_faults(["truncated:always"])[0].always
    with pytest.raises(ValueError, match="unknown fault 'nope'"):
        parse_faults("nope")
    with pytest.raises(ValueError, match="count must be a number"):
        parse_faults("verified:twice")


@given(st.integers(min_value=0, max_value=5), st.integers(min_value=1, max_value=10))
def test_counted_fault_fires_exactly_on_the_first_n(times: int, count: int) -> None:
    (fault,) = parse_faults(f"server_error:{times}")
    assert fault.fires(count) == (count <= times)


def test_base_url_before_start_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="not running"):
        _ = MockServer().base_url


def test_cli_serves_until_interrupted() -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", "from extractor.cli import main; main()", "mock-server",
         "--port", "0", "--fault", "verified"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("mock OpenAI-compatible server at http://127.0.0.1:")
        base_url = line.split(" at ", 1)[1].split()[0]
        # Generous ceilings, never expected durations: a loaded machine is slow, not wrong.
        assert loopback().get(f"{base_url}/models", timeout=120).status_code == 200
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=300) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


# --- faults of real servers -------------------------------------------------------------------


def test_no_json_schema_is_the_500_llama_cpp_python_answers(server: MockServer) -> None:
    refused = post(server, body("json_schema", model="offline+no_json_schema"))
    assert refused.status_code == 500
    assert "Input should be 'text' or 'json_object'" in refused.json()["error"]["message"]
    assert post(server, body("json", model="offline+no_json_schema")).status_code == 200


def test_no_tools_refuses_tool_calls_only(server: MockServer) -> None:
    assert post(server, body("tools", model="offline+no_tools")).status_code == 400
    assert post(server, body("md_json", model="offline+no_tools")).status_code == 200


@pytest.mark.parametrize("mode", ["tools", "json_schema", "json", "md_json"])
def test_an_answer_longer_than_max_tokens_is_cut_there(server: MockServer, mode: str) -> None:
    whole = ChatCompletion.model_validate(post(server, body(mode)).json())
    assert whole.usage is not None and whole.usage.completion_tokens > 20
    cut = ChatCompletion.model_validate(post(server, body(mode, max_tokens=20)).json())
    assert cut.choices[0].finish_reason == "length"
    assert cut.usage is not None and cut.usage.completion_tokens == 20
    lied = post(server, body(mode, max_tokens=20, model="offline+finish_lies")).json()
    assert lied["choices"][0]["finish_reason"] in {"stop", "tool_calls"}
    assert lied["usage"]["completion_tokens"] == 20


def test_drop_system_counts_no_system_prompt_tokens(server: MockServer) -> None:
    sent = post(server, body("json")).json()["usage"]["prompt_tokens"]
    dropped = post(server, body("json", model="offline+drop_system")).json()["usage"]
    system = next(m["content"] for m in body("json")["messages"] if m["role"] == "system")
    assert dropped["prompt_tokens"] < sent - len(system) // 5


def test_a_single_slot_server_answers_one_request_at_a_time() -> None:
    with MockServer(slots=1, latency=0.05) as server:
        with ThreadPoolExecutor(4) as pool:
            replies = list(pool.map(lambda _: post(server, body()), range(4)))
        assert [r.status_code for r in replies] == [200] * 4
        assert server.peak_answering == 1  # answered one after the other
        assert server.in_flight == 0
    with pytest.raises(ValueError, match="slots"):
        MockServer(slots=0)


def test_a_chat_without_a_transcript_gets_a_plain_reply(server: MockServer) -> None:
    chat = {"model": "mock", "messages": [{"role": "user", "content": "Count."}]}
    short = post(server, chat).json()
    assert short["choices"][0]["message"]["content"] == "OK"
    counted = post(server, {**chat, "max_tokens": 5}).json()
    assert counted["choices"][0]["message"]["content"] == "1 2 3 4 5"
    assert counted["usage"]["completion_tokens"] == 5
