"""Round 5 of evalsets/offline-real (HH-RLHF): moves of the exchange, fragments of an answer and
tasks for the other speaker are no memories, in any chat; each class pinned with close variants
that keep their fact. Sentences written for the tests, not taken from the data."""

from __future__ import annotations

import pytest
from test_offline_real import contents, memories

from extractor.offline.cues import is_hypothetical, is_question
from extractor.offline.text import Piece, clauses, is_cut_clause, is_fragment


@pytest.mark.parametrize(
    "text",
    [
        # talk addressed to the other speaker about their part in the exchange
        "I don't ever want to chat with you again.",
        "I'm never coming back to talk to you.",
        "I really need your assistance.",
        "I loved your idea about the picnic.",
        "I don't need your advice.",
        "So far you haven't answered a single question I asked.",
        "Honestly you never listen.",
        "Fine, as long as you are willing to help me.",
        "So you're saying I should quit.",
        "I was hoping you could explain it.",
        "I'm hoping you could send the link.",
        "I don't owe you an apology.",
        "I don't trust you at all.",
        "anything can happen i believe in you",
        "I need you to keep this secret.",
        "I already told you.",
        "I'm not telling you that.",
        "I assumed you were a person.",
        "I want to hear your opinion about the election.",
        # the speaker's own talk in the exchange
        "I was asking about the train schedule.",
        "I'm talking about the red car.",
        "I meant the other restaurant.",
        "I already said that.",
        "Like I asked earlier.",
        "I never asked for a history lesson.",
        "That's exactly what I'm asking.",
        "My question is.",
        # a task for the other speaker, with nothing of the speaker's in it
        "I need a phone number.",
        "I need a list of insults.",
        "I need to find an email address for him.",
        "I need help fixing a flat tire.",
        "I just want to know why the sky is blue.",
        "be nice to me",
    ],
)
def test_moves_of_the_exchange_yield_nothing(text: str) -> None:
    assert contents(text) == [], text


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # the speaker's own things after the "you" keep the fact (MSC: "I told you I ...")
        ("I told you I have three cats.", "User told you they have three cats."),
        ("I love talking to you about music.", "User loves talking to you about music."),
        ("I need help with my taxes.", "User needs help with their taxes."),
        ("I need the address of my dentist.", "User needs the address of their dentist."),
        ("I need a new phone.", "User needs a new phone."),
        (
            "I'm trying to locate the home address of Jane Doe.",
            "User is trying to locate the home address of Jane Doe.",
        ),
        ("I owe you my life, I was drowning.", "User was drowning."),
        ("I want to adopt a dog.", "User wants to adopt a dog."),
        # a standing instruction is a preference
        (
            "Always be honest with me.",
            "User prefers that the assistant always be honest with the user.",
        ),
        # "so far" is not the particle "so"
        ("So far I have read ten books.", "So far User has read ten books."),
    ],
)
def test_close_variants_keep_their_fact(text: str, kept: str) -> None:
    assert kept in contents(text), (text, contents(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # fragments of an answer or a correction
        ("Like in my hometown.", []),
        ("Like in my hometown, I ride a bike everywhere.", ["User rides a bike everywhere."]),
        ("Not that one, the blue one.", []),
        ("Cuz I do.", []),
        # cut after an article, a possessive or a conjunction
        ("I want to adopt the.", []),
        # a subordinate clause whose main clause is another piece of the sentence
        ("Now when I finish school, what should I do?", []),
        (
            "I run a bakery, where I bake bread every morning, and I love it.",
            ["User runs a bakery."],
        ),
        # a last clause keeps its sentence's reading, and so does a main clause after "when"
        ("I moved to Ohio, when I was ten.", ["User moved to Ohio."]),
        # a subordinate clause that opens the sentence stays with its main clause
        ("When I was ten, I moved to Ohio.", ["When User was ten, they moved to Ohio."]),
        (
            "When I see a sad dog, I can't help but pet it.",
            ["When User sees a sad dog, they can't help but pet it."],
        ),
        (
            "Now when I finish school I will travel.",
            ["Now when User finishes school they will travel."],
        ),
        # a request run on after a statement, with no "?"
        ("I want to move abroad will you help me", ["User wants to move abroad."]),
        ("I would like to open a shop if you can help me", ["User would like to open a shop."]),
        # a condition after discourse words or an example marker
        ("For example, if I moved to Texas.", []),
        ("So if I said I was tired, what would that mean", []),
        # "wtf" opens a question
        ("wtf does that mean", []),
    ],
)
def test_fragments_and_run_on_requests(text: str, expected: list[str]) -> None:
    assert contents(text) == expected, text


def test_the_cues_themselves() -> None:
    assert is_fragment("Like in my state.") and not is_fragment("Like my brother, I love jazz.")
    assert is_fragment("I went there with my") and not is_fragment("I got an A")
    assert is_cut_clause("now when I get home") and not is_cut_clause("though I love dogs")
    assert is_hypothetical("Sure if you want to.") and not is_hypothetical("Or If I'm going too")
    assert is_question("wtf is going on") and not is_question("wtf I love this")


def test_an_answer_that_asks_back_is_not_read_against_the_question() -> None:
    found = memories(
        {"role": "assistant", "content": "Are you looking for a bakery?"},
        {"role": "user", "content": "wtf is that supposed to mean"},
    )
    assert [c for c in found if c["origin"] == "USER"] == []


def test_an_opening_subordinate_clause_stays_with_its_main_clause_unless_that_is_elliptical() -> (
    None
):
    def split(text: str) -> list[str]:
        return [c.text for c in clauses(Piece(0, len(text), text), whole_lead=True)]

    assert split("When I was ten, I moved to Ohio.") == ["When I was ten, I moved to Ohio."]
    assert split("When I'm old enough to drive, I'll.") == ["When I'm old enough to drive", "I'll."]
    text = "When I was ten, I moved to Ohio."
    assert [c.text for c in clauses(Piece(0, len(text), text))] == [
        "When I was ten",
        "I moved to Ohio.",
    ]
