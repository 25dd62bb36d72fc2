"""The faithfulness check: a proposition says what its quote says, no more and no less."""

from __future__ import annotations

from typing import Any

from helpers import examples
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


@settings(max_examples=examples(30), deadline=None)
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


def test_the_clause_a_content_restates_decides_its_polarity() -> None:
    # the subject before the negation is part of what is negated
    assert finding("I like green but red would be nice also", "I like green but red would be nice also",
                   "Green is not my favourite color.") == "NEGATION_ADDED"  # fmt: skip
    # "golf" is negated in another clause; the clause restated says it plainly
    turn = "I like cooking and golfing. Don't get much golfing in though."
    assert finding(turn, turn, "I don't like to cook and golf.") == "NEGATION_ADDED"
    assert finding(turn, turn, "I like to cook and golf.") is None
    # a number is a word of its clause: "I am 35" is not "I am not 35"
    assert finding("I am 35. But I still go dancing!", "I am 35.", "I am not 35.") == (
        "NEGATION_ADDED"
    )
    # the negation of one clause of the content is judged against the clause it restates
    turn = "Congratulations. I did not go to school because of my musical career."
    assert finding(turn, turn, "I did not go to school because of my musical career.") is None


def test_answers_negate_the_question_they_answer() -> None:
    asked = "Have you ever owned a business?"
    assert finding("No I have not, seems like a challenge to me.", "No I have not, seems like a challenge to me.",
                   "I have never owned a business.", asked) is None  # fmt: skip
    # but a "No" does not make every negation of the content faithful
    assert finding("No, I professionally stream on twitch.", "No, I professionally stream on twitch.",
                   "I don't professionally stream on Twitch.", "Oh wow. Are you retired?") == (
        "NEGATION_ADDED"
    )  # fmt: skip
    # a negation the message before the quote states about the user may be kept
    assert finding("I would love that! We have a deal!", "I would love that! We have a deal!",
                   "I have never been camping.", "You had mentioned you have never been camping before.") is None  # fmt: skip


def test_negation_cues_in_other_words() -> None:
    turn = "I haven't heard the new Rascal Flats song."
    assert finding(turn, turn, "I have yet to hear the new Rascal Flats song.") is None
    turn = "I must admit I am not much of a writer, but I do love reading."
    assert finding(turn, turn, "I'm not a very good writer.") is None
    # a negated question asserts nothing
    turn = "Not a fellow photographer then? What do you do?"
    assert finding(turn, turn, "I am a photographer.") is None


def test_a_hedge_reaches_the_clause_the_content_restates() -> None:
    # "music" also occurs unhedged, but in a question: the claim is the hedged clause
    turn = (
        "I'm not sure, but i love music? It is very relaxing. What kind of music do you listen to?"
    )
    assert finding(turn, turn, "I love music.") == "UNCERTAINTY_DROPPED"
    turn = "I'm not sure, but i am a country singer. I wish I was a rock singer though."
    assert finding(turn, turn, "I am a country singer.") == "UNCERTAINTY_DROPPED"
    assert finding(turn, turn, "User thinks they are a country singer.") is None


def test_a_hedge_does_not_reach_what_its_sentence_presupposes() -> None:
    turn = "I am sorry for your loss! Maybe I could bring my horse to the fundraiser."
    assert finding(turn, turn, "I have a horse.") is None
    # ... but everything else of the hedged clause stays hedged
    turn = "I'm not sure, but my husband is a doctor."
    assert finding(turn, turn, "I have a doctor husband.") == "UNCERTAINTY_DROPPED"
    assert finding(turn, turn, "My husband is a doctor.") == "UNCERTAINTY_DROPPED"


def test_another_speakers_hedge_is_not_the_quotes() -> None:
    turn = "Yeah I have a house with 3 bedrooms and I am the only one here"
    before = "That is very unfortunate of you, maybe you should come live with me!"
    assert finding(turn, turn, "I live alone.", before, "Do you have room for me?") is None


def test_numbers_in_any_spelling() -> None:
    asked = "What's the largest purse you have ever won gambling?"
    assert finding("8k, i cashed out right away ha.", "8k, i cashed out right away ha.",
                   "I once won $8,000 gambling.", asked) is None  # fmt: skip
    assert finding("8k, i cashed out right away ha.", "8k, i cashed out right away ha.",
                   "I once won $9,000 gambling.", asked) == "CONTENT_UNSUPPORTED"  # fmt: skip
    turn = "I was thinking around $15-20k. Would that get me a fairly decent one?"
    asked = "I was in the market for a new car. What's your budget?"
    assert finding(turn, turn, "My car budget is around 15,000 to 20,000 dollars.", asked) is None
    assert finding(turn, turn, "My car budget is around 15,000 to 30,000 dollars.", asked) == (
        "CONTENT_UNSUPPORTED"
    )
    # a number of the quote anchors a clause that shares no other word with it
    assert finding("I'm only 19. Just graduated.", "I'm only 19.", "I am 19 years old.") is None
    assert finding("I'm only 19. Just graduated.", "I'm only 19.", "I am 20 years old.") == (
        "CONTENT_UNSUPPORTED"
    )


