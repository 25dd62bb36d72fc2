"""The faithfulness check: a proposition says what its quote says, no more and no less."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.content.faithfulness import (
    CONTENT_HEDGE,
    check_faithful,
    hedges_in,
    source_for,
)
from extractor.conversation import conversation_from_data
from extractor.validation import validate_extraction


def finding(message: str, quote: str, content: str, *context: str) -> str | None:
    start = message.index(quote)
    found = check_faithful(content, source_for(message, start, start + len(quote), context))
    return None if found is None else found.code


def test_each_unfaithful_rewording_has_its_code() -> None:
    assert finding("My manager is Alice.", "My manager is Alice.", "User's manager is Bob.") == (
        "CONTENT_UNSUPPORTED"
    )
    assert finding("I have two dogs.", "I have two dogs.", "User has 3 dogs.") == (
        "CONTENT_UNSUPPORTED"
    )
    assert finding("I don't live in Berlin anymore.", "I don't live in Berlin anymore.",
                   "User lives in Berlin.") == "NEGATION_DROPPED"  # fmt: skip
    assert finding("I live in Berlin.", "I live in Berlin.", "User doesn't live in Berlin.") == (
        "NEGATION_ADDED"
    )
    assert finding("I think the launch moved to Friday.", "the launch moved to Friday.",
                   "The launch moved to Friday.") == "UNCERTAINTY_DROPPED"  # fmt: skip
    assert finding("My sister told me the office closed.", "the office closed.",
                   "The office closed, as stated.") == "UNCERTAINTY_DROPPED"  # fmt: skip
    assert finding("It is approximately 46 km away.", "It is approximately 46 km away.",
                   "It is 46 km away.") == "UNCERTAINTY_DROPPED"  # fmt: skip


def test_faithful_rewordings_pass() -> None:
    assert (
        finding("My manager is Alice.", "My manager is Alice.", "User's manager is Alice.") is None
    )
    assert finding("I don't live in Berlin anymore.", "I don't live in Berlin anymore.",
                   "User no longer lives in Berlin.") is None  # fmt: skip
    assert finding("I think the launch moved to Friday.", "the launch moved to Friday.",
                   "User thinks the launch moved to Friday.") is None  # fmt: skip
    assert finding("My sister told me the office closed.", "the office closed.",
                   "User's sister told them the office closed.") is None  # fmt: skip
    # an answer draws its subject from the question it answers
    assert finding("Yes, two.", "Yes, two.", "User has two kids.", "Do you have kids?") is None
    assert finding("No, I haven't.", "No, I haven't.", "User hasn't been to Rome.",
                   "Have you been to Rome?") is None  # fmt: skip


def test_a_negated_hedge_is_no_hedge() -> None:
    assert hedges_in("There is no maybe about it.", CONTENT_HEDGE) == []
    assert hedges_in("Maybe it is.", CONTENT_HEDGE) == ["maybe"]
    assert hedges_in("I'm not sure it is.") == ["i'm not sure"]


SUBJECTS = ["the launch", "the office", "my brother", "the meeting"]
PREDICATES = ["moved to Friday", "closed in Dublin", "works at the bank", "starts at noon"]
HEDGES = ["I think ", "Maybe ", "I'm not sure, but ", "Probably "]


@settings(max_examples=60, deadline=None)
@given(
    hedge=st.sampled_from(["", *HEDGES]),
    negated=st.booleans(),
    subject=st.sampled_from(SUBJECTS),
    predicate=st.sampled_from(PREDICATES),
    said_hedge=st.sampled_from(["", "User thinks ", "Perhaps "]),
    said_negated=st.booleans(),
    cut=st.booleans(),
)
def test_no_accepted_proposition_drops_a_negation_or_a_hedge_of_its_sentence(
    hedge: str, negated: bool, subject: str, predicate: str, said_hedge: str,
    said_negated: bool, cut: bool,
) -> None:  # fmt: skip
    verb, rest = predicate.split(" ", 1)
    claim = f"{subject} {'did not ' + verb.removesuffix('s').removesuffix('d') if negated else verb} {rest}"
    text = f"{hedge}{claim}."
    text = text[0].upper() + text[1:]
    quote = f"{claim}." if cut and hedge else text  # a sub-span may leave the hedge out
    said_claim = f"{subject} {'did not ' + verb.removesuffix('s').removesuffix('d') if said_negated else verb} {rest}"
    content = f"{said_hedge}{said_claim}."
    content = content[0].upper() + content[1:]
    conv = conversation_from_data({"id": "p", "messages": [{"role": "user", "content": text}]})
    start = text.index(quote)
    event = {
        "id": "e", "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT", "origin": "USER",
        "span": {"message_id": "m0", "quote": text, "start": 0, "end": len(text)},
        "content": f'User stated: "{text}"',
        "uncertainty": {"hedges": [hedge.strip(" ,")] if hedge else []},
    }  # fmt: skip
    span = {"message_id": "m0", "quote": quote, "start": start, "end": start + len(quote)}
    prop = {**event, "id": "p", "kind": "PROPOSITION", "memory_type": "WORLD_PROPOSITION",
            "span": span, "content": content, "parent_ids": ["e"]}  # fmt: skip
    report = validate_extraction({"candidates": [event, prop]}, conv)
    faithful = said_negated == negated and bool(said_hedge) == bool(hedge)
    if faithful:  # the property is not vacuous: faithful wordings pass
        assert "p" in {u.id for u in report.accepted}, (text, content, report.feedback())
    if "p" in {u.id for u in report.accepted}:
        assert said_negated == negated, (text, content)
        if hedge:
            assert said_hedge, (text, content)
