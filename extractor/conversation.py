"""Conversations as input: OpenAI chat-format messages, and the loader for files and streams.

Accepted shapes (JSON, or JSONL with one conversation per line, optionally gzip-compressed):

* a conversation object ``{"id": ..., "messages": [...], "metadata": {...}}``;
* a bare list of messages (the conversation id is then derived from its content);
* in a ``.json`` file, also a list of conversation objects.

Span coordinates
----------------
Every quote is addressed as ``(message_id, start, end)`` where ``start``/``end`` are Python
``str`` indices -- Unicode code points, not bytes and not UTF-16 units -- into
:attr:`Message.text`, and the quote must equal ``message.text[start:end]`` exactly.
``Message.text`` is the message's ``content`` when that is a string; when it is a list of
parts, text parts are joined with ``"\\n"`` and every non-text part (image, audio, file) stands
as a placeholder such as ``[image]``. Placeholders are shown to the model but can never be quoted.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import IO, Annotated, Any, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    WithJsonSchema,
    field_validator,
)

from .errors import InputError, InputLocation, LimitExceeded
from .formats import AUTO, UnknownFormat, is_conversation_list, to_native
from .formats.openai_chat import ROLE_ALIASES
from .formats.timestamps import MS_THRESHOLD
from .hashing import canonical_json, content_hash
from .vocab import Commitment, Role

DEFAULT_MAX_MESSAGE_CHARS = 100_000
DEFAULT_MAX_MESSAGES = 5_000
DEFAULT_MAX_CANDIDATES = 200

INPUT_SUFFIXES = (".json", ".jsonl", ".json.gz", ".jsonl.gz")
UTF8_BOM = b"\xef\xbb\xbf"

_YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"  # 0001-9999
_MONTH_DAY = (
    r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)"
    r"|(?:0[13578]|1[02])-31)"
)
_LEAP_DAY = (
    r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][48]|[13579][26]|[2468]0)00)-02-29"
)
_TIME = (
    r"[T ](?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\.[0-9]{1,6})?)?"
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])?"
)
#: Epoch numbers a message timestamp may be: 0001-01-01 in seconds, in milliseconds, and the
#: end of 9999 in milliseconds (see :mod:`extractor.formats.timestamps`).
EPOCH_S_MIN = -62_135_596_800
EPOCH_MS_MIN = EPOCH_S_MIN * 1000
EPOCH_MS_END = 253_402_300_800_000

#: ISO 8601 date or date-time as accepted for message timestamps (a bare number is not): only
#: real calendar dates and clock times (ASCII digits), so that every string the published schema
#: accepts is one the loader accepts.
ISO_TIMESTAMP_PATTERN = rf"^(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_DAY})(?:{_TIME})?$"
_ISO_TIMESTAMP = re.compile(ISO_TIMESTAMP_PATTERN)


@dataclass(frozen=True)
class Limits:
    """Size limits a user can configure; inputs beyond them fail with :class:`LimitExceeded`."""

    max_message_chars: int = DEFAULT_MAX_MESSAGE_CHARS
    max_messages: int = DEFAULT_MAX_MESSAGES
    max_candidates: int = DEFAULT_MAX_CANDIDATES


class ContentPart(BaseModel):
    """One part of a multi-part message. Only ``text`` parts contribute quotable text."""

    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None

    def placeholder(self) -> str:
        kind = self.type.removesuffix("_url").removeprefix("input_")
        return f"[{kind}]"


class ToolCallFunction(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    arguments: str = ""


class ToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str | None = None
    type: str = "function"
    function: ToolCallFunction


class Message(BaseModel):
    """One chat message, OpenAI chat format plus optional ``id``, ``timestamp``, ``commitment``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str | None = Field(default=None, description="Stable message id; derived if missing.")
    role: Annotated[
        Role,
        WithJsonSchema(
            {
                "type": "string",
                "enum": [*(r.value for r in Role), "developer", *ROLE_ALIASES],
                "description": "OpenAI chat role; 'developer' is read as 'system', 'human' as "
                "'user', 'ai' / 'bot' / 'model' as 'assistant', 'function' as 'tool'.",
            }
        ),
    ]
    content: str | list[ContentPart] | None = None
    name: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    timestamp: Annotated[
        datetime | None,
        WithJsonSchema(
            {
                "anyOf": [
                    {"type": "string", "pattern": ISO_TIMESTAMP_PATTERN},
                    # Epoch numbers the loader can place in years 1-9999: seconds below 1e11,
                    # milliseconds from +-1e11 on.
                    {"type": "number", "minimum": EPOCH_MS_MIN, "maximum": -MS_THRESHOLD},
                    {"type": "number", "minimum": EPOCH_S_MIN, "exclusiveMaximum": EPOCH_MS_END},
                    {"type": "null"},
                ],
                "description": "ISO 8601 date or date-time of the message (without a zone: "
                "the conversation's wall-clock time, compared as UTC), or Unix epoch seconds "
                "or milliseconds (>= 1e11).",
            }
        ),
    ] = None
    commitment: Commitment | None = Field(
        default=None,
        description="Assistant messages only: the response-commitment decision (PERMIT / HOLD).",
    )

    @field_validator("timestamp", mode="before")
    @classmethod
    def _iso_only(cls, value: Any) -> Any:
        if isinstance(value, str) and not _ISO_TIMESTAMP.match(value):
            raise ValueError(f"timestamp {value!r} is not an ISO 8601 date-time")
        if value is not None and not isinstance(value, str | datetime):
            raise ValueError("timestamp must be an ISO 8601 string")
        return value

    @field_validator("role", mode="before")
    @classmethod
    def _developer_is_system(cls, value: Any) -> Any:
        return "system" if value == "developer" else value

    @cached_property
    def _rendered(self) -> tuple[str, tuple[tuple[int, int], ...]]:
        if self.content is None:
            return "", ()
        if isinstance(self.content, str):
            return self.content, ()
        pieces: list[str] = []
        holes: list[tuple[int, int]] = []
        offset = 0
        for i, part in enumerate(self.content):
            if i:
                pieces.append("\n")
                offset += 1
            piece = part.text if part.type == "text" and part.text is not None else None
            if piece is None:
                piece = part.placeholder()
                holes.append((offset, offset + len(piece)))
            pieces.append(piece)
            offset += len(piece)
        return "".join(pieces), tuple(holes)

    @property
    def text(self) -> str:
        """The quotable text of the message (see the module docstring for coordinates)."""
        return self._rendered[0]

    @property
    def placeholder_ranges(self) -> tuple[tuple[int, int], ...]:
        """``(start, end)`` ranges of non-text placeholders in :attr:`text`; never quotable."""
        return self._rendered[1]


