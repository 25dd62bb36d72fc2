"""OpenAIClient's per-loop session, direct post and gate reuse: fewer connections and less CPU
per call, the same requests and the same results."""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx2
import pytest
from pydantic import BaseModel

import extractor.pipeline
from extractor.batch import BatchConfig, run_batch
from extractor.clients import openai_client
from extractor.clients.base import ClientResult, extract_sync
from extractor.clients.openai_client import GatedExtraction, OpenAIClient
from extractor.conversation import Conversation, conversation_from_data
from extractor.errors import ExtractionOutputError
from extractor.mockserver import MockServer, Reply
from extractor.pipeline import Extractor
from extractor.prompts import load_prompt
from extractor.testing import FIXED_NOW
from extractor.validation import ValidationOptions, validate_extraction

PROMPT = load_prompt()
OPTIONS = ValidationOptions()


def conv(cid: str, *texts: str) -> Conversation:
    roles = ["user", "assistant"]
    messages = [{"role": roles[i % 2], "content": t} for i, t in enumerate(texts)]
    return conversation_from_data({"id": cid, "messages": messages})


CONVERSATIONS = [
    conv(f"c{i}", f"I live in Lisbon and I have {i} cats.", "Nice.") for i in range(20)
]


def client(server: MockServer, **options: Any) -> OpenAIClient:
    settings: dict[str, Any] = {"model": "offline", "api_key": "k", "retry_backoff": 0.0}
    settings.update(options)
    return OpenAIClient(base_url=server.base_url, **settings)


def eventually(condition: Callable[[], bool], within: float = 120.0) -> bool:
    """Poll ``condition`` (the server sees a closed socket a moment after the client closed it)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


@pytest.fixture
def unraisable() -> Iterator[list[str]]:
    """What Python could not raise (``Event loop is closed`` from a socket collected late)."""
    seen: list[str] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda info: seen.append(f"{info.exc_type.__name__}: {info.exc_value}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)
            yield seen
            gc.collect()
    finally:
        sys.unraisablehook = previous


def test_calls_on_one_event_loop_share_one_connection() -> None:
    async def main(cl: OpenAIClient) -> list[ClientResult]:
        return [await cl.extract(c, PROMPT, OPTIONS) for c in CONVERSATIONS[:6]]

    with MockServer() as server:
        results = asyncio.run(main(client(server)))
        assert server.connections == 1
    assert all(r.attempts == 1 for r in results)


class GatedServer(MockServer):
    """Answers no chat request (after the first ``ungated`` ones) before ``gate`` of them have
    arrived and wait together (then answers them all): how many a client has on the wire at once, shown by an event rather than
    by a latency long enough for a loaded machine to send them all. ``peak_waiting`` is the most
    requests that had arrived and were not yet answered; the ceiling only keeps a client that
    never sends ``gate`` at once from hanging the test."""

    def __init__(self, gate: int, ungated: int = 0) -> None:
        super().__init__()
        self.gate = gate
        self.ungated = ungated
        self.together = threading.Event()
        self.waiting = self.peak_waiting = 0
        self.lock = threading.Lock()

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Reply:
        with self.lock:
            passes = method != "POST" or self.ungated > 0
            self.ungated -= method == "POST"
        if passes:
            return super().handle(method, path, headers, body)
        with self.lock:
            self.waiting += 1
            self.peak_waiting = max(self.peak_waiting, self.waiting)
            if self.peak_waiting >= self.gate:
                self.together.set()
        try:
            self.together.wait(timeout=300)
            return super().handle(method, path, headers, body)
        finally:
            with self.lock:
                self.waiting -= 1


def test_concurrent_calls_are_all_in_flight_at_once() -> None:
    """The connection pools never make a request wait for another one's answer."""

    async def main(cl: OpenAIClient) -> None:
        await asyncio.gather(*(cl.extract(c, PROMPT, OPTIONS) for c in CONVERSATIONS))

    with GatedServer(gate=len(CONVERSATIONS)) as server:
        asyncio.run(main(client(server)))
        assert server.together.is_set() and server.peak_waiting == len(CONVERSATIONS)


