"""The inverse of :func:`~extractor.proposal.expand.expand`: full units in output format 2.

:func:`compact` leaves out of each unit whatever the system would build the same way -- the
event a claim derives from when it is exactly the one the system builds, the content of every
event, offsets of a quote that occurs once, a field equal to its default, an id nobody names --
so that ``expand(compact(units))`` is ``units`` again up to ids and event contents (which are
the templates). It is how the offline model answers, and so how the mock server does.
"""

from __future__ import annotations

from typing import Any

from ..conversation import Conversation
from ..extraction import CandidateUnit, Uncertainty
from ..toolorigin import text_origin
from ..vocab import OBSERVATION_TYPES
from .expand import (
    DEFAULT_TYPES,
    DEFAULT_USES,
    EVENT_OF_ROLE,
    default_origin,
    default_temporal,
)


def compact(units: list[CandidateUnit], conversation: Conversation) -> list[dict[str, Any]]:
    """``units`` (validated or not) as a model would write them in output format 2."""
    dropped = _rebuilt_events(units, conversation)
    kept = [u for u in units if u.id not in dropped]
    ids = {u.id: f"c{n}" for n, u in enumerate(kept, start=1)}
    named = {p for u in kept for p in u.parent_ids if p not in dropped}
    return [_item(u, ids, named, dropped, conversation) for u in kept]


def _rebuilt_events(units: list[CandidateUnit], conversation: Conversation) -> set[str]:
    """Ids of the events the system would build again exactly as they are."""
    children: dict[str, list[CandidateUnit]] = {}
    for unit in units:
        for parent in unit.parent_ids:
            children.setdefault(parent, []).append(unit)
    dropped = set()
    for unit in units:
        kids = children.get(unit.id, [])
        if (
            len(kids) == 1
            and kids[0].parent_ids == [unit.id]
            and _rebuilt(unit, kids[0], conversation)
        ):
            dropped.add(unit.id)
    return dropped


def _rebuilt(event: CandidateUnit, claim: CandidateUnit, conversation: Conversation) -> bool:
    message = conversation.message(claim.span.message_id)
    if message is None or EVENT_OF_ROLE.get(message.role) is not event.memory_type:
        return False
    if claim.memory_type in OBSERVATION_TYPES or event.span != claim.span:
        return False
    same = (event.entities, event.uncertainty) == (claim.entities, claim.uncertainty)
    return (
        same
        and event.origin is text_origin(message, conversation)
        and event.kind.value == "OBSERVATION"
        and event.temporal.model_dump(mode="json", exclude_none=True) == default_temporal(message)
        and event.requested_uses == DEFAULT_USES[event.memory_type]
        and not event.parent_ids
    )


def _item(
    unit: CandidateUnit,
    ids: dict[str, str],
    named: set[str],
    dropped: set[str],
    conversation: Conversation,
) -> dict[str, Any]:
    message = conversation.message(unit.span.message_id)
    role = message.role if message is not None else None
    item: dict[str, Any] = {}
    if unit.id in named:
        item["id"] = ids[unit.id]
    item["message_id"] = unit.span.message_id
    item["quote"] = unit.span.quote
    text = message.text if message is not None else ""
    if text.find(unit.span.quote) != unit.span.start or text.count(unit.span.quote) != 1:
        item["start"] = unit.span.start
    if role is None or unit.memory_type is not DEFAULT_TYPES[role]:
        item["memory_type"] = unit.memory_type.value
    event = unit.memory_type in OBSERVATION_TYPES
    if unit.kind.value != ("OBSERVATION" if event else "PROPOSITION"):
        item["kind"] = unit.kind.value
    if not event:
        item["content"] = unit.content
    if role is None or unit.origin is not default_origin(message, unit.memory_type, conversation):
        item["origin"] = unit.origin.value
    temporal = unit.temporal.model_dump(mode="json", exclude_none=True)
    if temporal != (default_temporal(message) if event else {"kind": "UNKNOWN"}):
        item["temporal"] = temporal
    if unit.entities:
        item["entities"] = [e.model_dump(mode="json") for e in unit.entities]
    parents = [ids.get(p, p) for p in unit.parent_ids if p not in dropped]
    if parents:
        item["parent_ids"] = parents
    if unit.requested_uses != DEFAULT_USES.get(unit.memory_type, []):
        item["requested_uses"] = [u.value for u in unit.requested_uses]
    if unit.uncertainty != Uncertainty():
        item["uncertainty"] = unit.uncertainty.model_dump(mode="json", exclude_defaults=True)
    return item


__all__ = ["compact"]
