"""Finding time expressions in text, resolved exactly as the validation gate resolves them."""

from __future__ import annotations

from datetime import datetime

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.temporal import find_expressions, resolve
from extractor.vocab import TemporalKind

ANCHOR = datetime(2024, 5, 10, 12, 0)  # a Friday


@pytest.mark.parametrize(
    ("text", "expression", "kind", "valid_from", "valid_to"),
    [
        ("I work at Globex since March", "since March", TemporalKind.CURRENT, "2024-03", None),
        ("we met last week", "last week", TemporalKind.PAST, "2024-04-29", "2024-05-05"),
        ("moving next month", "next month", TemporalKind.FUTURE, "2024-06", "2024-06"),
        ("I was there in 2019", "in 2019", TemporalKind.PAST, "2019", "2019"),
        ("saw it yesterday", "yesterday", TemporalKind.POINT_IN_TIME, "2024-05-09", "2024-05-09"),
        ("adopted 3 years ago", "3 years ago", TemporalKind.PAST, "2021", "2021"),
        ("from 2019 to 2021 I", "from 2019 to 2021", TemporalKind.PAST, "2019", "2021"),
        ("on 5 March 2023 we", "on 5 March 2023", TemporalKind.POINT_IN_TIME, "2023-03-05", None),
        ("back in a few weeks", "in a few weeks", TemporalKind.FUTURE, "2024-05-27", "2024-06-02"),
        ("since May", "since May", TemporalKind.CURRENT, "2024-05", None),
    ],
)
def test_finds_and_resolves(
    text: str, expression: str, kind: TemporalKind, valid_from: str, valid_to: str | None
) -> None:
    (found,) = find_expressions(text, ANCHOR)
    assert found.expression == expression
    assert text[found.start : found.end] == expression
    assert found.resolution is not None
    assert found.resolution.kind is kind
    assert found.resolution.valid_from == valid_from
    if valid_to is not None:
        assert found.resolution.valid_to == valid_to


@pytest.mark.parametrize("text", ["May I ask you something?", "I march every day", "no dates here"])
def test_ignores_words_that_are_not_time_expressions(text: str) -> None:
    assert find_expressions(text, ANCHOR) == []


def test_relative_expression_without_anchor_is_found_but_unresolved() -> None:
    (found,) = find_expressions("we met last week", None)
    assert found.expression == "last week"
    assert found.resolution is None


def test_absolute_expression_resolves_without_anchor() -> None:
    (found,) = find_expressions("I was there in 2019", None)
    assert found.resolution is not None
    assert found.resolution.valid_from == "2019"


def test_expressions_come_left_to_right_without_overlap() -> None:
    found = find_expressions("yesterday I said that in 2019 and last week", ANCHOR)
    assert [f.expression for f in found] == ["yesterday", "in 2019", "last week"]


_WORDS = st.sampled_from(
    ["since", "March", "May", "last", "next", "this", "week", "month", "year", "in", "2019",
     "3", "a few", "days", "ago", "yesterday", "on", "Monday", "from", "to", "2021", "I", "x"]
)  # fmt: skip


@settings(max_examples=examples(150), deadline=None)
@given(
    words=st.lists(_WORDS, max_size=10),
    anchor=st.one_of(st.none(), st.datetimes(min_value=datetime(1990, 1, 1))),
)
def test_every_found_expression_is_exact_and_agrees_with_resolve(
    words: list[str], anchor: datetime | None
) -> None:
    text = " ".join(words)
    previous_end = 0
    for found in find_expressions(text, anchor):
        assert text[found.start : found.end] == found.expression
        assert found.start >= previous_end
        previous_end = found.end
        assert found.resolution == resolve(found.expression, anchor)
