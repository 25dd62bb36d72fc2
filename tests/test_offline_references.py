"""Round 4 of ``evalsets/offline-real/``: statements whose referent only the chat holds.

A memory is read without the chat. Each class the readers of round 4 labelled
``not_self_contained`` is pinned at its cause in :mod:`extractor.offline.standalone`: resolved
when its referent is in the sentence before in the same message (the span is widened to hold
it), dropped otherwise, next to a close variant that names its referent and must keep its fact.
"""

from __future__ import annotations

from typing import Any

import pytest

from extractor import Extractor
from extractor.conversation import conversation_from_data
from extractor.offline import offline_extract


def claims(*messages: dict[str, Any]) -> list[tuple[str, str]]:
    """(quote, content) of the user's claims, events left out."""
    conv = conversation_from_data({"id": "refs", "messages": list(messages)})
    out = offline_extract(conv)["candidates"]
    return [
        (c["span"]["quote"], c["content"])
        for c in out
        if c["origin"] == "USER" and c["memory_type"] != "ASSERTION_EVENT"
    ]


def contents(text: str) -> list[str]:
    return [content for _, content in claims({"role": "user", "content": text})]


def assert_gone_and_kept(text: str, gone: str | None, kept: str | None) -> None:
    """``gone`` is in no content of ``text``'s claims; ``kept`` is in one."""
    found = " | ".join(contents(text))
    if gone is not None:
        assert gone not in found
    if kept is not None:
        assert kept in found


@pytest.mark.parametrize(
    ("text", "gone", "kept"),
    [
        # a pronoun ending its clause, however far in ("... through it.", "... at it")
        (
            "Teaching it is awesome and I've made such great friends through it.",
            "User has made such great friends through it.",
            None,
        ),
        (
            "I joined a yoga class and I've made such great friends through it.",
            None,
            "User joined a yoga class and they have made such great friends through it.",
        ),
        # the verb a pronoun is the object of is not what it stands for
        (
            "Can't believe I'm actually driving it.",
            "Can't believe User is actually driving it.",
            None,
        ),
        (
            "I just bought a new car and I love driving it.",
            None,
            "User just bought a new car and they love driving it.",
        ),
        ("I went fishing and loved it.", None, "User went fishing and loved it."),
        # "it when" is a clause placeholder only after a verb of feeling
        ("I'll return it when I am done.", "User will return it when they are done.", None),
        ("I hate it when people are late.", None, "User hates it when people are late."),
        # "they" with no one before it
        (
            "I'm worried about how they treat others.",
            "User is worried about how they treat others.",
            None,
        ),
        (
            "My parents live nearby and they visit often.",
            None,
            "User's parents live nearby and they visit often.",
        ),
    ],
)
def test_pro_forms_with_nothing_to_stand_for(text: str, gone: str | None, kept: str | None) -> None:
    assert_gone_and_kept(text, gone, kept)


@pytest.mark.parametrize(
    ("text", "gone", "kept"),
    [
        # a demonstrative and a noun that ends the clause: a thing only the chat shows
        ("Not at the moment. I want to wear this dress first.", "wear this dress", None),
        ("It sounds very touching. I hope I can see that movie too.", "that movie", None),
        ("Okay, please elaborate on why we need this wall.", "this wall", None),
        # told more of, it is the speaker introducing it
        (
            "I was thinking about going to this Italian place I really like.",
            None,
            "User was thinking about going to this Italian place they really like.",
        ),
        # times, idioms and where the speaker is are not things of the chat
        ("I got a new puppy this weekend.", None, "User got a new puppy"),
        (
            "I am a sucker for a good pancake or waffle for that matter.",
            None,
            "User is a sucker for a good pancake or waffle for that matter.",
        ),
        # "there" for a place with no place before it
        ("I've been there a few times.", "User has been there a few times.", None),
        (
            "I moved to Ohio in 2010 and have lived there ever since.",
            None,
            "User moved to Ohio in 2010",
        ),
        (
            "There is a lake near my house and I swim there every day.",
            "User swims there every day.",
            "There is a lake near User's house and they swim there every day.",
        ),
        # a head left out ("Mine is blue.", "Either one sounds great to me!")
        ("Mine is blue.", "User's is blue.", None),
        ("Either one sounds great to me!", "Either one sounds great to User.", None),
        ("I wanted to go to one and just get a beer.", "User wanted to go to one", None),
        ("I have one son and two daughters.", None, "User has one son and two daughters."),
        # a subject left out before a verb of the third person, "after that"
        ("Gives me a visual of my progress and keeps me organized.", "Gives User", None),
        ("After that, I'm off to explore and grow my brand.", "After that", None),
        ("After college, I moved to Denver.", None, "After college, User moved to Denver."),
        # "more than that"
        ("Kind of, but it's more than that.", "more than that", None),
    ],
)
def test_references_to_what_only_the_chat_shows(
    text: str, gone: str | None, kept: str | None
) -> None:
    assert_gone_and_kept(text, gone, kept)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # what is left of a sentence cut at a comma
        ("As for me, I twisted my knee last Friday.", "As for User."),
        ("Wow, it was so special. Here I am and my mom.", "Here User is."),
        ("Wow, it was so special. Here I am and my mom.", "User's mom."),
        ("Last time we talked, you mentioned your car hobby.", "Last time User and others talked."),
        (
            "The last time I played at the slot machines, I was so engrossed that I lost my wallet.",
            "The last time User played at the slot machines.",
        ),
        ("No because I'm hardly ever alone. When I am I always have people to text", "When User"),
        ("Because that's what I see!", "Because that's what User sees."),
    ],
)
def test_fragments_yield_nothing(text: str, expected: str) -> None:
    assert not any(c.startswith(expected.rstrip(".")) for c in contents(text))


