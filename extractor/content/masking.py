"""A transcript with its secrets masked in place, for what is kept of it (the ledger).

A secret (:func:`~extractor.content.find_secrets`) is overwritten by as many :data:`MASK`
characters as it has, so every offset into the message -- every candidate's span, every
``evidence_ref`` -- still points at the same text; only the secret itself is gone. Each masked
piece is listed as a :class:`Redaction` (where, how long, what kind), never with its value.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ..conversation import Conversation, Message
from .secrets import find_secrets

#: What a secret's characters become (one per code point, so offsets keep their meaning).
MASK = "\u2588"


class Redaction(BaseModel):
    """One masked secret: message, field (``content``, ``content[i]`` for a text part, or
    ``tool_calls[i].arguments``), code-point offsets into that field, and the secret's kind."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    message_id: str | None
    field: str
    start: int
    end: int
    kind: str


def mask_text(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """``text`` with every secret masked, and the ``(start, end, kind)`` of each."""
    found = find_secrets(text)
    for s in found:
        text = text[: s.start] + MASK * (s.end - s.start) + text[s.end :]
    return text, [(s.start, s.end, s.kind) for s in found]


def masked_conversation(conversation: Conversation) -> tuple[Conversation, list[Redaction]]:
    """``conversation`` with the secrets of every message's text and tool-call arguments
    masked; the conversation itself when it holds none."""
    redactions: list[Redaction] = []
    messages = [_masked(m, redactions) for m in conversation.messages]
    if not redactions:
        return conversation, []
    return conversation.model_copy(update={"messages": messages}), redactions


def _masked(message: Message, redactions: list[Redaction]) -> Message:
    update: dict[str, Any] = {}

    def mask(value: str, field: str) -> str:
        masked, found = mask_text(value)
        redactions.extend(Redaction(message_id=message.id, field=field, start=a, end=b, kind=k)
                          for a, b, k in found)  # fmt: skip
        return masked

    if isinstance(message.content, str):
        update["content"] = mask(message.content, "content")
    elif isinstance(message.content, list):
        parts = []
        for i, part in enumerate(message.content):
            text = part.text
            changed = (text is not None and mask(text, f"content[{i}]")) or text
            parts.append(part if changed == text else part.model_copy(update={"text": changed}))
        update["content"] = parts
    if message.tool_calls:
        calls = []
        for i, call in enumerate(message.tool_calls):
            args = mask(call.function.arguments, f"tool_calls[{i}].arguments")
            function = call.function.model_copy(update={"arguments": args})
            calls.append(call if args == call.function.arguments else
                         call.model_copy(update={"function": function}))  # fmt: skip
        update["tool_calls"] = calls
    if all(update[k] == getattr(message, k) for k in update):
        return message
    # validated anew, not model_copy: the rendered text is cached on the instance
    return Message.model_validate({**dict(message), **update})


__all__ = ["MASK", "Redaction", "mask_text", "masked_conversation"]
