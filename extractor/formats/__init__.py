"""Input formats: the conversation exports people have, mapped to the one native shape.

Every adapter turns one conversation of its format into the native object ``{"id", "messages",
"metadata"}`` (OpenAI chat messages), keeping the source's conversation and message ids; the
loader (:mod:`extractor.conversation`) then validates it like any other input.

========== =============================================================================
format     recognized by
========== =============================================================================
openai     ``{"messages": [{"role", "content"}...]}`` or a bare list of such messages;
           role aliases ``human`` / ``ai`` / ``bot`` / ``model``; ``input_text`` /
           ``output_text`` content parts (:mod:`.openai_chat`)
chatgpt    ChatGPT export: ``{"mapping": {...}, "current_node"}`` (:mod:`.chatgpt`)
claude     Claude export: ``{"uuid", "chat_messages": [{"sender"...}]}`` (:mod:`.claude`)
langchain  ``[{"type": "human", "data": {"content"}}]``, serialized ``lc`` messages, or either
           under ``messages`` (:mod:`.langchain`)
responses  OpenAI Responses-API items ``[{"type": "message" | "function_call" | ...}]`` or
           ``{"input": [...], "output": [...]}`` (:mod:`.responses`)
========== =============================================================================

``auto`` (the default) picks the first format whose shape matches, in the order above but with
the more specific shapes (chatgpt, claude, langchain, responses) tried before ``openai``. Epoch
timestamps become ISO 8601 (:mod:`.timestamps`). A value no format recognizes is an
:class:`UnknownFormat` naming the formats expected.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import chatgpt, claude, langchain, openai_chat, responses

AUTO = "auto"


@dataclass(frozen=True)
class Format:
    name: str
    looks_like: Callable[[Any], bool]
    to_native: Callable[[Any], Any]
    expected: str


#: Detection order: the specific shapes first, the native one last.
FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(chatgpt.NAME, chatgpt.looks_like, chatgpt.to_native,
               "a ChatGPT export conversation (an object with 'mapping' and 'current_node')"),
        Format(claude.NAME, claude.looks_like, claude.to_native,
               "a Claude export conversation (an object with 'chat_messages')"),
        Format(langchain.NAME, langchain.looks_like, langchain.to_native,
               "LangChain messages ([{'type': 'human', 'data': {'content': ...}}, ...])"),
        Format(responses.NAME, responses.looks_like, responses.to_native,
               "OpenAI Responses-API items ([{'type': 'message', 'role', 'content'}, ...])"),
        Format(openai_chat.NAME, openai_chat.looks_like, openai_chat.to_native,
               "an OpenAI chat conversation ({'messages': [{'role', 'content'}, ...]}) or a "
               "list of such messages"),
    )
}  # fmt: skip
FORMAT_NAMES = (AUTO, *sorted(FORMATS))


class UnknownFormat(ValueError):
    """The value is not a conversation of the format asked for (or of any, with ``auto``)."""


def detect(data: Any) -> Format | None:
    """The first format whose shape ``data`` has, or ``None``."""
    return next((f for f in FORMATS.values() if f.looks_like(data)), None)


def to_native(data: Any, fmt: str = AUTO) -> Any:
    """One conversation of format ``fmt`` (or whichever matches) as the native shape."""
    chosen = detect(data) if fmt == AUTO else FORMATS[fmt]
    if chosen is None or not chosen.looks_like(data):
        raise UnknownFormat(_expected(data, fmt))
    try:
        return chosen.to_native(data)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        # A malformed export (a field of the wrong type deep inside): say which format it
        # was read as, rather than fail the batch.
        raise UnknownFormat(
            f"malformed {chosen.expected}: {type(exc).__name__}: {exc}; if it is another "
            "format, say which with --format"
        ) from None


def is_conversation_list(data: Any, fmt: str = AUTO) -> bool:
    """Whether a JSON document is a list of whole conversations (an export), not one
    conversation given as a list of messages or items."""
    if not isinstance(data, list) or not data or not all(isinstance(i, Mapping) for i in data):
        return False
    if fmt in (langchain.NAME, responses.NAME):
        return all(langchain.looks_like(i) or responses.looks_like(i) for i in data)
    whole = (chatgpt.looks_like, claude.looks_like, _has_messages)
    return all(any(test(i) for test in whole) for i in data)


def _has_messages(item: Any) -> bool:
    return isinstance(item, Mapping) and isinstance(item.get("messages"), list)


def _expected(data: Any, fmt: str) -> str:
    got = f"got {_shape(data)}"
    if fmt != AUTO:
        return f"not {FORMATS[fmt].expected} ({got}); check --format {fmt}"
    names = "; ".join(f"{f.name}: {f.expected}" for f in FORMATS.values())
    return f"not a conversation in any format this tool reads ({got}). Expected one of: {names}"


def _shape(data: Any) -> str:
    if isinstance(data, Mapping):
        keys = ", ".join(repr(k) for k in list(data)[:6])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(data, list):
        return f"a list of {len(data)} {type(data[0]).__name__ if data else 'items'}"
    return type(data).__name__


__all__ = [
    "AUTO",
    "FORMATS",
    "FORMAT_NAMES",
    "Format",
    "UnknownFormat",
    "detect",
    "is_conversation_list",
    "to_native",
]
