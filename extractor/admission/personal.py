"""Deterministic detection of *third-party* personal data in a candidate.

The seed asks that someone else's phone number, health or address be flagged and scoped rather
than admitted as general context. Detection is plain text matching, so it is reproducible and
auditable; it errs towards flagging (a false flag only narrows how a memory may be used).

A candidate carries third-party personal data when both hold:

* it is about someone other than the user: an entity of type ``PERSON`` that is not the speaker,
  or a relation phrase such as "my sister" or "his doctor";
* it contains personal data: a phone number, an email address, a street address, where they
  live ("lives in Portland"), or a health term ("diagnosed", "diabetes", "pregnant", ...).

The text checked is the candidate's content and its source quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import caseless
from ..candidates import MemoryCandidate

_RELATIONS = (
    "mother|mom|mum|father|dad|parents?|sister|brother|siblings?|wife|husband|partner|spouse|"
    "girlfriend|boyfriend|son|daughter|kids?|children|child|grandma|grandmother|grandpa|"
    "grandfather|aunt|uncle|cousin|niece|nephew|friend|neighbou?r|colleague|coworker|co-worker|"
    "boss|manager|roommate|flatmate|landlord|tenant|doctor|patient|client|customer|fiancée?"
)
RELATION = re.compile(rf"\b(?:my|his|her|their|our|your)\s+(?:{_RELATIONS})\b", re.IGNORECASE)
PHONE = re.compile(
    r"(?<![\w.])(?:\+?\(?\d{1,4}\)?[\s.-]\d{2,4}[\s.-]\d{3,4}(?:[\s.-]\d{2,4})?"
    r"|\d{3}[.-]\d{4}|\+?\d{10,13})(?![\w])"
)
#: Where someone lives is personal data even without a street address.
RESIDENCE = re.compile(
    r"\b(?:lives|living|resides|residing|moved|stays|staying)\s+(?:in|to|near)\b"
)
EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
ADDRESS = re.compile(
    r"\b\d{1,5}\s+(?:[A-Z][\w.'-]*\s+){1,4}(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Boulevard|"
    r"Blvd|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Close|Crescent)\b\.?"
    r"|\b(?:lives|living|resides|residing)\s+(?:at|on)\b|\baddress\s+is\b",
)
HEALTH = re.compile(
    r"\b(?:diagnos\w*|diabet\w*|cancer|tumou?r|chemo\w*|depress\w*|anxiety|bipolar|"
    r"schizophreni\w*|adhd|autis\w*|dementia|alzheimer\w*|hiv|aids|pregnan\w*|miscarriage|"
    r"surgery|hospitali[sz]ed|in hospital|medication|prescri\w*|therapy|therapist|"
    r"illness|disease|disorder|asthma|epilep\w*|stroke|heart attack|covid|allerg\w*|"
    r"disabilit\w*|rehab|addict\w*|blood pressure|insulin|dialysis|transplant|clinic|"
    r"hospice|wheelchair|paraly[sz]\w*|seizures?|infertil\w*|ivf)\b",
    re.IGNORECASE,
)
_SELF = frozenset({"user", "the user", "i", "me", "myself", "assistant", "the assistant"})


@dataclass(frozen=True)
class PersonalData:
    """Who the data is about and which categories were found (both sorted, deduplicated)."""

    subjects: tuple[str, ...]
    categories: tuple[str, ...]

    def describe(self) -> str:
        return f"about {', '.join(self.subjects)}: {', '.join(self.categories)}"


#: Entity types an extractor may give personal data; they can only add a flag, never remove one.
_ENTITY_CATEGORIES = {
    "PHONE": "PHONE", "PHONE_NUMBER": "PHONE", "EMAIL": "EMAIL", "EMAIL_ADDRESS": "EMAIL",
    "ADDRESS": "ADDRESS", "STREET_ADDRESS": "ADDRESS", "HEALTH": "HEALTH",
    "HEALTH_CONDITION": "HEALTH", "MEDICAL_CONDITION": "HEALTH",
}  # fmt: skip


def _categories(text: str, entity_types: set[str]) -> list[str]:
    found = sorted({_ENTITY_CATEGORIES[t] for t in entity_types if t in _ENTITY_CATEGORIES})
    if any(sum(ch.isdigit() for ch in m.group()) >= 7 for m in PHONE.finditer(text)):
        found.append("PHONE")
    if EMAIL.search(text):
        found.append("EMAIL")
    if ADDRESS.search(text):
        found.append("ADDRESS")
    if caseless.search(HEALTH, text):
        found.append("HEALTH")
    if RESIDENCE.search(text):
        found.append("RESIDENCE")
    return sorted(set(found))


def _subjects(candidate: MemoryCandidate, text: str) -> list[str]:
    speaker = (candidate.speaker or "").strip().lower()
    people = {
        e.name.strip()
        for e in candidate.entities
        if e.type.upper() == "PERSON"
        and e.name.strip().lower() not in _SELF
        and e.name.strip().lower() != speaker
    }
    fast = caseless.twin(RELATION) if text.isascii() else None
    if fast is not None:  # the same matches, already lowercase
        people.update(m.group() for m in fast.finditer(text.lower()))
    else:
        people.update(m.group().lower() for m in RELATION.finditer(text))
    return sorted(people)


def third_party_personal_data(candidate: MemoryCandidate) -> PersonalData | None:
    """The third-party personal data in ``candidate``, or ``None`` when there is none."""
    text = f"{candidate.content}\n{candidate.source_span.quote}"
    categories = _categories(text, {e.type.upper() for e in candidate.entities})
    if not categories:
        return None
    subjects = _subjects(candidate, text)
    if not subjects:
        return None
    return PersonalData(tuple(subjects), tuple(categories))
