"""From what a model proposes to full candidate units: what the system can build, it builds.

A model's output (format 2, :class:`~extractor.extraction.ProposedCandidate`) carries only what
only a model can say: which span is worth remembering, its type where the role's default is not
it, the normalized content of a claim, time, entities, hedges. :func:`expand` turns each item
into a full candidate (format 1, :class:`~extractor.extraction.CandidateUnit`) before the gate:

========================  ====================================================================
missing                   built by the system
========================  ====================================================================
``id``                    ``c<position>`` (1-based, in the model's output)
``start`` / ``end``       where the quote occurs, when it occurs exactly once in its message
``memory_type``           ``WORLD_PROPOSITION`` (user, system), ``MODEL_INFERENCE``
                          (assistant), ``TOOL_OBSERVATION`` (tool)
``kind``                  ``OBSERVATION`` for an event type, else ``PROPOSITION``
``origin``                the role's; for tool text ``TOOL`` only when the caller declared the
                          tool observing, else ``EXTERNAL_SOURCE`` (:mod:`extractor.toolorigin`)
``content`` of an event   its template (:mod:`.events`); a model's own wording is checked by
                          the gate and then replaced by the same template
``temporal`` of an event  ``POINT_IN_TIME`` at the message's time (``UNKNOWN`` without one)
``requested_uses``        :data:`DEFAULT_USES` of the type
========================  ====================================================================

and the event behind a claim: a claim quoted from a user (or system) message that lists no
``ASSERTION_EVENT`` of its message as parent gets one built over its span (with the claim's
entities and uncertainty), placed right before it; a claim from a tool message likewise gets
the ``TOOL_OBSERVATION`` of its span. An event is built only over a span that is in the message
(at the claim's offsets, or where its quote occurs once: the offsets the gate corrects the
claim's to), so a claim with an invented quote gets its own rejection and no second one. A
built event that the gate finds to be the same memory as an event the model listed is not a
duplicate: the claim is linked to the model's event instead (a rejected model event never takes
a claim with it).

Every built item then goes through the same gate as what a model writes out in full, which is
still read as it is (format 1: an item with a ``span``). :class:`Expansion` keeps, for every
expanded item, the position of the model's item it came from and that item as the model wrote
it, so rejections name what the model sent. Pure function of the items and the conversation;
expanding an expansion changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..conversation import Conversation, Message
from ..toolorigin import DEFAULT_OBSERVING_TOOLS, text_origin
from ..vocab import OBSERVATION_TYPES, Capability, MemoryType, Origin, Role, TemporalKind
from .events import event_content

DEFAULT_TYPES: dict[Role, MemoryType] = {
    Role.USER: MemoryType.WORLD_PROPOSITION,
    Role.SYSTEM: MemoryType.WORLD_PROPOSITION,
    Role.ASSISTANT: MemoryType.MODEL_INFERENCE,
    Role.TOOL: MemoryType.TOOL_OBSERVATION,
}
ROLE_ORIGINS: dict[Role, Origin] = {
    Role.USER: Origin.USER,
    Role.SYSTEM: Origin.SYSTEM,
    Role.ASSISTANT: Origin.MODEL_OUTPUT,
    Role.TOOL: Origin.TOOL,
}
_CONTEXT = Capability.CONVERSATIONAL_CONTEXT
#: The uses a candidate requests when the model names none.
DEFAULT_USES: dict[MemoryType, list[Capability]] = {
    MemoryType.ASSERTION_EVENT: [_CONTEXT],
    MemoryType.INTERACTION_EVENT: [_CONTEXT],
    MemoryType.TOOL_OBSERVATION: [_CONTEXT, Capability.FACTUAL_EVIDENCE],
    MemoryType.WORLD_PROPOSITION: [Capability.PERSONALIZATION, _CONTEXT],
    MemoryType.PREFERENCE: [Capability.PERSONALIZATION, _CONTEXT],
    MemoryType.MODEL_INFERENCE: [_CONTEXT],
    MemoryType.EXTERNAL_SOURCE_CLAIM: [_CONTEXT],
}
#: The event behind a claim quoted from a message of each role.
EVENT_OF_ROLE: dict[Role, MemoryType] = {
    Role.USER: MemoryType.ASSERTION_EVENT,
    Role.SYSTEM: MemoryType.ASSERTION_EVENT,
    Role.TOOL: MemoryType.TOOL_OBSERVATION,
}
_V2_FIELDS = {"span.message_id": "message_id", "span.quote": "quote", "span.start": "start",
              "span.end": "start"}  # fmt: skip


@dataclass
class Expansion:
    """The expanded items, and for each the model's item it came from (position and text)."""

    items: list[Any] = field(default_factory=list)
    sources: list[int] = field(default_factory=list)
    originals: list[Any] = field(default_factory=list)
    #: Positions of format-2 items whose quote occurs more than once and that gave no start.
    ambiguous: set[int] = field(default_factory=set)
    #: Positions of the events the system built.
    built: set[int] = field(default_factory=set)

    def field_name(self, position: int, name: str | None) -> str | None:
        """A rejection's field as the model wrote it (``quote``, not ``span.quote``)."""
        original = self.originals[position]
        if name is None or not isinstance(original, Mapping) or "span" in original:
            return name
        return _V2_FIELDS.get(name, name)

    def reason(self, position: int, code: Any, message: str) -> tuple[Any, str]:
        """A rejection's code and message, for a quote that needed its start and had none."""
        if position in self.ambiguous and code == "SCHEMA_INVALID":
            return (
                "SPAN_OFFSETS_AMBIGUOUS",
                "the quote occurs more than once in its message: give its start",
            )
        return code, message


