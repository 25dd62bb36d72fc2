"""The validation gate: turn an extractor's proposal into accepted units or recorded rejections.

Input is the model's raw output (parsed JSON, a JSON string, or an
:class:`~extractor.extraction.ExtractionOutput`); validation works candidate by candidate on the
raw data, so one malformed candidate never sinks the others, and a rejection keeps the raw
candidate it rejected. Nothing is silently "fixed": the two corrections allowed are recorded --
offsets of a quote that occurs exactly once in its message (``corrections``), and the content of
an event, which is always the system's template over its quote, never the model's wording
(``content_corrections``, see :mod:`extractor.proposal.events`).

Rules, each with its error code (:class:`Code`):

1. no self-certification (``EXTRACTOR_CLAIMED_VERIFIED``);
2. grounded spans (``SPAN_*``);
3. origin follows the speaker (``ORIGIN_LAUNDERING``, ``TYPE_ROLE_MISMATCH``);
4. uncertainty is not dropped (``UNCERTAINTY_DROPPED``);
5. time is sane (``TEMPORAL_*``);
6. closed vocabularies (``VOCABULARY_UNKNOWN``) and the schema (``SCHEMA_INVALID``);
7. structure: parents exist, without cycles (``PARENT_*``, ``DUPLICATE_ID``, ``KIND_MISMATCH``);
   the assertion event behind a user's proposition is built by the system
   (:mod:`extractor.proposal.expand`), so ``PROPOSITION_UNLINKED`` is retired: no longer
   produced, kept in :class:`Code` so that results written before still read;
8. no secrets (``SECRET_IN_CANDIDATE``): a candidate holding a password, key, token, card or
   account number is rejected, and its rejection keeps only a redacted copy;
9. the content says what its quote says (``CONTENT_UNSUPPORTED``, ``NEGATION_DROPPED``,
   ``NEGATION_ADDED``, ``UNCERTAINTY_DROPPED``): see :mod:`extractor.content.faithfulness`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import caseless
from .content import find_secrets, fold, redact
from .content.faithfulness import Transcript, check_faithful, widen
from .content.sentences import quotable_ranges
from .conversation import DEFAULT_MAX_CANDIDATES, Conversation, Message
from .errors import ExtractionOutputError
from .extraction import CandidateUnit, ExtractionOutput
from .hashing import MAX_WRITABLE_DEPTH, nested_deeper_than, writable
from .proposal.events import (
    ContentCorrection,
    content_correction,
    event_content,
    with_event_content,
)
from .proposal.expand import expand
from .temporal import interval, ordered, resolve
from .toolorigin import DEFAULT_OBSERVING_TOOLS, normalized, text_origin
from .vocab import OBSERVATION_TYPES, CandidateKind, MemoryType, Origin, Role, TemporalKind


class Code(StrEnum):
    SCHEMA_INVALID = "SCHEMA_INVALID"
    VOCABULARY_UNKNOWN = "VOCABULARY_UNKNOWN"
    EXTRACTOR_CLAIMED_VERIFIED = "EXTRACTOR_CLAIMED_VERIFIED"
    SPAN_UNKNOWN_MESSAGE = "SPAN_UNKNOWN_MESSAGE"
    SPAN_NOT_FOUND = "SPAN_NOT_FOUND"
    SPAN_OFFSETS_AMBIGUOUS = "SPAN_OFFSETS_AMBIGUOUS"
    SPAN_QUOTES_PLACEHOLDER = "SPAN_QUOTES_PLACEHOLDER"
    SPAN_FROM_SYSTEM_MESSAGE = "SPAN_FROM_SYSTEM_MESSAGE"
    ORIGIN_LAUNDERING = "ORIGIN_LAUNDERING"
    TYPE_ROLE_MISMATCH = "TYPE_ROLE_MISMATCH"
    KIND_MISMATCH = "KIND_MISMATCH"
    UNCERTAINTY_DROPPED = "UNCERTAINTY_DROPPED"
    TEMPORAL_INVALID = "TEMPORAL_INVALID"
    TEMPORAL_UNANCHORED = "TEMPORAL_UNANCHORED"
    TEMPORAL_MISRESOLVED = "TEMPORAL_MISRESOLVED"
    DUPLICATE_ID = "DUPLICATE_ID"
    PARENT_UNKNOWN = "PARENT_UNKNOWN"
    PARENT_REJECTED = "PARENT_REJECTED"
    PARENT_CYCLE = "PARENT_CYCLE"
    PROPOSITION_UNLINKED = "PROPOSITION_UNLINKED"  # retired: never produced (see rule 7)
    CANDIDATE_LIMIT_EXCEEDED = "CANDIDATE_LIMIT_EXCEEDED"
    SECRET_IN_CANDIDATE = "SECRET_IN_CANDIDATE"
    CONTENT_UNSUPPORTED = "CONTENT_UNSUPPORTED"
    NEGATION_DROPPED = "NEGATION_DROPPED"
    NEGATION_ADDED = "NEGATION_ADDED"


class Rejection(BaseModel):
    """One rejected candidate: which, why (code + message), where (field), and what it said."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(description="Position of the candidate in the extractor's output.")
    candidate_id: str | None
    code: Code
    field: str | None = None
    message: str
    raw: Any = Field(description="The candidate exactly as the extractor returned it.")

    @field_validator("candidate_id", "field", "message", "raw")
    @classmethod
    def _writable(cls, value: Any) -> Any:
        """A rejection must be writable whatever the model sent (see :func:`writable`)."""
        return writable(value)


