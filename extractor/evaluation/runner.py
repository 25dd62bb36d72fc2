"""Run a model over the gold set through the real pipeline and score what the gate let through.

The model's raw output is needed for two safety figures (what it *claimed* versus what was
accepted), so the client is wrapped in a :class:`RecordingClient` that keeps every raw output
per conversation. Everything else -- validation, candidate building, admission -- is the
ordinary :class:`~extractor.pipeline.Extractor`, so the figures describe the product, not a
special evaluation path.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..clients.base import ClientResult, ExtractionClient
from ..conversation import Conversation
from ..errors import ExtractorError
from ..prompts import Prompt
from ..results import ConversationResult
from ..validation import ValidationOptions
from .gold import EvalCase
from .quality import QualityScore, add_scores, score_quality
from .safety import SafetyScore, score_safety

DEFAULT_CONCURRENCY = 8
#: Fixed clock for evaluation runs, so two runs of the same model give identical results.
EVAL_CLOCK = datetime(2024, 7, 1, tzinfo=UTC)

_current_outputs: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "extractor_eval_outputs", default=None
)


class RecordingClient:
    """Wraps any client and records its raw outputs for the conversation being processed.

    The recording goes to the list bound by :func:`recording` in the calling task's context, so
    one wrapper can serve many concurrent conversations (and chunked calls of one of them).
    """

    def __init__(self, inner: ExtractionClient) -> None:
        self.inner = inner

    @property
    def model_name(self) -> str:
        return str(self.inner.model_name)

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        result = await self.inner.extract(conversation, prompt, options)
        sink = _current_outputs.get()
        if sink is not None:
            sink.append(result.output)
        return result


class CaseOutcome(BaseModel):
    """One gold conversation: the pipeline's result (or its error) and its scores."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    result: ConversationResult | None = None
    error: str | None = None
    raw_outputs: list[Any] = Field(default_factory=list)
    quality: QualityScore
    safety: SafetyScore


class EvalReport(BaseModel):
    """The whole evaluation: per-case outcomes and their sums."""

    model_config = ConfigDict(extra="forbid")

    model: str
    evalset: str
    cases: list[CaseOutcome]

    @property
    def quality(self) -> QualityScore:
        total = QualityScore()
        for case in self.cases:
            total = add_scores(total, case.quality)
        return total

    @property
    def safety(self) -> SafetyScore:
        return sum((c.safety for c in self.cases), SafetyScore())

    @property
    def failures(self) -> list[CaseOutcome]:
        return [c for c in self.cases if c.error is not None]


def score_case(
    case: EvalCase,
    result: ConversationResult | None,
    raw_outputs: list[Any],
    error: str | None = None,
) -> CaseOutcome:
    """Score one conversation from what the pipeline produced (pure; no model call)."""
    return CaseOutcome(
        conversation_id=case.id,
        result=result,
        error=error,
        raw_outputs=raw_outputs,
        quality=score_quality(case, result),
        safety=score_safety(case.conversation, result, raw_outputs, case),
    )


async def aevaluate(
    cases: list[EvalCase],
    client: ExtractionClient | None = None,
    *,
    policy: Any = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    evalset: str = "",
) -> EvalReport:
    """Run ``client`` (default: the offline model) over ``cases`` and score every one.

    A conversation whose processing fails is scored as finding nothing, and its error is kept
    in the report; it never stops the others.
    """
    from ..pipeline import Extractor

    if client is None:
        from ..offline import OfflineClient

        client = OfflineClient()
    extractor = Extractor(RecordingClient(client), policy=policy, clock=lambda: EVAL_CLOCK)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(case: EvalCase) -> CaseOutcome:
        outputs: list[Any] = []
        _current_outputs.set(outputs)
        async with gate:
            try:
                result = await extractor.aprocess(case.conversation)
            except ExtractorError as exc:
                return score_case(case, None, outputs, f"{type(exc).__name__}: {exc}")
        return score_case(case, result, outputs)

    outcomes = await asyncio.gather(*(asyncio.create_task(one(c)) for c in cases))
    return EvalReport(model=client.model_name, evalset=evalset, cases=list(outcomes))


def evaluate(
    cases: list[EvalCase],
    client: ExtractionClient | None = None,
    **kwargs: Any,
) -> EvalReport:
    """Blocking :func:`aevaluate`. Closes the client's connections of the event loop it ran."""
    report: EvalReport = run_closing(aevaluate(cases, client, **kwargs), client)
    return report


def run_closing(coro: Coroutine[Any, Any, Any], client: object) -> Any:
    """``asyncio.run(coro)``, then close ``client``'s per-loop connections inside that loop."""

    async def main() -> Any:
        try:
            return await coro
        finally:
            aclose = getattr(client, "aclose", None)
            if aclose is not None:
                await aclose()

    return asyncio.run(main())
