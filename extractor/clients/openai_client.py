"""The OpenAI-compatible client: the ``openai`` SDK wrapped with ``instructor``.

The same code talks to OpenAI, vLLM, Ollama, a llama.cpp server or :mod:`extractor.mockserver`:
only ``base_url``, ``api_key``, ``model`` and the instructor ``mode`` change.

Who retries what
----------------
=====================================  ==================================  ====================
failure                                retried by                          when retries run out
=====================================  ==================================  ====================
429 (honours ``Retry-After``)          this module, ``max_rate_limit_      :class:`RateLimited`
                                       retries`` times; a ``Retry-After``  (``retry_after``
                                       above ``max_retry_wait`` is not     carries the wait)
                                       waited for
5xx, 408, 409, connection errors       this module, same budget,           :class:`ModelClientError`
                                       exponential backoff
an error saying the mode's feature     nobody (permanent)                  :class:`ModeUnsupported`
is unsupported (4xx or 5xx)                                                naming the mode to use
timeouts (``timeout`` per request)     this module, ``timeout_retries``    :class:`ModelTimeout`
                                       times (1; 0 for a local server,
                                       which keeps generating the
                                       abandoned request)
other 4xx (bad key, unknown model)     nobody                              :class:`ModelClientError`
invalid output (not JSON, schema,      instructor's re-ask, with the       the best answer of all
any validation rejection)              validation messages, up to          attempts; the pipeline
                                       ``max_attempts`` answers in all,    keeps its valid
                                       stopped early when an answer        candidates
                                       repeats an earlier one
refusal / ``content_filter``           nobody (a re-ask would only burn    :class:`ModelRefused`
                                       tokens)
output cut off: ``finish_reason=       nobody here (the chunking layer     :class:`OutputTruncated`
"length"``, ``max_tokens`` reached     splits the chunk and retries it)
or unterminated JSON, whatever the
finish reason says
prompt tokens far below the prompt     nobody (permanent)                  ``PromptNotDelivered``
sent (a dropped system prompt)
=====================================  ==================================  ====================

The SDK's own retries are off (``max_retries=0``): they would multiply with ours and hide a
``Retry-After`` we want to honour or refuse. Transport retries happen *inside* one instructor
attempt, so the worst case is ``max_attempts * (1 + max_rate_limit_retries)`` requests. An error
on a re-ask keeps the best answer received before it. Every error carries the attempts made and
the tokens they spent.

Bounds
------
Every request carries ``max_tokens``: the one given, else one chosen from the transcript's size
(:func:`max_tokens_for`), so no provider default cuts a long answer off and no local server
generates until its context is full. ``timeout`` defaults to :data:`DEFAULT_TIMEOUT`, or
:data:`DEFAULT_LOCAL_TIMEOUT` for a server on this machine or a private network
(:func:`~extractor.clients.compat.is_local`).

The re-ask loop
---------------
instructor runs the loop; this module plugs into it in two places. The response model
(:class:`GatedExtraction`) validates each answer with the same
:func:`~extractor.validation.validate_extraction` the pipeline uses, against the conversation
held in a context variable for the current call -- never instructor's ``context=``, which would
render the transcript as a Jinja template and alter any ``{{ ... }}`` in it. A per-call
``parse:error`` hook turns every failed attempt into an :class:`AttemptRecord` with the
rejections and the model's raw output. Usage is summed over every answer received.

What is sent
------------
The response model's JSON schema is the lean copy of the output contract
(:func:`~extractor.clients.wire.lean_schema`: no titles, descriptions or defaults, definitions
inlined), in every mode; in ``json`` and ``md_json`` modes the schema instructor writes into the
system prompt is sent on one line (:func:`~extractor.clients.wire.compact_prompt_schema`). With
``system_as_user`` the system prompt is sent at the head of the first user message instead, for
chat templates that drop the system role.
"""

from __future__ import annotations