def test_fragments_keep_the_claim_they_were_cut_from() -> None:
    assert "User twisted their knee on" in " ".join(
        c for _, c in claims({"role": "user", "content": "As for me, I twisted my knee last Friday.",
                              "timestamp": "2023-05-10T12:00:00"})
    )  # fmt: skip
    assert contents("My favorite!") == ["User's favorite."]  # a sentence of its own
    assert "The last time User saw their dad was in 2019." in contents(
        "The last time I saw my dad was in 2019."
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # a complement left out, in the sentence before: the two are one memory
        ("I started watercolor painting last year.", "I was hooked right away!"),
        (
            "I've been training my dogs with positive reinforcement.",
            "I'm seeing some progress.",
        ),
        # a pro-form whose referent is the sentence before
        ("I love California!", "I've been there a few times."),
        ("Quite frankly, I'm a pretty bad liar.", "I'd like to become better at it"),
    ],
)
def test_referent_in_the_sentence_before_widens_the_span(first: str, second: str) -> None:
    quotes = [quote for quote, _ in claims({"role": "user", "content": f"{first} {second}"})]
    assert f"{first} {second}" in quotes
    assert second not in quotes  # never the part alone


def test_a_relative_clause_is_widened_to_what_it_is_said_of() -> None:
    text = "I plan to see the glaciers and waterfalls, which I heard are very impressive."
    assert claims({"role": "user", "content": text}) == [
        (
            text,
            "User plans to see the glaciers and waterfalls, which they heard are very impressive.",
        )
    ]


@pytest.mark.parametrize(
    ("text", "gone", "kept"),
    [
        ("I'm seeing some progress.", "User is seeing some progress.", None),
        ("I'm seeing some progress in my running.", None, "User is seeing some progress in their"),
        ("I'm still figuring out the details.", "the details", None),
        ("I was hooked right away!", "User was hooked right away.", None),
        ("I got hooked on knitting right away.", None, "User got hooked on knitting right away."),
        ("I don't have the training.", "User doesn't have the training.", None),
        ("I sometimes feel overwhelmed and unable to continue.", "unable to continue", None),
        ("I play a little bit of everything.", "User plays a little bit of everything.", None),
        ("My two dogs are my everything.", None, "User's two dogs are their everything."),
        ("Okay, I think I understand now.", "understand now", None),
        ("I know a few that I really want to make fun of.", "a few that", None),
        ("I know a few people who live in Tokyo.", None, "User knows a few people who live in"),
        ("I don't want nobody to know it was me.", "it was them", None),
        ("I could but I think I need a good excuse.", "a good excuse", None),
        # a demonstrative noun the sentence before does not hold is not widened over
        ("Not at the moment. I want to wear this dress first.", "Not at the moment.", None),
    ],
)
def test_complements_left_to_the_chat(text: str, gone: str | None, kept: str | None) -> None:
    assert_gone_and_kept(text, gone, kept)