def test_perturbations_change_what_the_fact_says() -> None:
    from extractor.evaluation.faithfulness import flip_negation, hedge_turn

    assert flip_negation("I used to work in human services.") == "I still work in human services."
    assert flip_negation("I have no experience with sheepdogs.") == (
        "I have some experience with sheepdogs."
    )
    assert flip_negation("I don't like horchata.") == "I do like horchata."
    # "not sure" is a hedge, not the negation to flip
    assert "not sure" in flip_negation("I'm not sure if I'm going.")
    # a hedge goes into the one sentence the fact is drawn from ...
    assert hedge_turn("I love cats. My job is boring.", "I love cats.") == (
        "I'm not sure, but i love cats. My job is boring."
    )
    # ... not when another sentence says it too, nor before a possession it presupposes
    assert hedge_turn("I love horses? I love horses.", "I love horses.") is None
    assert hedge_turn("My cow is doing well now.", "I have a cow.") is None


def test_a_name_may_be_spelled_one_letter_differently() -> None:
    turn = "Do you like rascal flats? They are my favorite band."
    assert finding(turn, turn, "My favorite band is Rascal Flatts.") is None
    assert finding(turn, turn, "My favorite band is Rascal Fletcher.") == "CONTENT_UNSUPPORTED"
    # a short name must match exactly
    assert finding("I met Ann.", "I met Ann.", "I met Anna.") == "CONTENT_UNSUPPORTED"


def test_the_hand_labels_are_of_held_out_pairs_and_use_the_rubric() -> None:
    import json
    from pathlib import Path

    folder = Path(__file__).parents[1] / "evalsets" / "faithfulness"
    for name in ("heldout-rejected-50.jsonl", "heldout-rejected-50-r2.jsonl"):
        text = (folder / name).read_text(encoding="utf-8")
        _check_hand_labels([json.loads(line) for line in text.splitlines()])


def test_the_third_draw_is_of_held_out_pairs_labelled_by_the_rubric() -> None:
    import json
    from pathlib import Path

    path = Path(__file__).parents[1] / "evalsets" / "faithfulness" / "heldout-rejected-50-r3.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 50
    assert all(row["line"] % 2 == 0 and row["fact"] for row in rows)
    assert {row["code"] for row in rows} <= {
        "CONTENT_UNSUPPORTED", "NEGATION_DROPPED", "NEGATION_ADDED", "UNCERTAINTY_DROPPED"
    }  # fmt: skip
    _check_hand_labels(rows)  # a separate reader's labels (docs/evaluation.md)
    assert all(row["note"] for row in rows)


def _check_hand_labels(rows: list[dict[str, Any]]) -> None:
    assert len(rows) == 50
    assert all(row["line"] % 2 == 0 for row in rows)  # the held-out half: even lines
    assert {row["label"] for row in rows} <= {
        "faithful", "drops_qualifier", "unsupported", "polarity_changed"
    }  # fmt: skip
    assert {row["code"] for row in rows} <= {
        "CONTENT_UNSUPPORTED", "NEGATION_DROPPED", "NEGATION_ADDED", "UNCERTAINTY_DROPPED"
    }  # fmt: skip
    assert all(row["fact"] and row["note"] for row in rows)


def test_a_word_said_in_another_form_or_other_words_is_supported() -> None:
    turn = "That's true. I love teaching so i always make it fun for the children."
    assert finding(turn, turn, "I am a teacher.") is None  # root: teacher / teaching
    assert finding(turn, turn, "I am a plumber.") == "CONTENT_UNSUPPORTED"
    turn = "Fun, I should take my kids out to do that."
    assert finding(turn, turn, "I have children.") is None  # a synonym
    turn = "My huskies have an appointment with the groomer this weekend."
    assert finding(turn, turn, "I have dogs.") is None  # a kind supports its class ...
    turn = "My dogs have an appointment with the groomer this weekend."
    assert finding(turn, turn, "I have huskies.") == "CONTENT_UNSUPPORTED"  # ... not the reverse
    turn = "I like to spend time outdoors, so I look for good campgrounds and such."
    assert finding(turn, turn, "I like to camp.") is None  # part of a compound
    turn = "I saw a racoon in my yard."
    assert finding(turn, turn, "I saw a raccoon in my yard.") is None  # spelled a letter apart


