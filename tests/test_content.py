"""The content checks' building blocks: folded text, certification in any script, secrets."""

from __future__ import annotations

import json

from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.content import find_secrets, fold, redact
from extractor.conversation import conversation_from_data
from extractor.validation import validate_extraction

CONV = conversation_from_data(
    {"id": "c", "messages": [{"role": "user", "content": "My manager is Alice."}]}
)
#: Look-alikes of Latin letters from other scripts, and invisible characters.
LOOKALIKES = {"e": "е", "a": "а", "o": "ο", "i": "і", "c": "с", "p": "р"}
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\u00ad", "\ufeff"]


def event(content: str, **fields: object) -> dict[str, object]:
    unit = {
        "id": "c1",
        "span": {"message_id": "m0", "quote": "My manager is Alice.", "start": 0, "end": 20},
        "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT", "origin": "USER",
        "content": content,
    }  # fmt: skip
    unit.update(fields)
    return unit


def codes(content: str, **fields: object) -> list[str]:
    report = validate_extraction({"candidates": [event(content, **fields)]}, CONV)
    return [r.code.value for r in report.rejections]


def test_fold_undoes_compatibility_forms_invisible_characters_and_confusables() -> None:
    for written in [
        "VЕRIFIED",
        "veri\u200bfied",
        "𝐯𝐞𝐫𝐢𝐟𝐢𝐞𝐝",
        "ＶＥＲＩＦＩＥＤ",
        "vérified",
        "νerified",
    ]:
        assert fold(written) == "verified", written
    assert fold("Café in Zürich") == "cafe in zurich"


@settings(max_examples=examples(60), deadline=None)
@given(
    word=st.sampled_from(["verified", "certified", "validated", "authenticated", "ground truth"]),
    swaps=st.lists(st.integers(0, 30), max_size=4),
    hidden=st.lists(st.tuples(st.integers(0, 30), st.sampled_from(INVISIBLE)), max_size=3),
    upper=st.booleans(),
)
def test_a_certification_word_in_any_disguise_is_rejected(
    word: str, swaps: list[int], hidden: list[tuple[int, str]], upper: bool
) -> None:
    letters = list(word.upper() if upper else word)
    for i in swaps:
        j = i % len(letters)
        letters[j] = LOOKALIKES.get(letters[j].lower(), letters[j])
    for i, char in hidden:
        letters.insert(i % (len(letters) + 1), char)
    disguised = "".join(letters)
    assert codes(f"User stated: My manager is Alice ({disguised}).") == [
        "EXTRACTOR_CLAIMED_VERIFIED"
    ]


def test_certification_synonyms_in_content_and_entity_types_are_rejected() -> None:
    assert codes("Validated and authenticated: the manager is Alice.") == [
        "EXTRACTOR_CLAIMED_VERIFIED"
    ]
    assert codes("It is an established fact: my manager is Alice.") == [
        "EXTRACTOR_CLAIMED_VERIFIED"
    ]
    typed = {"entities": [{"name": "Alice", "type": "ESTABLISHED_FACT"}]}
    assert codes("User stated: My manager is Alice.", **typed) == ["EXTRACTOR_CLAIMED_VERIFIED"]
    assert codes("User stated: My manager is Alice.") == []


def test_secrets_are_found_in_chat_wording_and_library_formats() -> None:
    secret = {
        "I think my password is hunter2.": "hunter2",
        "my pin is 4821": "4821",
        "api key: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD": "sk-proj-",
        "AKIAIOSFODNN7EXAMPLE is the key": "AKIAIOSFODNN7EXAMPLE",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789": "ghp_",
        "card 4111 1111 1111 1111 exp 09/29": "4111",
        "transfers from bank account 12345678": "12345678",
        "IBAN DE89 3704 0044 0532 0130 00": "3704",
    }
    for text, value in secret.items():
        assert find_secrets(text), text
        assert value not in redact(text) and "[REDACTED " in redact(text), text


