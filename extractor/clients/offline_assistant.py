"""What the offline model takes from an assistant message: its claims, as MODEL_INFERENCE.

Only declarative claims about the world are kept, verbatim (hedges included). The model does not
turn the assistant's text into facts about the user: a sentence addressed to or about the user
("So your manager is Alice.") is an echo of what the user said -- the user's own statement is
the source -- and yields nothing. Pleasantries, offers, questions and the assistant talking
about itself ("I can help with that") yield nothing either.
"""

from __future__ import annotations

import re

from ..conversation import Message
from ..vocab import CandidateKind, Capability, MemoryType, Origin
from .offline_draft import Draft, Group, keep_uncertainty, temporal_for, uncertainty_for
from .offline_english import finish
from .offline_entities import entities_in
from .offline_text import is_certification, is_injection, non_fact, sentences, strip_opener

MIN_WORDS = 4

_ADDRESSED = re.compile(
    r"\b(?:you|your|yours|yourself|you're|you've|you'd|you'll|u|ur|i|me|my|mine|myself|i'm|"
    r"i've|i'd|i'll|we|us|our|let's)\b",
    re.IGNORECASE,
)
_PLEASANTRY = re.compile(
    r"^(?:(?:that|this|it|what|how)(?:'s|\s+is|\s+was|\s+sounds|\s+seems|\s+looks)?\s+(?:\w+\s+)?"
    r"(?:great|good|nice|cool|awesome|wonderful|amazing|fun|interesting|lovely|fantastic|"
    r"exciting|terrible|awful|sad|tough|hard|rough|funny|sweet|neat|impressive|crazy|true|"
    r"fair|right|perfect|understandable|a good idea|a great idea)|"
    r"(?:thanks|thank|sure|certainly|of course|absolutely|glad|sorry|welcome|good luck|"
    r"congrat|happy to|no problem|no worries|here is|here's|here are|hope)\b)",
    re.IGNORECASE,
)
_PREDICATE = re.compile(
    r"\b(?:is|are|was|were|has|have|had|will|would|can|could|may|might|must|should|does|did|"
    r"\w+s|\w+ed|costs?|contains?|holds?|runs?|takes?)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(?:try|make|let|feel|remember|check|go|take|keep|use|consider|don't|do|be|have|see|"
    r"note|please|click|run|open|follow|avoid|ask|call|visit|look|read|enjoy|tell)\b",
    re.IGNORECASE,
)


def assistant_groups(message: Message) -> list[Group]:
    if is_injection(message.text):
        return []
    groups: list[Group] = []
    for raw in sentences(message):
        piece = strip_opener(raw)
        if piece is None or not is_claim(piece.text):
            continue
        content = keep_uncertainty(piece.text, finish(piece.text))
        draft = Draft(
            message_id=str(message.id),
            piece=piece,
            kind=CandidateKind.PROPOSITION,
            memory_type=MemoryType.MODEL_INFERENCE,
            content=content,
            origin=Origin.MODEL_OUTPUT,
            temporal=temporal_for(piece.text, message.timestamp),
            entities=entities_in(piece.text),
            requested_uses=[Capability.CONVERSATIONAL_CONTEXT],
            uncertainty=uncertainty_for(piece.text),
        )
        groups.append(Group([draft], priority=2))
    return groups


def is_claim(text: str) -> bool:
    """A declarative statement about the world (not about or to the user, not chit-chat)."""
    if len(text.split()) < MIN_WORDS or non_fact(text) or is_certification(text):
        return False
    if _ADDRESSED.search(text) or _PLEASANTRY.match(text) or _IMPERATIVE.match(text):
        return False
    return bool(_PREDICATE.search(text)) and not text.rstrip().endswith("!")