import asyncio
import copy
import email.utils
import inspect
import json
import logging
import math
import re
import time
import weakref
from collections.abc import AsyncGenerator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpx2
import instructor
import openai
from instructor import ResponseSchema
from instructor.core.exceptions import InstructorRetryException
from instructor.core.hooks import Hooks
from openai.types.chat import ChatCompletion
from pydantic import ConfigDict, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from ..conversation import Conversation
from ..errors import (
    ExtractorError,
    ModelClientError,
    ModelRefused,
    ModelTimeout,
    ModeUnsupported,
    OutputTruncated,
    PromptNotDelivered,
    RateLimited,
)
from ..extraction import ExtractionOutput
from ..prompts import Prompt, render_message
from ..usage import Usage
from ..validation import Rejection, ValidationOptions, ValidationReport, validate_extraction
from .base import AttemptRecord, ClientResult
from .compat import (
    CHARS_PER_TOKEN,
    FALLBACK_MODE,
    estimate_tokens,
    is_local,
    prompt_dropped,
    unsupported_mode,
)
from .tls import tls_context
from .truncation import unterminated
from .wire import compact_prompt_schema, lean_schema

MODES: dict[str, instructor.Mode] = {
    "tools": instructor.Mode.TOOLS,
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "json": instructor.Mode.JSON,
    "md_json": instructor.Mode.MD_JSON,
}
DEFAULT_MODE = "tools"
#: Seconds per request for a remote provider, and for a server on this machine or a private
#: network (a CPU reading one long chunk's prompt can take over a minute before it generates).
DEFAULT_TIMEOUT = 120.0
DEFAULT_LOCAL_TIMEOUT = 600.0
#: Re-sends of a timed-out request (a local server's default is 0: see ``timeout_retries``).
DEFAULT_TIMEOUT_RETRIES = 1
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_MAX_RATE_LIMIT_RETRIES = 3
DEFAULT_MAX_RETRY_WAIT = 60.0
DEFAULT_RETRY_BACKOFF = 1.0
#: ``max_tokens`` chosen from a transcript's size (:func:`max_tokens_for`): a base plus this
#: many output tokens per transcript token, at most :data:`MAX_MAX_TOKENS`. With prompt 1.2.0
#: no chunk of 1,273 (MSC, Synthetic-Persona-Chat, HH-RLHF, LoCoMo, MemoryBank and synthetic
#: chats; the offline model's answers, characters / 4) needed more than 1024 + 6 per token; 31
#: long LoCoMo chunks need more than the cap and are split (``extractor.chunking``).
OUTPUT_TOKENS_PER_TRANSCRIPT_TOKEN = 6
MIN_MAX_TOKENS = 1024
MAX_MAX_TOKENS = 16384
NO_KEY = "no-key-needed"

_RETRYABLE_STATUS = frozenset({408, 409})

#: The connection pool of each event loop's SDK client. Requests beyond ``max_connections``
#: wait for a free connection, so it must exceed any concurrency we run (``--concurrency``
#: times the chunk concurrency).
POOL_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=256)

# instructor logs every failed attempt at ERROR level; we record them as AttemptRecords instead.
# A NullHandler only stops Python's last-resort printing: an application's handlers still see them.
logging.getLogger("instructor").addHandler(logging.NullHandler())


def max_tokens_for(conversation: Conversation) -> int:
    """The ``max_tokens`` sent for ``conversation`` (a chunk) when none is configured.

    :data:`MIN_MAX_TOKENS` plus :data:`OUTPUT_TOKENS_PER_TRANSCRIPT_TOKEN` per transcript token
    (its rendered characters / 4), at most :data:`MAX_MAX_TOKENS`. An answer that still reaches
    it is split by the chunking layer.
    """
    chars = sum(len(render_message(m)) + 1 for m in conversation.messages)
    wanted = MIN_MAX_TOKENS + OUTPUT_TOKENS_PER_TRANSCRIPT_TOKEN * math.ceil(
        chars / CHARS_PER_TOKEN
    )
    return min(MAX_MAX_TOKENS, wanted)


class _Repeated(Exception):
    """The model answered a re-ask with the same text as before: asking again is pointless."""