def test_widened_spans_pass_the_gate() -> None:
    found = Extractor().process(
        {"id": "c", "messages": [
            {"role": "assistant", "content": "How did you get into painting?"},
            {"role": "user", "content": "I started watercolor painting last year. I was hooked "
             "right away! I love California! I've been there a few times."},
        ]}
    )  # fmt: skip
    assert not found.rejections
    contents_ = [c.content for c in found.candidates if c.memory_type.value != "ASSERTION_EVENT"]
    assert any("They were hooked right away." in c for c in contents_)
    assert any("They have been there a few times." in c for c in contents_)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("I took my kids to the park yesterday.", "We had a blast!"),
        ("I mentor a transgender teen just like me.", "We've been working on her confidence."),
        ("I adopted two dogs last year.", "We explore the city all the time."),
    ],
)
def test_we_is_kept_with_the_sentence_that_names_whom_it_takes_in(first: str, second: str) -> None:
    quotes = [quote for quote, _ in claims({"role": "user", "content": f"{first} {second}"})]
    assert f"{first} {second}" in quotes
    assert second not in quotes


def test_we_naming_no_one_is_left_as_it_was() -> None:
    # nothing before it names anyone: kept as it was ("User and others"), never widened over
    # a sentence that does not say who
    assert claims({"role": "user", "content": "The weather was great. We had a blast!"}) == [
        ("We had a blast!", "User and others had a blast.")
    ]


def test_a_span_is_never_widened_over_a_sentence_left_out() -> None:
    # "This is verified." is skipped (it certifies itself): what comes after it does not lean
    # on the sentence before it, and the quote never holds the skipped sentence
    text = "I live in Porto. This is verified. They say I'm not certain."
    assert claims({"role": "user", "content": text}) == [
        ("I live in Porto.", "User lives in Porto.")
    ]


# --- round 5: a claim whose verb phrase, object or topic is in another message -------------------


@pytest.mark.parametrize(
    ("text", "gone", "kept"),
    [
        # a verb phrase left out after a modal: what the speaker will do is in the chat
        ("Perhaps I will.", "Perhaps User will", None),
        ("I'm certain I could.", "certain they could", None),
        ("I cook whenever I can.", None, "User cooks whenever they can."),
        # a light verb with nothing named to do it to
        ("I'll have a look.", "have a look", None),
        ("I might give it a shot someday.", "give it a shot", None),
        ("I will never give up!", "never give up", None),
        ("I'll have a look at the new museum downtown.", None, "look at the new museum downtown"),
        ("I gave up smoking in 2019.", None, "User gave up smoking in 2019."),
        # a thought or trouble with nothing of it said
        ("I have some troubles at work", "troubles", None),
        ("I have an idea.", "User has an idea.", None),
        ("I have an idea for a board game about whales.", None, "a board game about whales"),
        # a subject left out before a verb in the past
        ("Reminded me of my grandpa.", "Reminded User", None),
        # "the ones", "the first one": things of the chat, not a person
        ("I bought the blue ones.", "the blue ones", None),
        ("My aunt is the one who taught me to knit.", None, "taught them to knit"),
    ],
)
def test_what_a_claim_leaves_to_another_message(
    text: str, gone: str | None, kept: str | None
) -> None:
    assert_gone_and_kept(text, gone, kept)


@pytest.mark.parametrize(
    "text",
    [
        "Today I want to talk to you about my worries.",
        "I'm glad we have something in common.",
        "I was also wondering, what do you think of jazz?",
    ],
)
def test_talk_about_the_exchange_yields_nothing(text: str) -> None:
    assert contents(text) == []


def test_a_subjectless_past_verb_is_widened_over_the_sentence_it_leans_on() -> None:
    found = contents("I toured an old farm with my cousin today. Reminded me of my grandpa.")
    assert any("old farm" in c and "grandpa" in c for c in found)


def test_a_reaction_after_a_name_is_never_what_a_span_is_widened_over() -> None:
    found = " | ".join(contents("Sam, that's a clever plan. I'll jot down the ones I like."))
    assert "clever plan" not in found


def test_a_thing_named_with_this_and_told_more_of_is_one_memory() -> None:
    # the speaker introducing it: "this shady trail" stands with what the next sentence tells
    found = contents("My dog and I walk along this shady trail. It's two miles from my flat.")
    assert any("shady trail" in c and "two miles" in c for c in found)
    # a subject that points stays apart ("This park ..."): it is not introduced
    found = contents("This park is lovely. It has a pond with ducks.")
    assert not any("lovely" in c and "pond" in c for c in found)
