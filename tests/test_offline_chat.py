"""Chat moves that say nothing lasting about the speaker, next to close variants that do.

Each rule of the offline model that drops a sentence as a conversational move (an offer, a
reaction, an opinion about something else, a tip for the other speaker) is pinned here by a
sentence that must now yield nothing and a close variant that must still yield its fact, so a
rule can neither stop firing nor grow over real first-person facts.
"""

from __future__ import annotations

from typing import Any

import pytest

from extractor.conversation import conversation_from_data
from extractor.offline import offline_extract


def claims_of(text: str) -> list[dict[str, Any]]:
    conv = conversation_from_data({"id": "chat", "messages": [{"role": "user", "content": text}]})
    out = offline_extract(conv)["candidates"]
    return [c for c in out if c["memory_type"] in ("WORLD_PROPOSITION", "PREFERENCE")]


def contents(text: str) -> list[str]:
    return [c["content"] for c in claims_of(text)]


@pytest.mark.parametrize(
    ("nothing", "fact", "content"),
    [
        # offers and promises to the other speaker
        (
            "I can lend you a book about healthy teas.",
            "I can lend you my copy of the book.",
            "User can lend you their copy of the book.",
        ),
        (
            "I'll get back to you soon.",
            "I'll be moving to Lisbon soon.",
            "User will be moving to Lisbon soon.",
        ),
        # reactions to the other speaker's news, however strongly felt
        (
            "I'm really sorry to hear that.",
            "I'm really sorry I missed my sister's wedding.",
            "User is really sorry they missed their sister's wedding.",
        ),
        ("I am so proud of you.", "I am so proud of my son.", "User is so proud of their son."),
        # opinions about something other than the speaker
        (
            "I think it depends on the kid.",
            "I think my sister is a nurse.",
            "User thinks their sister is a nurse.",
        ),
        (
            "I reckon they will win.",
            "I reckon I will win.",
            "User reckons they will win.",
        ),
        # a hedged claim with a subject of its own stands alone and keeps its hedge
        (
            "I think that might be the same day.",
            "I think the launch moved to next Friday.",
            "User thinks the launch moved to next Friday.",
        ),
        # ... and so does an opinion that praises something: that says what the speaker likes
        (
            "I doubt it will hold.",
            "I think Time in a Bottle is the most beautiful song ever.",
            "User thinks Time in a Bottle is the most beautiful song ever.",
        ),
        # tips for the other speaker
        (
            "I found a city that you might like to move to!",
            "I found a city that I might move to.",
            "User found a city that they might move to.",
        ),
        (
            "I heard a new song today that I think you would love!",
            "I heard my favourite band live today.",
            "User heard their favourite band live today.",
        ),
        # talk about the conversation itself
        (
            "I was just about to ask you about baking shows!",
            "I was just about to start baking.",
            "User was just about to start baking.",
        ),
        # passing states of mind with nothing they are about
        ("I'm so excited.", "I'm so excited about my trip to Peru.", None),
        ("I'm not sure.", "I'm sure I locked my door.", "User is sure they locked their door."),
        ("I'm pretty excited about this!", "I'm excited to start my new job.", None),
        # thin agreements, intensified
        ("I really hope so.", "I really hope to run a marathon.", None),
        ("I completely forgot.", "I completely forgot my keys.", None),
        # round 4: acknowledgements that open the sentence
        (
            "I hear you though it seems we are all underpaid.",
            "I hear the market is busy on Fridays.",
            "User hears the market is busy on Fridays.",
        ),
        ("I know, some people are just a waste of time!", "I know, I have two dogs myself.", None),
        # talk about what the speaker means or how they see it
        ("That's how I see it.", "That's how I met my wife.", "That's how User met their wife."),
        (
            "Not that I can think of off the top of my head.",
            "I do know what I want to study.",
            "User does know what they want to study.",
        ),
        # apologies for something in the exchange
        (
            "I'm sorry but I don't think you ever told me your name.",
            "I'm sorry but my car broke down again.",
            "User is sorry but their car broke down again.",
        ),
        # hopes, beliefs and praise about the other speaker
        (
            "I hope you have a better job than I do.",
            "I hope to get a better job than I have.",
            "User hopes to get a better job than they have.",
        ),
        (
            "I know you like being outdoors a lot.",
            "I know my sister likes being outdoors.",
            "User knows their sister likes being outdoors.",
        ),
        (
            "I marvel at the job you do.",
            "I marvel at how my grandma still gardens.",
            "User marvels at how their grandma still gardens.",
        ),
        # encouragement is not an instruction to the assistant; a real instruction still is
        (
            "Just keep of the good work.",
            "Just keep the answers short.",
            "User prefers that the assistant just keep the answers short.",
        ),
        (
            "Remember to keep on going and it will all work out.",
            "Remember to keep answers short.",
            "User prefers that the assistant remember to keep answers short.",
        ),
    ],
)
def test_chat_move_yields_nothing_but_close_variant_keeps_its_fact(
    nothing: str, fact: str, content: str | None
) -> None:
    assert claims_of(nothing) == []
    found = contents(fact)
    assert len(found) == 1
    if content is not None:
        assert found == [content]