def test_extract_sync_closes_its_connections_with_its_event_loop(unraisable: list[str]) -> None:
    with MockServer() as server:
        cl = client(server)
        for conversation in CONVERSATIONS[:3]:
            assert extract_sync(cl, conversation, PROMPT, OPTIONS).attempts == 1
        assert server.connections == 3  # one per event loop
        assert eventually(lambda: server.open_connections == 0)
    gc.collect()
    assert unraisable == []


def test_aclose_closes_the_loops_connections_and_the_client_stays_usable(
    unraisable: list[str],
) -> None:
    async def main(cl: OpenAIClient, server: MockServer) -> None:
        async with cl:
            await cl.extract(CONVERSATIONS[0], PROMPT, OPTIONS)
            assert server.open_connections == 1
        assert await asyncio.to_thread(eventually, lambda: server.open_connections == 0)
        await cl.extract(CONVERSATIONS[1], PROMPT, OPTIONS)
        await cl.aclose()

    with MockServer() as server:
        asyncio.run(main(client(server), server))
        assert server.connections == 2
        assert eventually(lambda: server.open_connections == 0)
    assert unraisable == []


def test_a_changed_setting_takes_effect_on_the_next_call() -> None:
    async def main(cl: OpenAIClient, other: MockServer) -> None:
        await cl.extract(CONVERSATIONS[0], PROMPT, OPTIONS)
        cl.base_url = other.base_url
        await cl.extract(CONVERSATIONS[1], PROMPT, OPTIONS)

    with MockServer() as first, MockServer() as second:
        asyncio.run(main(client(first), second))
        assert len(first.requests) == 1
        assert len(second.requests) == 1


def test_a_callers_http_client_is_used_and_left_open() -> None:
    async def main(server: MockServer) -> bool:
        async with httpx2.AsyncClient() as http:
            cl = client(server, http_client=http)
            await cl.extract(CONVERSATIONS[0], PROMPT, OPTIONS)
            await cl.aclose()
            return http.is_closed

    with MockServer() as server:
        assert asyncio.run(main(server)) is False
        assert server.connections == 1


