"""Time on both axes, supersession and conflict across conversations (seed §3, §12)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import T0, Clock, result, user_says

from extractor import MemoryStore
from extractor.store import DerivedClaim
from extractor.store.apply import apply_event
from extractor.store.timeaxes import system_time
from extractor.store.timeline import Keyed, claim_key, resolve


@pytest.fixture
def store():
    with MemoryStore(clock=Clock()) as s:
        yield s


def proposition(store: MemoryStore, cid: str, text: str, when: str, subject: str = "u1") -> str:
    report = store.ingest(user_says(cid, text, when), subject=subject)
    (claim,) = [store.claim(m) for m in report.stored if store.claim(m).kind == "PROPOSITION"]
    return claim.claim_id


def current(store: MemoryStore, **kw) -> set[str]:
    """Claims with current-state authority (not superseded)."""
    return {c.claim_id for c in store.claims(**kw) if c.superseded_by is None}


def test_moving_to_berlin_supersedes_living_in_paris_and_keeps_the_old_version(store):
    paris = proposition(store, "c1", "I live in Paris.", "2026-03-01T10:00:00")
    report = store.ingest(
        user_says("c2", "I moved to Berlin.", "2026-09-01T10:00:00"), subject="u1"
    )
    assert report.superseded == [paris]
    (berlin,) = [m + ":c1" for m in report.stored if store.claim(m).kind == "PROPOSITION"]
    old = store.claim(paris)
    assert old.lifecycle_state == "SUPERSEDED" and old.superseded_by == berlin
    assert old.valid_to == "2026-09-01T10:00:00" and old.superseded_at is not None
    assert berlin in current(store) and paris not in current(store)
    in_may = {c.claim_id for c in store.claims(as_of="2026-05-01")}
    assert paris in in_may and berlin not in in_may
    assert store.claim(berlin).valid_from == "2026-09-01T10:00:00"
    assert [v.lifecycle_state for v in store.history(paris)][-1] == "SUPERSEDED"
    assert store.history(paris)[0].lifecycle_state == "PROVISIONAL"  # the old record is kept


def test_supersession_does_not_depend_on_the_order_conversations_arrive_in():
    orders = []
    for texts in (
        [
            ("c1", "I live in Paris.", "2026-03-01T10:00:00"),
            ("c2", "I moved to Berlin.", "2026-09-01T10:00:00"),
        ],
        [
            ("c2", "I moved to Berlin.", "2026-09-01T10:00:00"),
            ("c1", "I live in Paris.", "2026-03-01T10:00:00"),
        ],
    ):
        with MemoryStore(clock=Clock()) as s:
            for cid, text, when in texts:
                s.ingest(user_says(cid, text, when), subject="u1")
            orders.append(
                {
                    (c.content, c.lifecycle_state, c.valid_to)
                    for c in s.claims()
                    if c.kind == "PROPOSITION"
                }
            )
    assert orders[0] == orders[1]


def test_model_output_never_supersedes_a_user_assertion_it_conflicts_instead(store):
    paris = proposition(store, "c1", "I live in Paris.", "2026-03-01T10:00:00")
    store.ingest(
        result("m", ("assistant", "User lives in Rome.", "2026-09-01T10:00:05")), subject="u1"
    )
    rome = next(c for c in store.claims() if c.content == "User lives in Rome.")
    kept = store.claim(paris)
    assert kept.lifecycle_state == "PROVISIONAL" and kept.superseded_by is None
    assert kept.verification_state != "CONFLICTING"  # model output cannot demote the user
    assert rome.verification_state == "CONFLICTING" and "CONFLICTING" in rome.flags
    (row,) = store.backend.select("conflicts")
    assert {row["claim_a"], row["claim_b"]} == {paris, rome.claim_id}
    assert json.loads(row["flag_json"]) == [rome.claim_id]


def test_two_values_said_at_the_same_time_conflict_instead_of_retiring_either(store):
    store.ingest(
        user_says("c", "I live in Paris. I live in Berlin.", "2026-03-01T10:00:00"), subject="u1"
    )
    props = [c for c in store.claims() if c.kind == "PROPOSITION"]
    assert len(props) == 2
    for c in props:
        assert c.superseded_by is None and c.verification_state == "CONFLICTING"
        assert set(c.allowed_uses) <= {"CONVERSATIONAL_CONTEXT"}


def test_an_unrelated_fact_is_never_retired_graphiti_1728(store):
    """A new fact about the user retires only the earlier value of the same relation."""
    facts = {
        t: proposition(store, f"c{i}", t, f"2026-0{i + 1}-01T10:00:00")
        for i, t in enumerate(
            [
                "I work at Acme.",
                "My manager is Alice.",
                "I live in Paris.",
                "I prefer tea.",
                "My name is Sam.",
            ]
        )
    }
    proposition(store, "new", "I moved to Berlin.", "2026-09-01T10:00:00")
    retired = {t for t, cid in facts.items() if store.claim(cid).superseded_by is not None}
    assert retired == {"I live in Paris."}
    for i, text in enumerate(["My email is sam@example.com.", "My wife is Dana.",
                              "My favorite color is blue.", "I am 34 years old."]):  # fmt: skip
        facts[text] = proposition(store, f"w{i}", text, f"2026-10-0{i + 1}T10:00:00")
    proposition(store, "newer", "My boss is Bob.", "2026-11-01T10:00:00")
    retired = {t for t, cid in facts.items() if store.claim(cid).superseded_by is not None}
    assert retired == {"I live in Paris.", "My manager is Alice."}


def test_without_a_known_subject_nothing_is_superseded(store):
    a = proposition(store, "c1", "I live in Paris.", "2026-03-01T10:00:00", subject=None)  # type: ignore[arg-type]
    proposition(store, "c2", "I moved to Berlin.", "2026-09-01T10:00:00", subject=None)  # type: ignore[arg-type]
    assert store.claim(a).superseded_by is None


def test_other_subjects_are_other_keys(store):
    a = proposition(store, "c1", "I live in Paris.", "2026-03-01T10:00:00", subject="ann")
    proposition(store, "c2", "I moved to Berlin.", "2026-09-01T10:00:00", subject="bob")
    assert store.claim(a).superseded_by is None


def test_revoking_the_newer_claim_gives_the_older_one_its_authority_back(store):
    paris = proposition(store, "c1", "I live in Paris.", "2026-03-01T10:00:00")
    berlin = proposition(store, "c2", "I moved to Berlin.", "2026-09-01T10:00:00")
    store.revoke(berlin, reason="the user was joking", trigger="USER_CORRECTION")
    back = store.claim(paris)
    assert back.superseded_by is None and back.valid_to is None
    assert back.lifecycle_state == "PROVISIONAL"


# --- who was CEO on June 20 / what did we believe on July 2 (seed §12) -----------------------------


def ceo_store(clock: Clock) -> MemoryStore:
    store = MemoryStore(clock=clock)
    clock.set(datetime(2025, 1, 3, tzinfo=UTC))
    alice_src = store.ingest(
        result("r1", ("tool", "Registry: Alice is the CEO of Acme.", "2025-01-02T10:00:00"))
    ).stored[0]
    store.derive(
        [
            DerivedClaim(
                content="Alice is the CEO of Acme.", requires=[alice_src], valid_from="2025-01-01"
            )
        ],
        activity="PROFILE",
        produced_by="hr",
    )
    clock.set(datetime(2026, 7, 5, tzinfo=UTC))  # system_recorded = 2026-07-05
    bob_src = store.ingest(
        result("r2", ("tool", "Registry: Bob is the CEO of Acme.", "2026-07-03T10:00:00"))
    ).stored[0]
    store.derive(
        [
            DerivedClaim(
                content="Bob is the CEO of Acme.", requires=[bob_src], valid_from="2026-07-01"
            )
        ],
        activity="PROFILE",
        produced_by="hr",
    )
    return store


def ceo(store: MemoryStore, **kw) -> set[str]:
    return {
        c.content
        for c in store.claims(**kw)
        if "CEO" in c.content and c.memory_type == "DERIVED_SUMMARY"
    }


def test_who_was_ceo_on_june_20_and_what_did_we_believe_on_july_2():
    store = ceo_store(Clock())
    assert ceo(store, as_of="2026-06-20") == {"Alice is the CEO of Acme."}
    assert ceo(store, as_of="2026-07-10") == {"Bob is the CEO of Acme."}
    believed = ceo(store, as_of="2026-07-10", known_at="2026-07-02T00:00:00+00:00")
    assert believed == {"Alice is the CEO of Acme."}  # Bob was not recorded until July 5
    assert ceo(store, known_at="2024-12-31T00:00:00+00:00") == set()


def replay_until(store: MemoryStore, known_at: str) -> MemoryStore:
    """The oracle: a fresh store fed the events recorded up to ``known_at``, in order."""
    fresh = MemoryStore()
    for row in store.backend.events():
        if row["at"] <= known_at:
            fresh.backend.append_event({k: v for k, v in row.items() if k != "seq"})
            apply_event(fresh._projector, row)
    return fresh


def view(claims) -> set[tuple]:
    return {
        (
            c.claim_id,
            c.lifecycle_state,
            c.valid_from,
            c.valid_to,
            tuple(c.allowed_uses),
            c.superseded_by,
            c.support_label,
        )
        for c in claims
    }


TEXTS = [
    "I live in Paris.",
    "I moved to Berlin.",
    "I live in Rome.",
    "I work at Acme.",
    "I work for Globex now.",
    "My manager is Alice.",
    "My new manager is Bob.",
]


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(TEXTS), st.integers(1, 12), st.integers(0, 30)),
        min_size=1,
        max_size=6,
    ),
    st.lists(st.tuples(st.integers(0, 200), st.integers(1, 12)), min_size=1, max_size=4),
)
def test_as_of_and_known_at_answer_exactly_as_a_replay_of_the_events(facts, queries):
    clock = Clock()
    store = MemoryStore(clock=clock)
    for n, (text, month, gap) in enumerate(facts):
        clock.set(clock.now + timedelta(days=gap))
        store.ingest(user_says(f"c{n}", text, f"2025-{month:02d}-15T10:00:00"), subject="u1")
    for day, month in queries:
        known_at = system_time(T0 + timedelta(days=day))
        as_of = f"2025-{month:02d}-20"
        oracle = replay_until(store, known_at)
        assert view(store.claims(as_of=as_of, known_at=known_at)) == view(
            oracle.claims(as_of=as_of)
        )


def test_resolution_never_retires_a_different_relation_generated():
    """Generated 'mentions the entity' suite: keys of other relations are never touched."""
    relations = ["lives_in", "works_at", "manager", "name"]
    for n in range(200):
        keyed = {
            r: [
                Keyed(f"{r}-{i}", f"v{(i * 7 + n) % 3}", f"2026-{i + 1:02d}-01", 2)
                for i in range(1 + n % 4)
            ]
            for r in relations
        }
        for r, group in keyed.items():
            res = resolve(group)
            assert all(o.startswith(r) and new.startswith(r) for o, new, _ in res.supersessions)


def test_the_normalizer_keys_only_functional_relations():
    assert claim_key("User prefers tea.", "u1", proposition=True) is None
    assert claim_key("User likes Paris.", "u1", proposition=True) is None
    assert claim_key("User lives in Paris.", None, proposition=True) is None
    assert claim_key("User lives in Paris.", "u1", proposition=False) is None
    key = claim_key("User just moved to New York last month.", "u1", proposition=True)
    assert key is not None and (key.relation, key.object) == ("lives_in", "new york")


@pytest.mark.parametrize(
    ("content", "key"),
    [
        ("User's boss is Bob.", ("manager", "bob", None)),
        ("User reports to Carol.", ("manager", "carol", None)),
        ("User is employed at Initech.", ("works_at", "initech", None)),
        ("User works as a designer at Figma.", ("works_at", "figma", None)),
        ("User is a nurse at St Mary's.", ("works_at", "st mary's", None)),
        ("User relocated from Paris to Rome.", ("lives_in", "rome", None)),
        ("User's home is in Lyon.", ("lives_in", "lyon", None)),
        ("User lives in Berlin, Germany.", ("lives_in", "berlin, germany", None)),
        ("User is based in Austin now.", ("lives_in", "austin", None)),
        ("User's email is sam@example.com.", ("email", "sam@example.com", None)),
        ("User's phone number is 555-0101.", ("phone", "555-0101", None)),
        ("User's birthday is March 3.", ("birthday", "march 3", None)),
        ("User's wife is Dana.", ("partner", "dana", None)),
        ("User is 34 years old.", ("age", "34", None)),
        ("User's favorite color is blue.", ("favorite", "blue", "color")),
        ("User's name is Will.", ("name", "will", None)),
        ("User no longer lives in Paris.", None),
        ("User used to live in Madrid.", None),
        ("User might move to Oslo.", None),
        ("User thinks they will move to Oslo.", None),
        ("User doesn't work at Acme.", None),
    ],
)
def test_the_widened_normalizer_keys_what_it_can_resolve_and_nothing_else(content, key):
    found = claim_key(content, "u1", proposition=True)
    assert (None if found is None else (found.relation, found.object, found.scope)) == key


def test_a_value_that_may_be_the_same_conflicts_instead_of_superseding(store):
    berlin = proposition(store, "c1", "I live in Berlin.", "2026-03-01T10:00:00")
    precise = proposition(store, "c2", "I live in Berlin, Germany.", "2026-09-01T10:00:00")
    assert store.claim(berlin).superseded_by is None
    assert store.claim(berlin).verification_state == "CONFLICTING"
    assert store.claim(precise).verification_state == "CONFLICTING"


def test_a_birthday_is_never_superseded_a_different_one_conflicts(store):
    first = proposition(store, "c1", "My birthday is March 3.", "2026-03-01T10:00:00")
    second = proposition(store, "c2", "My birthday is March 5.", "2026-09-01T10:00:00")
    assert store.claim(first).superseded_by is None
    assert {store.claim(first).verification_state, store.claim(second).verification_state} == {
        "CONFLICTING"
    }


def test_without_a_known_time_a_different_value_conflicts_instead_of_superseding(store):
    paris = proposition(store, "c1", "I live in Paris.", "2026-03-01T10:00:00")
    untimed = store.ingest(result("c2", ("user", "I moved to Berlin.")), subject="u1")
    (berlin,) = [m for m in untimed.stored if store.claim(m).kind == "PROPOSITION"]
    assert store.claim(paris).superseded_by is None
    assert store.claim(paris).verification_state == "CONFLICTING"
    assert store.claim(berlin).verification_state == "CONFLICTING"


def test_favorites_of_different_categories_are_different_keys(store):
    color = proposition(store, "c1", "My favorite color is blue.", "2026-03-01T10:00:00")
    proposition(store, "c2", "My favorite food is pizza.", "2026-09-01T10:00:00")
    assert store.claim(color).superseded_by is None
    green = proposition(store, "c3", "My favorite color is green.", "2026-10-01T10:00:00")
    assert store.claim(color).superseded_by == green
