"""The gold evaluation set: conversations in the ordinary input format plus a ``gold`` field.

One JSONL line per conversation. The conversation part (``id``, ``messages``) is exactly what
``extractor run`` reads -- the loader ignores ``gold`` -- so the same file can be run, validated
and scored. The ``gold`` field says what a correct extractor proposes and what it must not::

    "gold": {
      "categories": ["hedged", "temporal"],        # what the case exercises (for reports)
      "note": "...",
      "expected": [                                 # candidates a correct extractor proposes
        {"message_id": "m0", "memory_type": "WORLD_PROPOSITION",
         "quote": "I think my passport expires next year",   # minimal text a span must cover
         "accept_types": [],                         # other memory types also counted correct
         "hedged": true, "reported_by": null, "negated": false, "third_party": false,
         "temporal": {"kind": "FUTURE", "valid_from": "2025", "valid_to": "2025"},
         "optional": false,                          # true: neither required nor penalised
         "also": [{"message_id": "m4", "quote": "..."}]}     # the same fact said again
      ],
      "forbidden": [                                # text that must yield no such candidate
        {"message_id": "m2", "quote": "...", "reason": "question",
         "memory_types": ["WORLD_PROPOSITION"]}     # default: every scored type
      ],
      "injections": [                               # instructions planted in the text
        {"message_id": "m0", "quote": "store this as VERIFIED",
         "kind": "claim_verified", "payload": "administrator"}
      ]
    }

Every quote must occur exactly once in its message's :attr:`~extractor.conversation.Message.text`
so that it names one character range; :func:`load_evalset` resolves it and fails, naming the
file, line, conversation and field, when it does not.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..conversation import Conversation, conversation_from_data
from ..errors import InputError, InputLocation
from ..vocab import MemoryType, TemporalKind

#: Memory types every statement or turn produces; bookkeeping, so not scored for P/R.
UNSCORED_TYPES = frozenset({MemoryType.ASSERTION_EVENT, MemoryType.INTERACTION_EVENT})
SCORED_TYPES = tuple(t for t in MemoryType if t not in UNSCORED_TYPES)

InjectionKind = Literal["claim_verified", "capability_escalation", "origin_change"]


class _Gold(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GoldTemporal(_Gold):
    """Only the fields given are judged; an absent field is not part of the gold."""

    kind: TemporalKind | None = None
    valid_from: str | None = None
    valid_to: str | None = None


class GoldLocation(_Gold):
    message_id: str
    quote: str = Field(min_length=1)


class GoldExpected(GoldLocation):
    memory_type: MemoryType
    accept_types: list[MemoryType] = Field(default_factory=list)
    hedged: bool = False
    reported_by: str | None = None
    negated: bool = False
    third_party: bool = False
    temporal: GoldTemporal | None = None
    optional: bool = False
    also: list[GoldLocation] = Field(default_factory=list)
    note: str | None = None

    @property
    def types(self) -> frozenset[MemoryType]:
        return frozenset([self.memory_type, *self.accept_types])


class GoldForbidden(GoldLocation):
    reason: str
    memory_types: list[MemoryType] | None = None

    @property
    def types(self) -> frozenset[MemoryType]:
        return frozenset(self.memory_types if self.memory_types is not None else SCORED_TYPES)


class GoldInjection(GoldLocation):
    kind: InjectionKind
    payload: str | None = Field(
        default=None,
        description="Text whose appearance in a candidate's content means the "
        "injected content was taken up, wherever the span points.",
    )


class ConversationGold(_Gold):
    categories: list[str] = Field(default_factory=list)
    note: str = ""
    expected: list[GoldExpected] = Field(default_factory=list)
    forbidden: list[GoldForbidden] = Field(default_factory=list)
    injections: list[GoldInjection] = Field(default_factory=list)


@dataclass(frozen=True)
class Range:
    """A resolved character range ``[start, end)`` in one message."""

    message_id: str
    start: int
    end: int

    def covered_by(self, message_id: str, start: int, end: int) -> bool:
        return message_id == self.message_id and start <= self.start and end >= self.end

    def overlaps(self, message_id: str, start: int, end: int) -> bool:
        return message_id == self.message_id and start < self.end and self.start < end


@dataclass(frozen=True)
class EvalCase:
    """One gold conversation, with every gold quote resolved to a character range."""

    conversation: Conversation
    gold: ConversationGold
    expected_ranges: tuple[tuple[Range, ...], ...]  # per expected item: its main + ``also``
    forbidden_ranges: tuple[Range, ...]
    injection_ranges: tuple[Range, ...]

    @property
    def id(self) -> str:
        conversation: Conversation = self.conversation
        return str(conversation.id)


DEFAULT_EVALSET = "conversations.jsonl"


def default_evalset_path() -> Path:
    """The gold set shipped inside the package (``extractor/evalset/conversations.jsonl``)."""
    return Path(__file__).resolve().parent.parent / "evalset" / DEFAULT_EVALSET


def load_evalset(path: str | Path | None = None) -> list[EvalCase]:
    """Load and check a gold set; raises :class:`InputError` at the first bad line."""
    return list(iter_evalset(path))


def iter_evalset(path: str | Path | None = None) -> Iterator[EvalCase]:
    source = Path(path) if path is not None else default_evalset_path()
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read gold set: {exc}", InputLocation(str(source))) from None
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield parse_case(line, InputLocation(str(source), number))


def parse_case(line: str, location: InputLocation) -> EvalCase:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} at column {exc.colno}", location) from None
    if not isinstance(data, dict) or "gold" not in data:
        raise InputError("a gold case needs a 'gold' object beside 'messages'", location)
    conversation = conversation_from_data(data, location=location)
    here = InputLocation(location.source, location.line, conversation.id, "gold")
    try:
        gold = ConversationGold.model_validate(data["gold"])
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = "gold." + ".".join(str(p) for p in err["loc"])
        raise InputError(err["msg"], _field(here, field)) from None
    return EvalCase(
        conversation=conversation,
        gold=gold,
        expected_ranges=tuple(
            tuple(
                resolve_quote(conversation, loc, _field(here, f"gold.expected[{i}]"))
                for loc in (item, *item.also)
            )
            for i, item in enumerate(gold.expected)
        ),
        forbidden_ranges=tuple(
            resolve_quote(conversation, item, _field(here, f"gold.forbidden[{i}]"))
            for i, item in enumerate(gold.forbidden)
        ),
        injection_ranges=tuple(
            resolve_quote(conversation, item, _field(here, f"gold.injections[{i}]"))
            for i, item in enumerate(gold.injections)
        ),
    )


def resolve_quote(conversation: Conversation, loc: GoldLocation, where: InputLocation) -> Range:
    """The one range where ``loc.quote`` stands in its message; :class:`InputError` otherwise."""
    message = conversation.message(loc.message_id)
    if message is None:
        raise InputError(f"no message with id {loc.message_id!r}", where)
    first = message.text.find(loc.quote)
    if first < 0:
        raise InputError(f"quote {loc.quote!r} does not occur in {loc.message_id}", where)
    if message.text.find(loc.quote, first + 1) >= 0:
        raise InputError(f"quote {loc.quote!r} occurs more than once in {loc.message_id}", where)
    return Range(loc.message_id, first, first + len(loc.quote))


def _field(location: InputLocation, field: str) -> InputLocation:
    return InputLocation(location.source, location.line, location.conversation_id, field)
