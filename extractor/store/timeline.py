"""Supersession and conflict on a structural key (seed §12), as pure functions.

**Keys.** A versioned normalizer (:func:`claim_key`) reads a proposition's relation from its
content: ``(subject, relation, object, scope)`` for *functional* relations only -- where one
value holds at a time (where the user lives, works, who their manager is, their name, who an
organization's CEO is). Anything else gets no key and is never superseded or put in conflict by
another claim: an unrelated fact that merely mentions the same entity is never retired (the
Graphiti #1728 failure). A first-person claim ("User lives in ...") is keyed on the memory's
subject; without a known subject its identity is unresolved and it gets no key.

**Timeline.** Among the IN claims of one key, ordered by effective start (valid_from, else when
it was said), a claim is superseded by the earliest later claim with a different value and at
least its authority; it keeps its record and gets ``valid_to`` = the successor's start.
Authority: a claim held by an independent verification (3) > a user, tool, external or system
assertion (2) > model output or a derived claim (1). So model output never supersedes a user
assertion or a verified claim: a later, lower-authority different value is recorded as
CONFLICTS_WITH the claim it contradicts, and only the lower side is marked CONFLICTING. Two
different values with the same start cannot be ordered: both sides of equal authority are
marked CONFLICTING (the lower side only, otherwise). The result depends only on the set of
claims, not on the order they arrived in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

NORMALIZER_VERSION = "keys-2026.12.01.2"

_WORD = r"[A-Z][\w'’.&-]*"
_NAME = (r"(?P<obj>" + _WORD + r"(?:\s+(?:of\s+|de\s+|the\s+)?" + _WORD + r")*"
         r"(?:,\s+" + _WORD + r"(?:\s+" + _WORD + r")*)*)")  # fmt: skip
_FROM = r"(?:" + _WORD + r"(?:\s+" + _WORD + r")*(?:,\s+" + _WORD + r")*)"
_ORG = r"(?P<scope>" + _WORD + r"(?:\s+" + _WORD + r")*)"
_NOW = r"(?:\s+(?:just|recently|now))?"
_END = r"\s*(?:[.;!?]|$)"

#: (relation, pattern, about the user?) -- patterns match the system's third-person content.
#: The first pattern that matches gives the key; relations not listed are not functional.
_PATTERNS: tuple[tuple[str, re.Pattern[str], bool], ...] = (
    ("lives_in", re.compile(
        r"^User" + _NOW + r"\s+(?:lives|is living|has moved|moved|relocated|has relocated|is "
        r"based|resides|is now based|now lives|is settled)\s+(?:in|to)\s+" + _NAME), True),
    ("lives_in", re.compile(
        r"^User" + _NOW + r"\s+(?:moved|relocated|has moved|has relocated)\s+from\s+" + _FROM
        + r"\s+to\s+" + _NAME), True),
    ("lives_in", re.compile(r"^User's\s+(?:new\s+)?home\s+is\s+in\s+" + _NAME), True),
    ("works_at", re.compile(
        r"^User" + _NOW + r"\s+(?:works|is working|started working|now works)"
        r"(?:\s+as\s+an?\s+[a-z][\w -]*?)?\s+(?:at|for)\s+" + _NAME), True),
    ("works_at", re.compile(
        r"^User\s+is\s+(?:employed|working)\s+(?:at|by|for)\s+" + _NAME), True),
    ("works_at", re.compile(r"^User\s+is\s+an?\s+[a-z][\w -]*?\s+at\s+" + _NAME), True),
    ("works_at", re.compile(r"^User" + _NOW + r"\s+joined\s+" + _NAME), True),
    ("manager", re.compile(
        r"^User's\s+(?:new\s+|current\s+)?(?:manager|boss|supervisor|line manager)\s+is\s+"
        + _NAME), True),
    ("manager", re.compile(r"^User" + _NOW + r"\s+reports\s+to\s+" + _NAME), True),
    ("manager", re.compile(r"^" + _NAME + r"\s+is\s+User's\s+(?:new\s+)?manager\b"), True),
    ("partner", re.compile(
        r"^User's\s+(?:wife|husband|spouse|partner|girlfriend|boyfriend|fiancée?)\s+is\s+"
        + _NAME), True),
    ("name", re.compile(r"^User's\s+name\s+is\s+" + _NAME), True),
    ("name", re.compile(r"^User\s+is\s+called\s+" + _NAME), True),
    ("email", re.compile(
        r"^User's\s+(?:e-?mail|e-?mail address)\s+is\s+(?P<obj>[^\s@]+@[^\s@]+?)\.?\s*$"), True),
    ("phone", re.compile(
        r"^User's\s+(?:phone|phone number|mobile|mobile number|cell number)\s+is\s+"
        r"(?P<obj>\+?\d[\d\s().-]{3,}\d)" + _END), True),
    ("birthday", re.compile(
        r"^User's\s+(?:birthday|date of birth)\s+is\s+(?P<obj>[^.;!?]+?)" + _END), True),
    ("age", re.compile(r"^User\s+is\s+(?P<obj>\d{1,3})\s+years?\s+old\b"), True),
    ("favorite", re.compile(
        r"^User's\s+favou?rite\s+(?P<scope>[a-z][a-z ]{0,30}?)\s+is\s+(?P<obj>[^.;!?]+?)"
        + _END), True),
    ("ceo_of", re.compile(
        r"^" + _NAME + r"\s+(?:is|was|became|has become)\s+(?:now\s+)?(?:the\s+)?CEO\s+(?:of|at)"
        r"\s+" + _ORG), False),
    ("ceo_of", re.compile(
        r"^" + _ORG + r"'s\s+(?:new\s+)?CEO\s+is\s+(?:now\s+)?" + _NAME), False),
)  # fmt: skip

#: Relations whose value never changes (a birthday): a different value is a conflict, never a
#: supersession.
IMMUTABLE = frozenset({"birthday"})

#: Words that make a statement something other than the current value -- negated, past,
#: future, hedged ("User no longer lives in Paris", "User might move to Oslo"): no key, so it
#: neither supersedes nor is superseded (case-sensitive: "Will" and "May" are names and months).
_NOT_ASSERTED = re.compile(
    r"\b(?:no longer|not|never|used to|formerly|previously|might|may|could|would|will|"
    r"plans? to|wants? to|hopes? to|thinks?|believes?|guess(?:es)?|probably|maybe|perhaps|"
    r"possibly|considering|about to)\b|n't\b"
)


@dataclass(frozen=True)
class ClaimKey:
    subject: str
    relation: str
    object: str
    scope: str | None


def claim_key(content: str, subject: str | None, *, proposition: bool) -> ClaimKey | None:
    """The structural key of a proposition, or ``None`` (not functional, not a statement of the
    current value, or not resolvable)."""
    if not proposition:
        return None
    text = content.strip()
    if _NOT_ASSERTED.search(text):
        return None
    for relation, pattern, about_user in _PATTERNS:
        m = pattern.match(text)
        if m is None:
            continue
        value = _norm(m.group("obj"))
        scope = m.groupdict().get("scope")
        if about_user:
            if subject is None:
                return None
            return ClaimKey(subject, relation, value, None if scope is None else _norm(scope))
        org = _norm(m.group("scope"))
        return ClaimKey(f"org:{org}", relation, value, org)
    return None


def _norm(text: str) -> str:
    value = " ".join(text.replace("’", "'").split()).strip(" .'").casefold()
    return value.removeprefix("the ")


def same_value(a: str, b: str) -> bool | None:
    """``True`` for one value, ``False`` for two; ``None`` when unsure: one names the other more
    precisely ("berlin" and "berlin, germany") -- the same place, or another of that name."""
    if a == b:
        return True
    pa, pb = [p.strip() for p in a.split(",")], [p.strip() for p in b.split(",")]
    short, long_ = sorted((pa, pb), key=len)
    return None if long_[: len(short)] == short else False


@dataclass(frozen=True)
class Keyed:
    """A claim on one key, as the timeline needs it."""

    claim_id: str
    value: str
    start: str
    authority: int
    timed: bool = True  # its start was stated or observed, not only when the store learned it
    mutable: bool = True  # the relation's value can change (not a birthday)


@dataclass(frozen=True)
class Resolution:
    supersessions: tuple[tuple[str, str, str], ...]  # (old, new, effective start)
    conflicts: tuple[tuple[str, str, tuple[str, ...]], ...]  # (a, b, flagged)


def _orderable(c: Keyed, d: Keyed) -> bool:
    """Whether ``d`` can be placed after ``c`` in valid time: both times known, and later."""
    return c.timed and d.timed and d.start > c.start


def resolve(claims: Sequence[Keyed]) -> Resolution:
    """Supersessions and conflicts among the IN claims of one key (order-independent).

    Identity, relation, scope and time are resolved first: ``d`` supersedes ``c`` only for a
    surely different value (:func:`same_value`) of a mutable relation, at a known later time,
    with at least its authority. Anything unresolved -- the same start, an unknown time, a value
    that may be the same, an immutable relation, lower authority while ``c`` is current -- is
    recorded as a conflict instead of retiring either side.
    """
    ordered = sorted(claims, key=lambda c: (c.start, c.claim_id))
    supersede: list[tuple[str, str, str]] = []
    successor: dict[str, Keyed] = {}
    for i, c in enumerate(ordered):
        for d in ordered[i + 1 :]:
            if (same_value(c.value, d.value) is False and c.mutable and d.mutable
                    and _orderable(c, d) and d.authority >= c.authority):  # fmt: skip
                supersede.append((c.claim_id, d.claim_id, d.start))
                successor[c.claim_id] = d
                break
    conflicts: list[tuple[str, str, tuple[str, ...]]] = []
    for i, c in enumerate(ordered):
        for d in ordered[i + 1 :]:
            same = same_value(c.value, d.value)
            if same is True:
                continue
            nxt = successor.get(c.claim_id)
            current_then = nxt is None or nxt.start > d.start
            if successor.get(c.claim_id) is d:
                continue
            unsure = (same is None or not (c.mutable and d.mutable)
                      or not (c.timed and d.timed) or d.start == c.start)  # fmt: skip
            if (unsure and current_then) or (d.authority < c.authority and current_then):
                top = max(c.authority, d.authority)
                flagged = tuple(x.claim_id for x in (c, d) if x.authority < top or
                                c.authority == d.authority)  # fmt: skip
                a, b = sorted((c.claim_id, d.claim_id))
                conflicts.append((a, b, tuple(sorted(flagged))))
    return Resolution(tuple(supersede), tuple(sorted(conflicts)))


#: Authority of an origin when no verification holds the claim.
ORIGIN_AUTHORITY = {
    "USER": 2, "TOOL": 2, "EXTERNAL_SOURCE": 2, "SYSTEM": 2, "MODEL_OUTPUT": 1,
    "MEMORY_DERIVED": 1,
}  # fmt: skip
VERIFIED_AUTHORITY = 3