def default_temporal(message: Message | None) -> dict[str, Any]:
    """An event's time: when its message was sent, when the transcript says."""
    if message is None or message.timestamp is None:
        return {"kind": TemporalKind.UNKNOWN.value}
    stamp = message.timestamp.isoformat()
    return {"kind": TemporalKind.POINT_IN_TIME.value, "valid_from": stamp, "valid_to": stamp}


def expand(
    items: list[Any],
    conversation: Conversation,
    *,
    allow_system_sources: bool = False,
    observing_tools: frozenset[str] = DEFAULT_OBSERVING_TOOLS,
) -> Expansion:
    """The full candidate units ``items`` stand for (see the module docstring);
    ``observing_tools``: the tools whose output is an observation (the rest relay external
    text, :mod:`extractor.toolorigin`)."""
    taken = {i["id"] for i in items if isinstance(i, Mapping) and isinstance(i.get("id"), str)}
    out = Expansion()
    full: list[Any] = []
    ambiguous: set[int] = set()
    for position, item in enumerate(items):
        if not isinstance(item, Mapping):
            full.append(item)
            continue
        unit, unsure = _filled(item, position, conversation, taken, observing_tools)
        if unsure:
            ambiguous.add(position)
        full.append(unit)
    events = _events(full, conversation, allow_system_sources, taken, observing_tools)
    for position, (item, original) in enumerate(zip(full, items, strict=True)):
        for event in events.get(position, []):
            out.built.add(len(out.items))
            out.items.append(event)
            out.sources.append(position)
            out.originals.append(event)
        if position in ambiguous:
            out.ambiguous.add(len(out.items))
        out.items.append(item)
        out.sources.append(position)
        out.originals.append(original)
    return out


def _filled(
    item: Mapping[str, Any],
    position: int,
    conversation: Conversation,
    taken: set[str],
    observing: frozenset[str],
) -> tuple[dict[str, Any], bool]:
    """``item`` in format 1 with every default the system can give filled in."""
    unit = dict(item)
    ambiguous = False
    if "span" not in item:
        unit = {k: v for k, v in item.items() if k not in ("message_id", "quote", "start")}
        unit["span"], ambiguous = _span(item, conversation)
    span = unit["span"]
    message = _message(span, conversation)
    if "id" not in unit:
        unit["id"] = _free(f"c{position + 1}", taken)
    role = message.role if message is not None else Role.USER
    memory_type = _type(unit.setdefault("memory_type", DEFAULT_TYPES[role].value))
    if memory_type is None:
        return unit, ambiguous
    event = memory_type in OBSERVATION_TYPES
    unit.setdefault("kind", "OBSERVATION" if event else "PROPOSITION")
    unit.setdefault("origin", default_origin(message, memory_type, conversation, observing).value)
    if event and message is not None and isinstance(span, Mapping):
        quote = span.get("quote")
        if isinstance(quote, str) and "content" not in unit:  # a model's wording: the gate's
            unit["content"] = event_content(memory_type, quote, message, conversation)
    if event:
        unit.setdefault("temporal", default_temporal(message))
    unit.setdefault("requested_uses", [u.value for u in DEFAULT_USES.get(memory_type, [])])
    return unit, ambiguous


def _span(item: Mapping[str, Any], conversation: Conversation) -> tuple[dict[str, Any], bool]:
    span: dict[str, Any] = {k: item[k] for k in ("message_id", "quote") if k in item}
    quote, start = item.get("quote"), item.get("start")
    message = _message(span, conversation)
    if isinstance(start, int) and not isinstance(start, bool) and isinstance(quote, str):
        return {**span, "start": start, "end": start + len(quote)}, False
    if "start" in item or not isinstance(quote, str):
        return {**span, "start": start, "end": start}, False
    if message is None:  # the gate says SPAN_UNKNOWN_MESSAGE
        return {**span, "start": 0, "end": len(quote)}, False
    first = message.text.find(quote)
    if first >= 0 and message.text.find(quote, first + 1) >= 0:
        return {**span, "start": None, "end": None}, True
    first = max(first, 0)  # not found: the gate says SPAN_NOT_FOUND
    return {**span, "start": first, "end": first + len(quote)}, False


def _message(span: Any, conversation: Conversation) -> Message | None:
    mid = span.get("message_id") if isinstance(span, Mapping) else None
    return conversation.message(mid) if isinstance(mid, str) else None


