"""LangChain message dumps: ``messages_to_dict`` output (``[{"type": "human" | "ai" | "system" |
"tool" | "function" | "chat", "data": {"content", "id", "name", "tool_calls", "tool_call_id"}}]``),
the serialized form (``{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"],
"kwargs": {...}}``), either as a list or under ``messages`` (a LangGraph state). Message ids are
kept; an AI message's ``tool_calls`` become chat tool calls."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .openai_chat import text_part
from .timestamps import normalize_timestamp

NAME = "langchain"

ROLES = {
    "human": "user",
    "ai": "assistant",
    "system": "system",
    "tool": "tool",
    "function": "tool",
    "HumanMessage": "user",
    "AIMessage": "assistant",
    "SystemMessage": "system",
    "ToolMessage": "tool",
    "FunctionMessage": "tool",
    "ChatMessage": "chat",
}


def looks_like(data: Any) -> bool:
    items = _items(data)
    return bool(items) and all(_is_message(i) for i in items)


def _items(data: Any) -> list[Any]:
    if isinstance(data, Mapping):
        messages = data.get("messages")
        return messages if isinstance(messages, list) else []
    return data if isinstance(data, list) else []


def _is_message(item: Any) -> bool:
    if not isinstance(item, Mapping):
        return False
    if item.get("lc") == 1 and isinstance(item.get("kwargs"), Mapping):
        return True
    kind = item.get("type")
    return isinstance(kind, str) and kind in ROLES and isinstance(item.get("data"), Mapping)


def to_native(data: Any) -> dict[str, Any]:
    native: dict[str, Any] = {
        "messages": [_message(i) for i in _items(data)],
        "metadata": {"source_format": NAME},
    }
    if isinstance(data, Mapping):
        if data.get("id") is not None:
            native["id"] = data["id"]
        if isinstance(data.get("metadata"), Mapping):
            native["metadata"] = {**data["metadata"], "source_format": NAME}
    return native


def _message(item: Mapping[str, Any]) -> dict[str, Any]:
    if item.get("lc") == 1:
        path = item.get("id") or []
        kind, data = (path[-1] if path else ""), item["kwargs"]
    else:
        kind, data = item["type"], item["data"]
    role = ROLES.get(kind, kind)
    if role == "chat":
        role = data.get("role", "user")
    content = data.get("content")
    out: dict[str, Any] = {
        "role": role,
        "content": [text_part(p) for p in content] if isinstance(content, list) else content,
    }
    for key in ("id", "name", "tool_call_id"):
        if data.get(key) is not None:
            out[key] = data[key]
    calls = data.get("tool_calls")
    if role == "assistant" and isinstance(calls, list) and calls:
        out["tool_calls"] = [_tool_call(c) for c in calls if isinstance(c, Mapping)]
    stamp = (data.get("additional_kwargs") or {}).get("timestamp")
    if stamp is not None:
        out["timestamp"] = normalize_timestamp(stamp)
    return out


def _tool_call(call: Mapping[str, Any]) -> dict[str, Any]:
    args = call.get("args", {})
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {
            "name": call.get("name", ""),
            "arguments": args if isinstance(args, str) else json.dumps(args, ensure_ascii=False),
        },
    }
