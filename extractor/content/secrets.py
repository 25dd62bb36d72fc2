"""Secrets in a candidate: passwords, API keys, tokens, card and account numbers.

A memory store is the wrong place for a credential, and a candidate that holds one must not be
persisted verbatim (:mod:`extractor.validation` rejects it with ``SECRET_IN_CANDIDATE`` and
keeps only a redacted copy). Detection combines:

* the token detectors of `detect-secrets <https://github.com/Yelp/detect-secrets>`_ (AWS,
  GitHub, GitLab, Slack, Stripe, OpenAI, JWT, private keys, basic-auth URLs, ... and its
  ``password = "..."`` keyword detector), without its entropy detectors, which flag ordinary
  words in prose;
* what people write in a chat: "my password is hunter2", "PIN: 4821", "api key sk-...";
* payment card numbers that pass the Luhn check and IBANs that pass their checksum
  (`python-stdnum <https://arthurdejong.org/python-stdnum/>`_), and bank account or social
  security numbers named as such.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from stdnum import iban, luhn

#: detect-secrets plugins left out: entropy detectors flag ordinary words in prose, and a
#: public IP address is not a credential.
_SKIPPED_PLUGINS = frozenset(
    {"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"}
)

_SECRET_WORD = (
    r"pass(?:word|wd|code|phrase)|pin(?: code| number)?|api[ _-]?key|secret[ _-]?key|"
    r"client[ _-]?secret|access[ _-]?key|(?:access|auth|bearer|api|session|refresh)[ _-]?token|"
    r"private[ _-]?key|security[ _-]?code|cvv|cvc|2fa code|otp|one[ -]time code"
)
#: "<secret word> is|was|:|= <value>": the value is the next token, quoted or not.
_SAID = re.compile(
    rf"\b({_SECRET_WORD})\b(?:\s+(?:is|was|would be|will be|are|=|:)|\s*[:=])\s*"
    r"[\"'`‘“]?(?P<value>[^\s\"'`’”]{3,})",
    re.IGNORECASE,
)
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b")
_ACCOUNT = re.compile(
    r"\b(?:(?:bank |checking |savings )?account|routing|sort code|iban|ssn|"
    r"social security)(?: number| no\.?| #)?\s*(?:is|was|:|#)?\s*(?P<value>\d[\d -]{4,}\d)",
    re.IGNORECASE,
)
_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_TOKEN = re.compile(r"\S+")
#: Values after a secret word that are plainly not a secret ("my password is too long").
_NOT_A_VALUE = re.compile(
    r"(?i)(?:the|a|an|my|your|not|too|very|so|still|also|just|really|same|different|new|old|"
    r"weak|strong|long|short|secure|safe|wrong|correct|right|changed|expired|reset|required|"
    r"needed|missing|invalid|valid|incorrect|stored|saved|written|here|there|below|above|"
    r"something|nothing|easy|hard|simple|complicated|set|unset|pass|use|provide|provided|given|"
    r"none|null|empty|\W+)[.,;!?]*"
)


class ModelProviderKeyDetector(RegexBasedDetector):
    """API keys of model providers in the formats they issue today, which detect-secrets 1.5
    does not know: its OpenAI detector needs the ``T3BlbkFJ`` marker of the legacy format, so
    project, service-account and admin keys (``sk-proj-...``, ``sk-svcacct-...``,
    ``sk-admin-...``) pass; Anthropic (``sk-ant-...``), Google (``AIza...``) and Hugging Face
    (``hf_...``) keys have no detector. A detect-secrets plugin, so it runs beside its own."""

    secret_type = "Model provider API key"
    denylist = (
        re.compile(r"(?<![\w-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"),
        re.compile(r"(?<![\w-])sk-ant-(?:api|admin|oat)\d{2}-[A-Za-z0-9_-]{20,}"),
        re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])"),
        re.compile(r"(?<![\w-])hf_[A-Za-z0-9]{30,}(?![\w-])"),
    )


@dataclass(frozen=True)
class Secret:
    """One secret found: what kind, and where (offsets into the text searched)."""

    kind: str
    start: int
    end: int


@cache
def _plugins() -> tuple[BasePlugin, ...]:
    mapping: Mapping[str, type[BasePlugin]] = get_mapping_from_secret_type_to_class()
    classes = sorted(mapping.values(), key=lambda c: c.__name__)
    own = (ModelProviderKeyDetector(),)
    return tuple(c() for c in classes if c.__name__ not in _SKIPPED_PLUGINS) + own


#: Texts up to this long are looked up in a cache first: a candidate's short strings (its type,
#: time kind, origin, message ids, entity types) recur in every candidate, and the gate checks
#: every string of every candidate. Longer texts are searched each time, so the cache stays small.
_CACHED_CHARS = 256


def find_secrets(text: str) -> list[Secret]:
    """Every secret in ``text``, in order of position, without overlaps."""
    if len(text) <= _CACHED_CHARS:
        return list(_short_secrets(text))
    return _secrets(text)


@lru_cache(maxsize=4096)
def _short_secrets(text: str) -> tuple[Secret, ...]:
    return tuple(_secrets(text))


def _secrets(text: str) -> list[Secret]:
    found = [*_library_secrets(text), *_said_secrets(text), *_numbers(text)]
    found += _recurrences(text, found)
    found.sort(key=lambda s: (s.start, -s.end))
    kept: list[Secret] = []
    for secret in found:
        if not kept or secret.start >= kept[-1].end:
            kept.append(secret)
        elif secret.end > kept[-1].end:
            last = kept[-1]
            kept[-1] = Secret(last.kind, last.start, secret.end)
    return kept


def _recurrences(text: str, found: list[Secret]) -> list[Secret]:
    """Every other place a secret found is said again ("token X ... and again X", "my password
    is hunter22 ... yes, hunter22"): a detector names each value once, and the value is the
    secret wherever it stands as a word of its own (not inside a longer word)."""
    again = []
    for value, kind in {text[s.start : s.end]: s.kind for s in found}.items():
        at = text.find(value)
        while at >= 0:
            end = at + len(value)
            if (at == 0 or not text[at - 1].isalnum()) and (
                end == len(text) or not text[end].isalnum()
            ):
                again.append(Secret(kind, at, end))
            at = text.find(value, end)
    return again


def _library_secrets(text: str) -> list[Secret]:
    found = []
    tokens = _Tokens(text)
    for plugin in _plugins():
        for value in plugin.analyze_string(text):
            at = text.find(value)
            if at < 0 or not value.strip():
                continue
            token = tokens.around(at, at + len(value))
            found.append(Secret(str(plugin.secret_type), *token))
    return found


class _Tokens:
    """The whitespace-separated tokens of a text (:data:`_TOKEN`), found once when first asked
    for, so widening each of many matches costs a binary search, not a scan of the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None
        self._ends: list[int] = []

    def around(self, start: int, end: int) -> tuple[int, int]:
        """Widen a match to the whole token it is part of (a detector may match only a
        prefix); the match itself when ``start`` is in no token."""
        if self._starts is None:
            spans = [m.span() for m in _TOKEN.finditer(self.text)]
            self._starts = [a for a, _ in spans]
            self._ends = [b for _, b in spans]
        i = bisect_right(self._starts, start) - 1
        if i >= 0 and start < self._ends[i]:
            return self._starts[i], max(end, self._ends[i])
        return start, end


def _said_secrets(text: str) -> list[Secret]:
    found = []
    for m in _SAID.finditer(text):
        value = m.group("value")
        if _NOT_A_VALUE.fullmatch(value):
            continue
        end = m.end("value") - len(value) + len(value.rstrip(".,;!?)"))
        found.append(Secret(m.group(1).lower(), m.start("value"), end))
    return found


def _numbers(text: str) -> list[Secret]:
    found = []
    for m in _CARD.finditer(text):
        if _card_number(re.sub(r"\D", "", m.group())):
            found.append(Secret("card number", m.start(), m.end()))
    for m in _IBAN.finditer(text):
        if iban.is_valid(m.group()):
            found.append(Secret("IBAN", m.start(), m.end()))
    for m in _ACCOUNT.finditer(text):
        found.append(Secret("account number", m.start("value"), m.end("value")))
    for m in _SSN.finditer(text):
        found.append(Secret("social security number", m.start(), m.end()))
    return found


def _card_number(digits: str) -> bool:
    """A payment card number: Luhn-valid, with an issued major industry identifier (ISO/IEC
    7812: a leading 0 is never issued) and not one digit repeated ("0000000000000" passes Luhn
    but is a placeholder, not a card)."""
    return digits[:1] != "0" and len(set(digits)) > 1 and luhn.is_valid(digits)


#: What :func:`redact` writes in a secret's place; a text redacted again keeps it as it is.
_MARK = re.compile(r"\[REDACTED [^\]\n]{1,60}\]")


def redact(text: str, secrets: list[Secret] | None = None) -> str:
    """``text`` with every secret replaced by ``[REDACTED <kind>]``. Idempotent: a secret
    found where a ``[REDACTED ...]`` mark starts ("password is [REDACTED password]") is the
    mark itself, and left alone."""
    if secrets is None:
        found = find_secrets(text)
        if not found:
            return text
        marks = [m.span() for m in _MARK.finditer(text)]
        secrets = [s for s in found if not _in_a_mark(s.start, marks)]
    ordered = sorted(secrets, key=lambda s: s.start)
    if not _apart(ordered, len(text)):
        for secret in sorted(secrets, key=lambda s: s.start, reverse=True):  # overlapping
            text = f"{text[: secret.start]}[REDACTED {secret.kind}]{text[secret.end :]}"
        return text
    parts: list[str] = []
    at = 0
    for secret in ordered:
        parts += (text[at : secret.start], f"[REDACTED {secret.kind}]")
        at = secret.end
    parts.append(text[at:])
    return "".join(parts)


def _in_a_mark(start: int, marks: list[tuple[int, int]]) -> bool:
    """Whether ``start`` is inside one of ``marks`` (ordered, apart: as ``finditer`` finds)."""
    i = bisect_right(marks, start, key=lambda mark: mark[0]) - 1
    return i >= 0 and marks[i][0] <= start < marks[i][1]


def _apart(ordered: list[Secret], length: int) -> bool:
    """Whether the secrets, ordered by start, lie within the text one after another (a later
    one starting where the one before ends at the earliest), so one pass replaces them as the
    replacement from the last to the first does."""
    at, previous = 0, -1
    for secret in ordered:
        if not (at <= secret.start <= secret.end <= length) or secret.start == previous:
            return False
        at, previous = secret.end, secret.start
    return True


__all__ = ["ModelProviderKeyDetector", "Secret", "find_secrets", "redact"]