class SpanCorrection(BaseModel):
    """Offsets the system corrected: the quote occurred exactly once, elsewhere."""

    model_config = ConfigDict(extra="forbid")

    candidate_id: str
    message_id: str
    quote: str
    claimed_start: int
    claimed_end: int
    start: int
    end: int


class ValidationReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    accepted: list[CandidateUnit] = Field(default_factory=list)
    rejections: list[Rejection] = Field(default_factory=list)
    corrections: list[SpanCorrection] = Field(default_factory=list)
    content_corrections: list[ContentCorrection] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.rejections

    def feedback(self) -> str:
        """The rejections as short lines, for re-asking a model to fix its output."""
        return "\n".join(
            f"- candidate {r.candidate_id or '#' + str(r.index)}: {r.code.value}"
            f"{' at ' + r.field if r.field else ''}: {r.message}"
            for r in self.rejections
        )


@dataclass(frozen=True)
class ValidationOptions:
    """``allow_system_sources``: treat system-prompt text as a memory source (origin SYSTEM).
    ``observing_tools``: the tools whose output is an observation (origin ``TOOL``); every other
    tool relays external text (``EXTERNAL_SOURCE``), see :mod:`extractor.toolorigin`. A
    conversation's ``metadata.observing_tools`` replaces it for that conversation."""

    allow_system_sources: bool = False
    max_candidates: int = DEFAULT_MAX_CANDIDATES
    observing_tools: tuple[str, ...] = tuple(sorted(DEFAULT_OBSERVING_TOOLS))

    @property
    def observing(self) -> frozenset[str]:
        """:attr:`observing_tools` as they are compared (case-folded)."""
        return normalized(self.observing_tools)


class _Reject(Exception):
    def __init__(self, code: Code, message: str, field: str | None = None) -> None:
        self.code, self.message, self.field = code, message, field


# --- Rule 1: self-certification -------------------------------------------------------------

_CERTIFY_KEY = re.compile(r"verif|certif|fact.?check|ground.?truth|validat|authenticat")
#: Certification and its synonyms, matched on folded text (:func:`~extractor.content.fold`:
#: lowercase, NFKC, no invisible characters, confusables mapped to Latin letters).
_CERTIFY_VALUE = re.compile(
    r"(?<![a-z])(verified|verifiably|certified|fact checked|proven|confirmed true|ground truth|"
    r"validated|authenticated|corroborated|substantiated|established (?:as )?(?:a )?fact|"
    r"(?:proven|confirmed|known|true|undisputed|verifiable) fact|undisputed|indisputabl[ey]|"
    r"incontrovertibl[ey]|beyond (?:any |all )?doubt|officially confirmed|guaranteed (?:true|"
    r"accurate|correct)|100 ?% (?:true|accurate|correct|certain))(?![a-z])"
)


def _words(value: str) -> str:
    return re.sub(r"[_\-]+", " ", fold(value))


#: Every match of either pattern above (on :func:`_words` text) contains a match of this one,
#: so text without one cannot hold a certification claim and needs no detailed check.
_CERTIFY_ANY = re.compile(
    r"verif|certif|fact.?check|ground.?truth|proven|confirmed|validat|authenticat|corroborat|"
    r"substantiat|fact|undisput|indisput|incontrovert|doubt|guaranteed|100"
)


