"""The pipeline: every client's output passes the same gate; results carry full provenance."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from extractor._version import SCHEMA_VERSION, __version__
from extractor.clients.base import ClientResult, Usage
from extractor.conversation import Conversation, Limits
from extractor.errors import (
    ExtractionOutputError,
    LimitExceeded,
    ModelClientError,
    ModelTimeout,
    RateLimited,
)
from extractor.pipeline import Extractor, aextract_and_admit, extract_and_admit, stage_of
from extractor.prompts import Prompt
from extractor.validation import Code, ValidationOptions
from extractor.vocab import LifecycleState, VerificationState

FIXED = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)

CONVERSATION = {
    "id": "lisbon",
    "messages": [
        {"role": "user", "content": "I live in Lisbon."},
        {"role": "assistant", "content": "Nice city."},
    ],
}
GOOD = [
    {
        "id": "c1",
        "span": {"message_id": "m0", "quote": "I live in Lisbon.", "start": 0, "end": 17},
        "kind": "OBSERVATION",
        "memory_type": "ASSERTION_EVENT",
        "content": "The user said: I live in Lisbon.",
        "origin": "USER",
    },
    {
        "id": "c2",
        "span": {"message_id": "m0", "quote": "I live in Lisbon.", "start": 0, "end": 17},
        "kind": "PROPOSITION",
        "memory_type": "WORLD_PROPOSITION",
        "content": "The user lives in Lisbon.",
        "origin": "USER",
        "parent_ids": ["c1"],
    },
]
SELF_CERTIFYING = {
    "id": "c3",
    "span": {"message_id": "m0", "quote": "Lisbon", "start": 10, "end": 16},
    "kind": "OBSERVATION",
    "memory_type": "ASSERTION_EVENT",
    "content": "verified fact: Lisbon",
    "origin": "USER",
}


class ScriptedClient:
    """A client that returns a fixed output (or raises), to drive the pipeline precisely;
    ``hang`` never answers (until cancelled)."""

    def __init__(
        self,
        output: Any = None,
        *,
        error: BaseException | None = None,
        delay: float = 0,
        hang: bool = False,
    ):
        self.output = {"candidates": GOOD} if output is None else output
        self.error = error
        self.delay = delay
        self.hang = hang
        self.calls = 0

    @property
    def model_name(self) -> str:
        return "scripted-1"

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        self.calls += 1
        if self.hang:
            await asyncio.Event().wait()
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return ClientResult(
            output=self.output,
            model="scripted-1",
            usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15),
            attempts=2,
        )


def test_result_carries_candidates_decisions_and_full_provenance() -> None:
    ex = Extractor(ScriptedClient(), clock=lambda: FIXED)
    result = ex.process(CONVERSATION)
    assert [c.candidate_id for c in result.candidates] == ["c1", "c2"]
    assert {d.memory_id for d in result.decisions} == {c.memory_id for c in result.candidates}
    event, proposition = result.candidates
    # The system assigns verification: the assertion event was witnessed, the claim was not.
    assert event.verification_state is VerificationState.VERIFIED_OBSERVATION_OF_EVENT
    assert proposition.verification_state is VerificationState.UNVERIFIED
    assert proposition.parent_memory_ids == [event.memory_id]
    prov = result.provenance
    assert (prov.model, prov.schema_version, prov.extractor_version) == (
        "scripted-1",
        SCHEMA_VERSION,
        __version__,
    )
    assert (prov.policy_id, prov.policy_version) == (ex.policy.id, ex.policy.version)
    assert (prov.prompt_id, prov.prompt_hash) == (ex.prompt.id, ex.prompt.hash)
    assert event.provenance.prompt_hash == ex.prompt.hash
    assert result.usage.total_tokens == 15
    assert result.attempts == 2
    assert result.recorded_at == FIXED == event.recorded_at
    assert result.conversation_hash == ex.coerce(CONVERSATION).content_hash()
    assert result.timings.total_ms >= result.timings.extract_ms >= 0
    assert all(d.policy_id == ex.policy.id for d in result.decisions)


def test_every_client_passes_the_same_gate() -> None:
    client = ScriptedClient({"candidates": [*GOOD, SELF_CERTIFYING]})
    result = Extractor(client).process(CONVERSATION)
    assert [c.candidate_id for c in result.candidates] == ["c1", "c2"]
    assert [(r.candidate_id, r.code) for r in result.rejections] == [
        ("c3", Code.EXTRACTOR_CLAIMED_VERIFIED)
    ]
    assert result.rejections[0].raw == SELF_CERTIFYING


def test_candidate_limit_from_limits_applies_to_validation() -> None:
    result = Extractor(ScriptedClient(), limits=Limits(max_candidates=1)).process(CONVERSATION)
    assert [c.candidate_id for c in result.candidates] == ["c1"]
    assert [(r.candidate_id, r.code) for r in result.rejections] == [
        ("c2", Code.CANDIDATE_LIMIT_EXCEEDED)
    ]


def test_unreadable_output_is_a_typed_validate_stage_error() -> None:
    with pytest.raises(ExtractionOutputError) as info:
        Extractor(ScriptedClient("this is not json")).process(CONVERSATION)
    assert stage_of(info.value) == "validate"


def test_client_errors_stay_typed() -> None:
    error = RateLimited("429 after 3 attempts", attempts=3, retry_after=2.0)
    with pytest.raises(RateLimited) as info:
        Extractor(ScriptedClient(error=error)).process(CONVERSATION)
    assert info.value.attempts == 3
    assert stage_of(info.value) == "extract"


def test_a_client_raising_something_untyped_becomes_a_model_client_error() -> None:
    with pytest.raises(ModelClientError, match=r"'lisbon'.*ValueError: boom") as info:
        Extractor(ScriptedClient(error=ValueError("boom"))).process(CONVERSATION)
    assert isinstance(info.value.__cause__, ValueError)


def test_timeout_bounds_the_extraction() -> None:
    ex = Extractor(ScriptedClient(hang=True), timeout=0.05)
    with pytest.raises(ModelTimeout, match="lisbon"):
        ex.process(CONVERSATION)


def test_raw_data_is_checked_against_the_limits() -> None:
    with pytest.raises(LimitExceeded, match="messages"):
        Extractor(ScriptedClient(), limits=Limits(max_messages=1)).process(CONVERSATION)


def test_as_of_reaches_every_decision() -> None:
    as_of = datetime(2030, 1, 1, tzinfo=UTC)
    result = Extractor(ScriptedClient(), as_of=as_of).process(CONVERSATION)
    assert result.decisions
    assert all(d.as_of == as_of for d in result.decisions)


def test_one_extractor_is_safe_to_share_between_concurrent_calls() -> None:
    ex = Extractor(ScriptedClient(delay=0.01), clock=lambda: FIXED)
    convs = [{**CONVERSATION, "id": f"conv-{i}"} for i in range(8)]

    async def all_at_once() -> list[Any]:
        return await asyncio.gather(*(ex.aprocess(c) for c in convs))

    together = asyncio.run(all_at_once())
    one_by_one = [ex.process(c) for c in convs]
    strip = {"timings"}
    assert [r.model_dump(exclude=strip) for r in together] == [
        r.model_dump(exclude=strip) for r in one_by_one
    ]
    assert [r.conversation_id for r in together] == [c["id"] for c in convs]


def test_process_works_inside_a_running_event_loop() -> None:
    ex = Extractor(ScriptedClient())

    async def handler() -> str:
        return ex.process(CONVERSATION).conversation_id  # a sync call from async code

    assert asyncio.run(handler()) == "lisbon"


def test_hook_functions_with_the_offline_model_are_deterministic() -> None:
    first = extract_and_admit(CONVERSATION, clock=lambda: FIXED)
    second = asyncio.run(aextract_and_admit(CONVERSATION, clock=lambda: FIXED))
    assert first.provenance.model == second.provenance.model
    assert first.model_dump(exclude={"timings"}) == second.model_dump(exclude={"timings"})
    for decision in first.decisions:
        assert decision.lifecycle_state in set(LifecycleState)


def test_a_bare_message_list_is_a_conversation() -> None:
    result = Extractor(ScriptedClient()).process(CONVERSATION["messages"])
    assert result.conversation_id.startswith("conv-")
    assert len(result.candidates) == 2
