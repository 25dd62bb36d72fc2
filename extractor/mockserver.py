"""A loopback OpenAI-compatible server that answers with the offline model, with scripted faults.

:class:`MockServer` serves ``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1
from a background thread. It rebuilds the conversation from the rendered prompt
(:func:`~extractor.prompts.parse_transcript`), runs
:func:`~extractor.offline.offline_proposal` on it and answers in the exact shape the
OpenAI API uses for the instructor mode the request implies:

=============  =========================================  =====================================
mode           request carries                            answer
=============  =========================================  =====================================
tools          ``tools`` + ``tool_choice``                ``message.tool_calls[0]`` (arguments)
json_schema    ``response_format.type = json_schema``     ``message.content`` = JSON
json           ``response_format.type = json_object``     ``message.content`` = JSON
md_json        neither                                    ``message.content`` = fenced JSON
=============  =========================================  =====================================

Every answer has ``usage`` (about four characters a token) and a ``finish_reason``.

Latency
-------
``latency`` is the time from a request's arrival to its answer, as a remote model's would be
(generation time mode: ``token_latency`` adds that many seconds per completion token of the
answer, as a model generating one token after another would):
the offline answer is computed first and only the rest of ``latency`` is slept, in the
request's own thread (one per connection), so any number of requests wait at once. The offline
output is remembered per transcript (the last :data:`ANSWER_CACHE_SIZE`), so a re-ask or a
second pass over the same conversations costs the server next to no CPU -- what a benchmark
of the *client* needs from the server it runs beside. Responses go out with ``TCP_NODELAY``:
headers and body are two writes, and Nagle's algorithm would otherwise hold the body back
until the client's delayed ACK, ~40 ms on Linux.

Faults
------
A fault spec is ``name``, ``name:N`` or ``name:always``; several are separated by commas.
They are chosen per server (``MockServer(faults=...)``, ``--fault``), per conversation id
(``MockServer(conversation_faults={"conv-2": "refusal"})``, for batch tests) or per request,
which overrides both: the header ``X-Mock-Fault: verified,rate_limit:1`` or a model-name suffix
``offline+verified+rate_limit:1``. An unknown fault name in a request is a 400.
``MockServer(answers={"conv-1": {"candidates": [...]}})`` answers fixed extractions for those
conversations instead of the offline model's (a scripted model, for hostile tests).
``X-Mock-Latency``, ``X-Mock-Token-Latency`` and ``X-Mock-Retry-After`` (seconds) override
``latency``, ``token_latency`` and ``retry_after`` per request.

=================  ======================================================================
fault              effect
=================  ======================================================================
rate_limit         HTTP 429 with ``Retry-After``
server_error       HTTP 500
malformed          content that is not JSON (single-quoted keys)
truncated          the answer cut in half, ``finish_reason="length"``
refusal            ``message.refusal`` set, no content, no tool call
verified           adds a candidate claiming ``"verification": "VERIFIED"``
fabricated_span    adds a candidate quoting text that no message contains
origin_laundering  adds a candidate that passes a quote off under someone else's origin
=================  ======================================================================

``N`` counts *deliveries of the same request body* for ``rate_limit`` and ``server_error`` (a
client's retry resends the same body, so ``rate_limit:1`` fails once and then succeeds), and
*attempts* for the others (attempt = 1 + the assistant turns in the request, i.e. re-asks).
Without ``N`` a fault fires every time, except the three candidate faults, which behave like a
model that listens: they repeat until a re-ask message names their rejection code
(``EXTRACTOR_CLAIMED_VERIFIED``, ``SPAN_NOT_FOUND``, ``ORIGIN_LAUNDERING``), then stop. Use
``name:always`` for a model that never corrects itself.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .conversation import Conversation, Message
from .errors import ExtractorError
from .hashing import canonical_json
from .prompts import parse_transcript
from .vocab import Role

TRANSPORT_FAULTS = ("rate_limit", "server_error")
OUTPUT_FAULTS = ("malformed", "truncated", "refusal")
#: Faults of real servers (llama-cpp-python, Ollama): see the module docstring.
SERVER_FAULTS = ("no_json_schema", "no_tools", "finish_lies", "drop_system", "repeat")
#: Candidate faults and the rejection code a re-ask must name to make the mock correct itself.
CANDIDATE_FAULTS = {
    "verified": "EXTRACTOR_CLAIMED_VERIFIED",
    "fabricated_span": "SPAN_NOT_FOUND",
    "origin_laundering": "ORIGIN_LAUNDERING",
}
FAULT_NAMES = (*TRANSPORT_FAULTS, *OUTPUT_FAULTS, *CANDIDATE_FAULTS, *SERVER_FAULTS)
DEFAULT_MODEL = "offline"
REFUSAL_TEXT = "I'm sorry, but I can't help with that request."
#: How many transcripts' offline outputs the server remembers.
ANSWER_CACHE_SIZE = 4096
#: Pending connections the listening socket queues (socketserver's default is 5: a burst of
#: new connections beyond it waits for a SYN retransmit, a second or more).
LISTEN_BACKLOG = 1024
#: About four characters a token, for the usage the mock reports and ``max_tokens``.
CHARS_PER_TOKEN = 4
#: The longest reply to a chat without a transcript.
CHAT_REPLY_TOKENS = 512
FABRICATED_QUOTE = "I was born on the Moon in 1850."
#: What llama-cpp-python 0.3 answers (HTTP 500) to ``response_format: {"type": "json_schema"}``.
NO_JSON_SCHEMA_MESSAGE = (
    "1 validation error for CreateChatCompletionRequest\nresponse_format.type\n"
    "  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema']"
)
NO_TOOLS_MESSAGE = "registry.ollama.ai/library/gemma3:270m does not support tools"


@dataclass(frozen=True)
class Fault:
    """One scripted fault: ``times=None`` means the default (see the module docstring)."""

    name: str
    times: int | None = None
    always: bool = False
    #: ``name:>N``: fires only after the first N attempts (deliveries).
    after: int | None = None

    def fires(self, count: int, feedback: str = "") -> bool:
        """Whether the fault fires on the ``count``-th attempt or delivery (1-based)."""
        if self.always:
            return True
        if self.after is not None:
            return count > self.after
        if self.times is not None:
            return count <= self.times
        code = CANDIDATE_FAULTS.get(self.name)
        return code is None or code not in feedback


def parse_faults(spec: str | Sequence[str] | None) -> tuple[Fault, ...]:
    """Parse ``"verified,rate_limit:1"`` (or a list of such strings) into faults.

    Raises :class:`ValueError` naming the unknown fault or count, so a CLI can report it.
    """
    if spec is None:
        return ()
    items = [spec] if isinstance(spec, str) else list(spec)
    faults = []
    for item in items:
        for part in filter(None, (p.strip() for p in item.split(","))):
            name, _, count = part.partition(":")
            if name not in FAULT_NAMES:
                raise ValueError(
                    f"unknown fault {name!r} (expected one of {', '.join(FAULT_NAMES)})"
                )
            faults.append(_fault(name, count))
    return tuple(faults)


def _fault(name: str, count: str) -> Fault:
    if not count:
        return Fault(name)
    if count == "always":
        return Fault(name, always=True)
    if count.startswith(">") and count[1:].isdigit():
        return Fault(name, after=int(count[1:]))
    if not count.isdigit():
        raise ValueError(f"fault {name!r}: count must be a number, '>N' or 'always', got {count!r}")
    return Fault(name, times=int(count))


@dataclass
class _State:
    """What the server remembers between requests: deliveries per body, and a request log."""

    deliveries: dict[str, int] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    answers: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict)
    connections: int = 0
    open_connections: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    answering: int = 0
    peak_answering: int = 0

    def count_connection(self, change: int) -> None:
        with self.lock:
            self.open_connections += change
            self.connections += max(change, 0)

    def count_in_flight(self, change: int) -> None:
        with self.lock:
            self.in_flight += change
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def count_answering(self, change: int) -> None:
        with self.lock:
            self.answering += change
            self.peak_answering = max(self.peak_answering, self.answering)

    def offline_output(self, transcript: str, conversation: Conversation) -> dict[str, Any]:
        """The offline model's output for ``conversation``, remembered per ``transcript``.

        Callers must not mutate it (the fault helpers build new dicts).
        """
        with self.lock:
            output = self.answers.get(transcript)
            if output is not None:
                self.answers.move_to_end(transcript)
                return output
        from .offline import offline_proposal

        output = offline_proposal(conversation)
        with self.lock:
            self.answers[transcript] = output
            while len(self.answers) > ANSWER_CACHE_SIZE:
                self.answers.popitem(last=False)
        return output

    def deliver(self, body: bytes) -> int:
        key = hashlib.sha256(body).hexdigest()
        with self.lock:
            self.deliveries[key] = self.deliveries.get(key, 0) + 1
            return self.deliveries[key]


@dataclass(frozen=True)
class Reply:
    status: int
    body: dict[str, Any]
    headers: Mapping[str, str] = field(default_factory=dict)


class MockServer:
    """An OpenAI-compatible server on loopback, for tests and demos. Use as a context manager.

    ``port=0`` picks a free ephemeral port; :attr:`base_url` is then e.g.
    ``"http://127.0.0.1:53817/v1"``. ``requests`` holds every request body received, so a test
    can check exactly what a model would have seen.
    """

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        faults: str | Sequence[str] = (),
        latency: float = 0.0,
        token_latency: float = 0.0,
        retry_after: float = 0.0,
        conversation_faults: Mapping[str, str | Sequence[str]] | None = None,
        answers: Mapping[str, Mapping[str, Any]] | None = None,
        prompt_rate: float | None = None,
        slots: int | None = None,
    ) -> None:
        if slots is not None and slots < 1:
            raise ValueError("slots must be at least 1")
        if prompt_rate is not None and prompt_rate <= 0:
            raise ValueError("prompt_rate must be positive")
        self.host = host
        self.port = port
        self.faults = parse_faults(faults)
        self.conversation_faults = {
            cid: parse_faults(spec) for cid, spec in (conversation_faults or {}).items()
        }
        self.latency = latency
        self.token_latency = token_latency
        self.retry_after = retry_after
        #: Fixed extraction outputs per conversation id, answered instead of the offline model's
        #: (a scripted, possibly hostile, model); faults still apply on top.
        self.answers = dict(answers or {})
        self.prompt_rate = prompt_rate
        self.slots = slots
        self._state = _State()
        self._slot = threading.BoundedSemaphore(slots) if slots else None
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the mock server is not running; call start() first")
        return f"http://{self.host}:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[dict[str, Any]]:
        with self._state.lock:
            return list(self._state.requests)

    @property
    def connections(self) -> int:
        """TCP connections accepted so far (a client that reuses its connections opens few)."""
        with self._state.lock:
            return self._state.connections

    @property
    def open_connections(self) -> int:
        """TCP connections accepted and not yet closed."""
        with self._state.lock:
            return self._state.open_connections

    @property
    def peak_in_flight(self) -> int:
        """The most chat-completion requests that were being answered at the same time."""
        with self._state.lock:
            return self._state.peak_in_flight

    @property
    def peak_answering(self) -> int:
        """On a ``slots`` server: the most requests that held a slot at the same time."""
        with self._state.lock:
            return self._state.peak_answering

    @property
    def in_flight(self) -> int:
        """Chat-completion requests received and not yet answered (queued ones included): on a
        ``slots`` server, a request its client gave up on stays here until it is answered."""
        with self._state.lock:
            return self._state.in_flight

    def start(self) -> None:
        if self._server is not None:
            return
        server = _HTTPServer((self.host, self.port), _handler_for(self))
        server.state = self._state
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},  # shutdown() waits up to one poll interval
            name="extractor-mock-server",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> MockServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Reply:
        """Answer one request (the HTTP handler's whole job; callable directly in tests)."""
        arrived = time.monotonic()
        path = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and path == "/v1/models":
            return Reply(200, _models())
        if method != "POST" or path != "/v1/chat/completions":
            return _error(404, f"no route for {method} {path}", "not_found")
        try:
            request = json.loads(body)
        except ValueError as exc:
            return _error(400, f"request body is not JSON: {exc}", "invalid_request_error")
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
            return _error(400, "request needs a 'messages' list", "invalid_request_error")
        with self._state.lock:
            self._state.requests.append(request)
        self._state.count_in_flight(1)
        try:
            if self._slot is None:
                return self._complete(request, headers, body, arrived)
            with self._slot:  # a single-slot server: one request at a time, the rest queue
                self._state.count_answering(1)
                try:
                    return self._complete(request, headers, body, time.monotonic())
                finally:
                    self._state.count_answering(-1)
        finally:
            self._state.count_in_flight(-1)

    def _complete(
        self, request: dict[str, Any], headers: Mapping[str, str], body: bytes, arrived: float
    ) -> Reply:
        try:
            found = _conversation_in(request["messages"])
            faults = self._faults_for(request, headers, found[1].id if found else "")
        except (ExtractorError, ValueError) as exc:
            return _error(400, str(exc), "invalid_request_error")
        unsupported = _unsupported(request, faults)
        if unsupported is not None:
            return unsupported
        fixed = self.answers.get(found[1].id) if found else None
        output: dict[str, Any] | None = None
        if fixed is not None:
            output = dict(fixed)
        elif found is not None:
            output = self._state.offline_output(*found)
        if found is None or output is None:
            reply = _chat_reply(request, faults)
        else:
            reply = _answer(request, found[1], faults, output)
        per_token = _float_header(headers, "x-mock-token-latency", self.token_latency)
        generated = per_token * reply.body.get("usage", {}).get("completion_tokens", 0)
        delay = _float_header(headers, "x-mock-latency", self.latency) + generated
        if self.prompt_rate:
            delay += prompt_tokens(request, faults) / self.prompt_rate
        remaining = delay - (time.monotonic() - arrived)
        if remaining > 0:
            time.sleep(remaining)
        delivery = self._state.deliver(body)
        for fault in faults:
            if fault.name in TRANSPORT_FAULTS and fault.fires(delivery):
                return self._transport_fault(fault.name, headers)
        return reply

    def _faults_for(
        self, request: dict[str, Any], headers: Mapping[str, str], conversation_id: str
    ) -> tuple[Fault, ...]:
        """Per request (header, model suffix), else per conversation, else the server's."""
        model = str(request.get("model", ""))
        chosen = parse_faults(headers.get("x-mock-fault")) + parse_faults(model.split("+")[1:])
        return chosen or self.conversation_faults.get(conversation_id) or self.faults

    def _transport_fault(self, name: str, headers: Mapping[str, str]) -> Reply:
        if name == "rate_limit":
            wait = _float_header(headers, "x-mock-retry-after", self.retry_after)
            return _error(
                429,
                "Rate limit reached for requests (mock server).",
                "requests",
                code="rate_limit_exceeded",
                headers={"retry-after": _seconds(wait)},
            )
        return _error(
            500, "The server had an error processing your request (mock).", "server_error"
        )


# --- Building the answer ---------------------------------------------------------------------


def _unsupported(request: Mapping[str, Any], faults: Sequence[Fault]) -> Reply | None:
    """The error a server without json_schema or tool support answers the request with."""
    names = {f.name for f in faults}
    mode = request_mode(request)
    if mode == "json_schema" and "no_json_schema" in names:
        return _error(500, NO_JSON_SCHEMA_MESSAGE, "internal_server_error")
    if mode == "tools" and "no_tools" in names:
        return _error(400, NO_TOOLS_MESSAGE, "invalid_request_error")
    return None


def _answer(
    request: dict[str, Any],
    conversation: Conversation,
    faults: Sequence[Fault],
    output: dict[str, Any],
) -> Reply:
    """The answer to ``request``, given the offline model's ``output`` for its conversation.

    A re-ask gets a different text than the answer before it (the bad candidate's id names the
    attempt), except with the ``repeat`` fault. An answer longer than the request's
    ``max_tokens`` is cut there.
    """
    messages = request["messages"]
    attempt = 1 + sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    feedback = _feedback(messages)
    names = {f.name for f in faults}
    tag = 1 if "repeat" in names else attempt
    for fault in faults:
        if fault.name in CANDIDATE_FAULTS and fault.fires(attempt, feedback):
            output = _with_bad_candidate(output, fault.name, conversation, tag)
    active = {f.name for f in faults if f.name in OUTPUT_FAULTS and f.fires(attempt)}
    if "malformed" in active:
        output = {**output, "attempt": tag}
    text = json.dumps(output, ensure_ascii=False, separators=(",", ":"))
    if "malformed" in active:
        text = text.replace('"', "'")
    cut = "truncated" in active
    if cut:
        text = text[: max(1, len(text) // 2)]
    limit = request.get("max_tokens")
    if isinstance(limit, int) and limit > 0 and _tokens(text) > limit:
        text, cut = text[: limit * CHARS_PER_TOKEN], True
    mode = request_mode(request)
    message = _message(mode, text, request, refused="refusal" in active)
    finish = "stop" if mode != "tools" or _named_tool_choice(request) else "tool_calls"
    if cut and "finish_lies" not in names:
        finish = "length"
    return Reply(200, _completion(request, message, finish, text, faults))


def request_mode(request: Mapping[str, Any]) -> str:
    """The instructor mode a request implies: ``tools``, ``json_schema``, ``json`` or
    ``md_json``."""
    if request.get("tools"):
        return "tools"
    response_format = request.get("response_format")
    kind = response_format.get("type") if isinstance(response_format, Mapping) else None
    return {"json_schema": "json_schema", "json_object": "json"}.get(str(kind), "md_json")


def _message(mode: str, text: str, request: Mapping[str, Any], *, refused: bool) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": None,
        "refusal": None,
        "annotations": [],
    }
    if refused:
        message["refusal"] = REFUSAL_TEXT
    elif mode == "tools":
        message["tool_calls"] = [
            {
                "id": "call_" + hashlib.sha256(text.encode()).hexdigest()[:24],
                "type": "function",
                "function": {"name": _tool_name(request), "arguments": text},
            }
        ]
    elif mode == "md_json":
        message["content"] = f"```json\n{text}\n```"
    else:
        message["content"] = text
    return message


def prompt_tokens(request: Mapping[str, Any], faults: Sequence[Fault] = ()) -> int:
    """The prompt tokens the mock reports: every message, tool and response format (about four
    characters a token). With the ``drop_system`` fault only the messages other than system
    ones count, as on llama-cpp-python with a chat template that has no system role (it turns
    tools and schemas into a grammar instead of prompt text)."""
    messages = request.get("messages") or []
    if any(f.name == "drop_system" for f in faults):
        kept = [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
        return _tokens(canonical_json(kept))
    asked = {"messages": messages, **{k: request.get(k) for k in ("tools", "response_format")}}
    return _tokens(canonical_json(asked))


def _completion(
    request: Mapping[str, Any],
    message: dict[str, Any],
    finish: str,
    text: str,
    faults: Sequence[Fault],
) -> dict[str, Any]:
    prompt = prompt_tokens(request, faults)
    completion_tokens = _tokens(message.get("refusal") or text)
    digest = hashlib.sha256(canonical_json(request).encode()).hexdigest()
    return {
        "id": "chatcmpl-mock" + digest[:24],
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(request.get("model", DEFAULT_MODEL)),
        "system_fingerprint": "fp_mock",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        },
    }


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / CHARS_PER_TOKEN))