@dataclass
class _Call:
    """Everything one :meth:`OpenAIClient.extract` call accumulates across attempts."""

    conversation: Conversation
    options: ValidationOptions
    max_tokens: int
    attempt: int = 0
    usage: Usage = field(default_factory=Usage)
    raw: str | None = None
    pending: list[Rejection] = field(default_factory=list)
    failed: list[AttemptRecord] = field(default_factory=list)
    #: The best answer the gate read so far: (score, parsed answer, its report, raw text).
    best: tuple[tuple[int, int], Any, ValidationReport, str | None] | None = None
    #: The raw text of every answer so far, and the attempt that first gave it.
    seen: dict[str, int] = field(default_factory=dict)
    timeouts: int = 0
    expected_prompt: int = 0

    def on_parse_error(self, error: Exception, **meta: Any) -> None:
        """instructor's ``parse:error`` hook: record the attempt that will be re-asked."""
        rejections, self.pending = self.pending, []
        if meta.get("is_last_attempt"):
            return
        self.failed.append(
            AttemptRecord(
                attempt=int(meta.get("attempt_number") or self.attempt),
                error=_describe(error, rejections),
                rejections=rejections,
                raw_output=self.raw,
            )
        )

    def consider(self, data: Any, report: ValidationReport) -> None:
        """Keep ``data`` if it is the best answer so far: most accepted candidates, then fewest
        rejections; a later answer wins a tie (it answered the re-ask)."""
        score = (len(report.accepted), -len(report.rejections))
        if self.best is None or score >= self.best[0]:
            self.best = (score, data, report, self.raw)

    def fail(self, error: ModelClientError) -> ModelClientError:
        """``error`` with what this call spent: its attempts and its usage."""
        error.attempts = max(error.attempts, self.attempt)
        error.usage = self.usage
        if error.raw_output is None:
            error.raw_output = self.raw
        return error


_CALL: ContextVar[_Call] = ContextVar("extractor_openai_call")
_SCHEMAS: dict[str, dict[str, Any]] = {}


class GatedExtraction(ExtractionOutput, ResponseSchema):
    """The whole extraction for one conversation (or one chunk of it)."""

    model_config = ConfigDict(title="ExtractionOutput", hide_input_in_errors=True)

    @model_validator(mode="before")
    @classmethod
    def _gate(cls, data: Any) -> Any:
        """Run the pipeline's own gate so the model is re-asked with its exact rejections."""
        call = _CALL.get(None)
        if call is None:
            return data
        try:
            report = validate_extraction(data, call.conversation, call.options)
        except ExtractorError as exc:
            raise PydanticCustomError(
                "extraction_unreadable", "{reason}", {"reason": str(exc)}
            ) from None
        call.consider(data, report)
        if report.rejections:
            call.pending = report.rejections
            raise PydanticCustomError(
                "extraction_rejected",
                "these candidates were rejected; fix or drop them and keep the others:\n{feedback}",
                {"feedback": report.feedback()},
            )
        return data

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The lean schema instructor sends in every mode (see :mod:`extractor.clients.wire`).

        Answers are still validated against the full model: only what is sent shrinks. Built
        once per set of arguments (a copy is returned, so a caller may change it): instructor
        asks for it on every request, and building it costs milliseconds.
        """
        key = json.dumps([args, kwargs], sort_keys=True, default=repr)
        built = _SCHEMAS.get(key)
        if built is None:
            built = _SCHEMAS[key] = lean_schema(super().model_json_schema(*args, **kwargs))
        return copy.deepcopy(built)


GatedExtraction.__name__ = "ExtractionOutput"
_SCHEMA = GatedExtraction.model_json_schema()


def _check_async_validators_once() -> None:
    """Let instructor check :class:`GatedExtraction` for async validators once, not per request.

    instructor refuses response models with its async validators, and walks the model's whole
    class tree to find out -- afresh, about seven times per request (~1 ms of CPU in all, the
    largest single cost of a call). The answer cannot change for a class defined here, so it
    is checked once, now; the check instructor's modules call is replaced by one that returns
    at once for this class and runs the original for every other model. Nothing happens if
    instructor's internals have moved (the check then just stays slow).
    """
    try:
        from instructor.v2.core import patch as instructor_patch
        from instructor.v2.validation import async_validators
    except ImportError:  # pragma: no cover - another instructor layout
        return
    original = getattr(async_validators, "reject_async_validators", None)
    if original is None or getattr(original, "checked_once", None) is not None:
        return
    original(GatedExtraction)

    def reject_async_validators(response_model: Any) -> None:
        if response_model is not GatedExtraction:
            original(response_model)

    reject_async_validators.checked_once = GatedExtraction  # type: ignore[attr-defined]
    async_validators.reject_async_validators = reject_async_validators
    if getattr(instructor_patch, "reject_async_validators", None) is original:
        setattr(instructor_patch, "reject_async_validators", reject_async_validators)  # noqa: B010


_check_async_validators_once()


@dataclass
class _Session:
    """One event loop's SDK client, wrapped by instructor; ``closer`` closes what we opened."""

    key: tuple[Any, ...]
    sdk: openai.AsyncOpenAI
    closer: AsyncGenerator[None, None] | None

    async def close(self) -> None:
        if self.closer is not None:
            await self.closer.aclose()


