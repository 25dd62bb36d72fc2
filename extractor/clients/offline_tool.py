"""What the offline model takes from a tool message: what the tool returned, and what failed.

A tool result is an observation (TOOL_OBSERVATION, origin TOOL, at the message's time). When the
result is an error -- a traceback, ``error:``, a non-zero exit, "failed" -- and the transcript
shows the action that was attempted (a tool call, or a named tool), the group also holds a
FAILURE_EXPERIENCE derived from the observation, for regression tests and repair planning.
"""

from __future__ import annotations

import re

from ..conversation import Conversation, Message
from ..vocab import CandidateKind, Capability, MemoryType, Origin, Role
from .offline_draft import Draft, Group, keep_uncertainty, point_in_time, uncertainty_for
from .offline_english import finish
from .offline_entities import entities_in
from .offline_text import Piece, is_certification, is_injection, lines

MAX_QUOTE_CHARS = 400
MAX_CONTENT_QUOTE_CHARS = 240

_ERROR = re.compile(
    r"Traceback \(most recent call last\)|^\s*(?:[\w.]*(?:Error|Exception)|error|fatal|panic|"
    r"FAILED|FAIL)\b\s*[:!]|\berror\b\s*:|\bexit(?:ed)?\s+(?:with\s+)?(?:code|status)\s*[1-9]|"
    r"non-zero exit|returned non-zero|(?<!\b0 )\bfailed\b|\bfailure\b|command not found|"
    r"No such file or directory|Permission denied|timed out|Segmentation fault|"
    r"\bunreachable\b|\brefused\b|\bstatus(?:\s+code)?[:\s]+[45]\d\d\b|\bHTTP\s+[45]\d\d\b",
    re.IGNORECASE,
)
_EXCEPTION_LINE = re.compile(r"^[\w.]*(?:Error|Exception|Exit|Interrupt)\b.*")


def tool_groups(message: Message, conversation: Conversation) -> list[Group]:
    every = lines(message)
    usable = [p for p in every if not (is_injection(p.text) or is_certification(p.text))]
    if not usable:
        return []
    tool, action = _attempted_action(message, conversation)
    error = _error_line(usable)
    piece = error if error is not None else _head(usable[0], every, message.text)
    observation = Draft(
        message_id=str(message.id),
        piece=piece,
        kind=CandidateKind.OBSERVATION,
        memory_type=MemoryType.TOOL_OBSERVATION,
        content=keep_uncertainty(piece.text, _observed(tool, piece.text, error is not None)),
        origin=Origin.TOOL,
        temporal=point_in_time(message.timestamp),
        entities=entities_in(piece.text),
        requested_uses=[Capability.CONVERSATIONAL_CONTEXT, Capability.FACTUAL_EVIDENCE],
        uncertainty=uncertainty_for(piece.text, default_reporter=tool),
    )
    drafts = [observation]
    if error is not None and action is not None:
        drafts.append(
            Draft(
                message_id=str(message.id),
                piece=piece,
                kind=CandidateKind.OBSERVATION,
                memory_type=MemoryType.FAILURE_EXPERIENCE,
                content=keep_uncertainty(
                    piece.text, finish(f"Attempted {action} failed: {_short(piece.text)}")
                ),
                origin=Origin.TOOL,
                temporal=point_in_time(message.timestamp),
                entities=observation.entities,
                requested_uses=[Capability.REGRESSION_TEST, Capability.REPAIR_PLANNING],
                uncertainty=observation.uncertainty,
                parent=0,
            )
        )
    return [Group(drafts, priority=1)]


def _attempted_action(message: Message, conversation: Conversation) -> tuple[str, str | None]:
    """The tool's name, and the call that was attempted when the transcript shows one."""
    for earlier in conversation.messages:
        if earlier is message:
            break
        for call in earlier.tool_calls or []:
            if message.tool_call_id is not None and call.id == message.tool_call_id:
                args = " ".join(call.function.arguments.split())
                if len(args) > 120:
                    args = args[:117] + "..."
                return call.function.name, f"call {call.function.name}({args})"
    if message.name:
        return message.name, f"call to {message.name}"
    previous = _previous(message, conversation)
    if previous is not None and previous.role is Role.ASSISTANT and previous.tool_calls:
        name = previous.tool_calls[-1].function.name
        return name, f"call to {name}"
    return "the tool", None


def _previous(message: Message, conversation: Conversation) -> Message | None:
    before = None
    for m in conversation.messages:
        if m is message:
            return before
        before = m
    return None


def _error_line(pieces: list[Piece]) -> Piece | None:
    if not any(_ERROR.search(p.text) for p in pieces):
        return None
    for piece in reversed(pieces):
        if _EXCEPTION_LINE.match(piece.text):
            return _clip(piece)
    return _clip(next(p for p in pieces if _ERROR.search(p.text)))


def _head(first: Piece, every: list[Piece], text: str) -> Piece:
    """The first usable line and the lines right after it, up to :data:`MAX_QUOTE_CHARS`.

    Only lines separated by nothing but whitespace are joined, so the quote never runs over a
    skipped line or a placeholder.
    """
    end = first.end
    for piece in every:
        if piece.start < end:
            continue
        if text[end : piece.start].strip() or piece.end - first.start > MAX_QUOTE_CHARS:
            break
        if is_injection(piece.text) or is_certification(piece.text):
            break
        end = piece.end
    return _clip(Piece(first.start, end, text[first.start : end]))


def _clip(piece: Piece) -> Piece:
    if len(piece.text) <= MAX_QUOTE_CHARS:
        return piece
    cut = piece.text.rfind(" ", 0, MAX_QUOTE_CHARS)
    cut = cut if cut > MAX_QUOTE_CHARS // 2 else MAX_QUOTE_CHARS
    text = piece.text[:cut].rstrip()
    return Piece(piece.start, piece.start + len(text), text)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_CONTENT_QUOTE_CHARS else flat[:MAX_CONTENT_QUOTE_CHARS] + "…"


def _observed(tool: str, quote: str, error: bool) -> str:
    verb = "reported an error" if error else "returned"
    return finish(f"{tool[:1].upper() + tool[1:]} {verb}: {_short(quote)}")
