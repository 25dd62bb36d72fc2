"""The pipeline: load → extract → validate → admit → record, for one conversation at a time.

::

    conversation ─▶ extract (client, chunked) ─▶ validate (the gate) ─▶ build candidates
                                                                             │
           ConversationResult ◀── record (usage, timings, provenance) ◀── admit (policy)

Every client -- the offline model, an OpenAI-compatible server, a cache replay, a user's own --
goes through the same :func:`~extractor.validation.validate_extraction` gate: the client only
proposes raw output; candidates, verification states and admission decisions are built here by
the system.

An :class:`Extractor` holds configuration only (client, policy, prompt, limits, clock). It keeps
no per-conversation state, so one instance can be shared by every request of a server or every
task of a batch. Errors are typed (:mod:`extractor.errors`); :func:`stage_of` tells which stage
an error belongs to, which is what a batch records in its failures file.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any, TypeVar, cast

from ._version import SCHEMA_VERSION, __version__
from .admission import Policy, admit, load_policy
from .bounded import bounded_attempt, bounded_rejections
from .candidates import MemoryCandidate, Provenance, build_candidates
from .chunking import DEFAULT_MAX_CHUNK_CHARS, extract_chunked
from .clients.base import ClientResult, ExtractionClient
from .conversation import Conversation, Limits, Owner, conversation_from_data
from .decisions import AdmissionDecision
from .errors import (
    ExtractionOutputError,
    ExtractorError,
    InputError,
    LedgerError,
    ModelClientError,
    ModelTimeout,
    OutputWriteError,
    PipelineError,
    PolicyError,
)
from .prompts import Prompt, load_prompt
from .repetition import fold_repeats
from .results import ConversationResult, InputRef, RunProvenance, Stage, Timings
from .validation import ValidationOptions, ValidationReport, validate_extraction

T = TypeVar("T")


def utc_now() -> datetime:
    """The default clock: timezone-aware UTC now."""
    return datetime.now(UTC)


class Extractor:
    """A reusable, stateless-per-call extraction pipeline.

    ``client`` defaults to the offline model, ``policy`` to the shipped default policy (a
    :class:`Policy`, or a path to a policy file), ``prompt`` to the shipped prompt. ``limits``
    apply when a conversation is given as raw JSON data; ``limits.max_candidates`` also caps the
    candidates validation accepts from each model call (each chunk of a long conversation)
    unless ``validation`` says otherwise. ``timeout`` bounds the
    whole extraction of one conversation (all chunks and retries). ``as_of`` is the time the
    policy judges current-state authority at (``None``: the policy's own default). ``clock``
    stamps ``recorded_at``; inject a fixed one for reproducible output.
    """

    def __init__(
        self,
        client: ExtractionClient | None = None,
        *,
        policy: Policy | str | Path | None = None,
        prompt: Prompt | None = None,
        limits: Limits | None = None,
        validation: ValidationOptions | None = None,
        max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
        timeout: float | None = None,
        as_of: datetime | None = None,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        if client is None:
            from .offline import OfflineClient

            client = OfflineClient()
        self.client = client
        self.policy = policy if isinstance(policy, Policy) else load_policy(policy)
        self.prompt = prompt or load_prompt()
        self.limits = limits or Limits()
        self.validation = validation or ValidationOptions(max_candidates=self.limits.max_candidates)
        self.max_chunk_chars = max_chunk_chars
        self.timeout = timeout
        self.as_of = as_of
        self.clock = clock

    def coerce(self, conversation: Conversation | dict[str, Any] | list[Any]) -> Conversation:
        """A :class:`Conversation` from a model or raw JSON data (raises :class:`InputError`)."""
        if isinstance(conversation, Conversation):
            return conversation
        return conversation_from_data(conversation, limits=self.limits)

    async def aprocess(
        self,
        conversation: Conversation | dict[str, Any] | list[Any],
        *,
        tenant: str | None = None,
        subject: str | None = None,
    ) -> ConversationResult:
        """Extract, validate and admit one conversation; the result is one JSONL line.

        ``tenant`` / ``subject`` say whose memory it is; when given they win over the
        conversation's ``metadata.tenant`` / ``metadata.user_id`` (see :class:`Owner`).
        """
        started = time.perf_counter()
        recorded_at = self.clock()
        conv = self.coerce(conversation)
        owner = Owner(tenant, subject).of(conv)
        with _stage("extract", conv.id):
            raw, chunks = await self._extract(conv)
        extracted = time.perf_counter()
        with _stage("validate", conv.id):
            options = self.validation
            if raw.candidate_limit is not None:  # chunks, each bounded by max_candidates
                options = replace(options, max_candidates=raw.candidate_limit)
            report = raw.validated_for(conv, options)  # the client's gate, if it ran
            if report is None:
                report = _validate(raw, conv, options)
            candidates = self._candidates(conv, raw, report, recorded_at)
        validated = time.perf_counter()
        with _stage("admit", conv.id):
            decisions = admit(candidates, self.policy, as_of=self.as_of)
        admitted = time.perf_counter()
        with _stage("record", conv.id):
            marks = [started, extracted, validated, admitted, time.perf_counter()]
            return self._result(
                conv, owner, raw, report, candidates, decisions, chunks, marks, recorded_at
            )

    def process(
        self,
        conversation: Conversation | dict[str, Any] | list[Any],
        *,
        tenant: str | None = None,
        subject: str | None = None,
    ) -> ConversationResult:
        """Blocking :meth:`aprocess`. Safe to call from inside a running event loop too (it then
        runs in a helper thread), but async code should ``await aprocess(...)`` instead."""
        return _run_blocking(self.aprocess(conversation, tenant=tenant, subject=subject))

    async def _extract(self, conv: Conversation) -> tuple[ClientResult, int]:
        call = extract_chunked(
            self.client, conv, self.prompt, self.validation, max_chars=self.max_chunk_chars
        )
        if self.timeout is None:
            return await call
        try:
            return await asyncio.wait_for(call, self.timeout)
        except TimeoutError:
            raise ModelTimeout(
                f"conversation {conv.id!r}: extraction took longer than {self.timeout:g}s"
            ) from None

    def _candidates(
        self,
        conv: Conversation,
        raw: ClientResult,
        report: ValidationReport,
        recorded_at: datetime,
    ) -> list[MemoryCandidate]:
        provenance = Provenance(
            model=raw.model or self.client.model_name,
            prompt_id=self.prompt.id,
            prompt_version=self.prompt.version,
            prompt_hash=self.prompt.hash,
            schema_version=SCHEMA_VERSION,
            extractor_version=__version__,
        )
        built = build_candidates(
            report.accepted,
            conv,
            provenance=provenance,
            recorded_at=recorded_at,
            corrected_ids=frozenset(c.candidate_id for c in report.corrections),
        )
        return fold_repeats(built)

    def _result(
        self,
        conv: Conversation,
        owner: Owner,
        raw: ClientResult,
        report: ValidationReport,
        candidates: list[MemoryCandidate],
        decisions: list[AdmissionDecision],
        chunks: int,
        marks: list[float],
        recorded_at: datetime,
    ) -> ConversationResult:
        ms = [round((b - a) * 1000, 3) for a, b in pairwise(marks)]
        rejections, omitted = bounded_rejections(report.rejections)
        return ConversationResult(
            conversation_id=conv.id,
            conversation_hash=conv.content_hash(),
            tenant=owner.tenant,
            subject=owner.subject,
            input=input_ref(conv),
            candidates=candidates,
            decisions=decisions,
            rejections=rejections,
            rejections_omitted=omitted,
            corrections=report.corrections,
            content_corrections=report.content_corrections,
            usage=raw.usage,
            attempts=raw.attempts,
            failed_attempts=[bounded_attempt(a) for a in raw.failed_attempts],
            chunks=chunks,
            dropped_by_model=raw.dropped_candidates,
            cached=raw.cached,
            timings=Timings(
                extract_ms=ms[0],
                validate_ms=ms[1],
                admit_ms=ms[2],
                total_ms=round((marks[-1] - marks[0]) * 1000, 3),
            ),
            provenance=self.provenance(raw.model or self.client.model_name),
            recorded_at=recorded_at,
        )

    def provenance(self, model: str | None = None) -> RunProvenance:
        """What every result line of this extractor records about how it was produced."""
        return RunProvenance(
            model=model or self.client.model_name,
            prompt_id=self.prompt.id,
            prompt_version=self.prompt.version,
            prompt_hash=self.prompt.hash,
            schema_version=SCHEMA_VERSION,
            policy_id=self.policy.id,
            policy_version=self.policy.version,
            extractor_version=__version__,
        )


def _validate(
    raw: ClientResult, conv: Conversation, options: ValidationOptions
) -> ValidationReport:
    """The gate on the client's output; an unreadable output's error carries what was spent."""
    try:
        return validate_extraction(raw.output, conv, options)
    except ExtractionOutputError as exc:
        exc.attempts, exc.usage = raw.attempts, raw.usage
        raise


def input_ref(conv: Conversation) -> InputRef:
    loc = conv.location
    return InputRef(source=loc.source, line=loc.line, field=loc.field)


@contextmanager
def _stage(stage: Stage, conversation_id: str) -> Iterator[None]:
    """Let typed errors through; turn anything else into a :class:`PipelineError` naming the
    stage, so one misbehaving component fails one conversation, not the whole batch."""
    try:
        yield
    except ExtractorError:
        raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        if stage == "extract":
            raise ModelClientError(
                f"conversation {conversation_id!r}: client failed: {type(exc).__name__}: {exc}"
            ) from exc
        raise PipelineError(
            f"{type(exc).__name__}: {exc}", stage=stage, conversation_id=conversation_id
        ) from exc


def stage_of(error: BaseException) -> Stage:
    """The pipeline stage an error belongs to (what a failures-file record says)."""
    if isinstance(error, PipelineError):
        return cast(Stage, error.stage)
    if isinstance(error, InputError):
        return "load"
    if isinstance(error, ModelClientError):
        return "extract"
    if isinstance(error, ExtractionOutputError):
        return "validate"
    if isinstance(error, PolicyError):
        return "admit"
    if isinstance(error, OutputWriteError | LedgerError):
        return "record"
    return "extract"


def _run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}  # the result or the exception, from the helper thread

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=target, name="extractor-process")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


def extract_and_admit(
    conversation: Conversation | dict[str, Any] | list[Any], **kwargs: Any
) -> ConversationResult:
    """One-call hook: ``Extractor(**kwargs).process(conversation)``.

    For many conversations, build one :class:`Extractor` and reuse it (it loads the policy and
    prompt once).
    """
    return Extractor(**kwargs).process(conversation)


async def aextract_and_admit(
    conversation: Conversation | dict[str, Any] | list[Any], **kwargs: Any
) -> ConversationResult:
    """Async :func:`extract_and_admit`."""
    return await Extractor(**kwargs).aprocess(conversation)


__all__ = [
    "DEFAULT_MAX_CHUNK_CHARS",
    "Extractor",
    "aextract_and_admit",
    "extract_and_admit",
    "stage_of",
    "utc_now",
]