def _may_certify(raw: Mapping[str, Any]) -> bool:
    """Whether a key or string value outside the span could hold a certification claim: one
    search over all of them instead of several per value (most candidates hold none)."""
    parts: list[str] = []
    stack: list[Any] = []
    for k, v in raw.items():
        key = str(k)
        if not key.startswith("span"):
            parts.append(key)
            stack.append(v)
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is str:
            parts.append(value)
        elif kind is list:
            stack.extend(value)
        elif kind is dict:
            parts.extend(map(str, value))
            stack.extend(value.values())
        else:  # anything else is visited exactly as _walk visits it
            if isinstance(value, str):
                parts.append(value)
            if isinstance(value, Mapping):
                parts.extend(map(str, value))
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)
    return _CERTIFY_ANY.search(_words("\n".join(parts))) is not None


def check_no_certification(raw: Mapping[str, Any], quote: str) -> None:
    """Reject any VERIFIED-like claim or synonym, in any key or value, in any script.

    Keys and values are compared folded (:func:`~extractor.content.fold`), so a Cyrillic
    ``Е``, a zero-width space or full-width letters do not hide the word. Words that stand in
    the quote itself ("my account is verified") are the speaker's, not a certification, so
    they may appear in the content.
    """
    if _may_certify(raw):
        _check_certification(raw, quote)


def _check_certification(raw: Mapping[str, Any], quote: str) -> None:
    """The detailed walk behind :func:`check_no_certification`: which field, which word."""
    quoted = {m.group(1) for m in _CERTIFY_VALUE.finditer(_words(quote))}
    for path, key, value in _walk(raw):
        if path.startswith("span"):
            continue
        if key is not None and _CERTIFY_KEY.search(fold(key)):
            raise _Reject(
                Code.EXTRACTOR_CLAIMED_VERIFIED,
                f"field {key!r} is not the extractor's to set",
                path,
            )
        if isinstance(value, bool | int | float) and path.endswith(("verified", "certified")):
            raise _Reject(Code.EXTRACTOR_CLAIMED_VERIFIED, "extractor asserted verification", path)
        if isinstance(value, str):
            for m in _CERTIFY_VALUE.finditer(_words(value)):
                if m.group(1) not in quoted:
                    raise _Reject(
                        Code.EXTRACTOR_CLAIMED_VERIFIED,
                        f"{m.group(1)!r}: the extractor proposes, it never certifies",
                        path,
                    )


