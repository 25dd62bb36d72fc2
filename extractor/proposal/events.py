"""Events say exactly what happened: their content is built by the system, never by the model.

An event -- an ``ASSERTION_EVENT``, a ``TOOL_OBSERVATION``, an ``INTERACTION_EVENT`` -- is what
the system witnessed in the transcript, and it is the only kind of candidate that is assigned
``VERIFIED_OBSERVATION_OF_EVENT``. What was witnessed is the words in the span and who spoke
them, so the words are what the event holds:

==================  =================================  ======================================
memory type         content                            speaker
==================  =================================  ======================================
ASSERTION_EVENT     ``<speaker> stated: "<quote>"``    ``User``, ``Assistant``,
TOOL_OBSERVATION    ``<speaker> returned: "<quote>"``  ``System message``, ``Tool <name>``
INTERACTION_EVENT   ``<speaker> said: "<quote>"``      (``A tool`` when the name is unknown)
==================  =================================  ======================================

The quote is copied verbatim. A tool's name is the function name of the assistant's tool call
the message answers (``tool_call_id``), else the message's ``name``; it is used only when it is
an identifier, so no text of the conversation can add words of its own to the template.

A model-supplied content that differs from the template is **replaced**, and the replacement is
recorded as a :class:`ContentCorrection`, not rejected: the event the model pointed at did
happen (its span is checked like any other), a model's paraphrase adds nothing the quote does
not hold, and rejecting it would also reject every proposition derived from it -- everything a
weak local model that paraphrases its events extracted. What the model wrote is still checked
by the gate (certification claims and secrets in it are rejected as in any candidate) and kept,
bounded, in the correction, so an auditor sees every event a model tried to word differently.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..conversation import Conversation, Message
from ..extraction import CandidateUnit
from ..hashing import writable
from ..toolorigin import tool_of
from ..vocab import OBSERVATION_TYPES, MemoryType, Role

#: The verb of each event type's template.
EVENT_VERBS: dict[MemoryType, str] = {
    MemoryType.ASSERTION_EVENT: "stated",
    MemoryType.TOOL_OBSERVATION: "returned",
    MemoryType.INTERACTION_EVENT: "said",
}
_SPEAKERS = {
    Role.USER: "User",
    Role.ASSISTANT: "Assistant",
    Role.SYSTEM: "System message",
}
_UNNAMED_TOOL = "A tool"
#: A tool name is put into the template only when it is an identifier like this.
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]{0,63}")
#: How much of a replaced content a correction keeps (the rest is counted, not stored).
MAX_CLAIMED_CHARS = 500


class ContentCorrection(BaseModel):
    """An event content the system replaced by its template: what the model wrote (at most
    :data:`MAX_CLAIMED_CHARS` characters of it) and what the record holds instead."""

    model_config = ConfigDict(extra="forbid")

    candidate_id: str
    message_id: str
    memory_type: MemoryType
    claimed: str = Field(description="The model's content, cut at 500 characters.")
    claimed_chars: int = Field(description="Length of the model's whole content.")
    content: str = Field(description="The content the system built from the span and speaker.")

    @field_validator("claimed")
    @classmethod
    def _writable(cls, value: str) -> str:
        """The model's text may hold lone surrogates; keep it writable."""
        result: str = writable(value)
        return result


def is_event(memory_type: MemoryType) -> bool:
    return memory_type in OBSERVATION_TYPES


def tool_name(message: Message, conversation: Conversation) -> str | None:
    """The name of the tool that produced ``message``, when the transcript says it and it is
    an identifier (:func:`extractor.toolorigin.tool_of`, the name origin is decided by)."""
    return _identifier(tool_of(message, conversation))


def _identifier(name: str | None) -> str | None:
    return name if name is not None and _IDENTIFIER.fullmatch(name) else None


def speaker(message: Message, conversation: Conversation) -> str:
    """Who spoke ``message``, as an event's content names them."""
    if message.role is Role.TOOL:
        name = tool_name(message, conversation)
        return f"Tool {name}" if name else _UNNAMED_TOOL
    return _SPEAKERS[message.role]


def event_content(
    memory_type: MemoryType, quote: str, message: Message, conversation: Conversation
) -> str:
    """The content of an event of ``memory_type`` over ``quote`` in ``message``."""
    return f'{speaker(message, conversation)} {EVENT_VERBS[memory_type]}: "{quote}"'


def with_event_content(
    unit: CandidateUnit, message: Message, conversation: Conversation
) -> CandidateUnit:
    """``unit`` holding exactly its words when it is an event (itself otherwise)."""
    if not is_event(unit.memory_type):
        return unit
    content = event_content(unit.memory_type, unit.span.quote, message, conversation)
    return unit if unit.content == content else unit.model_copy(update={"content": content})


def content_correction(raw: Any, unit: CandidateUnit) -> ContentCorrection | None:
    """The correction to record when the model's ``raw`` candidate worded event ``unit``
    otherwise; ``None`` when it is not an event or the model wrote the template itself."""
    claimed = raw.get("content") if isinstance(raw, Mapping) else None
    if not is_event(unit.memory_type) or not isinstance(claimed, str) or claimed == unit.content:
        return None
    return ContentCorrection(
        candidate_id=unit.id,
        message_id=unit.span.message_id,
        memory_type=unit.memory_type,
        claimed=claimed[:MAX_CLAIMED_CHARS],
        claimed_chars=len(claimed),
        content=unit.content,
    )


__all__ = [
    "EVENT_VERBS",
    "MAX_CLAIMED_CHARS",
    "ContentCorrection",
    "content_correction",
    "event_content",
    "is_event",
    "speaker",
    "tool_name",
    "with_event_content",
]