class Conversation(BaseModel):
    """A conversation to extract from. Message ids are unique after loading."""

    model_config = ConfigDict(extra="ignore")

    id: str
    messages: list[Message] = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)

    _location: InputLocation = PrivateAttr(default_factory=InputLocation)

    @property
    def location(self) -> InputLocation:
        """Where this conversation was read from (file and line), for error messages."""
        return self._location

    def message(self, message_id: str) -> Message | None:
        return self._by_id.get(message_id)

    @cached_property
    def _by_id(self) -> dict[str, Message]:
        return {m.id: m for m in self.messages if m.id is not None}

    @property
    def tenant(self) -> str | None:
        """``metadata.tenant``: the tenant (app, workspace) the conversation belongs to."""
        return _owner_field(self.metadata, TENANT_KEY)

    @property
    def subject(self) -> str | None:
        """``metadata.user_id``: the user whose memory this conversation's candidates are."""
        return _owner_field(self.metadata, SUBJECT_KEY)

    def content_hash(self) -> str:
        """Hash of what an extractor sees (id, messages, metadata); the resume and cache key."""
        digest: str = content_hash(self.model_dump(mode="json", exclude_none=True))
        return digest


#: The metadata keys that name whose memory a conversation is (see :class:`Owner`).
TENANT_KEY = "tenant"
SUBJECT_KEY = "user_id"


