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

NORMALIZER_VERSION = "keys-2026.12.01.1"

_NAME = r"(?P<obj>[A-Z][\w'’.&-]*(?:\s+(?:of\s+|de\s+)?[A-Z][\w'’.&-]*)*)"
_ORG = r"(?P<scope>[A-Z][\w'’.&-]*(?:\s+[A-Z][\w'’.&-]*)*)"

#: (relation, pattern, about the user?) -- patterns match the system's third-person content.
_PATTERNS: tuple[tuple[str, re.Pattern[str], bool], ...] = (
    ("lives_in", re.compile(
        r"^User(?:\s+(?:just|recently|now))?\s+(?:lives|is living|has moved|moved|relocated|is "
        r"based|resides|is now based|now lives)\s+(?:in|to)\s+" + _NAME), True),
    ("works_at", re.compile(
        r"^User(?:\s+(?:just|recently|now))?\s+(?:works|is working|started working|now works)"
        r"\s+(?:at|for)\s+" + _NAME), True),
    ("works_at", re.compile(r"^User(?:\s+(?:just|recently))?\s+joined\s+" + _NAME), True),
    ("manager", re.compile(r"^User's\s+(?:new\s+|current\s+)?manager\s+is\s+" + _NAME), True),
    ("manager", re.compile(r"^" + _NAME + r"\s+is\s+User's\s+(?:new\s+)?manager\b"), True),
    ("name", re.compile(r"^User's\s+name\s+is\s+" + _NAME), True),
    ("ceo_of", re.compile(
        r"^" + _NAME + r"\s+(?:is|was|became|has become)\s+(?:now\s+)?(?:the\s+)?CEO\s+of\s+"
        + _ORG), False),
)  # fmt: skip


@dataclass(frozen=True)
class ClaimKey:
    subject: str
    relation: str
    object: str
    scope: str | None


def claim_key(content: str, subject: str | None, *, proposition: bool) -> ClaimKey | None:
    """The structural key of a proposition, or ``None`` (not functional, or not resolvable)."""
    if not proposition:
        return None
    for relation, pattern, about_user in _PATTERNS:
        m = pattern.match(content.strip())
        if m is None:
            continue
        value = _norm(m.group("obj"))
        if about_user:
            return None if subject is None else ClaimKey(subject, relation, value, None)
        org = _norm(m.group("scope"))
        return ClaimKey(f"org:{org}", relation, value, org)
    return None


def _norm(text: str) -> str:
    return " ".join(text.replace("’", "'").split()).strip(" .'").casefold()


@dataclass(frozen=True)
class Keyed:
    """A claim on one key, as the timeline needs it."""

    claim_id: str
    value: str
    start: str
    authority: int


@dataclass(frozen=True)
class Resolution:
    supersessions: tuple[tuple[str, str, str], ...]  # (old, new, effective start)
    conflicts: tuple[tuple[str, str, tuple[str, ...]], ...]  # (a, b, flagged)


def resolve(claims: Sequence[Keyed]) -> Resolution:
    """Supersessions and conflicts among the IN claims of one key (order-independent)."""
    ordered = sorted(claims, key=lambda c: (c.start, c.claim_id))
    supersede: list[tuple[str, str, str]] = []
    successor: dict[str, Keyed] = {}
    for i, c in enumerate(ordered):
        for d in ordered[i + 1 :]:
            if d.start > c.start and d.value != c.value and d.authority >= c.authority:
                supersede.append((c.claim_id, d.claim_id, d.start))
                successor[c.claim_id] = d
                break
    conflicts: list[tuple[str, str, tuple[str, ...]]] = []
    for i, c in enumerate(ordered):
        for d in ordered[i + 1 :]:
            if d.value == c.value:
                continue
            nxt = successor.get(c.claim_id)
            current_then = nxt is None or nxt.start > d.start
            if d.start == c.start or (d.authority < c.authority and current_then):
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
