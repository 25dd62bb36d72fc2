"""Cassette replays of the OpenAI-compatible path: no server, no network.

The cassettes in ``cassettes/test_cassettes/`` were recorded against the mock server. Replays
run with record mode ``none``; to re-record, delete them and run
``pytest tests/test_cassettes.py --record-mode=rewrite`` (a mock server is started for you). Live
tests against a real provider are skipped unless ``EXTRACTOR_LIVE_TESTS=1`` and
``OPENAI_API_KEY`` are set (see docs/llm-path.md).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import vcr
import yaml

from extractor.clients.base import ClientResult, extract_sync
from extractor.clients.openai_client import OpenAIClient
from extractor.conversation import conversation_from_data
from extractor.errors import ModelClientError, ModelRefused, OutputTruncated, RateLimited
from extractor.mockserver import MockServer
from extractor.offline import offline_proposal
from extractor.prompts import Prompt, load_prompt
from extractor.testing import vcr_config as extractor_vcr_settings
from extractor.validation import Code, ValidationOptions, ValidationReport, validate_extraction

CASSETTE_DIR = Path(__file__).resolve().parents[1] / "cassettes" / "test_cassettes"
PROMPT = load_prompt()
OPTIONS = ValidationOptions()
CONV = conversation_from_data(
    {
        "id": "cassette-1",
        "messages": [
            {"role": "user", "content": "My manager is Alice.", "timestamp": "2024-03-05T09:00:00"},
            {"role": "assistant", "content": "Q3 revenue was approximately $46 million."},
            {"role": "user", "content": "I think I prefer tea over coffee, {{ name }}."},
        ],
    }
)
#: Never contacted when replaying: vcrpy answers every request from the cassette.
UNUSED_URL = "http://127.0.0.1:9/v1"


@pytest.fixture
def base_url(record_mode: str) -> Iterator[str]:
    """The mock server while recording; an address nothing listens on while replaying."""
    if record_mode == "none":
        yield UNUSED_URL
        return
    with MockServer() as server:
        yield server.base_url


def extract(
    base_url: str, fault: str | None = None, prompt: Prompt = PROMPT, **options: Any
) -> ClientResult:
    headers = {"X-Mock-Fault": fault, "X-Mock-Retry-After": "0"} if fault else {}
    settings: dict[str, Any] = {"mode": "tools", "max_rate_limit_retries": 0, "retry_backoff": 0.0}
    settings.update(options)
    settings["extra_headers"] = {**headers, **settings.get("extra_headers", {})}
    client = OpenAIClient(model="offline", base_url=base_url, api_key="test-key", **settings)
    return extract_sync(client, CONV, prompt, OPTIONS)


RERECORD = (
    "the replayed answer differs from the offline model's: if the offline model, the prompt or "
    "the output schema changed, re-record with "
    "`pytest tests/test_cassettes.py --record-mode=rewrite`"
)


def offline() -> ValidationReport:
    return validate_extraction(offline_proposal(CONV), CONV)


def assert_offline(output: object) -> None:
    assert validate_extraction(output, CONV).accepted == offline().accepted, RERECORD


@pytest.mark.vcr
@pytest.mark.parametrize("mode", ["tools", "json_schema", "json", "md_json"])
def test_mode(base_url: str, mode: str) -> None:
    result = extract(base_url, mode=mode)
    assert validate_extraction(result.output, CONV).rejections == []
    assert_offline(result.output)
    assert result.usage.total_tokens > 0


def test_offline_and_mock_server_agree_with_the_cassettes() -> None:
    """(a) in-process offline model == (b) SDK + instructor against the mock server; the
    replay tests above check (c) == (a)."""
    with MockServer() as server:
        live = extract(server.base_url)
    assert validate_extraction(live.output, CONV).accepted == offline().accepted


@pytest.mark.vcr
def test_fault_latency(base_url: str) -> None:
    result = extract(base_url, extra_headers={"X-Mock-Latency": "0.05"})
    assert_offline(result.output)


@pytest.mark.vcr
def test_fault_rate_limit_recovers(base_url: str) -> None:
    result = extract(base_url, "rate_limit:1", max_rate_limit_retries=1)
    assert_offline(result.output)


@pytest.mark.vcr
def test_fault_rate_limit_exhausted(base_url: str) -> None:
    with pytest.raises(RateLimited) as caught:
        extract(base_url, "rate_limit", max_rate_limit_retries=1)
    assert caught.value.retry_after == 0


@pytest.mark.vcr
def test_fault_server_error(base_url: str) -> None:
    with pytest.raises(ModelClientError, match="HTTP 500"):
        extract(base_url, "server_error", max_rate_limit_retries=1)


@pytest.mark.vcr
def test_fault_malformed(base_url: str) -> None:
    result = extract(base_url, "malformed:1", mode="json")
    assert result.attempts == 2
    assert "Invalid JSON" in result.failed_attempts[0].error
    assert_offline(result.output)


@pytest.mark.vcr
def test_fault_truncated(base_url: str) -> None:
    with pytest.raises(OutputTruncated):
        extract(base_url, "truncated")


@pytest.mark.vcr
def test_fault_refusal(base_url: str) -> None:
    with pytest.raises(ModelRefused):
        extract(base_url, "refusal", mode="json_schema")


@pytest.mark.vcr
@pytest.mark.parametrize(
    ("fault", "code"),
    [
        ("verified", Code.EXTRACTOR_CLAIMED_VERIFIED),
        ("fabricated_span", Code.SPAN_NOT_FOUND),
        ("origin_laundering", Code.ORIGIN_LAUNDERING),
    ],
)
def test_fault_fixed_by_reask(base_url: str, fault: str, code: Code) -> None:
    result = extract(base_url, fault)
    assert result.attempts == 2
    assert [r.code for r in result.failed_attempts[0].rejections] == [code]
    assert_offline(result.output)


@pytest.mark.vcr
def test_fault_verified_never_fixed(base_url: str) -> None:
    result = extract(base_url, "verified:always", max_attempts=2)
    report = validate_extraction(result.output, CONV)
    assert [r.code for r in report.rejections] == [Code.EXTRACTOR_CLAIMED_VERIFIED]
    assert report.accepted == offline().accepted


def test_a_prompt_change_is_a_cassette_miss_not_a_stale_replay() -> None:
    cassette = CASSETTE_DIR / "test_mode[tools].yaml"
    recorder = vcr.VCR(**extractor_vcr_settings(record_mode="none"))
    with recorder.use_cassette(str(cassette)):
        assert extract(UNUSED_URL).output == offline_proposal(CONV)
    changed = dataclasses.replace(PROMPT, system_template=PROMPT.system_template + "\nBe brief.")
    with recorder.use_cassette(str(cassette)), pytest.raises(ModelClientError) as caught:
        extract(UNUSED_URL, prompt=changed)
    assert "no recorded interaction matches it (the closest differ in body)" in str(caught.value)


def test_no_cassette_keeps_a_credential() -> None:
    cassettes = sorted(CASSETTE_DIR.parent.rglob("*.yaml"))
    assert len(cassettes) >= 14
    for path in cassettes:
        text = path.read_text(encoding="utf-8")
        assert "test-key" not in text and "Bearer" not in text, path
        for interaction in yaml.safe_load(text)["interactions"]:
            names = {name.lower() for name in interaction["request"]["headers"]}
            assert not names & {"authorization", "api-key", "x-api-key"}, path


@pytest.mark.live
@pytest.mark.vcr
def test_live_provider() -> None:
    """Against a real provider: records ``cassettes/test_cassettes/test_live_provider.yaml``."""
    client = OpenAIClient(model=os.environ.get("EXTRACTOR_LIVE_MODEL", "gpt-4o-mini"),
                          base_url=os.environ.get("OPENAI_BASE_URL"))  # fmt: skip
    result = extract_sync(client, CONV, PROMPT, OPTIONS)
    report = validate_extraction(result.output, CONV)
    assert result.usage.total_tokens > 0
    assert len(report.accepted) + len(report.rejections) > 0
