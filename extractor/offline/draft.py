"""Drafts of candidate units, and the fields every rule fills the same way.

A :class:`Draft` is a candidate before it has an id. Rules return *groups* of drafts -- an
assertion event and the proposition derived from it -- so the assembler can number them, link
children to parents, and drop a whole group (never half of one) when a limit is reached.

The helpers here make a draft pass the validation gate by construction: uncertainty is read
from the quote with the gate's own cue patterns, time expressions are resolved with the gate's
own resolver, and a hedge the rewrite could have lost is put back into the content.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any

from .. import caseless
from ..extraction import Entity, TemporalScope, Uncertainty
from ..temporal import find_expressions, interval, resolve
from ..validation import (  # the gate's own patterns, so a draft can never disagree with them
    _CONTENT_APPROX,
    _CONTENT_HEDGE,
    _CONTENT_REPORTED,
    APPROX_CUES,
    HEDGE_CUES,
    REPORTED_CUES,
)
from ..vocab import CandidateKind, Capability, MemoryType, Origin, TemporalKind
from .english import PAST_IRREGULAR, PRESENT_ED
from .text import Piece


@dataclass
class Draft:
    """A candidate without an id; ``parent`` is the index of its parent within its group."""

    message_id: str
    piece: Piece
    kind: CandidateKind
    memory_type: MemoryType
    content: str
    origin: Origin
    temporal: TemporalScope = field(default_factory=TemporalScope)
    entities: list[Entity] = field(default_factory=list)
    requested_uses: list[Capability] = field(default_factory=list)
    uncertainty: Uncertainty = field(default_factory=Uncertainty)
    parent: int | None = None


@dataclass
class Group:
    """Drafts that stand or fall together; ``priority`` 0 is kept first under a limit."""

    drafts: list[Draft]
    priority: int
    order: tuple[int, int] = (0, 0)


# --- Uncertainty --------------------------------------------------------------------------------

_REPORTER = re.compile(
    r"(?P<who>\b(?i:my|our|his|her|their|the|a|an)\s+(?:[\w'-]+\s+){0,2}?[\w'-]+|"
    r"\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?(?:\s+(?:from|at|in)\s+[A-Z][\w&]*)?)\s+(?:\w+\s+)?"
    r"(?:told|tells|said|says|claims?|claimed|mentioned|reported|heard)\b"
)
_ACCORDING = re.compile(r"\baccording to\s+(?P<who>[^,.;:!?]+)", re.IGNORECASE)
_PRONOUN_REPORTER = re.compile(
    r"\b(?P<who>he|she|they|someone|somebody|people)\s+(?:told|said|says|claims?|claimed)\b",
    re.IGNORECASE,
)


def hedges_in(quote: str) -> list[str]:
    """Hedge and approximation words exactly as they appear in the quote, in order."""
    found: list[tuple[int, str]] = [(a, quote[a:b]) for a, b in _spans(HEDGE_CUES, quote)]
    for a, b in _spans(APPROX_CUES, quote):
        word = re.sub(r"[\s$€£¥~\d.,]+$", "", quote[a:b]).strip() or "~"
        found.append((a, word))
    seen: set[str] = set()
    out: list[str] = []
    for _, word in sorted(found):
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


def _spans(pattern: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    """Where ``pattern`` matches ``text`` (as :func:`extractor.caseless.search` finds them)."""
    fast = caseless.twin(pattern) if text.isascii() else None
    matches = fast.finditer(text.lower()) if fast else pattern.finditer(text)
    return [m.span() for m in matches]


def reporter_in(quote: str, default: str = "an unnamed source") -> str | None:
    """Who the quote says said it, or ``None`` when the quote is not reported speech."""
    if not caseless.search(REPORTED_CUES, quote):
        return None
    for pattern in (_ACCORDING, _REPORTER, _PRONOUN_REPORTER):
        m = pattern.search(quote)
        if m:
            who = " ".join(m.group("who").split())
            return re.sub(r"^(?:[Mm]y)\b", "User's", re.sub(r"^(?:[Oo]ur)\b", "User's", who))
    return default


#: A quote is read for hedges, reporters and time by its assertion event and again by its claim,
#: and repeated lines repeat it: the readings of short quotes are remembered, a bounded number.
_MEMO_SIZE = 4096
_MEMO_MAX_CHARS = 1000


def uncertainty_for(quote: str, default_reporter: str = "an unnamed source") -> Uncertainty:
    if len(quote) > _MEMO_MAX_CHARS:
        hedges, reporter = _uncertainty_of(quote, default_reporter)
    else:
        hedges, reporter = _remembered_uncertainty(quote, default_reporter)
    return Uncertainty(hedges=list(hedges), reported_by=reporter)


def _uncertainty_of(quote: str, default_reporter: str) -> tuple[tuple[str, ...], str | None]:
    return tuple(hedges_in(quote)), reporter_in(quote, default_reporter)


_remembered_uncertainty = lru_cache(maxsize=_MEMO_SIZE)(_uncertainty_of)


def keep_uncertainty(quote: str, content: str) -> str:
    """Put back into ``content`` any qualification of the quote that a rewrite dropped."""
    cues = (
        (HEDGE_CUES, _CONTENT_HEDGE, "hedged"),
        (APPROX_CUES, _CONTENT_APPROX, "approximately"),
        (REPORTED_CUES, _CONTENT_REPORTED, "reported"),
    )
    missing = [
        word
        for cue, kept, word in cues
        if caseless.search(cue, quote) and not caseless.search(kept, content)
    ]
    if not missing:
        return content
    # the note joins the last sentence, whatever script ends it ("... 我住在北京。" too): after
    # a sentence stop it would be a sentence of its own that claims nothing its quote says
    body = content.rstrip(".!?…。！？｡ ")
    return f"{body} ({', '.join(missing)})."


# --- Time ---------------------------------------------------------------------------------------

_PAST_HINT = re.compile(
    r"\b(?:used to|once|formerly|previously|back when|when i was|was|were|had|did|went|grew up|"
    r"\w+ed)\b",
    re.IGNORECASE,
)
#: "going to" is a plan only before a verb ("I'm going to sell it"); before a place it is the
#: motion itself ("I love going to the beach", a habit in the present).
_FUTURE_HINT = re.compile(
    r"\b(?:will|'ll|going to(?!\s+(?:the|a|an|my|your|his|her|our|their|this|that|these|those|"
    r"some|school|work|church|bed|college|class|town|parties|concerts|shows|games|"
    r"\w+'s)\b)|gonna|plan(?:ning)? to|about to|"
    # another's wish is a present state of theirs ("now they want to change it"), not a plan
    r"(?<!\bthey\s)(?<!\byou\s)(?<!\bpeople\s)(?:intend|hope|want)\s+to|"
    r"next(?!\s+(?:to|door)\b)|soon|tomorrow|upcoming|"
    # a tentative plan ("I might go to the beach", "we may visit Rome")
    r"(?:might|may)\s+(?:\w+ly\s+|also\s+|just\s+)?(?:go|visit|travel|move|watch|try|take|buy|"
    r"start|join|see|head|come|get|apply|sign\s+up|switch|quit|retire))\b",
    re.IGNORECASE,
)


def temporal_for(text: str, anchor: datetime | None) -> TemporalScope:
    """The first time expression in ``text``, resolved as the gate resolves it."""
    if len(text) > _MEMO_MAX_CHARS:
        return TemporalScope(**_temporal_of(text, anchor))
    # repr tells apart anchors that are equal as instants but not as local times (time zones)
    return TemporalScope(**_remembered_temporal(text, anchor, repr(anchor)))


def _temporal_of(text: str, anchor: datetime | None, _key: str = "") -> dict[str, Any]:
    found = find_expressions(text, anchor)
    guessed = _tense(text)
    if found and guessed is not TemporalKind.FUTURE and caseless.search(_PLANNED_MOTION, text):
        guessed = TemporalKind.FUTURE
    if not found:
        recent = _RECENT.search(text) if anchor is not None else None
        if recent and guessed is TemporalKind.POINT_IN_TIME and anchor is not None:
            # "I just had a big life change", "I recently started a course": it happened by
            # the time the message was written, and that day is known
            return {"expression": recent.group(1), "kind": guessed,
                    "valid_to": anchor.date().isoformat()}  # fmt: skip
        return {"kind": guessed}
    first = found[0]
    res = first.resolution
    if res is None:
        return {"expression": first.expression, "kind": guessed}
    if guessed is TemporalKind.FUTURE and res.valid_to and anchor and _before(res.valid_to, anchor):
        # "on Friday" said of a plan: the resolver reads a bare weekday as the last one, which
        # contradicts the sentence; keep the expression, claim no dates
        return {"expression": first.expression, "kind": TemporalKind.FUTURE}
    kind = res.kind if res.kind is not TemporalKind.UNKNOWN else guessed
    if kind in _BOUNDED and is_past_event(text):
        # an event happened at a time ("moved to Lisbon in 2021"): POINT_IN_TIME, a fact about
        # that time that stays true; PAST is for a state that held then ("lived in Oslo")
        kind = TemporalKind.POINT_IN_TIME
    return {"expression": first.expression, "kind": kind, "valid_from": res.valid_from,
            "valid_to": res.valid_to}  # fmt: skip


_BOUNDED = (TemporalKind.PAST, TemporalKind.POINT_IN_TIME)
#: An event told as just past ("I just had", "we recently moved"): bounded by the message time.
_RECENT = re.compile(r"\b(?:i|we)(?:'ve|\s+have)?\s+(just|recently)\b", re.IGNORECASE)


def _before(value: str, anchor: datetime) -> bool:
    span = interval(value)
    return span is not None and span[1] < anchor.replace(tzinfo=None)


_remembered_temporal = lru_cache(maxsize=_MEMO_SIZE)(_temporal_of)


def _tense(text: str) -> TemporalKind:
    low = text.lower()
    if re.search(r"\bused to\b", low) or _PAST_HABIT.search(low) or _PAST_ROLE.search(low):
        return TemporalKind.PAST
    if _HABIT.search(low):
        return TemporalKind.CURRENT  # "sometimes I will go to record stores": a habit
    if caseless.search(_FUTURE_HINT, _main_clause(low)):
        return TemporalKind.FUTURE
    head = _HEAD.search(low)
    perfect = _PERFECT.search(low)
    if perfect and (head is None or perfect.start() <= head.start()):
        # "I've been into dancing since I was a kid": a state that still holds, whatever the
        # clause after "since" says of then
        return TemporalKind.CURRENT
    if head and _is_past_state(low, head):
        return TemporalKind.PAST
    if is_past_event(text):
        return TemporalKind.POINT_IN_TIME
    return TemporalKind.CURRENT


#: What the speaker read, heard or knows is not their plan: a "will" in it ("I've read about
#: how female spiders will often devour the male") tells of the world, not of the speaker.
_REPORTED_CLAUSE = re.compile(
    r"\b(?:read|heard|learned|learnt|seen|saw|noticed|know|knew|found\s+out|realized|realised|"
    r"told\s+me|said)\s+(?:about\s+)?(?:how|that|what|why|whether)\b"
)


def _main_clause(low: str) -> str:
    """``low`` up to a reported clause, if it has one."""
    m = _REPORTED_CLAUSE.search(low)
    return low if m is None else low[: m.start()]


#: A present perfect ("I've been into dancing", "we have lived here for years", "I've read
#: about it"): what began then and holds now, not a state that ended.
_PERFECT = re.compile(
    r"\b(?:i|we)(?:'ve|’ve|\s+have)\s+(?:\w+ly\s+|always\s+|also\s+|ever\s+|never\s+)?"
    r"(?:been|had|read|known|seen|heard|done|made|met|grown|kept|found|taught|thought|felt|loved|"
    r"liked|enjoyed|lived|worked|wanted|owned|used|played|studied)\b"
)


_HABIT = re.compile(r"\b(?:sometimes|usually|often|always)\s+(?:i|we)\s+(?:will|'ll|would)\b")
#: "would" telling a habit that held then ("When I was a kid I'd play Zelda for hours", "we
#: would go camping every summer"): PAST, like "used to". A condition ("I'd play if I could")
#: is a hypothetical, read elsewhere.
_PAST_HABIT = re.compile(
    r"\b(?:i|we)(?:'d|\s+would)\s+(?:often\s+|always\s+|usually\s+|just\s+)?\w+\b(?!.*\bif\b)"
    r"(?=.*\b(?:for\s+hours|all\s+day(?:\s+long)?|every\s+(?:day|night|week|weekend|summer|"
    r"winter|morning|evening|sunday|saturday)|all\s+the\s+time|as\s+a\s+(?:kid|child|boy|girl|"
    r"teenager|teen)|when\s+(?:i|we)\s+(?:was|were)|growing\s+up|back\s+then|in\s+those\s+days)\b)"
)
#: A role held then ("I played third base and outfield.", "I played for the Tigers", "I served
#: as treasurer"): a past state, PAST, not an event.
_PAST_ROLE = re.compile(
    r"\b(?:i|we)\s+(?:\w+ly\s+|also\s+)?(?:played\s+(?:as\s+(?:an?\s+)?)?(?:(?:first|second|third)\s+"
    r"base|outfield|shortstop|catcher|pitcher|quarterback|linebacker|goalie|goalkeeper|defen[cs]e|"
    r"offen[cs]e|midfield|striker|forward|point\s+guard|center\s+field|left\s+field|right\s+field)|"
    r"played\s+(?:for|on)\s+(?:a|an|the|my|our)\s+(?:\w+\s+){0,2}(?:team|club|band|orchestra|league)|"
    r"served\s+as|worked\s+as|was\s+(?:the\s+)?(?:captain|president|treasurer|secretary|"
    r"chair(?:man|woman)?|member)\s+of)\b"
)
_HEAD = re.compile(
    r"\b(?:i|my [\"“'‘]?\w+[\"”'’]?|we)\s+(?:\w+ly\s+|just\s+|also\s+|even\s+|already\s+)?"
    r"(\w+(?:'\w+)?)"
)
#: A denied past ("My employer didn't report the work", "I didn't have a car"): an event
#: that did not happen is a fact about then (POINT_IN_TIME), a state that did not hold is PAST.
_DENIED = re.compile(r"(?:didn'?t|did\s+not)\s+(?:\w+ly\s+|even\s+|ever\s+)?(\w+)")
_STATE_VERBS = frozenset(
    re.findall(
        r"\w+",
        "have like love know want live work own enjoy hate use need care think believe mind "
        "understand expect feel seem belong",
    )
)
#: Past tense that describes a state which held then ("I lived in Berlin", "I had a dog", "I
#: was a teacher"): PAST, no longer so. Any other past tense tells an event ("I moved to
#: Lisbon", "I lost a friend", "I was born in 1990"): POINT_IN_TIME, a fact about when it
#: happened that stays true.
_PAST_STATE = frozenset(
    re.findall(
        r"\w+",
        "was were had lived worked owned loved liked hated knew wanted enjoyed used "
        # a belief held then ("I thought I was living a clean life")
        "thought believed assumed figured supposed",
    )
)
_WAS_ADVERB = r"(?:(?:\w+ly|also|just|still|even|once|so|very|really)\s+)?"
_EVENT_AFTER_WAS = re.compile(
    r"\b(?:was|were)\s+" + _WAS_ADVERB + r"(?:born|married|divorced|diagnosed|hired|fired|promoted|"
    r"adopted|raised|engaged|\w+ing|"
    # struck by something, once ("I was deeply impressed by Meursault"): an experience
    r"impressed|amazed|moved|touched|surprised|shocked|stunned|astonished|inspired|fascinated|"
    r"captivated|thrilled|delighted|overwhelmed|awed|blown\s+away|disappointed|devastated)\b"
)
#: A liking or a good time had then ("I loved Gulangyu Island", "I had a great time kayaking",
#: "we had a great walk"): an experience, which stays true; a liking that held for a period
#: ("I loved soccer as a kid", "I loved my job back then") is a past state.
_EXPERIENCE = re.compile(
    r"\b(?:loved|liked|enjoyed|hated|disliked|adored)\b|"
    r"\bhad\s+(?:a|an|such\s+a|the\s+best|the\s+most|so\s+much|lots\s+of|a\s+lot\s+of)\s+"
    r"(?:[\w-]+\s+){0,3}?(?:time|blast|ball|fun|day|night|evening|weekend|trip|holiday|vacation|"
    r"experience|walk|hike|picnic|party|meal|dinner|lunch|conversation|chat|game|match|race|"
    r"accident|baby|surgery|operation|interview|date|fight|argument|dream|nightmare)\b|"
    r"\bhad\s+(?:so\s+much\s+|great\s+|some\s+)?fun\b"
)
_PERIOD = re.compile(
    r"\b(?:as\s+an?\s+(?:kid|child|boy|girl|teen(?:ager)?)|when\s+(?:i|we)\s+(?:was|were)|"
    r"growing\s+up|back\s+then|in\s+those\s+days|in\s+(?:high\s+)?school|in\s+college|"
    r"for\s+(?:years|decades|a\s+long\s+time)|all\s+my\s+life|at\s+the\s+time|before)\b"
)


def _denied(low: str, head: re.Match[str]) -> str | None:
    """The verb a denied past denies ("didn't report" -> "report"), or ``None``."""
    m = _DENIED.match(low, head.start(1))
    return None if m is None else m.group(1)


def _is_past_state(low: str, head: re.Match[str]) -> bool:
    denied = _denied(low, head)
    if denied is not None:
        return denied in _STATE_VERBS
    verb = head.group(1)
    if verb not in _PAST_STATE or low[head.start() : head.start(1)].endswith("just "):
        return False  # "I just had surgery": an event, just now
    if _is_experience(low, head):
        return False
    return not _EVENT_AFTER_WAS.match(low, head.start(1))


def _is_experience(low: str, head: re.Match[str]) -> bool:
    return bool(_EXPERIENCE.match(low, head.start(1))) and not _PERIOD.search(low)


def is_past_event(text: str) -> bool:
    """A sentence that tells something that happened ("I moved to Lisbon in 2021")."""
    low = text.lower()
    head = _HEAD.search(low)
    if re.search(r"\bused to\b", low) or caseless.search(_FUTURE_HINT, _main_clause(low)):
        return False
    if head is None:
        return _done_to_speaker(low)
    verb = head.group(1)
    denied = _denied(low, head)
    if denied is not None:
        return denied not in _STATE_VERBS
    if verb in _PAST_STATE and _is_experience(low, head):
        return True
    if verb in ("was", "were"):
        return bool(_EVENT_AFTER_WAS.match(low, head.start(1))) and not re.match(
            r"(?:was|were)\s+" + _WAS_ADVERB + r"\w+ing\b", low[head.start(1) :]
        )
    past = (bool(_PAST_HINT.fullmatch(verb)) and verb not in PRESENT_ED) or verb in PAST_IRREGULAR
    just = low[head.start() : head.start(1)].endswith("just ")
    return past and (verb not in _PAST_STATE or just) and verb not in ("did", "once")


#: Something someone did to the speaker ("Janet at school punched me", "a boy asked me to the
#: dance", "someone embarrassed me in front of others"): an event, though not told of "I".
_DONE_TO_SPEAKER = re.compile(
    r"(?:so|and|but|well|oh|yes|yeah|no|today|yesterday)?[\s,]*(?:[\w'’-]+\s+){1,4}?(\w+)\s+"
    r"(?:me|us)\b"
)


def _done_to_speaker(low: str) -> bool:
    m = _DONE_TO_SPEAKER.match(low)
    if m is None:
        return False
    verb = m.group(1)
    past = (bool(re.fullmatch(r"\w+ed", verb)) and verb not in PRESENT_ED) or (
        verb in PAST_IRREGULAR
    )
    return past and verb not in _PAST_STATE and verb not in ("did", "was", "were")


#: Going somewhere at a stated time is a plan ("I'm going there on Friday", "We're flying out
#: next week"), whatever the resolver makes of a bare weekday.
_PLANNED_MOTION = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:\w+ly\s+)?(?:going|leaving|flying|driving|heading|"
    r"moving|traveling|travelling|coming|starting|visiting|meeting|seeing|having)\b",
    re.IGNORECASE,
)


def point_in_time(anchor: datetime | None) -> TemporalScope:
    """When a tool spoke: the message timestamp, if the transcript has one."""
    if anchor is None:
        return TemporalScope(kind=TemporalKind.UNKNOWN)
    stamp = anchor.isoformat()
    return TemporalScope(kind=TemporalKind.POINT_IN_TIME, valid_from=stamp, valid_to=stamp)


def dated(content: str, temporal: TemporalScope, anchor: datetime | None) -> str:
    """``content`` with a relative time expression replaced by the dates it resolves to.

    "User went bowling yesterday." said on 16 March 2022 is read later, when "yesterday" means
    another day: the memory says "User went bowling on 2022-03-15." Absolute expressions ("in
    2021", "on 5 March 2023") and expressions the resolver leaves unresolved stay as written.
    """
    expression = temporal.expression
    if not expression or anchor is None or temporal.valid_from is None:
        return content
    if resolve(expression, None) is not None:
        return content
    res = resolve(expression, anchor)
    at = re.search(rf"(?<!\w){re.escape(expression)}(?!\w)", content, re.IGNORECASE)
    if res is None or res.valid_from is None or at is None:
        return content
    start, end = res.valid_from, res.valid_to
    if expression.lower().startswith("since") or end is None:
        phrase = f"since {_readable(start)}"
    elif start == end:
        phrase = f"on {start}" if len(start) >= 10 else f"in {_readable(start)}"
    else:
        phrase = f"between {start} and {end}"
    # every mention of it ("Yesterday was crazy cool - ... on the big screen yesterday!")
    out: list[str] = []
    last = 0
    for m in re.finditer(rf"(?<!\w){re.escape(expression)}(?!\w)", content, re.IGNORECASE):
        said = phrase[:1].upper() + phrase[1:] if m.start() == 0 else phrase
        out += [content[last : m.start()], said]
        last = m.end()
    return "".join(out) + content[last:]


def _readable(value: str) -> str:
    """ "2024-05" as "May 2024"; a year or a date as written."""
    if len(value) == 7 and value[4] == "-":
        return f"{calendar.month_name[int(value[5:])]} {value[:4]}"
    return value
