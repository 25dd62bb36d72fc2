"""Answers cut off at the token limit: recognizing them, and keeping what they completed.

A server's ``finish_reason`` is not to be trusted on this (llama-cpp-python reports
``"tool_calls"`` for a tool call cut off at ``max_tokens``), so :func:`unterminated` looks at
the text itself: JSON that ends in the middle of a value was cut off, whatever the server says.

:func:`salvage` reads such a text with jiter's partial mode and returns the candidates that
were complete. The last candidate of a cut-off list is kept only when the text proves it was
closed (the cut came after its closing brace); otherwise it is the unfinished tail and dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import jiter

_OPEN_FENCE = re.compile(r"```(?:json)?[ \t]*\n?")
_EOF = "EOF while parsing"


def json_body(text: str) -> str:
    """The JSON part of an answer: inside a ```json fence (closed or not) when there is one."""
    match = _OPEN_FENCE.search(text)
    if match is None:
        return text.strip()
    body = text[match.end() :]
    closing = body.find("```")
    return (body if closing < 0 else body[:closing]).strip()


def unterminated(text: str | None) -> bool:
    """Whether ``text`` is JSON that stops before its end (a cut-off answer).

    Text that is not JSON at all (prose, single quotes) is not unterminated: it is unreadable,
    and is re-asked as such.
    """
    if not text:
        return False
    body = json_body(text)
    if not body.startswith(("{", "[")):
        return False
    try:
        jiter.from_json(body.encode("utf-8", "surrogatepass"), partial_mode="off")
    except ValueError as exc:
        return _EOF in str(exc)
    return False


@dataclass(frozen=True)
class Salvage:
    """The complete candidates of a cut-off answer, and whether an unfinished one was dropped."""

    candidates: list[Any]
    dropped_tail: bool


def salvage(text: str | None) -> Salvage:
    """The candidates a cut-off answer completed (none when it is not an extraction at all)."""
    body = json_body(text or "").encode("utf-8", "surrogatepass")
    try:
        parsed = jiter.from_json(body, partial_mode="on")
    except ValueError:
        return Salvage([], dropped_tail=False)
    items = parsed.get("candidates") if isinstance(parsed, dict) else None
    if not isinstance(items, list) or not items:
        return Salvage([], dropped_tail=bool(body))
    if _last_closed(body):
        return Salvage(list(items), dropped_tail=False)
    return Salvage(list(items[:-1]), dropped_tail=True)


def _last_closed(body: bytes) -> bool:
    """Whether the cut came after the last candidate's closing brace: closing the list and the
    object then makes the text whole (``]}``), or the list was already closed (``}``)."""
    stripped = body.rstrip().rstrip(b",").rstrip()
    for closing in (b"]}", b"}"):
        try:
            jiter.from_json(stripped + closing, partial_mode="off")
        except ValueError:
            continue
        return True
    return False


__all__ = ["Salvage", "json_body", "salvage", "unterminated"]