def _named_tool_choice(request: Mapping[str, Any]) -> bool:
    return isinstance(request.get("tool_choice"), Mapping)


def _tool_name(request: Mapping[str, Any]) -> str:
    choice = request.get("tool_choice")
    if isinstance(choice, Mapping):
        return str(choice.get("function", {}).get("name", "ExtractionOutput"))
    tools = request.get("tools") or [{}]
    return str(tools[0].get("function", {}).get("name", "ExtractionOutput"))


def _conversation_in(messages: Sequence[Any]) -> tuple[str, Conversation] | None:
    """The first message holding a transcript, and the conversation parsed from it; ``None``
    for a chat that holds none (it gets a plain reply)."""
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str) and '<conversation id="' in content:
            return content, parse_transcript(content)
    return None


def _chat_reply(request: Mapping[str, Any], faults: Sequence[Fault]) -> Reply:
    """A chat without a transcript (``extractor doctor``'s probes): numbers counted up to the
    request's ``max_tokens`` (one token each), ``finish_reason="length"`` when it stops there."""
    limit = request.get("max_tokens")
    count = limit if isinstance(limit, int) and 0 < limit <= CHAT_REPLY_TOKENS else 1
    text = " ".join(str(n) for n in range(1, count + 1)) if count > 1 else "OK"
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    message["annotations"] = []
    completion = _completion(request, message, "length" if count > 1 else "stop", text, faults)
    completion["usage"]["completion_tokens"] = count
    completion["usage"]["total_tokens"] = completion["usage"]["prompt_tokens"] + count
    return Reply(200, completion)


