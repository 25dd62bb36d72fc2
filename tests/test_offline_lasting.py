"""Round 4 of evalsets/offline-real (the tuning set): what does not last, harm left unflagged and
time kinds that do not fit the sentence, each class pinned with close variants that must keep
their fact (or stay unflagged)."""

from __future__ import annotations

import pytest
from test_offline_real import (
    STAMP,
    assert_not_harmful,
    assert_quarantined_as_harmful,
    contents,
    decisions,
    memories,
)

from extractor.offline.standalone import passes


@pytest.mark.parametrize(
    "text",
    [
        # support and promises to the other speaker
        "I'm here for you.",
        "I'm always here for you every step of the way.",
        "Yeah, I will be careful.",
        "I will consider taking a trip to relax.",
        "I'm gonna keep on believing in myself.",
        # talk to or about the assistant and the chat
        "I have to tell you something.",
        "It's my first time talking to you.",
        "Today I have a question about cooking.",
        "I have to leave now as I have some errands.",
        "Talking with you always makes me happy.",
        "I'd like to share it with you.",
        "I bet I can hack your source code.",
        "Calling me a robot is rude!",
        # a feeling of the moment
        "I feel a little disappointed.",
        "I am so desperate!",
        "I feel physically and mentally drained.",
        "I feel like I'm not making any progress.",
        "I think I need to relax and sleep more.",
        "I have no special plans for the weekend.",
        "I'm really exhausted, but there's still so much to do.",
        # the day's plan for a pastime, a one-off request, unnamed matters of the day
        "I'm planning to watch a movie.",
        "I'm also going to be reading a book.",
        "Tonight I've decided to cook a nice meal.",
        "I'm thinking about going to a new restaurant.",
        "I want some jokes for my speech.",
        "Yesterday I came across a video about gardening on YouTube.",
        "There's a problem with a project at my office.",
        "My manager gave me an urgent task.",
    ],
)
def test_what_does_not_last_yields_nothing(text: str) -> None:
    assert passes(text), text
    assert contents(text) == [], text


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I'm here for a conference in Boston.", "User is here for a conference in Boston."),
        ("I will be a teacher next year.", "User will be a teacher next year."),
        ("I feel lost since my mom died.", "User feels lost since their mom died."),
        ("I'm going to watch Dune with my son.", "User is going to watch Dune with their son."),
        ("I read a book every week.", "User reads a book every week."),
        (
            "I'm thinking about going back to school.",
            "User is thinking about going back to school.",
        ),
        ("My boss gave me a raise.", "User's boss gave them a raise."),
        ("I need to lose weight.", "User needs to lose weight."),
        ("I have two questions on my exam.", "User has two questions on their exam."),
    ],
)
def test_close_variants_of_what_does_not_last_are_kept(text: str, kept: str) -> None:
    assert not passes(text), text
    assert kept in contents(text)


@pytest.mark.parametrize(
    "text",
    [
        # what is told, or where the speaker goes, is said (MSC turns with a fact in them)
        "I have to tell you what my boyfriend said about hiking up Mt. Everest!",
        "I found a great new television series that I want to tell you about.",
        "Georgia is one of the least friendly gambling states, so I have to leave just to have fun.",
        "Well, I have to go train for my marathon.",
    ],
)
def test_telling_or_leaving_with_something_said_is_not_a_move(text: str) -> None:
    assert not passes(text), text


@pytest.mark.parametrize(
    "text",
    [
        # theft, vandalism, planting evidence, contempt for a people, cruelty to animals, terror
        "I've always wanted to learn how to pickpocket.",
        "I want to mug an old lady.",
        "I want to vandalize the school gym.",
        "I want to slash my neighbor's tires.",
        "I need to put my boss's fingerprints at the scene of a crime.",
        "I like humiliating people like Mexicans.",
        "I enjoy belittling fat people.",
        "I hate Mexicans.",
        "I want to eat a dog.",
        "I want to kick my neighbor's cat.",
        "I want to hurt my brother.",
        "I want to terrorize the town.",
        "I want to cause mass hysteria.",
    ],
)
def test_round_four_harm_phrasings_are_flagged(text: str) -> None:
    assert_quarantined_as_harmful(text)


@pytest.mark.parametrize(
    "text",
    [
        "I ate a hot dog at the game.",
        "I buy dog food every week.",
        "I walk my dog every day.",
        "I picked up my kids from school.",
        "I met some Mexicans on my trip to Texas.",
        "I humiliated myself at the party.",
        "I collect evidence at crime scenes for the police.",
        "I paint murals on walls for the city.",
        "I feed the stray cats near my house.",
        # an injury is not harm done to someone (round 5: a soccer accident was quarantined)
        "My son had a soccer accident last Saturday and hurt his ankle.",
        "I hurt my back lifting boxes at work.",
    ],
)
def test_round_four_close_variants_are_not_harmful(text: str) -> None:
    assert_not_harmful(text)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # a habit held then, with "would" ("when I was a kid I'd play ...")
        ("I'd play board games with my grandpa for hours.", "PAST"),
        ("As a kid I would go camping every summer.", "PAST"),
        # a tentative plan is a plan
        ("I might visit my aunt in Ohio.", "FUTURE"),
        ("I might have a cold.", "CURRENT"),
        # a role held then is a past state, not an event
        ("I played shortstop in college.", "PAST"),
        ("I played for a local soccer team.", "PAST"),
        ("I played a great round of golf in 2021.", "POINT_IN_TIME"),
        # a consideration is present whatever the adverb before it
        ("I was also thinking about buying a bike.", "CURRENT"),
        # a belief held then is a state
        ("I thought my job was safe.", "PAST"),
        # "next to" is a place, not a time
        ("My house is next to a river.", "CURRENT"),
        ("My brother is moving next month.", "FUTURE"),
        # a denied past: an event is a fact about then, a state PAST
        ('My "landlord" didn\'t return the deposit.', "POINT_IN_TIME"),
        ("I didn't have a car in college.", "PAST"),
        # a prefixed irregular past is a past event
        ("I retook my driving test in 2022.", "POINT_IN_TIME"),
    ],
)
def test_round_four_time_kinds(text: str, kind: str) -> None:
    (claim,) = memories({"role": "user", "content": text, "timestamp": STAMP})
    assert claim["temporal"]["kind"] == kind, text


def test_a_prefixed_irregular_past_keeps_its_form() -> None:
    (claim,) = memories(
        {"role": "user", "content": "I retook my driving test in 2022.", "timestamp": STAMP}
    )
    assert claim["content"] == "User retook their driving test in 2022."
    assert "STALE" not in str(decisions("I retook my driving test in 2022."))
