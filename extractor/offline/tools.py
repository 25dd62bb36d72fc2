"""What the offline model takes from a tool message: what the tool returned, and what failed.

A tool result is an observation (TOOL_OBSERVATION, origin TOOL, at the message's time). When the
result is an error -- a traceback, ``error:``, a non-zero exit, "failed" -- and the transcript
shows the action that was attempted (a tool call, or a named tool), the group also holds a
FAILURE_EXPERIENCE derived from the observation, for regression tests and repair planning.
"""

from __future__ import annotations

import re

from ..content.sentences import split
from ..conversation import Conversation, Message
from ..extraction import Uncertainty
from ..proposal.events import event_content
from ..vocab import CandidateKind, Capability, MemoryType, Origin, Role
from .cues import is_certification, is_injection, non_fact
from .draft import (
    Draft,
    Group,
    hedges_in,
    keep_uncertainty,
    point_in_time,
    reporter_in,
    temporal_for,
    uncertainty_for,
)
from .english import finish
from .entities import entities_in
from .text import Piece, lines, sub_piece

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
MAX_SOURCE_CLAIMS = 5
_RETRIEVAL_TOOL = re.compile(
    r"search|retriev|browse|brows|web|news|wiki|lookup|look_up|fetch|read_url|docs?\b|"
    r"knowledge|rag\b|kb\b|handbook|document",
    re.IGNORECASE,
)
_SOURCE_PREFIX = re.compile(
    r"^(?:source|from|via|citation|cited from|document|doc)\s*:\s*(?P<source>[^—–\n]+?)"
    r"\s*(?:—|–|\s-\s|:|\|)\s*",
    re.IGNORECASE,
)
_ACCORDING = re.compile(
    r"\baccording\s+to\b|\b[A-Z][\w&.]*(?:\s+[A-Z][\w&.]*)*\s+(?:reports?|reported|said|says|"
    r"announced|states|stated)\b",
)
_PREDICATE = re.compile(
    r"\b(?:is|are|was|were|has|have|had|will|would|can|could|may|might|must|should|does|did|"
    r"\w+s|\w+ed)\b",
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
        content=event_content(MemoryType.TOOL_OBSERVATION, piece.text, message, conversation),
        origin=Origin.TOOL,
        temporal=point_in_time(message.timestamp),
        entities=entities_in(piece.text),
        requested_uses=[Capability.CONVERSATIONAL_CONTEXT, Capability.FACTUAL_EVIDENCE],
        uncertainty=uncertainty_for(piece.text, default_reporter=tool),
    )
    drafts = [observation]
    if error is None:
        drafts += _source_claims(message, usable, tool)
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


def _source_claims(message: Message, usable: list[Piece], tool: str) -> list[Draft]:
    """What a retrieved document or search result claims, as EXTERNAL_SOURCE_CLAIMs.

    Only for output that presents itself as someone else's text: a retrieval tool ("search",
    "browse", "retrieve"...), a ``Source:`` line, or an attribution ("According to Reuters,
    ..."). Each claim is one sentence of a line that is neither an injection nor a
    certification, linked to the observation of the tool's output; who said it goes to
    ``uncertainty.reported_by``.
    """
    retrieved = bool(_RETRIEVAL_TOOL.search(tool))
    out: list[Draft] = []
    for line in usable:
        source_line = _SOURCE_PREFIX.match(line.text)
        for piece in _sentences_of(message.text, line):
            source = source_line.group("source").strip() if source_line else None
            if source_line and piece.start < line.start + source_line.end():
                rest = sub_piece(piece, line.start + source_line.end() - piece.start)
                if rest is None:
                    continue
                piece = rest
            attributed = bool(_ACCORDING.search(piece.text))
            if not (retrieved or source or attributed) or not _is_source_claim(piece.text):
                continue
            by = source or reporter_in(piece.text, tool) or tool
            body = finish(piece.text)
            content = body if attributed or source is None else f"According to {source}: {body}"
            out.append(
                Draft(
                    message_id=str(message.id),
                    piece=piece,
                    kind=CandidateKind.PROPOSITION,
                    memory_type=MemoryType.EXTERNAL_SOURCE_CLAIM,
                    content=keep_uncertainty(piece.text, content),
                    origin=Origin.EXTERNAL_SOURCE,
                    temporal=temporal_for(piece.text, message.timestamp),
                    entities=entities_in(piece.text),
                    requested_uses=[Capability.CONVERSATIONAL_CONTEXT, Capability.FACTUAL_EVIDENCE],
                    uncertainty=Uncertainty(hedges=hedges_in(piece.text), reported_by=by),
                    parent=0,
                )
            )
            if len(out) >= MAX_SOURCE_CLAIMS:
                return out
    return out


def _sentences_of(text: str, line: Piece) -> list[Piece]:
    """The sentences of a line, cut where the gate cuts them (one splitter for both)."""
    found = []
    for start, end in split(text, line.start, line.end):
        piece = sub_piece(line, start - line.start, end - line.start)
        if piece is not None:
            found.append(piece)
    return found


def _is_source_claim(text: str) -> bool:
    if is_injection(text) or is_certification(text) or non_fact(text):
        return False
    return len(text.split()) >= 3 and bool(_PREDICATE.search(text))


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
