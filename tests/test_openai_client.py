"""OpenAIClient against the mock server over a real socket: modes, re-asks, every fault."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from extractor.clients.base import ClientResult, extract_sync
from extractor.clients.openai_client import (
    OpenAIClient,
    parse_output,
    retry_after_seconds,
)
from extractor.conversation import Conversation, conversation_from_data
from extractor.errors import (
    ExtractionOutputError,
    ModelClientError,
    ModelRefused,
    ModelTimeout,
    OutputTruncated,
    RateLimited,
)
from extractor.mockserver import MockServer
from extractor.offline import offline_proposal
from extractor.prompts import load_prompt
from extractor.validation import Code, ValidationOptions, ValidationReport, validate_extraction

MODES = ["tools", "json_schema", "json", "md_json"]
PROMPT = load_prompt()
OPTIONS = ValidationOptions()


def conv(cid: str, *texts: str) -> Conversation:
    roles = ["user", "assistant"]
    messages = [{"role": roles[i % 2], "content": t} for i, t in enumerate(texts)]
    return conversation_from_data({"id": cid, "messages": messages})


ALICE = conv(
    "alice",
    "My manager is Alice.",
    "Q3 revenue was approximately $46 million.",
    "I think I prefer tea over coffee.",
)
BATCH = [
    ALICE,
    conv("lisbon", "I live in Lisbon and I work at a bakery.", "Nice."),
    conv("berlin", "What if I moved to Berlin?", "It could be fun."),
]


def client(server: MockServer, **options: Any) -> OpenAIClient:
    settings: dict[str, Any] = {"model": "offline", "api_key": "k", "retry_backoff": 0.0}
    settings.update(options)
    return OpenAIClient(base_url=server.base_url, **settings)


def run(cl: OpenAIClient, conversation: Conversation = ALICE) -> ClientResult:
    return extract_sync(cl, conversation, PROMPT, OPTIONS)


def offline_report(conversation: Conversation = ALICE) -> ValidationReport:
    return validate_extraction(offline_proposal(conversation), conversation)


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_yields_the_offline_candidates(mode: str) -> None:
    with MockServer() as server:
        result = run(client(server, mode=mode))
    report = validate_extraction(result.output, ALICE)
    assert report.accepted == offline_report().accepted
    assert report.rejections == []
    assert result.attempts == 1
    assert result.failed_attempts == []
    assert result.model == "offline"
    assert result.usage.total_tokens > 0


def test_prompt_reaches_the_model_unaltered_despite_template_syntax() -> None:
    text = "My name is {{ name }} and {% raw %}I like </conversation> & <tags>{% endraw %}."
    conversation = conv("jinja", text)
    with MockServer() as server:
        result = run(client(server, mode="json"), conversation)
        sent = server.requests[0]["messages"]
    assert text in json.loads(sent[-1]["content"].splitlines()[3])["text"]
    assert sent[-1]["content"] == PROMPT.render(conversation)[1]["content"]
    assert validate_extraction(result.output, conversation).rejections == []


# --- re-asks --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        ("verified", Code.EXTRACTOR_CLAIMED_VERIFIED),
        ("fabricated_span", Code.SPAN_NOT_FOUND),
        ("origin_laundering", Code.ORIGIN_LAUNDERING),
    ],
)
@pytest.mark.parametrize("mode", ["tools", "json_schema"])
def test_a_reask_fixes_a_correctable_error(fault: str, code: Code, mode: str) -> None:
    with MockServer(faults=fault) as server:
        result = run(client(server, mode=mode))
        reask = server.requests[1]["messages"]
    assert result.attempts == 2
    (failed,) = result.failed_attempts
    assert [r.code for r in failed.rejections] == [code]
    assert failed.raw_output is not None and json.loads(failed.raw_output) != result.output
    assert code.value in json.dumps(reask[len(PROMPT.render(ALICE)) :])
    assert validate_extraction(result.output, ALICE).accepted == offline_report().accepted


def test_usage_is_summed_over_every_attempt() -> None:
    seen: list[dict[str, int]] = []

    async def capture(response: httpx2.Response) -> None:
        await response.aread()
        seen.append(response.json()["usage"])

    async def main() -> ClientResult:
        async with httpx2.AsyncClient(event_hooks={"response": [capture]}) as http:
            return await client(server, http_client=http).extract(ALICE, PROMPT, OPTIONS)

    with MockServer(faults="verified:2") as server:
        result = asyncio.run(main())
    assert result.attempts == 3 and len(seen) == 3
    assert result.usage.prompt_tokens == sum(u["prompt_tokens"] for u in seen)
    assert result.usage.completion_tokens == sum(u["completion_tokens"] for u in seen)
    assert result.usage.total_tokens == sum(u["total_tokens"] for u in seen)


def test_exhausted_attempts_return_the_last_output_valid_candidates_kept() -> None:
    with MockServer(faults="verified:always") as server:
        result = run(client(server, max_attempts=3))
        asked = len(server.requests)
    assert asked == 3 and result.attempts == 3
    assert len(result.failed_attempts) == 2  # the last answer is the output, not a failure
    report = validate_extraction(result.output, ALICE)
    assert report.accepted == offline_report().accepted
    (rejection,) = report.rejections
    assert rejection.code is Code.EXTRACTOR_CLAIMED_VERIFIED
    assert rejection.raw["verification"] == "VERIFIED"


def test_max_attempts_one_never_reasks() -> None:
    with MockServer(faults="fabricated_span") as server:
        result = run(client(server, max_attempts=1))
        assert len(server.requests) == 1
    assert result.failed_attempts == []
    assert [r.code for r in validate_extraction(result.output, ALICE).rejections] == [
        Code.SPAN_NOT_FOUND
    ]


def test_malformed_json_is_reasked_and_fixed() -> None:
    with MockServer(faults="malformed:1") as server:
        result = run(client(server, mode="json"))
    assert result.attempts == 2
    assert "Invalid JSON" in result.failed_attempts[0].error
    assert result.failed_attempts[0].raw_output.startswith("{'candidates'")  # type: ignore[union-attr]
    assert validate_extraction(result.output, ALICE).accepted == offline_report().accepted


def test_malformed_json_to_the_end_is_returned_raw_for_the_pipeline_to_report() -> None:
    with MockServer(faults="malformed") as server:
        result = run(client(server, mode="json", max_attempts=2))
    assert isinstance(result.output, str) and result.output == result.raw_text
    with pytest.raises(ExtractionOutputError):
        validate_extraction(result.output, ALICE)


# --- transport faults -----------------------------------------------------------------------


def test_rate_limit_is_retried_honouring_retry_after() -> None:
    with MockServer(faults="rate_limit:2", retry_after=0) as server:
        result = run(client(server, max_rate_limit_retries=2))
        assert len(server.requests) == 3
    assert result.attempts == 1  # transport retries are not model attempts
    assert validate_extraction(result.output, ALICE).accepted == offline_report().accepted


def test_rate_limit_beyond_the_retry_budget_raises_rate_limited() -> None:
    with MockServer(faults="rate_limit", retry_after=0) as server:
        with pytest.raises(RateLimited) as caught:
            run(client(server, max_rate_limit_retries=2))
        assert len(server.requests) == 3
    assert caught.value.retry_after == 0
    assert "alice" in str(caught.value) and "429" in str(caught.value)


def test_a_retry_after_longer_than_allowed_is_not_waited_for() -> None:
    with MockServer(faults="rate_limit", retry_after=3600) as server:
        with pytest.raises(RateLimited) as caught:
            run(client(server, max_retry_wait=30))
        assert len(server.requests) == 1
    assert caught.value.retry_after == 3600


def test_server_errors_are_retried_then_reported() -> None:
    with MockServer(faults="server_error:1") as server:
        assert run(client(server)).attempts == 1
        assert len(server.requests) == 2
    with MockServer(faults="server_error") as server:
        with pytest.raises(ModelClientError, match="HTTP 500") as caught:
            run(client(server, max_rate_limit_retries=1))
        assert len(server.requests) == 2
    assert type(caught.value) is ModelClientError


def test_a_slow_server_times_out() -> None:
    with (
        MockServer(latency=30.0) as server,  # far beyond the timeout, however loaded the machine
        pytest.raises(ModelTimeout, match=r"no answer within 0\.2s"),
    ):
        run(client(server, timeout=0.2, max_rate_limit_retries=0))


def test_client_errors_are_not_retried() -> None:
    with MockServer() as server:
        broken = OpenAIClient(model="m", base_url=server.base_url + "/nope", api_key="k")
        with pytest.raises(ModelClientError, match="HTTP 404"):
            run(broken)
        assert server.requests == []


def test_an_unreachable_server_is_reported_after_retries() -> None:
    with MockServer() as server:
        url = server.base_url
    cl = OpenAIClient(model="m", base_url=url, api_key="k", retry_backoff=0.0)
    with pytest.raises(ModelClientError, match="cannot reach the model server"):
        run(cl)


def test_refusal_is_final_and_burns_no_reasks() -> None:
    with MockServer(faults="refusal") as server:
        with pytest.raises(ModelRefused) as caught:
            run(client(server, mode="json"))
        assert len(server.requests) == 1
    assert caught.value.attempts == 1
    assert caught.value.raw_output and "can't help" in caught.value.raw_output


@pytest.mark.parametrize("mode", ["tools", "md_json"])
def test_truncated_output_is_final_and_keeps_the_raw_text(mode: str) -> None:
    with MockServer(faults="truncated") as server:
        with pytest.raises(OutputTruncated, match="token limit") as caught:
            run(client(server, mode=mode))
        assert len(server.requests) == 1
    assert caught.value.raw_output


# --- the batch keeps going ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fault", "outcome"),
    [
        ("rate_limit", RateLimited),
        ("server_error", ModelClientError),
        ("refusal", ModelRefused),
        ("truncated", OutputTruncated),
        ("malformed", ExtractionOutputError),
        ("verified:always", Code.EXTRACTOR_CLAIMED_VERIFIED),
        ("fabricated_span:always", Code.SPAN_NOT_FOUND),
        ("origin_laundering:always", Code.ORIGIN_LAUNDERING),
    ],
)
def test_one_faulty_conversation_loses_nothing_else(fault: str, outcome: Any) -> None:
    async def batch(cl: OpenAIClient) -> list[ClientResult | BaseException]:
        calls = [cl.extract(c, PROMPT, OPTIONS) for c in BATCH]
        return await asyncio.gather(*calls, return_exceptions=True)

    faulty = BATCH[0].id
    with MockServer(conversation_faults={faulty: fault}) as server:
        outcomes = asyncio.run(batch(client(server, max_attempts=2, max_rate_limit_retries=1)))
    for conversation, result in zip(BATCH[1:], outcomes[1:], strict=True):
        assert isinstance(result, ClientResult), result
        assert result.failed_attempts == []
        report = validate_extraction(result.output, conversation)
        assert report.accepted == offline_report(conversation).accepted
    first = outcomes[0]
    if isinstance(outcome, Code):
        assert isinstance(first, ClientResult)
        report = validate_extraction(first.output, BATCH[0])
        assert [r.code for r in report.rejections] == [outcome]
        assert report.accepted == offline_report().accepted
    elif outcome is ExtractionOutputError:
        assert isinstance(first, ClientResult)
        with pytest.raises(ExtractionOutputError):
            validate_extraction(first.output, BATCH[0])
    else:
        assert type(first) is outcome


def test_sync_wrapper_works_on_fresh_event_loops() -> None:
    with MockServer() as server:
        cl = client(server)
        first, second = run(cl), run(cl)
    assert first.output == second.output


# --- configuration and helpers --------------------------------------------------------------


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown mode 'xml'"):
        OpenAIClient(model="m", mode="xml")
    with pytest.raises(ValueError, match="max_attempts"):
        OpenAIClient(model="m", max_attempts=0)


def test_no_key_for_openai_itself_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelClientError, match="OPENAI_API_KEY"):
        run(OpenAIClient(model="gpt-4o-mini"))


def test_settings_name_what_changes_the_answer() -> None:
    cl = OpenAIClient(model="m", base_url="http://127.0.0.1:1/v1", mode="json", temperature=0.3)
    assert cl.settings == {
        "base_url": "http://127.0.0.1:1/v1",
        "mode": "json",
        "temperature": 0.3,
        "max_attempts": 3,
        "max_tokens": None,
    }
    assert cl.model_name == "m"


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, 10.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds(headers: dict[str, str], expected: float | None) -> None:
    now = 1445412480.0  # 2015-10-21T07:28:00Z
    assert retry_after_seconds(headers, now=now) == expected


@given(st.recursive(st.none() | st.integers() | st.text(), lambda c: st.lists(c, max_size=3)))
def test_parse_output_reads_plain_and_fenced_json(value: Any) -> None:
    text = json.dumps({"candidates": [value]})
    assert parse_output(text) == json.loads(text)
    assert parse_output(f"Here you go:\n```json\n{text}\n```\nDone.") == json.loads(text)
    assert parse_output(text[:-1]) == text[:-1]
