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
timeouts (``timeout`` per request)     this module, same budget            :class:`ModelTimeout`
other 4xx (bad key, unknown model)     nobody                              :class:`ModelClientError`
invalid output (not JSON, schema,      instructor's re-ask, with the       last output returned;
any validation rejection)              validation messages, up to          the pipeline keeps the
                                       ``max_attempts`` answers in all     valid candidates
refusal / ``content_filter``           nobody (a re-ask would only burn    :class:`ModelRefused`
                                       tokens)
``finish_reason="length"``             nobody                              :class:`OutputTruncated`
=====================================  ==================================  ====================

The SDK's own retries are off (``max_retries=0``): they would multiply with ours and hide a
``Retry-After`` we want to honour or refuse. Transport retries happen *inside* one instructor
attempt, so the worst case is ``max_attempts * (1 + max_rate_limit_retries)`` requests.

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
system prompt is sent on one line (:func:`~extractor.clients.wire.compact_prompt_schema`).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import json
import logging
import re
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpx2
import instructor
import openai
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
    OutputTruncated,
    RateLimited,
)
from ..extraction import ExtractionOutput
from ..prompts import Prompt
from ..validation import Rejection, ValidationOptions, validate_extraction
from .base import AttemptRecord, ClientResult, Usage
from .wire import compact_prompt_schema, lean_schema

MODES: dict[str, instructor.Mode] = {
    "tools": instructor.Mode.TOOLS,
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "json": instructor.Mode.JSON,
    "md_json": instructor.Mode.MD_JSON,
}
DEFAULT_MODE = "tools"
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_MAX_RATE_LIMIT_RETRIES = 3
DEFAULT_MAX_RETRY_WAIT = 60.0
DEFAULT_RETRY_BACKOFF = 1.0
NO_KEY = "no-key-needed"

_RETRYABLE_STATUS = frozenset({408, 409})

# instructor logs every failed attempt at ERROR level; we record them as AttemptRecords instead.
# A NullHandler only stops Python's last-resort printing: an application's handlers still see them.
logging.getLogger("instructor").addHandler(logging.NullHandler())


@dataclass
class _Call:
    """Everything one :meth:`OpenAIClient.extract` call accumulates across attempts."""

    conversation: Conversation
    options: ValidationOptions
    attempt: int = 0
    usage: Usage = field(default_factory=Usage)
    raw: str | None = None
    pending: list[Rejection] = field(default_factory=list)
    failed: list[AttemptRecord] = field(default_factory=list)

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


_CALL: ContextVar[_Call] = ContextVar("extractor_openai_call")