async def _closer(sdk: openai.AsyncOpenAI) -> AsyncGenerator[None, None]:
    """Suspended for the session's life; closing it closes the SDK client and its connections.

    An async generator because the event loop finalizes the ones still suspended before it
    closes (``loop.shutdown_asyncgens()``, which ``asyncio.run`` calls): the connections are
    closed on their own loop, while it still runs, instead of being garbage-collected after it
    closed ("Event loop is closed").
    """
    try:
        yield
    finally:
        await sdk.close()


class OpenAIClient:
    """Extract through any OpenAI-compatible chat completions API (see the module docstring).

    ``mode`` is one of ``tools``, ``json_schema``, ``json``, ``md_json``. ``max_attempts`` counts
    model answers per conversation (1 = no re-ask). ``max_tokens`` bounds each answer (``None``:
    chosen per call by :func:`max_tokens_for`). ``timeout`` is seconds per request (``None``:
    :data:`DEFAULT_TIMEOUT`, :data:`DEFAULT_LOCAL_TIMEOUT` for a local server);
    ``timeout_retries`` how often a timed-out request is sent again (``None``: once, never for a
    local server, which would still be generating the abandoned one). ``system_as_user`` sends
    the system prompt at the head of the first user message (for chat templates that drop the
    system role). ``http_client`` (an ``httpx2.AsyncClient``) is passed to the SDK as is and
    never closed here; it must belong to the event loop that calls :meth:`extract`. Otherwise
    each event loop gets its own connection pool (:data:`POOL_LIMITS`; proxies from the
    environment honoured, as the SDK's default client does), reused by every call on it and
    closed when the loop shuts down or on :meth:`aclose` (``async with OpenAIClient(...) as
    client:`` does that too).
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        timeout: float | None = None,
        mode: str = DEFAULT_MODE,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        timeout_retries: int | None = None,
        max_rate_limit_retries: int = DEFAULT_MAX_RATE_LIMIT_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        retry_backoff: float = DEFAULT_RETRY_BACKOFF,
        max_tokens: int | None = None,
        system_as_user: bool = False,
        extra_headers: Mapping[str, str] | None = None,
        http_client: Any = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (expected one of {', '.join(MODES)})")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if max_tokens is not None and max_tokens < 1:
            raise ValueError("max_tokens must be at least 1")
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.temperature = temperature
        self.local = is_local(base_url)
        self.timeout = timeout or (DEFAULT_LOCAL_TIMEOUT if self.local else DEFAULT_TIMEOUT)
        self.mode = mode
        self.max_attempts = max_attempts
        default_retries = 0 if self.local else DEFAULT_TIMEOUT_RETRIES
        self.timeout_retries = default_retries if timeout_retries is None else timeout_retries
        self.max_rate_limit_retries = max_rate_limit_retries
        self.max_retry_wait = max_retry_wait
        self.retry_backoff = retry_backoff
        self.max_tokens = max_tokens
        self.system_as_user = system_as_user
        self.extra_headers = dict(extra_headers or {})
        self._http_client = http_client
        self._sessions: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[_Session, instructor.AsyncInstructor]
        ] = weakref.WeakKeyDictionary()

    @property
    def model_name(self) -> str:
        return self.model

    @property
    def settings(self) -> dict[str, Any]:
        """What besides the model changes the answer; part of the cache key (``system_as_user``
        only when set, so the keys of earlier runs stay valid)."""
        settings: dict[str, Any] = {
            "base_url": self.base_url,
            "mode": self.mode,
            "temperature": self.temperature,
            "max_attempts": self.max_attempts,
            "max_tokens": self.max_tokens,
        }
        if self.system_as_user:
            settings["system_as_user"] = True
        return settings

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        max_tokens = self.max_tokens or max_tokens_for(conversation)
        call = _Call(conversation, options, max_tokens)
        hooks = Hooks()
        hooks.on("parse:error", call.on_parse_error)
        token = _CALL.set(call)
        try:
            session = await self._session()
            await session.create_with_completion(
                messages=prompt.render(conversation),  # type: ignore[arg-type]
                response_model=GatedExtraction,
                max_retries=self.max_attempts - 1,
                strict=False,
                hooks=hooks,
                model=self.model,
                temperature=self.temperature,
                max_tokens=max_tokens,
            )
        except InstructorRetryException as exc:
            _settle(call, exc)
        finally:
            _CALL.reset(token)
        return _result(call, self.model)

    # --- plumbing --------------------------------------------------------------------------

    async def _session(self) -> instructor.AsyncInstructor:
        """The SDK client of the running event loop, made on its first call there.

        An ``httpx`` client (and so its connection pool) belongs to the event loop it first
        ran on, while :func:`~extractor.clients.base.extract_sync` starts a new loop each time:
        so there is one session per loop, reused by every call on that loop -- one connection
        per request in flight, kept alive -- and closed *on* that loop: when the loop shuts
        down (``asyncio.run`` closes it before closing the loop, see :func:`_closer`), by
        :meth:`aclose`, or when a setting it was built from changes. Making one per call
        instead costs ~6 ms of CPU and a new connection per conversation.
        """
        loop = asyncio.get_running_loop()
        key = self._session_key()
        current = self._sessions.get(loop)
        if current is not None and current[0].key == key:
            return current[1]
        if current is not None:
            del self._sessions[loop]
            await current[0].close()
        sdk = self._sdk(key[0])
        owned = self._http_client is None
        session = _Session(key=key, sdk=sdk, closer=_closer(sdk) if owned else None)
        if session.closer is not None:
            await anext(session.closer)  # registers it with the loop's shutdown_asyncgens()
        mode = MODES[self.mode]
        create = instructor.patch(create=self._sender(sdk), mode=mode)
        wrapped = instructor.AsyncInstructor(
            client=sdk, create=create, mode=mode, provider=instructor.Provider.OPENAI
        )
        self._sessions[loop] = (session, wrapped)
        return wrapped

    def _sdk(self, api_key: str | None) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            default_headers=self.extra_headers or None,
            http_client=self._http_client
            or openai.DefaultAsyncHttpxClient(limits=POOL_LIMITS, verify=tls_context()),
        )

    def _session_key(self) -> tuple[Any, ...]:
        """What a session is built from: a change in any of these builds a new one."""
        return (
            self.api_key or _default_key(self.base_url),
            self.base_url,
            self.timeout,
            tuple(sorted(self.extra_headers.items())),
            self.mode,
            self.system_as_user,
            id(self._http_client),
        )

    async def aclose(self) -> None:
        """Close the running event loop's connections now.

        Optional: they are closed anyway when the loop shuts down. For a client used across
        several loops, each loop's connections close with it.
        """
        current = self._sessions.pop(asyncio.get_running_loop(), None)
        if current is not None:
            await current[0].close()

    async def __aenter__(self) -> OpenAIClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _sender(self, sdk: openai.AsyncOpenAI) -> Any:
        schema_in_prompt = self.mode in _SCHEMA_IN_PROMPT

        async def send(*args: Any, **kwargs: Any) -> ChatCompletion:
            call = _CALL.get()
            call.attempt += 1
            if "messages" in kwargs:
                if schema_in_prompt:
                    kwargs["messages"] = compact_prompt_schema(kwargs["messages"], _SCHEMA)
                if self.system_as_user:
                    kwargs["messages"] = system_into_user(kwargs["messages"])
                call.expected_prompt = estimate_tokens(kwargs["messages"])
            response = await self._send_with_retries(sdk, call, args, kwargs)
            self._observe(call, response)
            return response

        return send

    async def _send_with_retries(
        self, sdk: openai.AsyncOpenAI, call: _Call, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> ChatCompletion:
        retry = 0
        while True:
            try:
                return await _create(sdk, args, kwargs)
            except openai.APIError as exc:
                delay = self._retry_delay(exc, retry, call)
            await asyncio.sleep(delay)
            retry += 1

    def _retry_delay(self, exc: openai.APIError, retry: int, call: _Call) -> float:
        """How long to wait before retrying ``exc``; raises the typed error when we won't."""
        where = call.conversation.id
        last = retry >= self.max_rate_limit_retries
        backoff = min(self.retry_backoff * float(2**retry), self.max_retry_wait)
        if isinstance(exc, openai.RateLimitError):
            wait = retry_after_seconds(exc.response.headers)
            if last or (wait is not None and wait > self.max_retry_wait):
                raise call.fail(
                    RateLimited(
                        f"{where}: rate limited (429) after {retry + 1} request(s)"
                        + (f"; server asks to wait {wait:g}s" if wait is not None else ""),
                        retry_after=wait,
                    )
                ) from exc
            return backoff if wait is None else wait
        if isinstance(exc, openai.APITimeoutError):
            call.timeouts += 1
            if call.timeouts > self.timeout_retries:
                raise call.fail(ModelTimeout(self._timeout_message(call))) from exc
            return 0.0
        if isinstance(exc, openai.APIStatusError):
            message = _message_of(exc)
            if unsupported_mode(self.mode, exc.status_code, message):
                raise call.fail(self._unsupported(call, exc.status_code, message)) from exc
            retryable = exc.status_code >= 500 or exc.status_code in _RETRYABLE_STATUS
            if last or not retryable:
                raise call.fail(
                    ModelClientError(
                        f"{where}: HTTP {exc.status_code} from the model server: {message}"
                    )
                ) from exc
            return backoff
        if last:
            raise call.fail(
                ModelClientError(
                    f"{where}: cannot reach the model server at "
                    f"{self.base_url or 'api.openai.com'}: {_cause_chain(exc)}"
                )
            ) from exc
        return backoff

    def _timeout_message(self, call: _Call) -> str:
        sent = call.timeouts
        text = (
            f"{call.conversation.id}: no answer within {self.timeout:g}s ({sent} request(s)); "
            "raise --model-timeout (`extractor doctor` measures how long this server needs)"
        )
        if self.local and self.timeout_retries == 0:
            text += (
                "; not re-sent: a local server keeps generating an abandoned request "
                "(--timeout-retries N re-sends it)"
            )
        return text

    def _unsupported(self, call: _Call, status: int, message: str) -> ModeUnsupported:
        suggested = FALLBACK_MODE.get(self.mode)
        instead = f"; use --mode {suggested} instead" if suggested else ""
        return ModeUnsupported(
            f"{call.conversation.id}: the server does not support --mode {self.mode} "
            f"(HTTP {status}: {message}){instead} (`extractor doctor` lists the modes it "
            "supports)",
            mode=self.mode,
            suggested=suggested,
        )

    def _observe(self, call: _Call, response: ChatCompletion) -> None:
        """Account for one answer, then stop at once on a refusal, a truncated output, a prompt
        the server did not read or an answer that repeats an earlier one."""
        usage = response.usage
        if usage is not None:
            call.usage = call.usage + Usage(
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                total_tokens=usage.total_tokens,
            )
        call.raw = answer_text(response)
        if not response.choices:
            return
        where = call.conversation.id
        if prompt_dropped(usage.prompt_tokens if usage else None, call.expected_prompt):
            raise call.fail(self._prompt_dropped(call, usage.prompt_tokens if usage else 0))
        choice = response.choices[0]
        if choice.message.refusal:
            raise call.fail(
                ModelRefused(
                    f"{where}: the model refused: {choice.message.refusal}",
                    raw_output=choice.message.refusal,
                )
            )
        if choice.finish_reason == "content_filter":
            raise call.fail(
                ModelRefused(f"{where}: the provider's content filter stopped the answer")
            )
        completion = usage.completion_tokens if usage else None
        reason = _truncation(choice.finish_reason, completion, call.max_tokens, call.raw)
        if reason is not None:
            raise call.fail(
                OutputTruncated(
                    f"{where}: output cut off at the token limit ({reason}); raise --max-tokens "
                    f"(sent: {call.max_tokens}) or lower --max-chunk-chars"
                )
            )
        if call.raw is not None:
            first = call.seen.setdefault(call.raw, call.attempt)
            if first != call.attempt:
                call.failed.append(
                    AttemptRecord(
                        attempt=call.attempt,
                        error=f"the same answer as attempt {first}: not re-asked again",
                    )
                )
                raise _Repeated

    def _prompt_dropped(self, call: _Call, reported: int) -> PromptNotDelivered:
        text = (
            f"{call.conversation.id}: the server read {reported} prompt tokens of the "
            f"~{call.expected_prompt} sent"
        )
        if self.system_as_user:
            text += "; it cuts the prompt (a context window too small? lower --max-chunk-chars)"
        else:
            text += (
                ": its chat template drops the system prompt (llama-cpp-python's gemma format "
                "does); pass --system-as-user"
            )
        return PromptNotDelivered(text + " (`extractor doctor` checks this)")


