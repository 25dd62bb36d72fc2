"""OpenAI chat-completions conversations (the native shape), with the variants people have:
role aliases (``human``, ``ai``, ``bot``, ``model``), Responses-API content parts
(``input_text`` / ``output_text``) inside chat messages, and epoch timestamps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .timestamps import normalize_timestamp

NAME = "openai"

#: Role names other tools write, and the chat role each means.
ROLE_ALIASES = {
    "human": "user",
    "ai": "assistant",
    "bot": "assistant",
    "model": "assistant",
    "function": "tool",
}
#: Content parts that carry text under another type name.
TEXT_PARTS = frozenset({"text", "input_text", "output_text"})


def looks_like(data: Any) -> bool:
    """An object with ``messages`` (the loader then judges each field), or a list of messages
    (objects, some with a ``role``)."""
    if isinstance(data, Mapping):
        return "messages" in data
    return (
        isinstance(data, list)
        and all(isinstance(m, Mapping) for m in data)
        and any("role" in m for m in data)
    )


def to_native(data: Any) -> Any:
    """The conversation with aliases, text parts and timestamps normalized."""
    if isinstance(data, list):
        return [normalize_message(m) for m in data]
    messages = data.get("messages")
    if not isinstance(messages, list):
        return data
    return {**data, "messages": [normalize_message(m) for m in messages]}


def normalize_message(message: Any) -> Any:
    if not isinstance(message, Mapping):
        return message
    out = dict(message)
    role = out.get("role")
    if isinstance(role, str) and role.lower() in ROLE_ALIASES:
        out["role"] = ROLE_ALIASES[role.lower()]
    if isinstance(out.get("content"), list):
        out["content"] = [text_part(p) for p in out["content"]]
    if "timestamp" in out:
        out["timestamp"] = normalize_timestamp(out["timestamp"])
    return out


def text_part(part: Any) -> Any:
    """``input_text`` / ``output_text`` parts are text parts; other parts stay as they are."""
    if (
        isinstance(part, Mapping)
        and isinstance(part.get("type"), str)
        and part["type"] in TEXT_PARTS
    ):
        return {**part, "type": "text"}
    return part
