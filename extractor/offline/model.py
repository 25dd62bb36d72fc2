"""The offline model: a deterministic, rule-based extractor behind the same client interface.

:class:`OfflineClient` needs no network; its one learned part (:mod:`.scorer`) ships its
weights with the package. It reads the conversation itself (the rendered prompt only counts
toward usage) and returns exactly what an LLM would: a JSON-able ``{"candidates": [...]}`` that
then goes through the same validation gate as any model output.
It is the CLI's default model, the mock server's answering machine (:func:`offline_proposal`),
and the reference the tests hold other clients to.

What it extracts, per speaker (see ``docs/offline-model.md``):

* user: for each sentence that tells something about the user, an ASSERTION_EVENT plus the claim
  linked to it (WORLD_PROPOSITION, PREFERENCE, PROCEDURE or FAILURE_EXPERIENCE), with hedges,
  reported speech, negation and time kept;
* tool: a TOOL_OBSERVATION, and a FAILURE_EXPERIENCE when an attempted call failed;
* assistant: declarative claims as MODEL_INFERENCE;
* system: nothing, unless ``allow_system_sources``.

Usage figures are estimates: ``ceil(characters / 4)`` of the rendered prompt and of the output
JSON, since there is no tokenizer.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta
from typing import Any

from ..clients.base import ClientResult, Usage
from ..conversation import DEFAULT_MAX_CANDIDATES, Conversation
from ..extraction import CandidateUnit, SourceSpan
from ..prompts import Prompt
from ..proposal.compact import compact
from ..validation import ValidationOptions
from ..vocab import Origin, Role
from .answers import answer_groups, asked_in, replied_to
from .claims import assistant_groups, words_of
from .draft import Draft, Group
from .english import own_groups, session_group
from .scorer import drop_chatter
from .sensible import drop_unkept
from .statements import user_groups
from .tools import tool_groups

MODEL_NAME = "offline-rules-7"
CHARS_PER_TOKEN = 4


class OfflineClient:
    """The rule-based extractor as an :class:`~extractor.clients.base.ExtractionClient`."""

    def __init__(self, *, model_name: str = MODEL_NAME) -> None:
        self._model_name = model_name

    @property
    def model_name(self) -> str:
        return self._model_name

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        groups = _groups(conversation, options.allow_system_sources)
        kept = _within_limit(groups, options.max_candidates)
        output = {"candidates": compact(_number(kept), conversation)}
        dropped = sum(len(g.drafts) for g in groups) - sum(len(g.drafts) for g in kept)
        raw_text = json.dumps(output, ensure_ascii=False, separators=(",", ":"))
        prompt_chars = sum(len(m["content"]) for m in prompt.render(conversation))
        return ClientResult(
            output=output,
            raw_text=raw_text,
            model=self._model_name,
            usage=estimate_usage(prompt_chars, len(raw_text)),
            dropped_candidates=dropped,
        )


def estimate_usage(prompt_chars: int, completion_chars: int) -> Usage:
    """Token counts estimated as ``ceil(chars / 4)``; there is no tokenizer offline."""
    prompt_tokens = math.ceil(prompt_chars / CHARS_PER_TOKEN)
    completion_tokens = math.ceil(completion_chars / CHARS_PER_TOKEN)
    return Usage(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
    )


def offline_extract(
    conversation: Conversation,
    *,
    allow_system_sources: bool = False,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
) -> dict[str, Any]:
    """The offline model's full extraction for ``conversation``: ``{"candidates": [...]}`` of
    format-1 units (every field written out, events included).

    Pure and deterministic: the same conversation always gives the identical output. What the
    model *answers* (the client, the mock server) is :func:`offline_proposal`, the same units in
    output format 2; the gate expands that back to exactly these units.
    """
    units = offline_units(
        conversation, allow_system_sources=allow_system_sources, max_candidates=max_candidates
    )
    return {"candidates": [u.model_dump(mode="json", exclude_none=True) for u in units]}


def offline_proposal(
    conversation: Conversation,
    *,
    allow_system_sources: bool = False,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
) -> dict[str, Any]:
    """What the offline model answers: its units in output format 2
    (:func:`~extractor.proposal.compact.compact`: what the system builds again -- the events
    behind claims, the contents of events, defaults -- is left out)."""
    units = offline_units(
        conversation, allow_system_sources=allow_system_sources, max_candidates=max_candidates
    )
    return {"candidates": compact(units, conversation)}


def offline_units(
    conversation: Conversation,
    *,
    allow_system_sources: bool = False,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
) -> list[CandidateUnit]:
    """The offline model's full candidate units (format 1), before compaction.

    At most ``max_candidates`` units; when there are more, whole groups are dropped, assistant
    claims first, then tool observations, then user statements (latest first).
    """
    groups = _groups(conversation, allow_system_sources)
    return _number(_within_limit(groups, max_candidates))


def _groups(conversation: Conversation, allow_system_sources: bool) -> list[Group]:
    groups: list[Group] = []
    said_before: set[str] = set()  # words of the user and tool text so far: what echoes repeat
    asked = ""  # the user's latest message: what an assistant claim may answer
    paired: set[str] = set()  # the groups the user paired themselves with this session
    for index, message in enumerate(conversation.messages):
        if index and _new_session(conversation.messages[index - 1].timestamp, message.timestamp):
            paired = set()
        if message.role in (Role.USER, Role.TOOL):
            said_before |= words_of(message.text)
        if message.role is Role.USER:
            asked = message.text
        if message.role is Role.USER:
            previous = conversation.messages[index - 1] if index else None
            found = user_groups(
                message,
                question=asked_in(previous),
                replied=replied_to(previous),
                company=session_group(paired),
            )
            paired |= own_groups(message.text)
            found += answer_groups(message, previous, [d.piece for g in found for d in g.drafts])
            found.sort(key=lambda g: g.drafts[0].piece.start)
            found = drop_chatter(found, message, after_question=asked_in(previous) is not None)
            found = drop_unkept(found)
        elif message.role is Role.TOOL:
            found = tool_groups(message, conversation)
        elif message.role is Role.ASSISTANT:
            found = assistant_groups(message, said_before, asked)
        elif allow_system_sources:
            found = user_groups(message, origin=Origin.SYSTEM)
        else:
            found = []
        for position, group in enumerate(found):
            group.order = (index, position)
        groups.extend(found)
    return groups


#: A gap this long between two messages starts a new session (LoCoMo's sessions are days apart).
SESSION_GAP = timedelta(hours=6)


def _new_session(before: datetime | None, after: datetime | None) -> bool:
    if before is None or after is None:
        return False
    if (before.tzinfo is None) != (after.tzinfo is None):
        return True
    return abs(after - before) > SESSION_GAP


def _within_limit(groups: list[Group], limit: int) -> list[Group]:
    total = sum(len(g.drafts) for g in groups)
    if total <= limit:
        return groups
    kept: list[Group] = []
    used = 0
    for group in sorted(groups, key=lambda g: (g.priority, g.order)):
        if used + len(group.drafts) <= limit:
            kept.append(group)
            used += len(group.drafts)
    return sorted(kept, key=lambda g: g.order)


def _number(groups: list[Group]) -> list[CandidateUnit]:
    units: list[CandidateUnit] = []
    for group in groups:
        ids = [f"c{len(units) + i + 1}" for i in range(len(group.drafts))]
        for draft, cid in zip(group.drafts, ids, strict=True):
            parents = [ids[draft.parent]] if draft.parent is not None else []
            units.append(_unit(draft, cid, parents))
    return units


def _unit(draft: Draft, cid: str, parents: list[str]) -> CandidateUnit:
    piece = draft.piece
    return CandidateUnit(
        id=cid,
        span=SourceSpan(
            message_id=draft.message_id, quote=piece.text, start=piece.start, end=piece.end
        ),
        kind=draft.kind,
        memory_type=draft.memory_type,
        content=draft.content,
        origin=draft.origin,
        temporal=draft.temporal,
        entities=draft.entities,
        parent_ids=parents,
        requested_uses=draft.requested_uses,
        uncertainty=draft.uncertainty,
    )


__all__ = [
    "MODEL_NAME",
    "OfflineClient",
    "estimate_usage",
    "offline_extract",
    "offline_proposal",
    "offline_units",
]