def _truncation(
    finish_reason: str | None, completion: int | None, max_tokens: int, raw: str | None
) -> str | None:
    """Why an answer counts as cut off, whatever ``finish_reason`` claims; ``None`` if it is not."""
    if finish_reason == "length":
        return f'finish_reason "length", {completion} completion tokens'
    if completion is not None and completion >= max_tokens:
        return f"{completion} completion tokens, finish_reason {finish_reason!r}"
    if unterminated(raw):
        return f"the JSON stops mid-value, finish_reason {finish_reason!r}"
    return None


def _settle(call: _Call, exc: InstructorRetryException) -> None:
    """After instructor gave up: keep the best answer, or raise the error that stopped it."""
    cause = exc.__cause__
    if isinstance(cause, _Repeated):
        return
    if isinstance(cause, ModelClientError):
        if call.best is None or not call.best[0][0]:
            raise cause from None
        call.failed.append(AttemptRecord(attempt=call.attempt, error=str(cause)))
        return
    if isinstance(cause, ExtractorError):
        raise cause from None
    if call.raw is None and call.best is None:
        raise call.fail(
            ModelClientError(f"{call.conversation.id}: no usable answer: {_first_line(exc)}")
        ) from exc


def _result(call: _Call, model: str) -> ClientResult:
    """The call's answer: the best one the gate read, else the last text received."""
    if call.best is None:
        return ClientResult(
            output=parse_output(call.raw or ""),
            raw_text=call.raw,
            model=model,
            usage=call.usage,
            attempts=call.attempt,
            failed_attempts=call.failed,
        )
    _, data, report, raw = call.best
    result = ClientResult(
        output=data,
        raw_text=raw,
        model=model,
        usage=call.usage,
        attempts=call.attempt,
        failed_attempts=call.failed,
    )
    result.attach_validation(call.conversation, call.options, report)
    return result