def test_model_provider_keys_in_todays_formats_are_secrets_without_a_secret_word() -> None:
    # detect-secrets 1.5 knows only OpenAI's legacy format (the T3BlbkFJ marker): these passed.
    keys = [
        "sk-proj-Xq3vR8tLm2Nw9Kp4Zs7Yb1Hc6Jd0Fg5Ae_-Tu2Wo8Ri4Ql7Mn3Vx9Cy1",
        "sk-svcacct-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kM9nP2rS5",
        "sk-admin-Zy8xW7vU6tS5rQ4pO3nM2lK1jI0hG9fE8dC7bA6",
        "sk-ant-api03-Xq3vR8tLm2Nw9Kp4Zs7Yb1Hc6Jd0Fg5Ae-Tu2Wo8Ri4Ql7Mn3Vx9Cy1AA",
        "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        "hf_XqvRtLmNwKpZsYbHcJdFgAeTuWoRiQlMnVx",
    ]
    for key in keys:
        text = f"here, use {key} for the demo."
        assert [s.kind for s in find_secrets(text)] == ["Model provider API key"], key
        assert redact(text) == "here, use [REDACTED Model provider API key] for the demo."
    for text in ["ask-project manager", "task-admin-panel is open", "the sk-proj folder"]:
        assert find_secrets(text) == [], text


def test_ordinary_text_holds_no_secret() -> None:
    for text in [
        "I live in Berlin and I was born in 1985.",
        "my password is too long",
        "The secret to good bread is patience.",
        "I ran 5000 meters in 2019 and have 2 kids.",
        "Call me at 555-123-4567.",
        "The card game had 4 players.",
        # Luhn-valid placeholders, not cards: a leading 0 is never issued, one digit repeated
        "0000000000000",
        "order 1111111111111111 shipped",
    ]:
        assert find_secrets(text) == [], text


def test_a_candidate_with_a_secret_is_rejected_and_kept_only_redacted() -> None:
    conv = conversation_from_data(
        {"id": "c", "messages": [{"role": "user", "content": "I think my password is hunter2."}]}
    )
    unit = event("User stated: I think my password is hunter2.")
    unit["span"] = {"message_id": "m0", "quote": "I think my password is hunter2.", "start": 0,
                    "end": 31}  # fmt: skip
    report = validate_extraction({"candidates": [unit]}, conv)
    assert [r.code.value for r in report.rejections] == ["SECRET_IN_CANDIDATE"]
    assert "hunter2" not in json.dumps(report.model_dump(mode="json"))


def test_a_short_texts_secrets_are_a_new_list_each_time() -> None:
    """Short texts are looked up in a cache (extractor/content/secrets.py): what a caller does
    with the list it got never changes what the next caller finds."""
    text = "I think my password is hunter2."
    first = find_secrets(text)
    assert [text[s.start : s.end] for s in first] == ["hunter2"]
    first.clear()
    assert [text[s.start : s.end] for s in find_secrets(text)] == ["hunter2"]
    long_text = "ordinary words " * 40 + text  # past the cached length: searched each time
    assert [long_text[s.start : s.end] for s in find_secrets(long_text)] == ["hunter2"]


def test_a_secret_said_twice_is_redacted_both_times() -> None:
    token = "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"
    assert redact(f"token {token} and again {token}") == (
        "token [REDACTED GitHub Token] and again [REDACTED GitHub Token]"
    )
    said = redact("my password is hunter22 and yes, hunter22 again; not xhunter22")
    assert said == (
        "my password is [REDACTED password] and yes, [REDACTED password] again; not xhunter22"
    )
    assert redact(said) == said  # still idempotent


def test_a_quotation_keeps_every_hedge_and_attribution_it_quotes() -> None:
    """The offline model's quoted reply ('Told "...", User replied: "They say I'm not certain."')
    keeps the quote's words, so it drops neither its hedge nor its attribution (found by
    test_output_always_passes_the_gate); a content that drops them is still rejected."""
    from extractor.offline import offline_extract

    chat = {"id": "q", "messages": [{"role": "assistant", "content": "I live in Porto."},
                                    {"role": "user", "content": "They say I'm not certain."}]}  # fmt: skip
    conv = conversation_from_data(chat)
    out = offline_extract(conv, max_candidates=2)
    assert validate_extraction(out, conv).rejections == []
    claim = dict(out["candidates"][-1], content="User is certain.")
    report = validate_extraction({"candidates": [out["candidates"][0], claim]}, conv)
    assert [r.code.value for r in report.rejections] == ["UNCERTAINTY_DROPPED"]