@pytest.mark.parametrize("mode", ["tools", "json_schema", "json", "md_json"])
def test_the_direct_post_sends_the_bytes_the_sdk_would(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK's ``create`` and the direct post put the same bytes on the wire, re-ask too."""

    def bodies() -> list[bytes]:
        sent: list[bytes] = []

        async def hook(request: httpx2.Request) -> None:
            sent.append(request.content)

        async def main(server: MockServer) -> None:
            async with httpx2.AsyncClient(event_hooks={"request": [hook]}) as http:
                cl = client(server, mode=mode, http_client=http, max_tokens=4000)
                await cl.extract(CONVERSATIONS[0], PROMPT, OPTIONS)

        with MockServer(faults="verified:1") as server:
            asyncio.run(main(server))
        return sent

    direct = bodies()
    monkeypatch.setattr(openai_client, "_DIRECT", None)
    through_create = bodies()
    assert len(direct) == 2
    assert direct == through_create


FAULTS = {"bad": "verified:always", "junk": "malformed"}
BAD = conv("bad", "I live in Lisbon and I work at a bakery.", "Nice.")
JUNK = conv("junk", "I live in Lisbon.", "Nice.")


def test_the_pipeline_reuses_the_clients_gate_report(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = extractor.pipeline.validate_extraction

    def counted(raw: Any, conversation: Conversation, options: Any = None) -> Any:
        calls.append(conversation.id)
        return real(raw, conversation, options)

    monkeypatch.setattr(extractor.pipeline, "validate_extraction", counted)
    with MockServer(conversation_faults=FAULTS) as server:
        pipeline = Extractor(client(server, max_attempts=2))
        good = pipeline.process(CONVERSATIONS[0])
        bad = pipeline.process(BAD)
        with pytest.raises(ExtractionOutputError, match="not JSON"):
            pipeline.process(JUNK)
    assert calls == ["junk"]  # only the answer the gate could not read is validated here
    assert good.candidates and not good.rejections
    assert [r.code.value for r in bad.rejections] == ["EXTRACTOR_CLAIMED_VERIFIED"]
    assert bad.candidates  # the valid ones are kept


def test_reusing_the_report_changes_no_result(monkeypatch: pytest.MonkeyPatch) -> None:
    def results() -> list[dict[str, Any]]:
        with MockServer(conversation_faults=FAULTS) as server:
            pipeline = Extractor(client(server, max_attempts=2), clock=lambda: FIXED_NOW)
            done = [pipeline.process(c) for c in (*CONVERSATIONS[:3], BAD)]
        return [r.model_dump(mode="json", exclude={"timings"}) for r in done]

    reused = results()
    monkeypatch.setattr(ClientResult, "validated_for", lambda *_: None)
    assert results() == reused


def test_a_report_is_only_reused_for_the_same_output_conversation_and_options() -> None:
    conversation = CONVERSATIONS[0]
    output = {"candidates": []}
    report = validate_extraction(output, conversation, OPTIONS)
    result = ClientResult(output=output, model="m")
    result.attach_validation(conversation, OPTIONS, report)
    assert result.validated_for(conversation, ValidationOptions()) is report
    assert result.model_copy(update={"cached": True}).validated_for(conversation, OPTIONS)
    assert result.validated_for(CONVERSATIONS[1], OPTIONS) is None
    other = ValidationOptions(allow_system_sources=True)
    assert result.validated_for(conversation, other) is None
    replaced = result.model_copy(update={"output": {"candidates": []}})
    assert replaced.validated_for(conversation, OPTIONS) is None
    assert (
        ClientResult.model_validate_json(result.model_dump_json()).validated_for(
            conversation, OPTIONS
        )
        is None
    )


def test_the_schema_is_built_once_and_each_caller_gets_its_own_copy() -> None:
    first = GatedExtraction.model_json_schema()
    first["properties"].clear()
    second = GatedExtraction.model_json_schema()
    assert second["properties"]
    assert second == GatedExtraction.model_json_schema()


def test_instructor_still_refuses_async_validators_on_other_models() -> None:
    from instructor.v2.validation import async_validators

    class WithAsyncCheck(BaseModel):
        name: str

        @async_validators.async_field_validator("name")
        async def check(self, value: str) -> str:
            return value

    with pytest.raises(ValueError, match="async validators"):
        async_validators.reject_async_validators(WithAsyncCheck)
    async_validators.reject_async_validators(GatedExtraction)  # checked once, at import


def test_the_mock_server_computes_an_answer_once_per_transcript(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import extractor.offline as offline

    calls: list[str] = []
    real = offline.offline_proposal

    def counted(conversation: Conversation) -> dict[str, Any]:
        calls.append(conversation.id)
        return real(conversation)

    monkeypatch.setattr(offline, "offline_proposal", counted)
    with MockServer(faults="verified:1") as server:
        cl = client(server)
        first = extract_sync(cl, CONVERSATIONS[0], PROMPT, OPTIONS)  # answer + re-ask
        again = extract_sync(cl, CONVERSATIONS[0], PROMPT, OPTIONS)
        extract_sync(cl, CONVERSATIONS[1], PROMPT, OPTIONS)
    assert calls == ["c0", "c1"]
    assert first.attempts == 2 and again.output == first.output


def test_a_batch_keeps_its_concurrency_in_flight(tmp_path: Path) -> None:
    """``extractor run --concurrency C`` against a slow model: C requests on the wire at once."""
    src = tmp_path / "in.jsonl"
    lines = [{"id": c.id, "messages": [{"role": "user", "content": c.messages[0].text}]}
             for c in CONVERSATIONS]  # fmt: skip
    src.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert len(CONVERSATIONS) > 8
    # 8 on the wire at once, and never a 9th; the one check before the batch is not held
    with GatedServer(gate=8, ungated=1) as server:
        config = BatchConfig(out=tmp_path / "out.jsonl", concurrency=8)
        summary = run_batch([src], Extractor(client(server)), config)
        assert server.together.is_set() and server.peak_waiting == 8
    assert summary.failed == 0
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == len(CONVERSATIONS)
