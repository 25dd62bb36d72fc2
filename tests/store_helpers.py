"""Builders shared by the memory-store tests: real results from the real pipeline (offline
model, default policy) and a clock that advances one second per reading."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from extractor import ConversationResult, Extractor, OfflineClient

T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)

_EXTRACTOR = Extractor(client=OfflineClient())


class Clock:
    """System time for a store: starts at ``start`` and moves ``step`` per reading."""

    def __init__(self, start: datetime = T0, step: timedelta = timedelta(seconds=1)) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> datetime:
        self.now += self.step
        return self.now

    def set(self, moment: datetime) -> None:
        self.now = moment


def result(
    cid: str, *messages: tuple[str, ...] | dict[str, Any], **meta: Any
) -> ConversationResult:
    """A result for conversation ``cid``: messages are (role, text[, timestamp]) or dicts. An
    assistant tuple is an answer the application released (commitment PERMIT): the offline
    model keeps an assistant's claim about the world only from a message with a commitment."""
    body = []
    for m in messages:
        if isinstance(m, dict):
            body.append(m)
            continue
        msg: dict[str, Any] = {"role": m[0], "content": m[1]}
        if len(m) > 2:
            msg["timestamp"] = m[2]
        if m[0] == "assistant":
            msg["commitment"] = "PERMIT"
        body.append(msg)
    return _EXTRACTOR.process({"id": cid, "messages": body, "metadata": meta})


def user_says(cid: str, text: str, when: str = "2026-06-01T10:00:00") -> ConversationResult:
    return result(cid, ("user", text, when))