def system_into_user(messages: list[Any]) -> list[Any]:
    """``messages`` with the system messages' text moved to the head of the first user message
    (for servers whose chat template drops the system role)."""
    system = [m for m in messages if isinstance(m, Mapping) and m.get("role") == "system"]
    if not system:
        return messages
    head = "\n\n".join(str(m.get("content") or "") for m in system)
    moved: list[Any] = []
    for message in messages:
        if message in system:
            continue
        if head and isinstance(message, Mapping) and message.get("role") == "user":
            message = {**message, "content": f"{head}\n\n{message.get('content') or ''}"}
            head = ""
        moved.append(message)
    return moved if not head else [{"role": "user", "content": head}, *moved]


#: Modes in which instructor writes the schema into the system prompt (see ``wire``).
_SCHEMA_IN_PROMPT = frozenset({"json", "md_json"})


@dataclass(frozen=True)
class _DirectPost:
    """How to send a chat completion without the SDK's parameter transform (see :func:`_create`).

    ``fields`` are the body fields of ``AsyncCompletions.create`` in the order it writes them;
    ``options`` makes the request options it passes.
    """

    fields: tuple[str, ...]
    names: frozenset[str]
    options: Any

    @classmethod
    def for_installed_sdk(cls) -> _DirectPost | None:
        """``None`` when this SDK version does not look like the one this was written for."""
        try:
            from openai._base_client import make_request_options
            from openai.resources.chat.completions import AsyncCompletions
        except ImportError:  # pragma: no cover - another SDK layout
            return None
        params = inspect.signature(AsyncCompletions.create).parameters
        takes = inspect.signature(make_request_options).parameters
        if "security" not in takes or not {"messages", "model", "tools"} <= set(params):
            return None  # pragma: no cover - another SDK layout
        request_only = {"self", "extra_headers", "extra_query", "extra_body", "timeout"}
        fields = tuple(p for p in params if p not in request_only)
        return cls(fields, frozenset(fields), make_request_options)