def _walk(
    value: Any, path: str = "", key: str | None = None
) -> Iterable[tuple[str, str | None, Any]]:
    yield path, key, value
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _walk(v, f"{path}.{k}" if path else str(k), str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{path}[{i}]", None)


# --- Rule 8: secrets ------------------------------------------------------------------------


def check_no_secret(raw: Mapping[str, Any]) -> None:
    """Reject a candidate any string of which holds a password, key, token, card or account
    number (:func:`~extractor.content.find_secrets`); its rejection keeps a redacted copy."""
    for path, _, value in _walk(raw):
        if isinstance(value, str) and value:
            secrets = find_secrets(value)
            if secrets:
                kinds = ", ".join(sorted({s.kind for s in secrets}))
                raise _Reject(
                    Code.SECRET_IN_CANDIDATE,
                    f"holds a secret ({kinds}): a credential is not a memory; kept here redacted",
                    path,
                )


def redacted(value: Any) -> Any:
    """``value`` with every secret in every string (keys included) redacted."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {redacted(k) if isinstance(k, str) else k: redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v) for v in value]
    return value


# --- Rule 6: schema and vocabularies --------------------------------------------------------


def parse_unit(raw: Any) -> CandidateUnit:
    if not isinstance(raw, Mapping):
        raise _Reject(
            Code.SCHEMA_INVALID, f"a candidate must be an object, got {type(raw).__name__}"
        )
    try:
        return CandidateUnit.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in err["loc"])
        if err["type"] == "enum":
            return_code = Code.VOCABULARY_UNKNOWN
            message = f"{err['input']!r} is not in the vocabulary ({err['ctx']['expected']})"
        else:
            return_code = Code.SCHEMA_INVALID
            message = err["msg"]
        raise _Reject(return_code, message, field) from None


# --- Rule 2: grounded spans -----------------------------------------------------------------


def ground_span(
    unit: CandidateUnit, conversation: Conversation, opts: ValidationOptions
) -> tuple[Message, SpanCorrection | None]:
    span = unit.span
    message = conversation.message(span.message_id)
    if message is None:
        raise _Reject(
            Code.SPAN_UNKNOWN_MESSAGE, f"no message with id {span.message_id!r}", "span.message_id"
        )
    if message.role is Role.SYSTEM and not opts.allow_system_sources:
        raise _Reject(
            Code.SPAN_FROM_SYSTEM_MESSAGE, "system text is not a memory source", "span.message_id"
        )
    text = message.text
    correction = None
    if text[span.start : span.end] != span.quote or span.end - span.start != len(span.quote):
        first = text.find(span.quote)
        if first < 0:
            raise _Reject(
                Code.SPAN_NOT_FOUND,
                f"quote does not occur in message {span.message_id}",
                "span.quote",
            )
        if text.find(span.quote, first + 1) >= 0:
            raise _Reject(
                Code.SPAN_OFFSETS_AMBIGUOUS,
                f"offsets [{span.start}:{span.end}] do not hold the quote, "
                "which occurs more than once",
                "span.start",
            )
        correction = SpanCorrection(
            candidate_id=unit.id, message_id=span.message_id, quote=span.quote,
            claimed_start=span.start, claimed_end=span.end,
            start=first, end=first + len(span.quote),
        )  # fmt: skip
    start = correction.start if correction else span.start
    end = start + len(span.quote)
    for lo, hi in message.placeholder_ranges:
        if start < hi and lo < end:
            raise _Reject(
                Code.SPAN_QUOTES_PLACEHOLDER, "non-text parts cannot be quoted", "span.quote"
            )
    return message, correction


# --- Rule 3: origin and type follow the speaker ---------------------------------------------

_ALLOWED_ORIGINS = {
    Role.USER: {Origin.USER},
    Role.ASSISTANT: {Origin.MODEL_OUTPUT},
    Role.TOOL: {Origin.TOOL, Origin.EXTERNAL_SOURCE},
    Role.SYSTEM: {Origin.SYSTEM},
}
_TYPE_ROLES = {
    MemoryType.TOOL_OBSERVATION: {Role.TOOL},
    MemoryType.EXTERNAL_SOURCE_CLAIM: {Role.TOOL, Role.USER},
    MemoryType.MODEL_INFERENCE: {Role.ASSISTANT},
    MemoryType.PREFERENCE: {Role.USER, Role.SYSTEM},
    MemoryType.ASSERTION_EVENT: {Role.USER, Role.SYSTEM, Role.TOOL},
}
_TYPE_KIND = {
    MemoryType.ASSERTION_EVENT: CandidateKind.OBSERVATION,
    MemoryType.TOOL_OBSERVATION: CandidateKind.OBSERVATION,
    MemoryType.INTERACTION_EVENT: CandidateKind.OBSERVATION,
    MemoryType.WORLD_PROPOSITION: CandidateKind.PROPOSITION,
    MemoryType.MODEL_INFERENCE: CandidateKind.PROPOSITION,
    MemoryType.EXTERNAL_SOURCE_CLAIM: CandidateKind.PROPOSITION,
    MemoryType.PREFERENCE: CandidateKind.PROPOSITION,
}


def check_origin(unit: CandidateUnit, message: Message) -> None:
    if unit.origin not in _ALLOWED_ORIGINS[message.role]:
        raise _Reject(
            Code.ORIGIN_LAUNDERING,
            f"text of a {message.role.value} message cannot have origin {unit.origin.value}",
            "origin",
        )
    roles = _TYPE_ROLES.get(unit.memory_type)
    if roles is not None and message.role not in roles:
        raise _Reject(
            Code.TYPE_ROLE_MISMATCH,
            f"a {unit.memory_type.value} cannot be quoted from a {message.role.value} message",
            "memory_type",
        )
    expected = _TYPE_KIND.get(unit.memory_type)
    if expected is not None and unit.kind is not expected:
        raise _Reject(
            Code.KIND_MISMATCH, f"a {unit.memory_type.value} is an {expected.value}", "kind"
        )


def with_tool_origin(
    unit: CandidateUnit, message: Message, conversation: Conversation, opts: ValidationOptions
) -> CandidateUnit:
    """Tool text has the origin the caller declared for its tool (:mod:`extractor.toolorigin`),
    not the one the model chose: ``EXTERNAL_SOURCE`` for a tool that relays external text, or
    when the model itself says so; ``TOOL`` only for an observing tool."""
    if message.role is not Role.TOOL or unit.origin is Origin.EXTERNAL_SOURCE:
        return unit
    origin = text_origin(message, conversation, opts.observing)
    return unit if origin is unit.origin else unit.model_copy(update={"origin": origin})


# --- Rule 4: uncertainty --------------------------------------------------------------------

HEDGE_CUES = re.compile(
    r"\b(i think|i believe|i guess|i suppose|i assume|i'?m not (?:sure|certain)|not sure|"
    r"i doubt|i suspect|maybe|perhaps|probably|possibly|likely|might|may be|may have|"
    r"could be|seems?|apparently|supposedly|allegedly|presumably|i reckon|if i recall|"
    r"i'?m pretty sure|i feel like)\b",
    re.IGNORECASE,
)
APPROX_CUES = re.compile(
    r"(\b(?:approximately|approx\.?|roughly|about|around|nearly|almost|circa|some|"
    r"an estimated|estimated|more or less|give or take|ish)\s*[$€£¥]?\s*\d|"
    r"~\s*[$€£¥]?\d|\bor so\b)",
    re.IGNORECASE,
)
REPORTED_CUES = re.compile(
    r"\b(told me|tells me|said that|says that|says|said|according to|claims?|claimed|"
    r"reportedly|i heard|heard that|they say|people say|rumou?red|rumou?r has it)\b",
    re.IGNORECASE,
)
_CONTENT_HEDGE = re.compile(
    r"\b(think|thinks|believes?|guess(?:es)?|supposes?|assumes?|not sure|not certain|unsure|"
    r"uncertain|doubts?|suspects?|maybe|perhaps|probably|possibly|possible|likely|unlikely|might|may|could|seems?|"
    r"apparently|supposedly|allegedly|presumably|reckons?|recalls?|feels? like|pretty sure|"
    r"hedged?)\b",
    re.IGNORECASE,
)
_CONTENT_APPROX = re.compile(
    r"(\b(approximately|approx|roughly|about|around|nearly|almost|circa|some|estimated|or so|"
    r"more or less|give or take)\b|~)",
    re.IGNORECASE,
)
_CONTENT_REPORTED = re.compile(
    r"\b(told|tells|said|says|say|according|claims?|claimed|reportedly|reported|heard|rumou?r\w*|"
    r"stated|states|mentioned|relayed)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Cues:
    hedged: bool
    approximate: bool
    reported: bool

    @property
    def any(self) -> bool:
        return self.hedged or self.approximate or self.reported


def uncertainty_cues(text: str) -> Cues:
    """Which kinds of uncertainty a piece of text carries (epistemic, approximate, reported)."""
    return Cues(
        caseless.search(HEDGE_CUES, text),
        caseless.search(APPROX_CUES, text),
        caseless.search(REPORTED_CUES, text),
    )


def check_uncertainty(unit: CandidateUnit) -> None:
    cues = uncertainty_cues(unit.span.quote)
    if not cues.any or (unit.memory_type in OBSERVATION_TYPES and _quotes_whole(unit)):
        return
    if (cues.hedged or cues.approximate) and not unit.uncertainty.hedges:
        raise _Reject(
            Code.UNCERTAINTY_DROPPED,
            "the quote is hedged but uncertainty.hedges is empty",
            "uncertainty.hedges",
        )
    if cues.reported and unit.uncertainty.reported_by is None and not cues.hedged:
        raise _Reject(
            Code.UNCERTAINTY_DROPPED,
            "the quote is reported speech but uncertainty.reported_by is empty",
            "uncertainty.reported_by",
        )
    missing = [
        name
        for name, present, pattern in (
            ("hedge", cues.hedged, _CONTENT_HEDGE),
            ("approximation", cues.approximate, _CONTENT_APPROX),
            ("attribution", cues.reported, _CONTENT_REPORTED),
        )
        if present and not caseless.search(pattern, unit.content)
    ]
    if missing:
        raise _Reject(
            Code.UNCERTAINTY_DROPPED,
            "the content states as plain fact what the quote qualifies "
            f"({', '.join(missing)} dropped)",
            "content",
        )


def _quotes_whole(unit: CandidateUnit) -> bool:
    """An event's content is its template over the whole quote (:mod:`extractor.proposal.events`),
    so it keeps every hedge of the quote."""
    return unit.span.quote in unit.content


# --- Rule 9: the content says what the quote says ----------------------------------------------


class _Context:
    """The conversation as the faithfulness check reads it, prefixes computed once; the
    speakers' names may be used too ("Tool search returned ...")."""

    def __init__(self, conversation: Conversation) -> None:
        self.index = {m.id: i for i, m in enumerate(conversation.messages)}
        names = [m.name for m in conversation.messages if m.name]
        names += [_dated(m.timestamp) for m in conversation.messages if m.timestamp]
        ranges = [quotable_ranges(len(m.text), m.placeholder_ranges) for m in conversation.messages]
        self.transcript = Transcript([m.text for m in conversation.messages], names, ranges)


def _date_words(value: str) -> str:
    """An ISO date as the words a content may write it in ("2024-04-29 April Monday")."""
    bounds = interval(value)
    if bounds is None:
        return value
    start, end = bounds
    return f"{value} {start:%A %B %d %Y} {end:%A %B %d %Y}"


def _dated(moment: datetime) -> str:
    """A message time in the words a content may resolve a relative date to."""
    return f"{moment.isoformat()} {moment:%A %B %d %Y %H %M}"


def check_content(unit: CandidateUnit, message: Message, start: int, context: _Context) -> None:
    """The content must be faithful to its quote (:mod:`extractor.content.faithfulness`):
    polarity, hedges and reporters of the quote's sentence kept, no number, name or clause the
    source does not hold."""
    if unit.memory_type in OBSERVATION_TYPES and _quotes_whole(unit):
        return  # an event's content is the system's template over its quote: its words, exactly
    i = context.index[message.id]
    source = context.transcript.source(i, start, start + len(unit.span.quote))
    dates = [d for d in (unit.temporal.valid_from, unit.temporal.valid_to) if d]
    if dates:  # checked against the message time by check_time (TEMPORAL_MISRESOLVED)
        source = widen(source, [_date_words(d) for d in dates])
    finding = check_faithful(unit.content, source, unit.uncertainty.reported_by)
    if finding is not None:
        raise _Reject(Code(finding.code), finding.message, "content")


# --- Rule 5: time ---------------------------------------------------------------------------


def check_time(unit: CandidateUnit, message: Message) -> None:
    t = unit.temporal
    for name in ("valid_from", "valid_to"):
        value = getattr(t, name)
        if value is not None and interval(value) is None:
            raise _Reject(
                Code.TEMPORAL_INVALID, f"{value!r} is not an ISO 8601 date", f"temporal.{name}"
            )
    if t.valid_from and t.valid_to and not ordered(t.valid_from, t.valid_to):
        raise _Reject(Code.TEMPORAL_INVALID, "valid_from is after valid_to", "temporal.valid_from")
    if not t.expression or (t.valid_from is None and t.valid_to is None):
        return
    absolute = resolve(t.expression, None)
    anchored = resolve(t.expression, message.timestamp) if message.timestamp else None
    if absolute is None and message.timestamp is None and anchored is None:
        if _relative_words(t.expression):
            raise _Reject(
                Code.TEMPORAL_UNANCHORED,
                f"{t.expression!r} is relative and the message has no timestamp "
                "to resolve it against",
                "temporal.valid_from",
            )
        return
    expected = anchored or absolute
    if expected is None:
        return
    for name in ("valid_from", "valid_to"):
        got, want = getattr(t, name), getattr(expected, name)
        if got is not None and want is not None and got[: len(want)] != want:
            raise _Reject(
                Code.TEMPORAL_MISRESOLVED,
                f"{t.expression!r} resolves to {name}={want} against the message time, not {got}",
                f"temporal.{name}",
            )


_RELATIVE = re.compile(
    r"\b(yesterday|today|tomorrow|tonight|ago|last|next|this|since|recently|week|month|year)\b",
    re.IGNORECASE,
)


def _relative_words(expression: str) -> bool:
    return caseless.search(_RELATIVE, expression) and not re.search(r"\b\d{4}\b", expression)


# --- Rule 7 and the driver ------------------------------------------------------------------


def _raw_candidates(raw: Any) -> list[Any]:
    if isinstance(raw, ExtractionOutput):
        return [c.model_dump(mode="json", exclude_none=True) for c in raw.candidates]
    if isinstance(raw, str | bytes):
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ExtractionOutputError(
                f"extraction output is not JSON: {exc}", raw_output=str(raw)[:2000]
            ) from None
    if isinstance(raw, list):
        return raw
    if not isinstance(raw, Mapping) or not isinstance(raw.get("candidates"), list):
        raise ExtractionOutputError("extraction output must be an object with a 'candidates' list")
    return list(raw["candidates"])


def validate_extraction(
    raw: Any, conversation: Conversation, options: ValidationOptions | None = None
) -> ValidationReport:
    """Validate an extraction against its conversation. Raises only when the output is not an
    extraction at all (:class:`~extractor.errors.ExtractionOutputError`)."""
    opts = options or ValidationOptions()
    proposal = expand(
        _raw_candidates(raw),
        conversation,
        allow_system_sources=opts.allow_system_sources,
        observing_tools=opts.observing,
    )  # what the system builds around what the model proposed (extractor.proposal.expand)
    report = ValidationReport(conversation_id=conversation.id)
    units: dict[str, tuple[int, CandidateUnit, Any]] = {}
    roles: dict[str, Role] = {}
    identities: dict[tuple[Any, ...], str] = {}
    context = _Context(conversation)
    aliases: dict[str, str] = {}
    for position, item in enumerate(proposal.items):
        index, original = proposal.sources[position], proposal.originals[position]
        cid = (
            item.get("id")
            if isinstance(item, Mapping) and isinstance(item.get("id"), str)
            else None
        )
        try:
            if position >= opts.max_candidates:
                raise _Reject(
                    Code.CANDIDATE_LIMIT_EXCEEDED, f"more than {opts.max_candidates} candidates"
                )
            if nested_deeper_than(item, MAX_WRITABLE_DEPTH):
                raise _Reject(
                    Code.SCHEMA_INVALID, f"nested more than {MAX_WRITABLE_DEPTH} levels deep"
                )
            unit, message, correction = _check_one(item, conversation, opts, context)
            if unit.id in units:
                raise _Reject(Code.DUPLICATE_ID, f"id {unit.id!r} is used twice", "id")
            identity = _identity(unit, correction)
            if identity in identities and position in proposal.built:
                aliases[unit.id] = identities[identity]  # the model listed this event itself
                continue
            if identity in identities:
                raise _Reject(
                    Code.DUPLICATE_ID,
                    f"same span, type and content as candidate {identities[identity]!r}",
                    "id",
                )
        except _Reject as r:
            code, reason = proposal.reason(position, r.code, r.message)
            report.rejections.append(
                Rejection(
                    index=index,
                    candidate_id=cid,
                    code=Code(code),
                    field=proposal.field_name(position, r.field),
                    message=reason,
                    raw=original if r.code is Code.CANDIDATE_LIMIT_EXCEEDED else redacted(original),
                )
            )
            continue
        if correction is not None:
            report.corrections.append(correction)
            unit = unit.model_copy(
                update={
                    "span": unit.span.model_copy(
                        update={"start": correction.start, "end": correction.end}
                    )
                }
            )
        fixed = content_correction(original, unit)
        if fixed is not None:
            report.content_corrections.append(fixed)
        units[unit.id] = (index, unit, original)
        roles[unit.id] = message.role
        identities[identity] = unit.id
    rejected_ids = {r.candidate_id for r in report.rejections if r.candidate_id}
    _follow(aliases, units)
    _check_structure(units, roles, rejected_ids, report)
    report.accepted = [u for _, u, _ in sorted(units.values(), key=lambda t: t[0])]
    report.rejections.sort(key=lambda r: r.index)
    accepted_ids = {u.id for u in report.accepted}
    report.corrections = [c for c in report.corrections if c.candidate_id in accepted_ids]
    report.content_corrections = [
        c for c in report.content_corrections if c.candidate_id in accepted_ids
    ]
    return report


def _follow(aliases: Mapping[str, str], units: dict[str, tuple[int, CandidateUnit, Any]]) -> None:
    """Parents that name a built event equal to one the model listed name the model's."""
    for cid, (index, unit, raw) in list(units.items()):
        if aliases and any(p in aliases for p in unit.parent_ids):
            parents = list(dict.fromkeys(aliases.get(p, p) for p in unit.parent_ids))
            units[cid] = (index, unit.model_copy(update={"parent_ids": parents}), raw)


def _identity(unit: CandidateUnit, correction: SpanCorrection | None) -> tuple[Any, ...]:
    """What a candidate's memory id is derived from: the same twice would be one memory with
    two records (and a child of the copy its own parent)."""
    start = correction.start if correction else unit.span.start
    return (unit.span.message_id, start, start + len(unit.span.quote), unit.memory_type,
            unit.content)  # fmt: skip


def _check_one(
    item: Any, conversation: Conversation, opts: ValidationOptions, context: _Context
) -> tuple[CandidateUnit, Message, SpanCorrection | None]:
    if isinstance(item, Mapping):
        check_no_secret(item)
        span = item.get("span")
        quote = span.get("quote", "") if isinstance(span, Mapping) else ""
        quote = quote if isinstance(quote, str) else ""
        check_no_certification(_without_template(item, quote, conversation), quote)
    unit = parse_unit(item)
    message, correction = ground_span(unit, conversation, opts)
    unit = with_event_content(unit, message, conversation)  # an event holds exactly its words
    check_origin(unit, message)
    unit = with_tool_origin(unit, message, conversation, opts)
    check_uncertainty(unit)
    check_time(unit, message)
    check_content(unit, message, correction.start if correction else unit.span.start, context)
    return unit, message, correction


def _without_template(
    item: Mapping[str, Any], quote: str, conversation: Conversation
) -> Mapping[str, Any]:
    """``item`` without its content when that content is its event template: the template names
    the speaker ("Tool verified_search returned: ..."), which is the system's wording, not a
    certification the model made."""
    content, span = item.get("content"), item.get("span")
    memory_type = item.get("memory_type")
    if not isinstance(content, str) or not isinstance(span, Mapping) or not quote:
        return item
    if memory_type not in {t.value for t in OBSERVATION_TYPES}:
        return item
    mid = span.get("message_id")
    message = conversation.message(mid) if isinstance(mid, str) else None
    if message is None or content != event_content(
        MemoryType(memory_type), quote, message, conversation
    ):
        return item
    return {k: v for k, v in item.items() if k != "content"}


def _check_structure(
    units: dict[str, tuple[int, CandidateUnit, Any]],
    roles: dict[str, Role],
    rejected_ids: set[str],
    report: ValidationReport,
) -> None:
    """Parents must exist and be accepted, without cycles. Rejections cascade to children."""
    on_cycle = [cid for cid, (_, unit, _) in units.items() if _on_cycle(unit, units)]
    for cid in on_cycle:
        index, _, raw = units.pop(cid)
        message = f"{cid!r} is its own ancestor"
        report.rejections.append(
            Rejection(index=index, candidate_id=cid, code=Code.PARENT_CYCLE, field="parent_ids",
                      message=message, raw=raw)
        )  # fmt: skip
        rejected_ids.add(cid)
    changed = True
    while changed:
        changed = False
        for cid, (index, unit, raw) in list(units.items()):
            problem = _structure_problem(unit, units, rejected_ids)
            if problem is not None:
                code, message = problem
                report.rejections.append(
                    Rejection(
                        index=index,
                        candidate_id=cid,
                        code=code,
                        field="parent_ids",
                        message=message,
                        raw=raw,
                    )
                )
                rejected_ids.add(cid)
                del units[cid]
                changed = True


def _structure_problem(
    unit: CandidateUnit,
    units: Mapping[str, tuple[int, CandidateUnit, Any]],
    rejected_ids: set[str],
) -> tuple[Code, str] | None:
    for parent in unit.parent_ids:
        if parent in rejected_ids:
            return Code.PARENT_REJECTED, f"parent {parent!r} was rejected"
        if parent not in units:
            return Code.PARENT_UNKNOWN, f"parent {parent!r} is not a candidate in this output"
    return None


def _on_cycle(unit: CandidateUnit, units: Mapping[str, tuple[int, CandidateUnit, Any]]) -> bool:
    seen: set[str] = set()
    stack = list(unit.parent_ids)
    while stack:
        node = stack.pop()
        if node == unit.id:
            return True
        if node in seen or node not in units:
            continue
        seen.add(node)
        stack.extend(units[node][1].parent_ids)
    return False


__all__ = [
    "Code",
    "Rejection",
    "SpanCorrection",
    "TemporalKind",
    "ValidationOptions",
    "ValidationReport",
    "uncertainty_cues",
    "validate_extraction",
]