def test_a_common_word_alone_does_not_anchor_a_clause() -> None:
    turn = "My favorite is chocolate icing. I love baking cakes."
    assert finding(turn, turn, "I love baking cakes. I love shrimp.") == "CONTENT_UNSUPPORTED"
    assert finding(turn, turn, "I love baking cakes. I love it.") is None


#: (turn, content, expected code): polarity said in other words
POLARITY_IN_OTHER_WORDS = [
    ("Thankfully I didn't lose it in the divorce.", "I kept the house in the divorce.", None),
    ("Thankfully I didn't lose it in the divorce.", "I lost the house in the divorce.",
     "NEGATION_DROPPED"),
    ("It was my dog's first time in the ocean!", "My dog had not been in the ocean before.", None),
    ("I don't mind trying new stuff.", "I like trying new things.", None),
    ("I wish I wasn't single, but at least I have my two dogs!", "I am single.", None),
    ("I wish I wasn't single, but at least I have my two dogs!", "I am not single.",
     "NEGATION_ADDED"),
]  # fmt: skip


def test_polarity_said_in_other_words() -> None:
    asked = "Is the house still yours?"
    for turn, content, code in POLARITY_IN_OTHER_WORDS:
        assert finding(turn, turn, content, asked) == code, (turn, content)


def test_a_negation_reaches_the_clause_its_sentence_refers_back_to() -> None:
    turn = (
        "There are opportunities to teach summer school but I will not be taking those this year."
    )
    assert finding(turn, turn, "I will not teach summer school this year.") is None
    # a negated answer before a "but" does not reach what follows it
    turn = "No I do not, but I enjoy a good party"
    assert finding(turn, turn, "I don't enjoy parties.") == "NEGATION_ADDED"


def test_still_is_not_used_to_and_no_denies_the_question() -> None:
    turn = "Neat!! I used to work in the human services field"
    assert finding(turn, turn, "I used to work in human services.") is None
    assert finding(turn, turn, "I still work in human services.") == "NEGATION_DROPPED"
    asked = "Have you played Counter Strike?"
    turn = "No i haven't, do you recommend it? Since i play first person shooters"
    assert finding(turn, turn, "I have played Counter Strike.", asked) == "NEGATION_DROPPED"
    assert finding(turn, turn, "I would like to play Counter Strike.", asked) is None


def test_the_offline_models_wordings_pass() -> None:
    # found by tests/test_offline_properties.py on MSC and HH-RLHF chats
    turn = "I didn't think I would like running but I actually do."
    assert finding(turn, turn, "User didn't think they would like running.") is None
    assert finding("Use", "Use", "User prefers that the assistant use.") is None


def test_a_word_matched_as_a_compound_or_misspelling_keeps_its_polarity() -> None:
    # the content's word is the source's in a compound or spelled a letter apart: its
    # polarity is judged against that word, not left unjudged
    turn = "Hey just came back from my weekly workout, how are you?"
    assert finding(turn, turn, "I work out.") is None
    assert finding(turn, turn, "I don't work out.") == "NEGATION_ADDED"
    turn = "I'm buddhist, I'm on a full time spiritual journey."
    assert finding(turn, turn, "I am a buddist.") is None
    assert finding(turn, turn, "I am not a buddist.") == "NEGATION_ADDED"


def test_a_pro_form_refers_back_only_from_a_clause_saying_little_of_its_own() -> None:
    turn = "I have been to Nashville, but didn't make it to the exciting music/bar section."
    assert finding(turn, turn, "I have been to Nashville.") is None
    assert finding(turn, turn, "I haven't been to Nashville.") == "NEGATION_ADDED"
    turn = "I don't sell them to a business but I am thinking about setting up a veggie stand."
    assert finding(turn, turn, "I don't want to set up a veggie stand.") == "NEGATION_ADDED"
    # a negation with no word of its own says "not" of the clause before it
    turn = "My parents were both really into sports but I wasn't so much."
    assert finding(turn, turn, "I am not really into sports.") is None
    # ... and not of the clause after it
    turn = "No I do not, but I enjoy a good party"
    assert finding(turn, turn, "I don't enjoy parties.") == "NEGATION_ADDED"


def test_a_hedge_of_an_answer_hedges_what_the_answer_goes_on_to_say() -> None:
    turn = "I'm not sure, but yes; I had to invest a lot, but now my wheat is certified organic."
    assert finding(turn, turn, "My wheat is certified organic.") == "UNCERTAINTY_DROPPED"
    assert finding(turn, turn, "I think my wheat is certified organic.") is None
    turn = "I'm not sure, but oh wow, Yes I do...The entire Harry Potter series."
    assert finding(turn, turn, "I like the Harry Potter series.") == "UNCERTAINTY_DROPPED"
    # a hedge that hedged a word of its own ends with its sentence
    turn = "I'm not sure, but I like cats. I live in Berlin."
    assert finding(turn, turn, "I live in Berlin.") is None


