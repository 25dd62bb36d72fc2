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
import copy
import email.utils
import functools
import inspect
import json
import logging
import re
import ssl
import time
import weakref
from collections.abc import AsyncGenerator, Callable, Mapping
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
    OutputTruncated,
    RateLimited,
)
from ..extraction import ExtractionOutput
from ..prompts import Prompt
from ..validation import Rejection, ValidationOptions, ValidationReport, validate_extraction
from . import netstream
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

#: Connection pool of each event loop's SDK client. Requests beyond ``max_connections`` wait for
#: a free connection, so it must exceed any concurrency we run (``--concurrency`` times the chunk
#: concurrency); kept-alive connections beyond ``max_keepalive_connections`` are closed after
#: their request and re-opened by the next one.
POOL_LIMITS = httpx2.Limits(max_connections=1000, max_keepalive_connections=256)
#: At most this many connection pools per event loop, each made once the others all have
#: ``POOL_SHARD_LOAD`` requests in flight (see ``_Session``).
POOL_SHARDS = 8
POOL_SHARD_LOAD = 4

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
    #: The last answer the gate read, and its report.
    gated: tuple[Any, ValidationReport] | None = None

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
        call.gated = None
        try:
            report = validate_extraction(data, call.conversation, call.options)
        except ExtractorError as exc:
            raise PydanticCustomError(
                "extraction_unreadable", "{reason}", {"reason": str(exc)}
            ) from None
        call.gated = (data, report)
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
    """One event loop's SDK clients, wrapped by instructor; ``closer`` closes what we opened.

    ``pools`` are SDK clients, each with its own connection pool; ``busy`` counts each one's
    requests in flight, and a request goes to the least busy. Why several: ``httpcore`` checks
    *every* connection of a pool -- a socket poll for each idle one -- whenever a request
    starts or ends, so one pool of C connections costs O(C) per request (at C = 64, one pool
    cost ~1 ms more CPU per call than eight: 4.9 against 3.8 ms). So a new pool is made (by
    ``make``, up to
    :data:`POOL_SHARDS`) when every pool already has :data:`POOL_SHARD_LOAD` requests in
    flight: at C = 1 there is one pool, at C = 32 eight of four connections. A caller's own
    ``http_client`` is one pool and never more (``make`` is ``None``).
    """

    key: tuple[Any, ...]
    pools: list[openai.AsyncOpenAI]
    make: Callable[[], openai.AsyncOpenAI] | None
    closer: AsyncGenerator[None, None] | None
    busy: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.busy = [0] * len(self.pools)

    def acquire(self) -> int:
        """The index of the least busy pool (a new one if all are loaded), counted busy."""
        index = min(range(len(self.busy)), key=self.busy.__getitem__)
        if self.busy[index] >= POOL_SHARD_LOAD and self.make and len(self.pools) < POOL_SHARDS:
            self.pools.append(self.make())
            self.busy.append(0)
            index = len(self.pools) - 1
        self.busy[index] += 1
        return index

    def release(self, index: int) -> None:
        self.busy[index] -= 1

    async def close(self) -> None:
        if self.closer is not None:
            await self.closer.aclose()


async def _closer(pools: list[openai.AsyncOpenAI]) -> AsyncGenerator[None, None]:
    """Suspended for the session's life; closing it closes the SDK clients and connections.

    An async generator because the event loop finalizes the ones still suspended before it
    closes (``loop.shutdown_asyncgens()``, which ``asyncio.run`` calls): the connections are
    closed on their own loop, while it still runs, instead of being garbage-collected after it
    closed ("Event loop is closed").
    """
    try:
        yield
    finally:
        for sdk in pools:
            await sdk.close()


class OpenAIClient:
    """Extract through any OpenAI-compatible chat completions API (see the module docstring).

    ``mode`` is one of ``tools``, ``json_schema``, ``json``, ``md_json``. ``max_attempts`` counts
    model answers per conversation (1 = no re-ask). ``http_client`` (an ``httpx2.AsyncClient``)
    is passed to the SDK as is and never closed here; it must belong to the event loop that
    calls :meth:`extract`. Otherwise each event loop gets its own connection pool
    (:data:`POOL_LIMITS`), reused by every call on it and closed when the loop shuts down or on
    :meth:`aclose` (``async with OpenAIClient(...) as client:`` does that too).
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
        self._sessions: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, tuple[_Session, instructor.AsyncInstructor]
        ] = weakref.WeakKeyDictionary()

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
            session = await self._session()
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
        result = ClientResult(
            output=parse_output(call.raw or ""),
            raw_text=call.raw,
            model=self.model,
            usage=call.usage,
            attempts=call.attempt,
            failed_attempts=call.failed,
        )
        if call.gated is not None and _same_json(call.gated[0], result.output):
            result.attach_validation(conversation, options, call.gated[1])
        return result

    # --- plumbing --------------------------------------------------------------------------

    def _request_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, "temperature": self.temperature}
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        return kwargs

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
        owned = self._http_client is None
        pools = [self._sdk(key[0])]
        session = _Session(
            key=key,
            pools=pools,
            make=functools.partial(self._sdk, key[0]) if owned else None,
            closer=_closer(pools) if owned else None,
        )
        if session.closer is not None:
            await anext(session.closer)  # registers it with the loop's shutdown_asyncgens()
        mode = MODES[self.mode]
        create = instructor.patch(create=self._sender(session), mode=mode)
        wrapped = instructor.AsyncInstructor(
            client=pools[0], create=create, mode=mode, provider=instructor.Provider.OPENAI
        )
        self._sessions[loop] = (session, wrapped)
        return wrapped

    def _sdk(self, api_key: str | None) -> openai.AsyncOpenAI:
        # Our transport: the SDK's defaults and limits, on the asyncio backend of netstream.py.
        http = self._http_client or openai.DefaultAsyncHttpxClient(
            limits=POOL_LIMITS,
            transport=netstream.transport(verify=self._ssl(), limits=POOL_LIMITS),
        )
        return openai.AsyncOpenAI(
            api_key=api_key,
            base_url=self.base_url,
            timeout=self.timeout,
            max_retries=0,
            default_headers=self.extra_headers or None,
            http_client=http,
        )

    def _session_key(self) -> tuple[Any, ...]:
        """What a session is built from: a change in any of these builds a new one."""
        return (
            self.api_key or _default_key(self.base_url),
            self.base_url,
            self.timeout,
            tuple(sorted(self.extra_headers.items())),
            self.mode,
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

    def _ssl(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = httpx2.create_ssl_context()
        return self._ssl_context

    def _sender(self, session: _Session) -> Any:
        schema_in_prompt = self.mode in _SCHEMA_IN_PROMPT

        async def send(*args: Any, **kwargs: Any) -> ChatCompletion:
            call = _CALL.get()
            call.attempt += 1
            if schema_in_prompt and "messages" in kwargs:
                kwargs["messages"] = compact_prompt_schema(kwargs["messages"], _SCHEMA)
            index = session.acquire()
            try:
                response = await self._send_with_retries(session.pools[index], call, args, kwargs)
            finally:
                session.release(index)
            _observe(call, response)
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


def _same_json(a: Any, b: Any) -> bool:
    """Whether two parsed answers are the same JSON value, types included (``1`` is not
    ``1.0`` or ``true``): then the gate's report on one is the pipeline's on the other."""
    try:
        return json.dumps(a, allow_nan=True) == json.dumps(b, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        return False


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