def _owner_field(metadata: dict[str, Any], key: str) -> str | None:
    value = metadata.get(key)
    if value is None or isinstance(value, bool):
        return None
    return str(value) if isinstance(value, str | int) and str(value) else None


@dataclass(frozen=True)
class Owner:
    """Whose memory a conversation's candidates are: a tenant and a subject (the user).

    The rule, everywhere a result is made: a value given by the caller (``extractor run
    --tenant/--subject``, ``Extractor.process(tenant=..., subject=...)``) wins; otherwise the
    conversation's ``metadata.tenant`` / ``metadata.user_id``; otherwise ``None``.
    """

    tenant: str | None = None
    subject: str | None = None

    def of(self, conversation: Conversation | None) -> Owner:
        """This owner with its gaps filled from ``conversation``'s metadata."""
        if conversation is None:
            return self
        return Owner(
            self.tenant if self.tenant is not None else conversation.tenant,
            self.subject if self.subject is not None else conversation.subject,
        )


def derive_conversation_id(messages: Any) -> str:
    digest: str = content_hash(messages)
    return "conv-" + digest.removeprefix("sha256:")[:16]


def conversation_from_data(
    data: Any,
    *,
    location: InputLocation | None = None,
    limits: Limits | None = None,
    input_format: str = AUTO,
) -> Conversation:
    """Build a :class:`Conversation` from parsed JSON: one conversation in ``input_format``
    (:mod:`extractor.formats`; ``auto`` recognizes each), e.g. an object or a bare message list.

    Missing message ids become ``m<index>`` (0-based position), so they are stable across runs.
    Raises :class:`InputError` naming the location, conversation id and field.
    """
    location = location or InputLocation()
    limits = limits or Limits()
    _require_encodable(data, location)
    try:
        data = to_native(data, input_format)
    except UnknownFormat as exc:
        raise InputError(str(exc), location) from None
    if isinstance(data, list):
        data = {"messages": data}
    if not isinstance(data, dict):
        raise InputError(
            f"expected a conversation object or a list of messages, got {type(data).__name__}",
            location,
        )
    conv_id = data.get("id")
    if conv_id is not None and (isinstance(conv_id, bool) or not isinstance(conv_id, str | int)):
        raise InputError("conversation id must be a string", _at(location, None, "id"))
    messages = data.get("messages")
    if conv_id is None:
        conv_id = derive_conversation_id(messages)
    conv_id = str(conv_id)
    here = _at(location, conv_id, None)
    if not isinstance(messages, list):
        raise InputError("'messages' must be a list of messages", _at(here, conv_id, "messages"))
    if not messages:
        raise InputError("conversation has no messages", _at(here, conv_id, "messages"))
    if len(messages) > limits.max_messages:
        raise LimitExceeded(
            f"{len(messages)} messages exceed the limit of {limits.max_messages}",
            _at(here, conv_id, "messages"),
        )
    _check_owner(data.get("metadata"), here)
    _check_observing_tools(data.get("metadata"), here)
    try:
        conv = Conversation.model_validate({**data, "id": conv_id})
    except ValidationError as exc:
        field, message = _describe(exc)
        raise InputError(message, _at(here, conv_id, field)) from None
    conv = _with_message_ids(conv, here, limits)
    conv._location = here
    return conv