def test_negation_in_other_words_and_idioms_that_say_yes() -> None:
    turn = "I can barely stand my job."
    assert finding(turn, turn, "I can't stand my job.") is None
    assert finding(turn, turn, "I can stand my job.") == "NEGATION_DROPPED"
    asked = "That seems fun and scary. Can you still train?"
    turn = "Not right now, I can barely walk. Do you play any sports?"
    assert finding(turn, turn, "I can barely walk right now.", asked) is None
    turn = "Hey. You want to go out sometime? I cannot resist fish and chips!"
    assert finding(turn, turn, "I like eating fish and chips.") is None
    turn = "What I wouldn’t give to go fishing with my grandfather just one more afternoon…"
    assert finding(turn, turn, "What User wouldn’t give to go fishing with their grandfather "
                   "just one more afternoon…") is None  # fmt: skip
    turn = "Lol I don't know I am barely getting used to this country"
    assert finding(turn, turn, "I come from another country.") is None  # "used to" is no past


def test_a_no_answers_the_question_not_what_the_turn_goes_on_to_say() -> None:
    asked = "Are you visiting there now?"
    turn = "No, but I like to go to Europe at least twice a year."
    assert finding(turn, turn, "I like to visit Europe at least twice a year.", asked) is None
    assert finding(turn, turn, "I don't like to go to Europe twice a year.", asked) == (
        "NEGATION_ADDED"
    )
    # the clause of the "No" itself is what the "No" answers with
    asked = "My horse is called buttercup. We have six in all. Do you have pets?"
    turn = "No just listen to some music and relax"
    assert finding(turn, turn, "User doesn't have pets: just listen to some music and relax.",
                   asked) is None  # fmt: skip


def test_the_generator_flips_a_negation_the_fact_says() -> None:
    from extractor.evaluation.faithfulness import flip_negation, hedge_turn

    # a negation written without its apostrophe is the one flipped (not "I don't dont have")
    assert flip_negation("I dont have a pet.") == "I do have a pet."
    assert flip_negation("I havent had a job in years.") == "I have had a job in years."
    # "and" is no verb; an auxiliary that ends its clause is not the one negated
    assert flip_negation("My wife and I want to go.") == (
        "It is not true that my wife and I want to go."
    )
    assert flip_negation("I travel as much as I can.") == "I don't travel as much as I can."
    # a number is a word the fact draws from its sentence; a question asserts nothing
    assert hedge_turn("I love my dog! We have three.", "I have 3 dogs.") is None
    assert hedge_turn("No he was in the navy. How about your grandfather?",
                      "My grandfather was in the navy.") == (
        "I'm not sure, but no he was in the navy. How about your grandfather?"
    )  # fmt: skip


def test_the_restated_clauses_negation_must_be_about_what_the_content_negates() -> None:
    turn = "I saw my kids for the first time in a few months!"
    assert finding(turn, turn, "I saw my kids after a few months.") is None
    assert finding(turn, turn, "I don't see my kids.") == "NEGATION_ADDED"
    turn = "I've 2 sisters. They love pink, I hate pink."
    assert finding(turn, turn, "My sisters love pink.") is None
    assert finding(turn, turn, "My sisters don't love pink.") == "NEGATION_ADDED"
    # the clause's negation may be the content's in other words
    turn = "There is no way I will make it to the full 9! And the nursery is nowhere near done!"
    assert finding(turn, turn, "The nursery is not ready at all.") is None


def test_an_attribution_that_names_no_source_has_no_reporter() -> None:
    """Attributions ("reportedly", "I heard", "they say") name nobody: the word before them is the claim's
    subject or a time ("last week reportedly ..."), so it need not be kept; the attribution
    itself still must (found by test_output_always_passes_the_gate)."""
    message = "last week Reportedly the CEO resigned."
    assert finding(message, message, "User relayed that the CEO reportedly resigned.") is None
    assert finding(message, message, "The CEO resigned.") == "UNCERTAINTY_DROPPED"
    message = "Yesterday I heard the office closed."
    assert finding(message, message, "User heard the office closed.") is None
    assert finding(message, message, "The office closed.") == "UNCERTAINTY_DROPPED"
    # a named reporter is still one: "sister" must be kept
    message = "My sister told me the office closed."
    assert finding(message, "the office closed.", "User was told the office closed.") == (
        "UNCERTAINTY_DROPPED"
    )
