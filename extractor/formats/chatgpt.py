"""ChatGPT data export (``conversations.json``): a list of conversations, each a ``mapping`` of
nodes ``{id, parent, children, message}``. Edited or regenerated turns make the mapping a tree;
the conversation as the user last saw it is the branch from ``current_node`` up to the root, so
that branch is followed (older branches are not part of it). Nodes without a message, and empty
hidden system or tool messages (ChatGPT's own scaffolding), are skipped; the node's message id,
author role and name, text ``parts`` (other parts stand as placeholders) and ``create_time``
(epoch seconds) are kept, with the conversation's id and title."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .timestamps import normalize_timestamp

NAME = "chatgpt"


def looks_like(data: Any) -> bool:
    return isinstance(data, Mapping) and isinstance(data.get("mapping"), Mapping)


def to_native(data: Mapping[str, Any]) -> dict[str, Any]:
    mapping: Mapping[str, Any] = data["mapping"]
    messages = [m for node in _branch(mapping, data.get("current_node")) if (m := _message(node))]
    metadata: dict[str, Any] = {"source_format": NAME}
    if isinstance(data.get("title"), str):
        metadata["title"] = data["title"]
    native: dict[str, Any] = {"messages": messages, "metadata": metadata}
    cid = data.get("conversation_id") or data.get("id")
    if isinstance(cid, str):
        native["id"] = cid
    return native


def _branch(mapping: Mapping[str, Any], current: Any) -> list[Mapping[str, Any]]:
    """Nodes from the root to ``current`` (or, without one, along each node's last child)."""
    if not isinstance(current, str) or current not in mapping:
        current = _last_leaf(mapping)
    path: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    while isinstance(current, str) and current in mapping and current not in seen:
        seen.add(current)
        node = mapping[current]
        path.append(node)
        current = node.get("parent") if isinstance(node, Mapping) else None
    return path[::-1]


def _last_leaf(mapping: Mapping[str, Any]) -> str | None:
    roots = [k for k, n in mapping.items() if isinstance(n, Mapping) and not n.get("parent")]
    node = roots[0] if roots else None
    seen: set[str] = set()
    while node is not None and node not in seen:
        seen.add(node)
        children = mapping[node].get("children") or []
        nxt = children[-1] if children else None
        if nxt not in mapping:
            break
        node = nxt
    return node


def _message(node: Mapping[str, Any]) -> dict[str, Any] | None:
    message = node.get("message") if isinstance(node, Mapping) else None
    if not isinstance(message, Mapping):
        return None
    author = message.get("author") or {}
    role = author.get("role", "user")
    parts = _parts(message.get("content") or {})
    if role in ("system", "tool") and not any(p.get("text") for p in parts):
        return None
    meta = message.get("metadata") or {}
    if role == "system" and meta.get("is_visually_hidden_from_conversation"):
        return None
    out: dict[str, Any] = {"id": message.get("id") or node.get("id"), "role": role}
    out["content"] = parts[0]["text"] if len(parts) == 1 and "text" in parts[0] else parts
    if isinstance(author.get("name"), str):
        out["name"] = author["name"]
    if message.get("create_time") is not None:
        out["timestamp"] = normalize_timestamp(message["create_time"])
    return out


def _parts(content: Mapping[str, Any]) -> list[dict[str, Any]]:
    kind = content.get("content_type", "text")
    if kind in ("code", "execution_output") and isinstance(content.get("text"), str):
        return [{"type": "text", "text": content["text"]}]
    parts: list[dict[str, Any]] = []
    for part in content.get("parts") or []:
        if isinstance(part, str):
            if part:
                parts.append({"type": "text", "text": part})
        elif isinstance(part, Mapping):
            ptype = str(part.get("content_type", "file")).removesuffix("_asset_pointer")
            parts.append({"type": ptype})
    return parts