@pytest.mark.parametrize(
    ("text", "content"),
    [
        ("I wish I had more time to train.", "User wishes they had more time to train."),
        ("I wish my parents lived closer.", "User wishes their parents lived closer."),
        ("I hope to have kids some day.", "User hopes to have kids some day."),
        ("I can't wait to learn French.", "User can't wait to learn French."),
    ],
)
def test_own_wishes_hopes_and_plans_are_facts_about_the_speaker(text: str, content: str) -> None:
    (claim,) = claims_of(text)
    assert claim["content"] == content
    assert claim["origin"] == "USER"


@pytest.mark.parametrize(
    "text",
    [
        "I wish I could.",
        "I wish you luck with the move.",
        "I wish them well.",
        "If I were rich, I wish I had a boat.",
        "What if I moved? I wish I knew.",
        "I hope so.",
        "I hope you feel better soon.",
        "I can't wait!",
    ],
)
def test_elliptical_wishes_and_wishes_for_others_yield_nothing(text: str) -> None:
    assert claims_of(text) == []


def test_a_wish_never_becomes_the_wished_for_fact() -> None:
    (claim,) = claims_of("I wish I had a dog.")
    assert claim["content"] == "User wishes they had a dog."
    assert "has a dog" not in claim["content"]


def answer_claims(question: str, answer: str) -> list[str]:
    conv = conversation_from_data(
        {
            "id": "chat-answer",
            "messages": [
                {"role": "assistant", "content": question},
                {"role": "user", "content": answer},
            ],
        }
    )
    out = offline_extract(conv)["candidates"]
    return [
        c["content"]
        for c in out
        if c["origin"] == "USER" and c["memory_type"] in ("WORLD_PROPOSITION", "PREFERENCE")
    ]


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("I have short blonde hair. How about yourself?", "Really sounds kind of cute though"),
        ("Do you have any tips for a beginner?", "Just follow one team."),
        ("Maybe once or twice a week? What do you say?", "mmm, maybe."),
    ],
)
def test_replies_to_advice_requests_and_turned_back_questions_are_not_answers(
    question: str, answer: str
) -> None:
    assert answer_claims(question, answer) == []


def test_an_open_question_about_the_speaker_still_reads_the_bare_answer() -> None:
    assert answer_claims("What do you drive?", "A red Mustang.") == [
        'Asked "What do you drive?", User answered: "A red Mustang.".'
    ]


@pytest.mark.parametrize("text", ["next month I", "Yesterday we.", "In 2021 I", "I:b"])
def test_a_time_and_a_pronoun_claim_nothing(text: str) -> None:
    # hypothesis found "next month I" dated into the content "In June 2024 User.", which the
    # gate rightly rejects as sharing no word with its quote
    assert claims_of(text) == []


def test_a_time_with_a_claim_still_yields_it() -> None:
    assert claims_of("Next month I start at the bakery.") != []


def test_a_claim_is_never_widened_over_a_picture() -> None:
    # hypothesis: "They say I'm not certain." was widened back over the [image] part before it,
    # and the gate rejected the span (SPAN_QUOTES_PLACEHOLDER)
    parts = [
        {"type": "text", "text": "I live in Porto."},
        {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}},
        {"type": "text", "text": "They say I'm not certain."},
    ]
    conv = conversation_from_data({"id": "c", "messages": [{"role": "user", "content": parts}]})
    message = conv.messages[0]
    for c in offline_extract(conv)["candidates"]:
        start, end = c["span"]["start"], c["span"]["end"]
        assert all(end <= lo or hi <= start for lo, hi in message.placeholder_ranges), c


def test_a_relative_time_is_dated_only_where_it_stands_as_words() -> None:
    # hypothesis: "ALAST WEEK:LAST WEEK" had the "LAST WEEK" inside "ALAST" replaced by dates,
    # making up the name "Abetween" that the gate rejects
    conv = conversation_from_data({"id": "c", "messages": [
        {"role": "user", "content": "MY:ALAST WEEK:LAST WEEK", "timestamp": "2024-05-10T12:00:00"}
    ]})  # fmt: skip
    for c in offline_extract(conv)["candidates"]:
        assert "Abetween" not in c["content"] and "abetween" not in c["content"], c
