"""The fast paths of the gate decide exactly what the plain definitions decide.

Throughput work replaced a few straightforward evaluations with cheaper ones (rule plans cached
per policy and candidate key, one pre-check before the certification walk, a level-by-level
depth check). Each is compared here with a plain oracle over generated inputs, so a speed-up can
never change a decision, a rejection or its message.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import pytest
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import make_candidate, memory_candidates

from extractor import caseless, validation
from extractor.admission import (
    DEFAULT_DENY,
    Match,
    Policy,
    PolicyDocument,
    decide,
    environment,
    instructions,
    load_policy,
    personal,
)
from extractor.admission.environment import environment_of
from extractor.admission.facts import Facts, facts_for
from extractor.admission.policy import Effect, Rule, TemporalStatus
from extractor.candidates import MemoryCandidate
from extractor.hashing import nested_deeper_than
from extractor.offline import cues as offline_cues
from extractor.offline import draft as offline_draft
from extractor.offline import entities as offline_entities
from extractor.offline import text as offline_text
from extractor.validation import _check_certification, _Reject, check_no_certification
from extractor.vocab import (
    CandidateKind,
    Commitment,
    MemoryType,
    Origin,
    TemporalKind,
    VerificationState,
)

SETTINGS = settings(
    max_examples=examples(75), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

# --- Admission: every rule fires exactly when its match holds and no ``unless`` does ----------

Getter = Callable[[MemoryCandidate, Facts], object]
#: How the policy format defines each match key, read directly off the candidate and its facts.
DEFINITION: dict[str, Getter] = {
    "origin_kind": lambda c, f: c.origin_kind,
    "memory_type": lambda c, f: c.memory_type,
    "kind": lambda c, f: c.kind,
    "verification_state": lambda c, f: c.verification_state,
    "response_commitment": lambda c, f: c.response_commitment,
    "temporal_status": lambda c, f: f.temporal_status,
    "temporal_kind": lambda c, f: c.temporal.kind,
    "has_parents": lambda c, f: bool(c.parent_memory_ids),
    "missing_parents": lambda c, f: bool(f.missing_parents),
    "third_party_personal_data": lambda c, f: f.personal_data is not None,
    "has_environment": lambda c, f: f.environment.complete,
    "harmful_content": lambda c, f: f.harm is not None,
    "untrusted_instruction": lambda c, f: f.instruction is not None,
    "has_observed_at": lambda c, f: c.observed_at is not None,
}


def holds(m: Match, c: MemoryCandidate, facts: Facts, flags: set[str]) -> bool:
    for name, get in DEFINITION.items():
        wanted = getattr(m, name)
        if wanted is None:
            continue
        value = get(c, facts)
        if (value not in wanted) if isinstance(wanted, list) else (value is not wanted):
            return False
    return m.flags is None or bool(flags.intersection(m.flags))


def oracle_fired(c: MemoryCandidate, policy: Policy, as_of: datetime) -> list[str]:
    """Rule ids that fire for a candidate with no decided parents, in policy order."""
    facts = facts_for(c, as_of, tuple(c.parent_memory_ids))
    flags: set[str] = set()
    fired = []
    for rule in policy.rules:
        if holds(rule.match, c, facts, flags) and not any(
            holds(u, c, facts, flags) for u in rule.unless
        ):
            fired.append(rule.id)
            flags.update(rule.effect.flags)
    return fired


def test_the_oracle_defines_every_match_key() -> None:
    assert set(DEFINITION) | {"flags"} == set(Match.model_fields)


def maybe(values: list[Any]) -> st.SearchStrategy[list[Any] | None]:
    return st.none() | st.lists(st.sampled_from(values), min_size=1, max_size=3, unique=True)


BOOL = st.none() | st.booleans()
FLAGS = ["A", "B", "C"]
MATCHES = st.builds(
    Match,
    origin_kind=maybe(list(Origin)),
    memory_type=maybe(list(MemoryType)),
    kind=maybe(list(CandidateKind)),
    verification_state=maybe(list(VerificationState)),
    response_commitment=maybe(list(Commitment)),
    temporal_status=maybe(list(TemporalStatus)),
    temporal_kind=maybe(list(TemporalKind)),
    has_parents=BOOL,
    missing_parents=BOOL,
    third_party_personal_data=BOOL,
    has_environment=BOOL,
    harmful_content=BOOL,
    untrusted_instruction=BOOL,
    has_observed_at=BOOL,
    flags=maybe(FLAGS),
)


@st.composite
def policies(draw: st.DrawFn) -> Policy:
    count = draw(st.integers(1, 8))
    rules = [
        Rule(
            id=f"r{i}",
            reason=f"rule {i}",
            match=draw(MATCHES),
            unless=draw(st.lists(MATCHES, max_size=2)),
            effect=Effect(flags=draw(st.lists(st.sampled_from(FLAGS), min_size=1, max_size=2))),
        )
        for i in range(count)
    ]
    return Policy(PolicyDocument(id="generated", version="1", rules=rules), "<generated>")


PARENTS = st.lists(st.sampled_from(["mem_p1", "mem_p2"]), max_size=2, unique=True)


@pytest.mark.slow  # ~4 s of CPU; the default policy's twin below runs in the default suite
@settings(SETTINGS, max_examples=examples(150))
@given(
    policies(),
    st.lists(memory_candidates(parent_memory_ids=PARENTS), min_size=1, max_size=6),
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2035, 12, 31)),
)
def test_generated_policies_fire_exactly_the_rules_whose_matches_hold(
    policy: Policy, candidates: list[MemoryCandidate], as_of: datetime
) -> None:
    for c in candidates:  # several candidates share the policy's cached plans
        fired = [r.rule_id for r in decide(c, policy, as_of, {}).rules_fired]
        assert [r for r in fired if r != DEFAULT_DENY] == oracle_fired(c, policy, as_of)


DEFAULT_POLICY = load_policy()


@settings(SETTINGS, max_examples=examples(50))
@given(memory_candidates(parent_memory_ids=PARENTS), st.none() | st.datetimes())
def test_the_default_policy_fires_exactly_the_rules_whose_matches_hold(
    c: MemoryCandidate, as_of: datetime | None
) -> None:
    when = as_of or c.observed_at or c.recorded_at
    fired = [r.rule_id for r in decide(c, DEFAULT_POLICY, when, {}).rules_fired]
    assert [r for r in fired if r != DEFAULT_DENY] == oracle_fired(c, DEFAULT_POLICY, when)


# --- Validation: the certification pre-check never lets a claim through ----------------------

WORDS = [
    "verified", "Verified", "VERIFIED", "verifiably", "certified", "CERTIFIED", "proven",
    "Proven", "fact checked", "fact_checked", "Fact--Checked", "fact-check", "factcheck",
    "fact\tcheck", "ground truth", "ground_truth", "Ground-Truth", "groundtruth",
    "confirmed true", "confirmed__true", "CONFIRMED-TRUE", "confirmed  true", "unverified",
    "verıfied", "VERİFIED", "ſpan", "is_verified", "span", "spanish", "FACTUAL_EVIDENCE",
    "background", "confirmed", "truth", "my account", "Austin", "", "x", "42",
]  # fmt: skip
TEXT = st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join) | st.text(max_size=12)
KEYS = st.sampled_from(["content", "span", "span_x", "note", "is_verified", "", *WORDS]) | TEXT
JSON: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=12,
)


def outcome(check: Callable[[Mapping[str, Any], str], None], raw: Any, quote: str) -> Any:
    try:
        check(raw, quote)
    except _Reject as r:
        return (r.code, r.message, r.field)
    return None


@settings(max_examples=examples(50), deadline=None)
@given(st.dictionaries(KEYS, JSON, max_size=5), TEXT)
def test_certification_pre_check_rejects_exactly_what_the_full_walk_rejects(
    raw: dict[str, Any], quote: str
) -> None:
    assert outcome(check_no_certification, raw, quote) == outcome(_check_certification, raw, quote)


@pytest.mark.parametrize(
    ("raw", "rejected"),
    [
        ({"content": "The account is VERIFIED."}, True),
        ({"content": "a fact--checked claim"}, True),
        ({"notes": {"ground_truth": 1}}, True),
        ({"content": "It is proven."}, True),
        ({"content": "Verifiably so."}, True),
        ({"entities": [{"name": "Certified", "type": "OTHER"}]}, True),
        ({"content": "that is ground-truth"}, True),
        ({"content": "the ground__truth"}, True),
        ({"content": "was fact-_-checked"}, True),
        ({"groundtruth": "no"}, True),
        ({"factcheck": "no"}, True),
        ({"notes": {"fact\tcheck": "no"}}, True),
        ({"tags": ["fine", "confirmed_true"]}, True),
        ({"content": "The account is verıfied."}, True),  # IGNORECASE folds the dotless i
        ({"content": "Requested FACTUAL_EVIDENCE in the background."}, False),
        ({"span": {"quote": "verified"}, "content": "ok"}, False),
    ],
)
def test_certification_examples(raw: dict[str, Any], rejected: bool) -> None:
    assert (outcome(check_no_certification, raw, "") is not None) is rejected
    assert outcome(check_no_certification, raw, "") == outcome(_check_certification, raw, "")


# --- Depth: level by level is the same as the definition -------------------------------------


def deeper_than(value: Any, limit: int) -> bool:
    """The definition: a container whose nesting (the root is level 0) reaches ``limit``."""
    if not isinstance(value, Mapping | list | tuple):
        return False
    if limit <= 0:
        return True
    children = value.values() if isinstance(value, Mapping) else value
    return any(deeper_than(child, limit - 1) for child in children)


NESTED: st.SearchStrategy[Any] = st.recursive(
    st.none() | st.integers() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=20,
)


@SETTINGS
@given(NESTED, st.integers(0, 6))
def test_nested_deeper_than_matches_the_definition(value: Any, limit: int) -> None:
    assert nested_deeper_than(value, limit) is deeper_than(value, limit)


# --- Detectors: lowercased ASCII text with case-sensitive twins finds the same ---------------

DETECTOR_WORDS = [
    "My", "SISTER", "his Doctor", "lives in", "Diagnosed", "ADHD", "in Hospital", "Heart Attack",
    "python 3.11", "Version 7", "v2.1.0", "==1.4", "@18", "Ubuntu", "macOS", "commit ABCDEF1",
    "Branch main", "REQUIRES", "with numpy installed", "after reboot", "When ready", "As Root",
    "In A Venv", "ran", "`pip install foo`", "$ make", "git checkout", "the", "fiancée", ".", "\n",
]  # fmt: skip
DETECTOR_TEXT = st.lists(
    st.sampled_from(DETECTOR_WORDS).flatmap(
        lambda w: st.sampled_from([w, w.lower(), w.upper(), w.swapcase()])
    ),
    max_size=8,
).map(" ".join)


@SETTINGS
@given(DETECTOR_TEXT, DETECTOR_TEXT)
def test_detectors_find_what_the_case_insensitive_patterns_find(content: str, quote: str) -> None:
    c = make_candidate(content=content or "x")
    c = c.model_copy(update={"source_span": c.source_span.model_copy(update={"quote": quote})})
    text = f"{c.content}\n{quote}"
    env = environment_of(c)  # the quote only: a message's words, not the model's content
    assert env.version is (environment.VERSION.search(quote) is not None)
    assert env.precondition is (environment.PRECONDITION.search(quote) is not None)
    assert env.command is (environment.COMMAND.search(quote) is not None)
    health = personal.HEALTH.search(text) is not None
    assert ("HEALTH" in personal._categories(text, set())) is health
    relations = {m.group().lower() for m in personal.RELATION.finditer(text)}
    assert set(personal._subjects(c, text)) == relations


# --- caseless: lowercased ASCII text finds what IGNORECASE finds ------------------------------

CASELESS_PATTERNS = [
    personal.HEALTH, personal.RELATION, environment.VERSION, environment.PRECONDITION,
    validation.HEDGE_CUES, validation.APPROX_CUES, validation.REPORTED_CUES,
    validation._CONTENT_HEDGE, validation._CONTENT_APPROX, validation._CONTENT_REPORTED,
    validation._RELATIVE, offline_cues._CERTIFICATION, offline_cues._SELF_CERTIFYING,
    offline_cues._QUESTION_START, offline_text.STATEMENT_START, offline_cues._ASKS,
    offline_cues._HYPOTHETICAL, offline_cues._CONDITIONAL_START, offline_cues._SARCASM,
    offline_cues._JOKE, offline_cues._INJECTION, offline_entities._HEALTH,
    offline_draft._FUTURE_HINT, instructions._INJECTION, instructions._ORDER,
    instructions._PERMISSION,
]  # fmt: skip
#: Words and symbols of the patterns themselves, so generated text often matches them.
PATTERN_TOKENS = sorted(
    {w for p in CASELESS_PATTERNS for w in re.findall(r"[a-z']{2,}|[^\w\s\\()|?:]", p.pattern)}
)
TOKEN = st.sampled_from(
    [*PATTERN_TOKENS, "1", "42", "3.11", "~5", "$", "ſ", "ı", "İ", "é", "\u212a"]
)
CASED = TOKEN.flatmap(lambda w: st.sampled_from([w, w.upper(), w.capitalize(), w.swapcase()]))
MIXED_TEXT = st.lists(
    st.tuples(CASED, st.sampled_from([" ", "", ", ", "\n", "-", "_"])), max_size=10
).map(lambda parts: "".join(a + b for a, b in parts))


@settings(max_examples=examples(60), deadline=None)
@given(MIXED_TEXT)
def test_caseless_search_and_match_agree_with_ignorecase(text: str) -> None:
    for pattern in CASELESS_PATTERNS:
        assert caseless.search(pattern, text) is (pattern.search(text) is not None)
        assert caseless.match(pattern, text) is (pattern.match(text) is not None)


def test_caseless_speeds_up_the_hot_patterns() -> None:
    """Every pattern above but the one with a case-sensitive part gets a fast twin."""
    slow = [p.pattern[:40] for p in CASELESS_PATTERNS if caseless.twin(p) is None]
    assert slow == [offline_cues._SELF_CERTIFYING.pattern[:40]]


@pytest.mark.parametrize(
    "source",
    [
        r"(?-i:VERIFIED)|proven",  # an inline flag keeps a part case-sensitive
        r"Verified",  # an uppercase letter would never match lowercased text
        r"\u017fure",  # an escape the check does not read
        r"ſure",  # the long s folds onto "s"
        r"[Ā-ȁ]x",  # a non-ASCII range may hold such a letter
        r"(a)\1",  # a backreference
    ],
)
def test_caseless_falls_back_when_it_cannot_be_sure(source: str) -> None:
    pattern = re.compile(source, re.IGNORECASE)
    assert caseless.twin(pattern) is None
    for text in ("VERIFIED", "verified", "Sure", "sure", "Āx", "aA"):
        assert caseless.search(pattern, text) is (pattern.search(text) is not None)


def test_caseless_needs_ignorecase() -> None:
    pattern = re.compile("abc")
    assert caseless.twin(pattern) is None
    assert not caseless.search(pattern, "ABC")


def hedges_by_definition(quote: str) -> list[str]:
    found = [(m.start(), m.group(0)) for m in validation.HEDGE_CUES.finditer(quote)]
    for m in validation.APPROX_CUES.finditer(quote):
        found.append((m.start(), re.sub(r"[\s$€£¥~\d.,]+$", "", m.group(0)).strip() or "~"))
    return list(dict.fromkeys(word for _, word in sorted(found)))


@SETTINGS
@given(MIXED_TEXT)
def test_offline_hedges_and_health_words_are_found_as_by_ignorecase(text: str) -> None:
    assert offline_draft.hedges_in(text) == hedges_by_definition(text)
    health = [e.name for e in offline_entities.entities_in(text) if e.type == "HEALTH_CONDITION"]
    assert health == list(
        dict.fromkeys(m.group(0).lower() for m in offline_entities._HEALTH.finditer(text))
    )


# --- Remembered readings: the same answer as reading afresh, never a shared mutable -----------


def test_remembered_time_tells_apart_equal_instants_in_other_time_zones() -> None:
    from datetime import timedelta, timezone

    utc = datetime(2026, 3, 1, 23, 30, tzinfo=UTC)
    tokyo = utc.astimezone(timezone(timedelta(hours=9)))  # the same instant, 2 March there
    assert utc == tokyo
    for anchor in (utc, tokyo, utc, tokyo):
        fresh = offline_draft.TemporalScope(**offline_draft._temporal_of("I moved today", anchor))
        assert offline_draft.temporal_for("I moved today", anchor) == fresh
    assert offline_draft.temporal_for("I moved today", utc) != offline_draft.temporal_for(
        "I moved today", tokyo
    )


def test_remembered_entities_and_uncertainty_are_fresh_lists() -> None:
    text = "My sister Ana has asthma, I think."
    first, second = offline_entities.entities_in(text), offline_entities.entities_in(text)
    assert first == second == list(offline_entities._entities(text))
    first.clear()
    assert offline_entities.entities_in(text) == second
    one = offline_draft.uncertainty_for(text)
    one.hedges.append("changed")
    assert offline_draft.uncertainty_for(text).hedges == ["I think"]
