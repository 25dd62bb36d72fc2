"""``redact`` replaces its secrets in one pass and widens matches with one token index (issue 14:
the replacement copied the whole text once per secret and each widening scanned the text from
its start). Both are compared here with the plain definitions they replaced, on generated texts
full of secrets, marks and whitespace, so the speed-up cannot change a byte of what is kept."""

from __future__ import annotations

import re

from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.content import secrets as secrets_module
from extractor.content.secrets import Secret, find_secrets, redact

_TOKEN = re.compile(r"\S+")
_MARK = re.compile(r"\[REDACTED [^\]\n]{1,60}\]")


def plain_token_around(text: str, start: int, end: int) -> tuple[int, int]:
    for m in _TOKEN.finditer(text):
        if m.start() <= start < m.end():
            return m.start(), max(end, m.end())
    return start, end


def plain_redact(text: str, secrets: list[Secret] | None = None) -> str:
    if secrets is None:
        marks = [(m.start(), m.end()) for m in _MARK.finditer(text)]
        secrets = [s for s in find_secrets(text) if not any(a <= s.start < b for a, b in marks)]
    for secret in sorted(secrets, key=lambda s: s.start, reverse=True):
        text = f"{text[: secret.start]}[REDACTED {secret.kind}]{text[secret.end :]}"
    return text


PIECES = [
    "my password is hunter22", "PIN: 4821", "card 4111 1111 1111 1111", "4111111111111111",
    "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", "x=sk-proj-Ab12Cd34Ef56Gh78Ij90T3BlbkFJKl12Mn",
    'api_key = "AKIAIOSFODNN7EXAMPLE"', "[REDACTED password]", "[REDACTED card number]",
    "password is [REDACTED password]", "IBAN DE89370400440532013000", "ssn 123-45-6789",
    "Lisbon", "ok", ".", "\u00a0", "\u3000", "\u2028",
]  # fmt: skip
texts = st.lists(
    st.sampled_from(PIECES) | st.text(max_size=6), max_size=14
).flatmap(lambda parts: st.lists(st.sampled_from(["", " ", "\n", "\t", "  "]),
                                 min_size=len(parts), max_size=len(parts))
          .map(lambda gaps: "".join(g + p for g, p in zip(gaps, parts, strict=True))))  # fmt: skip


@settings(max_examples=examples(60), deadline=None)
@given(texts)
def test_redact_keeps_what_the_plain_replacement_keeps(text: str) -> None:
    assert redact(text) == plain_redact(text)


@settings(max_examples=examples(60), deadline=None)
@given(texts, st.data())
def test_given_secrets_are_replaced_as_the_plain_replacement_does(
    text: str, data: st.DataObject
) -> None:
    """Any list, overlapping, repeated, out of range or empty spans included."""
    bound = st.integers(-2, len(text) + 2)
    spans = data.draw(st.lists(st.tuples(bound, bound, st.sampled_from(["a", "bc"])), max_size=6))
    given_secrets = [Secret(kind, start, end) for start, end, kind in spans]
    assert redact(text, list(given_secrets)) == plain_redact(text, list(given_secrets))


@settings(max_examples=examples(60), deadline=None)
@given(texts, st.data())
def test_a_match_is_widened_to_its_token_as_by_the_plain_scan(
    text: str, data: st.DataObject
) -> None:
    tokens = secrets_module._Tokens(text)
    for _ in range(3):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, len(text)))
        assert tokens.around(start, end) == plain_token_around(text, start, end)


def test_a_long_answer_full_of_secrets_is_redacted_as_before() -> None:
    text = " ".join(PIECES * 40)
    assert redact(text) == plain_redact(text)
