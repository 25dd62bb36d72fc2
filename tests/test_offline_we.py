"""Whom a user's "we" takes in (issue 16): named when the chat says it, "User and others" else.

A "we" is resolved only when one group can be meant: the sentence itself pairs the user with it
("Me and my sister ..."), says whom the user was with ("... with my cousins"), the other
speaker's question asks about the user and it ("How are you and your wife?"), or the user's
earlier messages of the session paired them with it and with nothing else.
"""

from __future__ import annotations

from typing import Any

import pytest

from extractor import Extractor
from extractor.conversation import conversation_from_data
from extractor.offline import offline_extract
from extractor.offline.english import asked_group, own_groups, third_person


def claims(*messages: dict[str, Any]) -> list[str]:
    """Contents of the user's claims, events left out."""
    conv = conversation_from_data({"id": "we", "messages": list(messages)})
    out = offline_extract(conv)["candidates"]
    return [
        c["content"] for c in out if c["origin"] == "USER" and c["memory_type"] != "ASSERTION_EVENT"
    ]


def user(text: str, **kw: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **kw}


def assistant(text: str, **kw: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **kw}


@pytest.mark.parametrize(
    ("text", "group", "content"),
    [
        ("We grow tomatoes.", "their uncle", "User and their uncle grow tomatoes."),
        ("We're moving to Oslo.", "their twins", "User and their twins are moving to Oslo."),
        ("Our garden is tiny.", "their aunt", "User and their aunt's garden is tiny."),
        ("We grow tomatoes.", None, "User and others grow tomatoes."),
        ("Our garden is tiny.", None, "User's garden is tiny."),
        ("Me and my sister run a bakery.", None, "User and their sister run a bakery."),
        ("My cousin & I ride horses.", None, "User and their cousin ride horses."),
        ("We went to the lake with my cousins.", None, "User went to the lake with their cousins."),
        ("We are at the zoo with my nephew.", None, "User is at the zoo with their nephew."),
        (
            "We need a bigger van for me and my bandmates.",
            None,
            "User and their bandmates need a bigger van for User and their bandmates.",
        ),
    ],
)
def test_we_is_the_group_when_one_is_given(text: str, group: str | None, content: str) -> None:
    assert third_person(text, group) == content


def test_the_groups_a_sentence_or_a_question_names() -> None:
    assert own_groups("My brother and I fish. Me and my two dogs hike.") == {
        "their brother",
        "their two dogs",
    }
    assert own_groups("One of my coworkers and I ate lunch.") == set()
    assert asked_group(["How are you and your wife doing?"]) == "their wife"
    assert asked_group(["Did you go there with your parents?"]) == "their parents"
    assert asked_group(["You and your wife must be tired."]) is None  # not a question
    two = ["Do you and your wife ski?", "Did you go with your kids?"]
    assert asked_group(two) is None  # two groups: either may be meant


def test_a_question_about_the_user_and_a_group_names_the_we() -> None:
    found = claims(
        assistant("How are you and your wife doing these days?"),
        user("We just adopted a puppy named Biscuit."),
    )
    assert found == ["User and their wife just adopted a puppy named Biscuit."]


def test_the_users_earlier_messages_of_the_session_name_the_we() -> None:
    found = claims(
        user("My girlfriend and I moved to Leeds in May."),
        assistant("Nice! What have you been up to since?"),
        user("We are learning to cook Thai food."),
    )
    assert "User and their girlfriend are learning to cook Thai food." in found


@pytest.mark.parametrize(
    "later",
    [
        "We can play chess with you sometime.",  # the listener may be in it
        "We should all recycle more.",  # anyone
        "We both love jazz.",  # the two speakers, as likely
    ],
)
def test_an_open_we_is_not_taken_from_earlier_messages(later: str) -> None:
    found = claims(
        user("My girlfriend and I moved to Leeds in May."),
        assistant("Nice! What have you been up to since?"),
        user(later),
    )
    assert not any("girlfriend" in c for c in found[1:])


def test_two_groups_earlier_or_another_session_leave_we_unnamed() -> None:
    two = claims(
        user("My girlfriend and I moved to Leeds in May."),
        assistant("Nice!"),
        user("Me and my brother went fishing last week."),
        assistant("Fun! What else?"),
        user("We are learning to cook Thai food."),
    )
    assert "User and others are learning to cook Thai food." in two
    later_session = claims(
        user("My girlfriend and I moved to Leeds in May.", timestamp="2024-05-01T10:00:00"),
        assistant("Nice! What else?", timestamp="2024-05-01T10:01:00"),
        user("We are learning to cook Thai food.", timestamp="2024-06-20T18:00:00"),
    )
    assert "User and others are learning to cook Thai food." in later_session


def test_a_group_out_of_the_gates_reach_is_not_named_where_it_would_fail() -> None:
    # the group's words are far back: a clause of the content holding only them would share no
    # word with its quote, which the gate rejects; it stays "User and others" and passes
    messages = [
        user("My fiancee and I booked a trip to Quebec."),
        assistant("How exciting!"),
        user("I bought new boots for it."),
        assistant("Good idea. Anything else?"),
        user("Gonna try some poutine while we're there - can't wait!"),
    ]
    result = Extractor().process({"id": "far", "messages": messages})
    assert not result.rejections
    contents = [c.content for c in result.candidates]
    assert any("poutine while User and others are there" in c for c in contents)
    assert not any("poutine while User and their fiancee" in c for c in contents)


@pytest.mark.parametrize(
    ("said", "content"),
    [
        # the user alone was named first: a later "we" is still more than the user
        (
            "I think we should close the border.",
            "User thinks they and others should close the border.",
        ),
        (
            "I feel like we never have enough time.",
            "User feels like they and others never have enough time.",
        ),
        # the group was named first: "they" is that group
        ("My wife and I think we might move.", "User and their wife think they might move."),
    ],
)
def test_a_later_we_is_never_the_user_alone(said: str, content: str) -> None:
    result = Extractor().process({"id": "we", "messages": [{"role": "user", "content": said}]})
    assert not result.rejections
    assert content in [c.content for c in result.candidates]
