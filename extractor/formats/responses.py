"""OpenAI Responses-API items: ``{"type": "message", "role", "content": [{"type":
"input_text" | "output_text", "text"}]}``, ``function_call`` and ``function_call_output``, as a
list of items or as an object with ``input`` and/or ``output`` lists (a request, a stored
response). ``reasoning`` items are the model's private scratch work, not conversation text, and
are left out; item ids become message ids."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .openai_chat import normalize_message

NAME = "responses"

ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning"})
SKIPPED = frozenset({"reasoning"})


def looks_like(data: Any) -> bool:
    items = _items(data)
    return (
        bool(items)
        and all(isinstance(i, Mapping) and (_is_item(i) or _is_easy_message(i)) for i in items)
        and any(_is_item(i) for i in items)
    )


def _is_item(item: Mapping[str, Any]) -> bool:
    kind = item.get("type")
    return isinstance(kind, str) and kind in ITEM_TYPES


def _is_easy_message(item: Mapping[str, Any]) -> bool:
    return "role" in item and "type" not in item


def _items(data: Any) -> list[Any]:
    if isinstance(data, list):
        return data
    if isinstance(data, Mapping) and ("input" in data or "output" in data):
        found: list[Any] = []
        for key in ("input", "output"):
            part = data.get(key)
            if isinstance(part, str):
                found.append({"type": "message", "role": "user", "content": part})
            elif isinstance(part, list):
                found.extend(part)
        return found
    return []


def to_native(data: Any) -> dict[str, Any]:
    items = _items(data)
    names = {
        str(i.get("call_id")): i.get("name")
        for i in items
        if isinstance(i, Mapping) and i.get("type") == "function_call"
    }
    messages = [_message(i, names) for i in items if not (_is_item(i) and i["type"] in SKIPPED)]
    native: dict[str, Any] = {"messages": messages, "metadata": {"source_format": NAME}}
    if isinstance(data, Mapping) and isinstance(data.get("id"), str):
        native["id"] = data["id"]
    return native


def _message(item: Mapping[str, Any], names: Mapping[Any, Any]) -> Any:
    kind = item.get("type")
    if kind == "function_call":
        return {
            "id": item.get("id") or item.get("call_id"),
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": item.get("call_id"),
                    "type": "function",
                    "function": {"name": item.get("name"), "arguments": item.get("arguments", "")},
                }
            ],
        }
    if kind == "function_call_output":
        output = item.get("output")
        return {
            "id": item.get("id") or f"{item.get('call_id')}-output",
            "role": "tool",
            "name": names.get(str(item.get("call_id"))),
            "tool_call_id": item.get("call_id"),
            "content": output if isinstance(output, str | list) else str(output),
        }
    body = {k: v for k, v in item.items() if k in ("id", "role", "content", "name")}
    return normalize_message(body)