def _require_encodable(data: Any, location: InputLocation) -> None:
    """Text must be encodable as UTF-8: JSON can smuggle in lone surrogates (``"\\ud800"``),
    which no output file, hash or database could store."""
    try:
        canonical_json(data).encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        raise InputError(
            f"text contains a lone surrogate {bad.encode('unicode_escape').decode()!r}, "
            "which is not valid Unicode",
            location,
        ) from None
    except (ValueError, TypeError, RecursionError) as exc:
        raise InputError(f"not JSON data: {exc}", location) from None


def _check_owner(metadata: Any, here: InputLocation) -> None:
    """``metadata.tenant`` and ``metadata.user_id``, when present, must be strings (or integer
    ids): a list or an object there would silently become nobody's memory."""
    if not isinstance(metadata, dict):
        return
    for key in (TENANT_KEY, SUBJECT_KEY):
        value = metadata.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, str | int)):
            raise InputError(
                f"metadata.{key} must be a string, got {type(value).__name__} "
                f"(or leave it out and pass --{'tenant' if key == TENANT_KEY else 'subject'})",
                _at(here, here.conversation_id, f"metadata.{key}"),
            )


#: The metadata key that declares which tools of a conversation observe (see
#: :mod:`extractor.toolorigin`).
OBSERVING_TOOLS_KEY = "observing_tools"


def _check_observing_tools(metadata: Any, here: InputLocation) -> None:
    """``metadata.observing_tools``, when present, must be a list of tool names: anything else
    would silently leave every tool relaying external text."""
    if not isinstance(metadata, dict) or OBSERVING_TOOLS_KEY not in metadata:
        return
    value = metadata[OBSERVING_TOOLS_KEY]
    if not isinstance(value, list) or not all(isinstance(n, str) for n in value):
        raise InputError(
            f"metadata.{OBSERVING_TOOLS_KEY} must be a list of tool names, got "
            f"{type(value).__name__} (or leave it out and pass --observing-tools)",
            _at(here, here.conversation_id, f"metadata.{OBSERVING_TOOLS_KEY}"),
        )


def _at(location: InputLocation, conv_id: str | None, field: str | None) -> InputLocation:
    return InputLocation(location.source, location.line, conv_id, field)


