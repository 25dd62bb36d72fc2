"""Entity heuristics for the offline model: people, places, organizations, contact and health data.

These are deliberately simple (capitalized names, the word before them, a few word lists). Their
job is to make third-party personal data visible to the admission policy -- "my neighbour Bob's
phone number is 555-0199" yields a PERSON and a PHONE_NUMBER -- not to be a full NER system.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .. import caseless
from ..extraction import Entity
from ..temporal import MONTHS, WEEKDAYS

RELATIONS = (
    "manager|boss|sister|brother|mother|mom|mum|mommy|father|dad|daddy|wife|husband|son|daughter|"
    "kids?|children|child|friends?|best friend|neighbou?rs?|partner|girlfriend|boyfriend|"
    "colleagues?|co-?workers?|cousins?|aunt|uncle|grandma|grandmother|grandpa|grandfather|"
    "grandparents?|doctor|dentist|therapist|teacher|roommate|fianc[eé]e?|niece|nephew|parents?|"
    "baby|landlord|landlady|team lead|ceo|spouse|stepmom|stepdad|sibling|siblings|in-laws|"
    "mother-in-law|father-in-law|twin|bestie|ex|ex-wife|ex-husband|classmate|coach|pastor|lawyer"
)
_RELATION = re.compile(
    rf"\b(?:my|our)\s+(?:(?:older|younger|little|big|old|new|eldest|oldest|youngest|twin|"
    rf"step|late|best)\s+)?({RELATIONS})\b(?:,?\s+(?-i:([A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)))?",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][\w'’&.-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][\w'’&.-]*)*")
_PHONE = re.compile(r"(?<![\w-])\+?\(?\d[\d\s().-]{5,}\d(?![\w-])")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_HEALTH = re.compile(
    r"\b(diabetes|diabetic|cancer|asthma|depression|depressed|anxiety|adhd|autism|autistic|hiv|"
    r"aids|covid|epilepsy|arthritis|alzheimer'?s|dementia|pregnant|pregnancy|migraines?|"
    r"allerg(?:y|ies|ic)|high blood pressure|hypertension|heart disease|heart attack|stroke|"
    r"bipolar|schizophrenia|ptsd|ocd|insomnia|celiac|crohn'?s|lupus|multiple sclerosis|"
    r"parkinson'?s|surgery|chemo(?:therapy)?|disabled|disability|sick|illness|injur(?:y|ed))\b",
    re.IGNORECASE,
)
_ORG_SUFFIX = re.compile(
    r"\b(?:Inc|Corp|Corporation|Ltd|LLC|GmbH|Co|Company|University|College|Bank|Group|"
    r"Hospital|School|Institute|Labs?|Technologies|Systems)\b\.?$"
)
_NOT_NAMES = {
    "I", "I'm", "I've", "I'd", "I'll", "User", "OK", "Ok", "The", "A", "An", "My", "We", "It",
    "This", "That", "He", "She", "They", "You", "Mr", "Mrs", "Ms", "Dr", "Yes", "No",
} | {m.capitalize() for m in MONTHS} | {d.capitalize() for d in WEEKDAYS} | {"May"}  # fmt: skip
_LANGUAGE = re.compile(
    r"English|Spanish|French|German|Italian|Portuguese|Chinese|Mandarin|Cantonese|Japanese|"
    r"Korean|Russian|Arabic|Hindi|Dutch|Swedish|Polish|Turkish|Greek|Hebrew|Latin"
)
_PLACE_BEFORE = re.compile(r"\b(?:in|from|to|near|visit(?:ed|ing)?|moved to|live in|at)\s+$")
_ORG_BEFORE = re.compile(r"\b(?:works?|worked|working|job|employed|intern(?:ed)?)\s+(?:at|for)\s+$")
_PERSON_BEFORE = re.compile(
    rf"\b(?:is|named|called|with|met|and|({RELATIONS}))\s+$|^\s*$", re.IGNORECASE
)
_SUBJECT_NEXT = re.compile(r"(?:'s|’s)?\s+(?:is|was|and|told|said|says|has|had|works)\b")


#: A quote's entities are asked for by its assertion event and again by its claim, and repeated
#: lines repeat them: remembered for short quotes, a bounded number (memory stays flat).
_MEMO_SIZE = 4096
_MEMO_MAX_CHARS = 1000


def entities_in(text: str) -> list[Entity]:
    """Named and sensitive things mentioned in ``text`` (a quote), deduplicated, in order."""
    if len(text) > _MEMO_MAX_CHARS:
        return list(_entities(text))
    return list(_remembered_entities(text))


def _entities(text: str) -> tuple[Entity, ...]:
    found: list[tuple[int, Entity]] = []
    named: set[str] = set()
    for m in _RELATION.finditer(text):
        name = m.group(2)
        label = name if name else f"User's {m.group(1).lower()}"
        if name:
            named.add(name)
        found.append((m.start(), Entity(name=label, type="PERSON")))
    for m in _NAME.finditer(text):
        name = re.sub(r"['’]s?$", "", m.group(0).rstrip("."))
        if not name or name in named or name.split()[0] in _NOT_NAMES:
            continue
        if not text[: m.start()].strip() and not _SUBJECT_NEXT.match(text, m.end()):
            continue  # a capitalized first word is usually just a capitalized word
        found.append((m.start(), Entity(name=name, type=_name_type(text[: m.start()], name))))
    found += [
        (m.start(), Entity(name=m.group(0).strip(), type="PHONE_NUMBER"))
        for m in _PHONE.finditer(text)
        if len(re.sub(r"\D", "", m.group(0))) >= 7
    ]
    found += [(m.start(), Entity(name=m.group(0), type="EMAIL")) for m in _EMAIL.finditer(text)]
    health = caseless.twin(_HEALTH) if text.isascii() else None
    found += [  # the twin finds the same words in the lowercased text
        (m.start(), Entity(name=m.group(0).lower(), type="HEALTH_CONDITION"))
        for m in (health.finditer(text.lower()) if health else _HEALTH.finditer(text))
    ]
    seen: set[tuple[str, str]] = set()
    out: list[Entity] = []
    for _, entity in sorted(found, key=lambda item: item[0]):
        key = (entity.name, entity.type)
        if key not in seen:
            seen.add(key)
            out.append(entity)
    return tuple(out)


_remembered_entities = lru_cache(maxsize=_MEMO_SIZE)(_entities)


def _name_type(before: str, name: str) -> str:
    before = before[-48:]  # the cues are the last few words; a long prefix only costs time
    if _LANGUAGE.fullmatch(name):
        return "LANGUAGE"
    if _ORG_SUFFIX.search(name) or _ORG_BEFORE.search(before):
        return "ORGANIZATION"
    if _PLACE_BEFORE.search(before):
        return "PLACE"
    if _PERSON_BEFORE.search(before) and len(name.split()) <= 3:
        return "PERSON"
    return "OTHER"