class GatedExtraction(ExtractionOutput):
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

        Answers are still validated against the full model: only what is sent shrinks.
        """
        return lean_schema(super().model_json_schema(*args, **kwargs))


GatedExtraction.__name__ = "ExtractionOutput"
_SCHEMA = GatedExtraction.model_json_schema()


class OpenAIClient:
    """Extract through any OpenAI-compatible chat completions API (see the module docstring).

    ``mode`` is one of ``tools``, ``json_schema``, ``json``, ``md_json``. ``max_attempts`` counts
    model answers per conversation (1 = no re-ask). ``http_client`` (an ``httpx2.AsyncClient``)
    is passed to the SDK as is and never closed here; it must belong to the event loop that
    calls :meth:`extract`.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        timeout: float = DEFAULT_TIMEOUT,
        mode: str = DEFAULT_MODE,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        max_rate_limit_retries: int = DEFAULT_MAX_RATE_LIMIT_RETRIES,
        max_retry_wait: float = DEFAULT_MAX_RETRY_WAIT,
        retry_backoff: float = DEFAULT_RETRY_BACKOFF,
        max_tokens: int | None = None,
        extra_headers: Mapping[str, str] | None = None,
        http_client: Any = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r} (expected one of {', '.join(MODES)})")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.temperature = temperature
        self.timeout = timeout
        self.mode = mode
        self.max_attempts = max_attempts
        self.max_rate_limit_retries = max_rate_limit_retries
        self.max_retry_wait = max_retry_wait
        self.retry_backoff = retry_backoff
        self.max_tokens = max_tokens
        self.extra_headers = dict(extra_headers or {})
        self._http_client = http_client
        self._ssl_context: ssl.SSLContext | None = None

    @property
    def model_name(self) -> str:
        return self.model

    @property
    def settings(self) -> dict[str, Any]:
        """What besides the model changes the answer; part of the cache key."""
        return {
            "base_url": self.base_url,
            "mode": self.mode,
            "temperature": self.temperature,
            "max_attempts": self.max_attempts,
            "max_tokens": self.max_tokens,
        }

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        call = _Call(conversation, options)
        hooks = Hooks()
        hooks.on("parse:error", call.on_parse_error)
        token = _CALL.set(call)
        try:
            async with self._session() as session:
                await session.create_with_completion(
                    messages=prompt.render(conversation),  # type: ignore[arg-type]
                    response_model=GatedExtraction,
                    max_retries=self.max_attempts - 1,
                    strict=False,
                    hooks=hooks,
                    **self._request_kwargs(),
                )
        except InstructorRetryException as exc:
            cause = exc.__cause__
            if isinstance(cause, ExtractorError):
                raise cause from None
            if call.raw is None:
                raise ModelClientError(
                    f"{conversation.id}: no usable answer: {_first_line(exc)}",
                    attempts=call.attempt,
                ) from exc
        finally:
            _CALL.reset(token)
        return ClientResult(
            output=parse_output(call.raw or ""),
            raw_text=call.raw,
            model=self.model,
            usage=call.usage,
            attempts=call.attempt,
            failed_attempts=call.failed,
        )

    # --- plumbing --------------------------------------------------------------------------

    def _request_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "temperature": self.temperature}
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        return kwargs

    @contextlib.asynccontextmanager
    async def _session(self) -> AsyncIterator[instructor.AsyncInstructor]:
        """An SDK client for this call, closed after it.

        One per call rather than one per client: an ``httpx`` client belongs to the event loop
        it first ran on, and :func:`~extractor.clients.base.extract_sync` starts a new loop each
        time. The SSL context -- the expensive part -- is shared, so a call costs a few ms more
        and a new connection, against seconds of model time.
        """
        http = self._http_client or openai.DefaultAsyncHttpxClient(verify=self._ssl())
        sdk = openai.AsyncOpenAI(
            api_key=self.api_key or _default_key(self.base_url),
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            default_headers=self.extra_headers or None,
            http_client=http,
        )
        mode = MODES[self.mode]
        create = instructor.patch(create=self._sender(sdk), mode=mode)
        try:
            yield instructor.AsyncInstructor(
                client=sdk, create=create, mode=mode, provider=instructor.Provider.OPENAI
            )
        finally:
            if self._http_client is None:
                await sdk.close()

    def _ssl(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = httpx2.create_ssl_context()
        return self._ssl_context

    def _sender(self, sdk: openai.AsyncOpenAI) -> Any:
        async def send(*args: Any, **kwargs: Any) -> ChatCompletion:
            call = _CALL.get()
            call.attempt += 1
            if "messages" in kwargs:
                kwargs["messages"] = compact_prompt_schema(kwargs["messages"], _SCHEMA)
            response = await self._send_with_retries(sdk, call, args, kwargs)
            _observe(call, response)
            return response

        return send

    async def _send_with_retries(
        self, sdk: openai.AsyncOpenAI, call: _Call, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> ChatCompletion:
        retry = 0
        while True:
            try:
                response: ChatCompletion = await sdk.chat.completions.create(*args, **kwargs)
                return response
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
                raise RateLimited(
                    f"{where}: rate limited (429) after {retry + 1} request(s)"
                    + (f"; server asks to wait {wait:g}s" if wait is not None else ""),
                    attempts=call.attempt,
                    retry_after=wait,
                ) from exc
            return backoff if wait is None else wait
        if isinstance(exc, openai.APITimeoutError):
            if last:
                raise ModelTimeout(
                    f"{where}: no answer within {self.timeout:g}s ({retry + 1} request(s))",
                    attempts=call.attempt,
                ) from exc
            return backoff
        if isinstance(exc, openai.APIStatusError):
            retryable = exc.status_code >= 500 or exc.status_code in _RETRYABLE_STATUS
            if last or not retryable:
                raise ModelClientError(
                    f"{where}: HTTP {exc.status_code} from the model server: {_message_of(exc)}",
                    attempts=call.attempt,
                ) from exc
            return backoff
        if last:
            raise ModelClientError(
                f"{where}: cannot reach the model server at {self.base_url or 'api.openai.com'}: "
                f"{_cause_chain(exc)}",
                attempts=call.attempt,
            ) from exc
        return backoff


def _default_key(base_url: str | None) -> str | None:
    """The SDK reads ``OPENAI_API_KEY`` itself; local servers need no key at all."""
    import os

    key = os.environ.get("OPENAI_API_KEY")
    if key:
        return key
    if base_url is None:
        raise ModelClientError("no API key: pass api_key=... or set OPENAI_API_KEY")
    return NO_KEY


def _observe(call: _Call, response: ChatCompletion) -> None:
    """Account for one answer, then stop at once on a refusal or a truncated output."""
    if response.usage is not None:
        call.usage = call.usage + Usage(
            prompt_tokens=response.usage.prompt_tokens,
            completion_tokens=response.usage.completion_tokens,
            total_tokens=response.usage.total_tokens,
        )
    if not response.choices:
        call.raw = None
        return
    choice = response.choices[0]
    message = choice.message
    call.raw = answer_text(response)
    where = call.conversation.id
    if message.refusal:
        raise ModelRefused(
            f"{where}: the model refused: {message.refusal}",
            attempts=call.attempt,
            raw_output=message.refusal,
        )
    if choice.finish_reason == "content_filter":
        raise ModelRefused(
            f"{where}: the provider's content filter stopped the answer",
            attempts=call.attempt,
            raw_output=call.raw,
        )
    if choice.finish_reason == "length":
        tokens = response.usage.completion_tokens if response.usage else "?"
        raise OutputTruncated(
            f"{where}: output cut off at the token limit ({tokens} completion tokens); "
            "raise max_tokens or split the conversation into smaller chunks",
            attempts=call.attempt,
            raw_output=call.raw,
        )


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
