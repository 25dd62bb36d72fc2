"""Fuzzing the three parsers that meet hostile text first: the conversation loader, the span
validator and the admission policy (its file parser and its engine).

The promise under test: arbitrary input -- any Unicode (combining marks, RTL and other format
characters, NULs, lone surrogates), malformed JSON and JSONL lines, bytes that are not UTF-8,
absurd nesting, huge messages, thousands of messages -- ends in a result or in a clear, typed
error (:class:`InputError`, :class:`ExtractionOutputError`, :class:`PolicyError`), never in
another exception, and one bad item never affects the others. Inputs are bounded so that every
example is fast; hypothesis' ``deadline`` flags anything that starts to hang.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import pytest
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import candidate_batches

from extractor.admission import admit, parse_policy
from extractor.admission.policy import DEFAULT_POLICY_PATH
from extractor.conversation import (
    DEFAULT_MAX_MESSAGE_CHARS,
    DEFAULT_MAX_MESSAGES,
    Conversation,
    Limits,
    conversation_from_data,
    iter_stream,
)
from extractor.errors import ExtractionOutputError, InputError, LimitExceeded, PolicyError
from extractor.prompts import load_prompt, parse_transcript
from extractor.validation import ValidationReport, validate_extraction
from extractor.vocab import (
    CandidateKind,
    Capability,
    Commitment,
    MemoryType,
    Origin,
    VerificationState,
)

# No per-example deadline (the profile has none): on a loaded machine a wall-clock limit fails
# a correct run, and speed is shown by benchmarks/, never asserted.
FUZZ = settings(max_examples=examples(30))
PROMPT = load_prompt()

#: Characters that break naive text handling: NUL and other controls, combining marks, bidi
#: controls (RLO, LRM, RLM, isolates), zero-width joiners, line/paragraph separators, BOM,
#: astral emoji, CJK.
NASTY = (
    "\x00\x01\x1b\x7f\u0301\u0308\u20dd\u202e\u202d\u200e\u200f\u2066\u2069\u200b\u200d"
    "\u2028\u2029\ufeff\U0001f600\U0001f469\u200d\U0001f4bb列車\u05d0\u0627"
)
HOSTILE_TEXT = st.text(
    alphabet=st.sampled_from(NASTY) | st.characters(codec="utf-8"), min_size=1, max_size=60
)
#: What a model can put in a JSON string but no file can hold: lone surrogates (``"\ud800"``).
SURROGATES = st.characters(categories=["Cs"])
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.text(st.characters(categories=["Cs"]), min_size=1, max_size=2)
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["id", "messages", "role", "content", "metadata", "x"]) | st.text(),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


def outcome(call: Callable[[], Any], expected: type[Exception]) -> Any:
    """What ``call`` returns, or the ``expected`` error it raises; any other error escapes."""
    try:
        return call()
    except expected as exc:
        return exc


# --- the loader --------------------------------------------------------------------------------


def good_line(index: int, texts: list[str]) -> bytes:
    messages = [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(texts)]
    return json.dumps({"id": f"good-{index}", "messages": messages}).encode()


BAD_LINES = st.sampled_from(
    [
        b"{not json",
        b'{"id": "x", "messages": [',  # stops mid-object
        b"\xff\xfe\x00garbage",  # not UTF-8
        b'{"id": "nul\x00", "messages": []}',  # raw NUL inside a JSON string is invalid JSON
        b'{"id": "s", "messages": [{"role": "user", "content": "\\ud800 lone"}]}',
        b'{"id": "r", "messages": [{"role": "robot", "content": "hi"}]}',
        b'{"id": ["a"], "messages": [{"role": "user", "content": "hi"}]}',
        b'{"id": "e", "messages": []}',
        b"42",
        b'"just a string"',
        b"[" * 5000 + b"]" * 5000,
        b'{"id": "big", "messages": [{"role": "user", "content": "' + b"x" * 101 + b'"}]}',
        b'{"id": "many", "messages": ' + b'[{"role": "user", "content": "x"}' + b',{"role": "user", "content": "x"}' * 9 + b"]}",
    ]
) | st.binary(max_size=80).filter(lambda b: b"\n" not in b and b.strip() != b"" and not b.startswith(b"{\"id\": \"good"))  # fmt: skip


@FUZZ
@given(
    st.lists(
        st.one_of(
            st.lists(HOSTILE_TEXT, min_size=1, max_size=3).map(lambda texts: ("good", texts)),
            BAD_LINES.map(lambda raw: ("bad", raw)),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_every_jsonl_line_is_one_conversation_or_one_located_error(
    lines: list[tuple[str, Any]],
) -> None:
    """Good lines load whatever their neighbours hold; every bad line is one InputError that
    names the file and its line; nothing else is raised."""
    raw = []
    for index, (kind, value) in enumerate(lines):
        raw.append(good_line(index, value) if kind == "good" else value)
    limits = Limits(max_message_chars=100, max_messages=8)
    items = list(
        iter_stream(io.BytesIO(b"\n".join(raw)), source="f.jsonl", limits=limits, mode="jsonl")
    )
    assert len(items) == len(lines)
    for number, ((kind, value), item) in enumerate(zip(lines, items, strict=True), start=1):
        if kind == "good":
            assert isinstance(item, Conversation), item
            assert item.id == f"good-{number - 1}"
            assert [m.text for m in item.messages] == value
            item.model_dump_json().encode("utf-8")  # writable as a result line
        else:
            assert isinstance(item, InputError), f"line {number} {value[:40]!r} loaded"
            assert item.location.line == number and "f.jsonl:" + str(number) in str(item)


@FUZZ
@given(JSON_VALUES)
def test_any_json_value_is_a_conversation_or_an_input_error(value: Any) -> None:
    conv = outcome(lambda: conversation_from_data(value), InputError)
    if isinstance(conv, InputError):
        assert str(conv)
        return
    assert conv.messages and conv.content_hash().startswith("sha256:")


@settings(max_examples=examples(5), deadline=None)
@given(st.sampled_from(NASTY))
def test_a_huge_message_and_thousands_of_messages_hit_the_default_limits(char: str) -> None:
    at_limit = char * DEFAULT_MAX_MESSAGE_CHARS
    over = [{"role": "user", "content": at_limit + "x"}]
    many = [{"role": "user", "content": char}] * (DEFAULT_MAX_MESSAGES + 1)
    lines = [
        json.dumps({"id": "huge", "messages": over}),
        json.dumps({"id": "fits", "messages": [{"role": "user", "content": at_limit}]}),
        json.dumps({"id": "crowd", "messages": many}),
        json.dumps({"id": "full", "messages": many[:DEFAULT_MAX_MESSAGES]}),
    ]
    data = "\n".join(lines).encode("utf-8")
    huge, fits, crowd, full = iter_stream(io.BytesIO(data), source="big.jsonl", mode="jsonl")
    assert isinstance(huge, LimitExceeded)
    assert str(huge) == (
        "big.jsonl:1, conversation 'huge', field messages[0]: message has 100001 characters, "
        "over the limit of 100000"
    )
    assert isinstance(crowd, LimitExceeded)
    assert "big.jsonl:3, conversation 'crowd', field messages: 5001 messages exceed" in str(crowd)
    assert isinstance(fits, Conversation) and fits.messages[0].text == at_limit
    assert isinstance(full, Conversation) and len(full.messages) == DEFAULT_MAX_MESSAGES


# --- the span validator -----------------------------------------------------------------------


@st.composite
def spans_against_hostile_text(draw: st.DrawFn) -> tuple[Conversation, dict[str, Any]]:
    texts = draw(st.lists(HOSTILE_TEXT, min_size=1, max_size=3))
    roles = ["user", "assistant", "tool"]
    conv = conversation_from_data(
        [{"role": roles[i % 3], "content": t} for i, t in enumerate(texts)]
    )
    candidates = []
    for i in range(draw(st.integers(0, 5))):
        message = draw(st.sampled_from(conv.messages))
        a = draw(st.integers(0, len(message.text)))
        b = draw(st.integers(a, len(message.text)))
        quote = draw(
            st.just(message.text[a:b])
            | st.text(alphabet=st.sampled_from(NASTY) | st.characters() | SURROGATES, max_size=8)
        )
        start = draw(st.just(a) | st.integers(-5, 10**6))
        end = draw(st.just(start + len(quote)) | st.integers(-5, 10**6))
        candidates.append(
            {
                "id": f"c{i}",
                "span": {"message_id": message.id, "quote": quote, "start": start, "end": end},
                "kind": "OBSERVATION",
                "memory_type": "ASSERTION_EVENT",
                "content": draw(HOSTILE_TEXT | st.text(SURROGATES, min_size=1, max_size=3)),
                "origin": {"user": "USER", "assistant": "MODEL_OUTPUT", "tool": "TOOL"}[
                    message.role.value
                ],
            }
        )
    return conv, {"candidates": candidates}


def assert_sound(report: ValidationReport, conv: Conversation, total: int) -> None:
    """Every accepted span is exactly the transcript's text; every candidate is accounted for;
    the report can be written as a JSON line."""
    for unit in report.accepted:
        message = conv.message(unit.span.message_id)
        assert message is not None
        assert message.text[unit.span.start : unit.span.end] == unit.span.quote
        assert unit.span.quote
    assert len(report.accepted) + len(report.rejections) == total
    report.model_dump_json().encode("utf-8")


@FUZZ
@given(spans_against_hostile_text())
def test_spans_over_any_unicode_are_exact_or_rejected(case: tuple[Conversation, Any]) -> None:
    conv, output = case
    report = validate_extraction(output, conv)
    assert_sound(report, conv, len(output["candidates"]))


@FUZZ
@given(st.lists(JSON_VALUES, max_size=5))
def test_arbitrary_candidate_values_are_rejected_one_by_one(items: list[Any]) -> None:
    conv = conversation_from_data({"id": "c", "messages": [{"role": "user", "content": "hi"}]})
    report = validate_extraction({"candidates": items}, conv)
    assert_sound(report, conv, len(items))


@FUZZ
@given(JSON_VALUES | st.text(max_size=200) | st.binary(max_size=50))
def test_any_model_output_is_a_report_or_an_unreadable_output_error(output: Any) -> None:
    conv = conversation_from_data({"id": "c", "messages": [{"role": "user", "content": "hi"}]})
    report = outcome(lambda: validate_extraction(output, conv), ExtractionOutputError)
    if isinstance(report, ExtractionOutputError):
        assert report.code == "OUTPUT_UNREADABLE"
        return
    report.model_dump_json()


# --- the prompt transcript (what the mock server parses back) ----------------------------------


@FUZZ
@given(st.text(max_size=300))
def test_any_text_is_a_transcript_or_an_input_error(text: str) -> None:
    try:
        conv = parse_transcript(text)
    except InputError:
        return
    assert conv.messages


@FUZZ
@given(st.text(alphabet=st.sampled_from(NASTY + '<>&"\\\n\r/') | st.characters(codec="utf-8"),
               min_size=1, max_size=40))  # fmt: skip
def test_any_conversation_id_stays_inside_its_tag(cid: str) -> None:
    """The conversation id is untrusted input too: it cannot add lines to the transcript."""
    conv = conversation_from_data({"id": cid, "messages": [{"role": "user", "content": "hi"}]})
    user = PROMPT.render(conv)[1]["content"]
    block = user[user.index("<conversation") :].split("\n")
    assert block[0].startswith('<conversation id="') and block[0].endswith('">')
    assert block[1:] == [
        json.dumps({"id": "m0", "role": "user", "text": "hi"}, separators=(",", ":")),
        "</conversation>",
        "",
    ]
    back = parse_transcript(user)
    assert back.id == cid and [m.text for m in back.messages] == ["hi"]


# --- the policy file parser -------------------------------------------------------------------

DEFAULT_TEXT = DEFAULT_POLICY_PATH.read_text(encoding="utf-8")


def parses_or_policy_error(text: str, *, json_format: bool = False) -> None:
    policy = outcome(lambda: parse_policy(text, source="fuzz.toml", json_format=json_format),
                     PolicyError)  # fmt: skip
    if isinstance(policy, PolicyError):
        assert "fuzz.toml" in str(policy)
        return
    assert policy.rules


@FUZZ
@given(st.text(max_size=300), st.booleans())
def test_any_policy_text_is_a_policy_or_a_policy_error(text: str, json_format: bool) -> None:
    parses_or_policy_error(text, json_format=json_format)


@FUZZ
@given(
    st.integers(0, len(DEFAULT_TEXT)),
    st.integers(0, 200),
    st.text(alphabet=st.sampled_from('[]{}="\n,#.x0ABC_ ') | st.characters(), max_size=20),
)
def test_a_damaged_default_policy_is_a_policy_or_a_policy_error(
    at: int, cut: int, insert: str
) -> None:
    parses_or_policy_error(DEFAULT_TEXT[:at] + insert + DEFAULT_TEXT[at + cut :])


@pytest.mark.parametrize(
    ("text", "json_format"),
    [
        ("a = " + "[" * 5000 + "]" * 5000, False),
        ("a = " + "{x = " * 2000 + "1" + "}" * 2000, False),
        ("[" * 5000 + "]" * 5000, True),
        ('{"id": "p", "version": "1", "rules": ' + "[" * 5000 + "]" * 5000 + "}", True),
    ],
)
def test_absurdly_nested_policy_files_are_a_policy_error(text: str, json_format: bool) -> None:
    with pytest.raises(PolicyError, match=r"fuzz\.toml: nested too deeply"):
        parse_policy(text, source="fuzz.toml", json_format=json_format)


def test_a_lone_surrogate_in_a_policy_is_a_policy_error() -> None:
    rule = {"id": "r", "reason": "why", "effect": {"allow": ["PERSONALIZATION"]}}
    text = json.dumps({"id": "p", "version": "1", "description": "\ud800", "rules": [rule]})
    assert "\\ud800" in text  # an ASCII file: the JSON escape is what smuggles it in
    with pytest.raises(PolicyError, match=r"fuzz\.json: contains a lone surrogate"):
        parse_policy(text, source="fuzz.json", json_format=True)


# --- the policy engine over arbitrary (valid) policies ----------------------------------------


def _listed(values: list[Any]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from([str(v) for v in values]), min_size=1, max_size=3, unique=True)


MATCHES = st.fixed_dictionaries(
    {},
    optional={
        "origin_kind": _listed(list(Origin)),
        "memory_type": _listed(list(MemoryType)),
        "kind": _listed(list(CandidateKind)),
        "verification_state": _listed(list(VerificationState)),
        "response_commitment": _listed(list(Commitment)),
        "has_parents": st.booleans(),
        "third_party_personal_data": st.booleans(),
    },
)
LADDER = ["EPHEMERAL", "QUARANTINED", "PROVISIONAL", "ACTIVE"]


@st.composite
def effects(draw: st.DrawFn) -> dict[str, Any]:
    """A consistent effect: allow and forbid disjoint, a grant never above its own cap."""
    uses = draw(st.lists(st.sampled_from([str(c) for c in Capability]), max_size=4, unique=True))
    cut = draw(st.integers(0, len(uses)))
    effect: dict[str, Any] = {"allow": uses[:cut], "forbid": uses[cut:]}
    low, high = sorted(draw(st.lists(st.integers(0, 3), min_size=2, max_size=2)))
    for name, value in (
        ("lifecycle", LADDER[low]),
        ("max_lifecycle", LADDER[high]),
        ("eligible", False),
        ("inherit_parent_obligations", True),
        ("flags", ["FUZZED"]),
    ):
        if draw(st.booleans()):
            effect[name] = value
    if effect == {"allow": [], "forbid": []}:
        effect["flags"] = ["FUZZED"]  # an effect that does nothing is (rightly) refused
    return effect


RULES = st.lists(
    st.builds(lambda m, u, e: {"match": m, "unless": u, "effect": e},
              MATCHES, st.lists(MATCHES, max_size=2), effects()),
    min_size=1, max_size=6,
)  # fmt: skip


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RULES, candidate_batches(max_size=5))
def test_any_valid_policy_decides_every_candidate_and_restriction_wins(
    rules: list[dict[str, Any]], batch: list[Any]
) -> None:
    document = {
        "id": "fuzz",
        "version": "1",
        "rules": [{"id": f"r{i}", "reason": "fuzz", **r} for i, r in enumerate(rules)],
    }
    policy = parse_policy(json.dumps(document), source="fuzz.json", json_format=True)
    decisions = admit(batch, policy)
    assert [d.memory_id for d in decisions] == [c.memory_id for c in batch]
    for decision in decisions:
        assert not set(decision.allowed_uses) & set(decision.forbidden_uses)
        assert decision.rules_fired
        decision.model_dump_json()
    assert [d.input_hash for d in admit(batch, policy)] == [d.input_hash for d in decisions]
