"""Claude data export (``conversations.json``): a list of conversations ``{uuid, name,
chat_messages: [{uuid, sender: "human" | "assistant", text, content, created_at}]}``. The
conversation and message uuids are kept as ids, ``name`` as the title. A message's text is its
``content`` text blocks when present (``text`` is the same text flattened), and attachments'
extracted text is not conversation text (it is left out; the file names stand as
placeholders); ``thinking`` blocks are the model's private reasoning and are left out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .timestamps import normalize_timestamp

NAME = "claude"

SENDERS = {"human": "user", "assistant": "assistant"}
#: The model's private reasoning, not conversation text.
PRIVATE_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def looks_like(data: Any) -> bool:
    return isinstance(data, Mapping) and isinstance(data.get("chat_messages"), list)


def to_native(data: Mapping[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {"source_format": NAME}
    if isinstance(data.get("name"), str) and data["name"]:
        metadata["title"] = data["name"]
    native: dict[str, Any] = {
        "messages": [_message(m) for m in data["chat_messages"]],
        "metadata": metadata,
    }
    if isinstance(data.get("uuid"), str):
        native["id"] = data["uuid"]
    return native


def _message(message: Any) -> Any:
    if not isinstance(message, Mapping):
        return message
    sender = message.get("sender")
    role = SENDERS.get(sender, sender) if isinstance(sender, str) else sender
    out: dict[str, Any] = {"role": role, "content": _content(message)}
    if isinstance(message.get("uuid"), str):
        out["id"] = message["uuid"]
    if message.get("created_at") is not None:
        out["timestamp"] = normalize_timestamp(message["created_at"])
    return out


def _content(message: Mapping[str, Any]) -> Any:
    blocks = message.get("content")
    parts: list[dict[str, Any]] = []
    if isinstance(blocks, list) and blocks:
        for block in blocks:
            if isinstance(block, Mapping) and block.get("type") == "text":
                parts.append({"type": "text", "text": block.get("text", "")})
            elif isinstance(block, Mapping) and block.get("type") in PRIVATE_BLOCKS:
                continue
            elif isinstance(block, Mapping):
                parts.append({"type": str(block.get("type", "block"))})
    else:
        parts.append({"type": "text", "text": message.get("text") or ""})
    for _ in [*(message.get("attachments") or []), *(message.get("files") or [])]:
        parts.append({"type": "file"})
    if len(parts) == 1 and parts[0]["type"] == "text":
        return parts[0]["text"]
    return parts