_DIRECT = _DirectPost.for_installed_sdk()


async def _create(
    sdk: openai.AsyncOpenAI, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> ChatCompletion:
    """``sdk.chat.completions.create(**kwargs)``, minus the SDK's parameter transform.

    ``create`` walks every request -- each message, the whole tool schema -- through its typed
    parameter transform (renaming aliased keys, encoding files), ~1 ms of CPU per request; for
    the plain JSON this client sends it changes nothing. So the body is built here, in the
    order ``create`` writes it, and posted through the same SDK client (same headers, auth,
    errors, response parsing); ``tests/test_openai_wire.py`` holds the bodies byte-identical.
    Anything unexpected (positional arguments, a field ``create`` does not know, streaming)
    goes through ``create`` itself.
    """
    direct = _DIRECT
    if direct is None or args or kwargs.get("stream") or not kwargs.keys() <= direct.names:
        response: ChatCompletion = await sdk.chat.completions.create(*args, **kwargs)
        return response
    body = {name: kwargs[name] for name in direct.fields if name in kwargs}
    options = direct.options(security={"bearer_auth": True})
    return await sdk.post("/chat/completions", body=body, cast_to=ChatCompletion, options=options)


def _default_key(base_url: str | None) -> str | None:
    """The SDK reads ``OPENAI_API_KEY`` itself; local servers need no key at all."""
    import os

    key = os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if base_url is None:
        raise ModelClientError("no API key: pass api_key=... or set OPENAI_API_KEY")
    return NO_KEY


def answer_text(response: ChatCompletion) -> str | None:
    """The model's raw answer: the first tool call's arguments, else the message content."""
    if not response.choices:
        return None
    message = response.choices[0].message
    for tool_call in message.tool_calls or []:
        function = getattr(tool_call, "function", None)
        if function is not None:
            return str(function.arguments)
    return message.content


_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)\n?```", re.DOTALL)


def parse_output(text: str) -> Any:
    """Parse the model's answer as JSON (inside a ```json fence when there is one).

    Returns the text unchanged when it is not JSON, so the pipeline's validation reports it as
    unreadable with the raw output attached.
    """
    match = _FENCE.search(text)
    body = match.group(1) if match else text
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return text


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(when - (time.time() if now is None else now), 0.0)


def _message_of(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, Mapping):
        inner = body.get("error", body)
        if isinstance(inner, Mapping) and inner.get("message"):
            return str(inner["message"])
    return exc.message


def _cause_chain(exc: BaseException) -> str:
    parts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(parts) < 4:
        text = _first_line(seen)
        if text and text not in parts:
            parts.append(text)
        seen = seen.__cause__ or seen.__context__
    return ": ".join(parts)


def _describe(error: Exception, rejections: list[Rejection]) -> str:
    if rejections:
        codes = sorted({r.code.value for r in rejections})
        return f"{len(rejections)} candidate(s) rejected: {', '.join(codes)}"
    if isinstance(error, ValidationError):
        first = error.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return _first_line(error)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