def _type(value: Any) -> MemoryType | None:
    try:
        return MemoryType(value)
    except ValueError:
        return None


def default_origin(
    message: Message | None,
    memory_type: MemoryType,
    conversation: Conversation,
    observing: frozenset[str] = DEFAULT_OBSERVING_TOOLS,
) -> Origin:
    """The origin of text of ``message`` proposed as ``memory_type``: its role's, and for a
    tool's text ``TOOL`` only when the caller declared the tool observing
    (:mod:`extractor.toolorigin`); an EXTERNAL_SOURCE_CLAIM is always ``EXTERNAL_SOURCE``."""
    if message is None:
        return ROLE_ORIGINS[Role.USER]
    if message.role is Role.TOOL and memory_type is MemoryType.EXTERNAL_SOURCE_CLAIM:
        return Origin.EXTERNAL_SOURCE
    return text_origin(message, conversation, observing)


def _free(wanted: str, taken: set[str]) -> str:
    name = wanted
    while name in taken:
        name += "'"
    taken.add(name)
    return name


# --- The event behind a claim ---------------------------------------------------------------


def _events(
    full: list[Any],
    conversation: Conversation,
    allow_system: bool,
    taken: set[str],
    observing: frozenset[str],
) -> dict[int, list[dict[str, Any]]]:
    """Events to insert before each claim (by position); links the claims to their event."""
    by_id = {
        u["id"]: (u, t) for u in full if isinstance(u, dict) and isinstance(u.get("id"), str)
        if (t := _type(u.get("memory_type"))) in OBSERVATION_TYPES
    }  # fmt: skip
    built: dict[int, list[dict[str, Any]]] = {}
    for position, unit in enumerate(full):
        message = _claim_message(unit, conversation, allow_system)
        if message is None:
            continue
        wanted = EVENT_OF_ROLE[message.role]
        parents = unit.get("parent_ids")
        parents = parents if isinstance(parents, list) else []
        if any(_is_event_of(by_id.get(p), wanted, message) for p in parents if isinstance(p, str)):
            continue
        event = _new_event(unit, wanted, message, conversation, taken, observing)
        if event is None:
            continue
        built.setdefault(position, []).append(event)
        unit["parent_ids"] = [event["id"], *parents]
    return built


def _claim_message(unit: Any, conversation: Conversation, allow_system: bool) -> Message | None:
    """The message of a claim that needs an event behind it, else ``None``."""
    if not isinstance(unit, dict) or not isinstance(unit.get("id"), str):
        return None
    memory_type = _type(unit.get("memory_type"))
    message = _message(unit.get("span"), conversation)
    if memory_type is None or memory_type in OBSERVATION_TYPES or message is None:
        return None
    if message.role not in EVENT_OF_ROLE or (message.role is Role.SYSTEM and not allow_system):
        return None
    return message


def _is_event_of(entry: Any, wanted: MemoryType, message: Message) -> bool:
    if entry is None:
        return False
    event, memory_type = entry
    return memory_type is wanted and _message_id(event) == message.id


def _message_id(unit: Mapping[str, Any]) -> Any:
    span = unit.get("span")
    return span.get("message_id") if isinstance(span, Mapping) else None


def _where(unit: Mapping[str, Any]) -> tuple[Any, ...]:
    span = unit.get("span")
    if not isinstance(span, Mapping):
        return ()
    return (span.get("message_id"), span.get("quote"), span.get("start"))


def _new_event(
    unit: dict[str, Any],
    wanted: MemoryType,
    message: Message,
    conversation: Conversation,
    taken: set[str],
    observing: frozenset[str],
) -> dict[str, Any] | None:
    """The event over the claim's span, when that span really is in the message."""
    span = unit["span"]
    quote, start = span.get("quote"), span.get("start")
    if not isinstance(quote, str) or not quote or not isinstance(start, int):
        return None
    if message.text[start : start + len(quote)] != quote:
        start = message.text.find(quote)  # where the gate corrects the claim's offsets to
        if start < 0 or message.text.find(quote, start + 1) >= 0:
            return None
    event: dict[str, Any] = {
        "id": _free(f"{unit['id']}.event", taken),
        "span": {"message_id": message.id, "quote": quote, "start": start,
                 "end": start + len(quote)},
        "kind": "OBSERVATION",
        "memory_type": wanted.value,
        "content": event_content(wanted, quote, message, conversation),
        "origin": text_origin(message, conversation, observing).value,
        "temporal": default_temporal(message),
    }  # fmt: skip
    for key in ("entities", "uncertainty"):
        if key in unit:
            event[key] = unit[key]
    event["requested_uses"] = [u.value for u in DEFAULT_USES[wanted]]
    return event


__all__ = [
    "DEFAULT_TYPES",
    "DEFAULT_USES",
    "EVENT_OF_ROLE",
    "ROLE_ORIGINS",
    "Expansion",
    "default_origin",
    "default_temporal",
    "expand",
]