def _describe(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors(include_url=False)[0]
    loc = err["loc"]
    field = ""
    for part in loc:
        if isinstance(part, int):
            field += f"[{part}]"
        elif part in {"str", "list[ContentPart]"} or part.startswith(("function-", "list[")):
            continue
        else:
            field += f".{part}" if field else str(part)
    if loc and loc[-1] == "role" and err["type"] == "enum":
        roles = ", ".join(r.value for r in Role)
        return field, f"unknown role {err['input']!r} (expected one of {roles})"
    return field, f"{err['msg']} (got {_short(err.get('input'))})"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _with_message_ids(conv: Conversation, where: InputLocation, limits: Limits) -> Conversation:
    seen: set[str] = set()
    messages = []
    for index, message in enumerate(conv.messages):
        field = f"messages[{index}]"
        if len(message.text) > limits.max_message_chars:
            raise LimitExceeded(
                f"message has {len(message.text)} characters, over the limit of "
                f"{limits.max_message_chars}",
                _at(where, conv.id, field),
            )
        mid = message.id if message.id is not None else f"m{index}"
        if mid in seen:
            raise InputError(f"duplicate message id {mid!r}", _at(where, conv.id, field + ".id"))
        seen.add(mid)
        messages.append(message if message.id == mid else message.model_copy(update={"id": mid}))
    return conv.model_copy(update={"messages": messages})


# ---------------------------------------------------------------------------------------------
# Reading files and streams


def iter_inputs(
    paths: Iterable[str | Path],
    *,
    limits: Limits | None = None,
    stdin: IO[bytes] | None = None,
    input_format: str = AUTO,
) -> Iterator[Conversation | InputError]:
    """Yield every conversation in ``paths`` (files, directories, or ``-`` for stdin).

    Errors are yielded, not raised, so one bad line never stops the others from loading.
    Directories are walked recursively in sorted order for ``.json``/``.jsonl`` (``.gz`` too).
    ``input_format`` is the format of every conversation (:mod:`extractor.formats`).
    """
    fmt = input_format
    for path in paths:
        if str(path) == "-":
            stream = stdin if stdin is not None else sys.stdin.buffer
            yield from iter_stream(stream, source="<stdin>", limits=limits, input_format=fmt)
            continue
        p = Path(path)
        if p.is_dir():
            for child in sorted(p.rglob("*")):
                if child.is_file() and child.name.endswith(INPUT_SUFFIXES):
                    yield from iter_file(child, limits=limits, input_format=fmt)
        else:
            yield from iter_file(p, limits=limits, input_format=fmt)


def iter_file(
    path: Path, *, limits: Limits | None = None, input_format: str = AUTO
) -> Iterator[Conversation | InputError]:
    source = str(path)
    try:
        raw: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        yield InputError(f"cannot open: {exc.strerror}", InputLocation(source))
        return
    with raw:
        head = raw.peek(2)[:2] if isinstance(raw, io.BufferedReader) else b""
        stream: IO[bytes] = (
            cast(IO[bytes], gzip.GzipFile(fileobj=raw)) if head == b"\x1f\x8b" else raw
        )
        name = path.name.removesuffix(".gz")
        mode: Literal["json", "jsonl"] | None = (
            "jsonl" if name.endswith(".jsonl") else "json" if name.endswith(".json") else None
        )
        yield from iter_stream(
            stream, source=source, limits=limits, mode=mode, input_format=input_format
        )


def iter_stream(
    stream: IO[bytes],
    *,
    source: str,
    limits: Limits | None = None,
    mode: Literal["json", "jsonl"] | None = None,
    input_format: str = AUTO,
) -> Iterator[Conversation | InputError]:
    """Read conversations from a byte stream. ``mode=None`` sniffs: a stream whose first
    non-blank line is a complete JSON value is JSONL; otherwise it is one JSON document. A UTF-8
    byte order mark at the start is ignored."""
    try:
        if mode is None:
            first = b""
            for first in stream:
                if first.strip():
                    break
            rest = stream
            mode = "jsonl" if _is_json(first.removeprefix(UTF8_BOM)) else "json"
            lines: Iterable[bytes] = _chain(first, rest)
        else:
            lines = stream
        if mode == "jsonl":
            yield from _iter_jsonl(lines, source, limits, input_format)
        else:
            yield from _iter_json_document(b"".join(lines), source, limits, input_format)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        yield InputError(f"cannot read: {exc}", InputLocation(source))


def _chain(first: bytes, rest: Iterable[bytes]) -> Iterator[bytes]:
    yield first
    yield from rest


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def _decode(raw: bytes, location: InputLocation) -> Any:
    try:
        text = raw.removeprefix(UTF8_BOM).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not valid UTF-8 at byte {exc.start}", location) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} at column {exc.colno}", location) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", location) from None


def _iter_jsonl(
    lines: Iterable[bytes], source: str, limits: Limits | None, input_format: str
) -> Iterator[Conversation | InputError]:
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        location = InputLocation(source, number)
        try:
            data = _decode(raw, location)
            yield conversation_from_data(
                data, location=location, limits=limits, input_format=input_format
            )
        except InputError as exc:
            yield exc


def _iter_json_document(
    raw: bytes, source: str, limits: Limits | None, input_format: str
) -> Iterator[Conversation | InputError]:
    try:
        data = _decode(raw, InputLocation(source))
    except InputError as exc:
        yield exc
        return
    items = data if is_conversation_list(data, input_format) else [data]
    for index, item in enumerate(items):
        loc = InputLocation(source, None, None, f"[{index}]" if len(items) > 1 else None)
        try:
            yield conversation_from_data(
                item, location=loc, limits=limits, input_format=input_format
            )
        except InputError as exc:
            yield exc