def _feedback(messages: Sequence[Any]) -> str:
    """The text after the last assistant turn: where a re-ask puts its validation errors."""
    last = max(
        (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"),
        default=None,
    )
    if last is None:
        return ""
    return "\n".join(str(m.get("content", "")) for m in messages[last + 1 :] if isinstance(m, dict))


# --- Bad candidates ---------------------------------------------------------------------------


def _with_bad_candidate(
    output: dict[str, Any], fault: str, conv: Conversation, attempt: int
) -> dict[str, Any]:
    candidates = list(output.get("candidates", []))
    taken = {c.get("id") for c in candidates if isinstance(c, dict)}
    ids = (
        f"c{n}" if attempt == 1 else f"c{n}-{attempt}" for n in itertools.count(len(candidates) + 1)
    )
    cid = next(i for i in ids if i not in taken)
    bad = _bad_candidate(fault, conv, cid)
    return {**output, "candidates": [*candidates, bad]} if bad else output


def _bad_candidate(fault: str, conv: Conversation, cid: str) -> dict[str, Any] | None:
    quotable = [m for m in conv.messages if m.text and not m.placeholder_ranges]
    if not quotable:
        return None
    if fault == "origin_laundering":
        source = next((m for m in quotable if m.role is Role.ASSISTANT), quotable[0])
        origin = "TOOL" if source.role is Role.USER else "USER"
        return _candidate(cid, source, source.text, origin, "WORLD_PROPOSITION")
    source = next((m for m in quotable if m.role is Role.USER), quotable[0])
    if fault == "fabricated_span":
        return _candidate(cid, source, FABRICATED_QUOTE, "USER", "ASSERTION_EVENT")
    bad = _candidate(cid, source, source.text, "USER", "ASSERTION_EVENT")
    return {**bad, "verification": "VERIFIED"}


def _candidate(
    cid: str, source: Message, quote: str, origin: str, memory_type: str
) -> dict[str, Any]:
    """A bad candidate in output format 2, as the offline model answers."""
    return {
        "id": cid,
        "message_id": source.id,
        "quote": quote,
        "memory_type": memory_type,
        "content": f"The speaker said: {quote}",
        "origin": origin,
    }


# --- HTTP plumbing ----------------------------------------------------------------------------


def _models() -> dict[str, Any]:
    return {
        "object": "list",
        "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": "extractor-mock"}
            for name in (DEFAULT_MODEL, "mock")
        ],
    }


def _error(
    status: int,
    message: str,
    kind: str,
    *,
    code: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return Reply(status, body, headers or {})


def _float_header(headers: Mapping[str, str], name: str, default: float) -> float:
    value = headers.get(name)
    try:
        return float(value) if value is not None else default
    except ValueError:
        return default


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


class _HTTPServer(ThreadingHTTPServer):
    """One thread per connection (a keep-alive client holds its thread); a deep listen queue."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG
    state: _State

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        """Serve one connection, counted open until it closes."""
        self.state.count_connection(1)
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.state.count_connection(-1)


def _handler_for(server: MockServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 30
        disable_nagle_algorithm = True  # see "Latency" in the module docstring

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = server.handle(method, self.path, headers, body)
            payload = json.dumps(reply.body, ensure_ascii=False).encode("utf-8")
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up waiting (a timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests and the CLI print what matters themselves."""

    return Handler
