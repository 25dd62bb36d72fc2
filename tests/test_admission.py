"""The default admission policy on the seed chapter's exercises and metamorphic tests.

Exercises 1 and 6 go through the real path (conversation → validation → system-built
candidates → admission), so they also check that the verification states the system assigns
lead to the decisions the seed expects.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from strategies import make_candidate

from extractor.admission import DEFAULT_DENY, Policy, admit, load_policy
from extractor.candidates import MemoryCandidate, Provenance, build_candidates
from extractor.conversation import Conversation, conversation_from_data
from extractor.decisions import AdmissionDecision
from extractor.extraction import Entity, TemporalScope
from extractor.hashing import canonical_json
from extractor.validation import validate_extraction
from extractor.vocab import (
    CandidateKind,
    Capability,
    Commitment,
    LifecycleState,
    MemoryType,
    Origin,
    TemporalKind,
    VerificationState,
)

C = Capability
POLICY = load_policy()
PROV = Provenance(
    model="offline", prompt_id="p", prompt_version="1", prompt_hash="h", schema_version="1",
    extractor_version="0",
)  # fmt: skip


def candidates_from(conv: Conversation, units: list[dict[str, Any]]) -> list[MemoryCandidate]:
    report = validate_extraction({"candidates": units}, conv)
    assert report.ok, report.feedback()
    return build_candidates(
        report.accepted, conv, provenance=PROV, recorded_at=datetime(2026, 9, 1)
    )


def unit(cid: str, conv: Conversation, mid: str, quote: str, **kw: Any) -> dict[str, Any]:
    text = conv.message(mid).text  # type: ignore[union-attr]
    start = text.index(quote)
    span = {"message_id": mid, "quote": quote, "start": start, "end": start + len(quote)}
    return {"id": cid, "span": span, **kw}


def fired(decision: AdmissionDecision) -> list[str]:
    return [r.rule_id for r in decision.rules_fired]


# --- Exercise 1: a typed memory gate ------------------------------------------------------------

EX1 = conversation_from_data(
    {
        "id": "exercise-1",
        "messages": [
            {"role": "user", "content": "I prefer dark mode in every editor.",
             "timestamp": "2026-08-30T18:00:00"},
            {"role": "assistant", "content": "Your build fails because the cache is corrupted.",
             "commitment": "PERMIT", "timestamp": "2026-08-30T18:30:00"},
            {"role": "tool", "name": "shell", "timestamp": "2026-08-30T18:32:00",
             "content": "On branch main\nnothing to commit, working tree clean"},
            {"role": "tool", "name": "pytest", "timestamp": "2026-08-30T18:35:00",
             "content": "FAILED tests/test_cache.py::test_flush after the repair"},
        ],
    }
)  # fmt: skip


@pytest.fixture(scope="module")
def exercise_1() -> dict[str, tuple[MemoryCandidate, AdmissionDecision]]:
    units = [
        unit("tool", EX1, "m2", "nothing to commit, working tree clean", kind="OBSERVATION",
             memory_type="TOOL_OBSERVATION", origin="TOOL",
             content="git status returned a clean working tree at 18:32.",
             requested_uses=["FACTUAL_EVIDENCE"]),
        unit("pref", EX1, "m0", "I prefer dark mode in every editor.", kind="PROPOSITION",
             memory_type="PREFERENCE", origin="USER", content="User prefers dark mode in every editor.",
             requested_uses=["PERSONALIZATION", "FACTUAL_EVIDENCE"]),
        unit("inference", EX1, "m1", "Your build fails because the cache is corrupted.",
             kind="PROPOSITION", memory_type="MODEL_INFERENCE", origin="MODEL_OUTPUT",
             content="The user's build fails because the cache is corrupted.",
             requested_uses=["FACTUAL_EVIDENCE", "AUTONOMOUS_ACTION_JUSTIFICATION"]),
        unit("failure", EX1, "m3", "FAILED tests/test_cache.py::test_flush after the repair",
             kind="OBSERVATION", memory_type="FAILURE_EXPERIENCE", origin="TOOL",
             content="The cache repair failed: tests/test_cache.py::test_flush still fails.",
             requested_uses=["PROCEDURE_IMITATION", "REGRESSION_TEST"]),
    ]  # fmt: skip
    cands = candidates_from(EX1, units)
    decisions = admit(cands)
    return {c.candidate_id: (c, d) for c, d in zip(cands, decisions, strict=True)}


def test_exercise_1_verified_tool_observation_is_evidence_as_of_its_time(exercise_1):
    cand, d = exercise_1["tool"]
    assert (cand.origin_kind, cand.verification_state) == (
        Origin.TOOL, VerificationState.VERIFIED_OBSERVATION_OF_EVENT)  # fmt: skip
    assert d.persist and d.lifecycle_state is LifecycleState.ACTIVE
    assert C.FACTUAL_EVIDENCE in d.allowed_uses
    assert d.evidence_as_of == "2026-08-30T18:32:00"  # clean at 18:32, not clean forever
    assert C.AUTONOMOUS_ACTION_JUSTIFICATION not in d.allowed_uses
    assert d.denied_requested_uses == []


def test_exercise_1_user_preference_personalizes(exercise_1):
    cand, d = exercise_1["pref"]
    assert cand.origin_kind is Origin.USER
    assert d.lifecycle_state is LifecycleState.ACTIVE
    assert d.allowed_uses == [C.PERSONALIZATION, C.CONVERSATIONAL_CONTEXT]
    assert [(x.use, x.rule_id) for x in d.denied_requested_uses] == [
        (C.FACTUAL_EVIDENCE, "unverified-not-evidence")
    ]


def test_exercise_1_model_inference_cannot_become_factual_evidence_through_admission(exercise_1):
    cand, d = exercise_1["inference"]
    assert (cand.origin_kind, cand.verification_state) == (
        Origin.MODEL_OUTPUT, VerificationState.UNVERIFIED)  # fmt: skip
    assert d.persist and d.lifecycle_state is LifecycleState.QUARANTINED
    assert d.allowed_uses == [C.REGRESSION_TEST]
    assert {C.FACTUAL_EVIDENCE, C.AUTONOMOUS_ACTION_JUSTIFICATION} <= set(d.forbidden_uses)
    denied = {x.use: x.rule_id for x in d.denied_requested_uses}
    assert denied == {
        C.FACTUAL_EVIDENCE: "model-output-never-evidence",
        C.AUTONOMOUS_ACTION_JUSTIFICATION: "model-output-never-evidence",
    }
    assert d.eligible_for_admission  # released under PERMIT: eligible, yet only quarantined


def test_exercise_1_failed_repair_is_for_regression_and_repair_never_imitation(exercise_1):
    _, d = exercise_1["failure"]
    assert d.lifecycle_state is LifecycleState.ACTIVE
    assert d.allowed_uses == [C.REPAIR_PLANNING, C.REGRESSION_TEST]
    assert C.PROCEDURE_IMITATION in d.forbidden_uses
    assert [(x.use, x.rule_id) for x in d.denied_requested_uses] == [
        (C.PROCEDURE_IMITATION, "failure-experience-regression")
    ]


def test_exercise_1_every_decision_names_policy_and_rules_in_order(exercise_1):
    for _, d in exercise_1.values():
        assert (d.policy_id, d.policy_version) == (POLICY.id, POLICY.version)
        order = [r.id for r in POLICY.rules]
        assert fired(d) == sorted(fired(d), key=order.index) and fired(d)
        assert all(r.rule_hash == POLICY.rule_hashes[r.rule_id] for r in d.rules_fired)


# --- Exercise 6: assertion event versus proposition ---------------------------------------------

EX6 = conversation_from_data(
    {"id": "exercise-6", "messages": [
        {"role": "user", "content": "My manager is Alice.", "timestamp": "2024-05-10T09:00:00"}]}
)  # fmt: skip


def test_exercise_6_event_and_proposition_get_different_capabilities():
    event = unit("c1", EX6, "m0", "My manager is Alice.", kind="OBSERVATION",
                 memory_type="ASSERTION_EVENT", origin="USER",
                 content="User stated that their manager is Alice.",
                 entities=[{"name": "Alice", "type": "PERSON"}])  # fmt: skip
    prop = unit("c2", EX6, "m0", "My manager is Alice.", kind="PROPOSITION",
                memory_type="WORLD_PROPOSITION", origin="USER", content="User's manager is Alice.",
                entities=[{"name": "Alice", "type": "PERSON"}], parent_ids=["c1"],
                requested_uses=["FACTUAL_EVIDENCE", "PERSONALIZATION"])  # fmt: skip
    ev, pr = candidates_from(EX6, [event, prop])
    d_ev, d_pr = admit([ev, pr])
    # the event: the system observed the user say it -- evidence that it was said
    assert d_ev.lifecycle_state is LifecycleState.ACTIVE
    assert C.FACTUAL_EVIDENCE in d_ev.allowed_uses
    # the proposition: provisional at most, personalization and context, never evidence
    assert d_pr.lifecycle_state is LifecycleState.PROVISIONAL
    assert d_pr.allowed_uses == [C.PERSONALIZATION, C.CONVERSATIONAL_CONTEXT]
    assert {C.FACTUAL_EVIDENCE, C.AUTONOMOUS_ACTION_JUSTIFICATION} <= set(d_pr.forbidden_uses)
    assert [x.use for x in d_pr.denied_requested_uses] == [C.FACTUAL_EVIDENCE]
    assert d_pr.inherited_from == [ev.memory_id]
    assert "THIRD_PARTY_PERSONAL_DATA" not in d_pr.flags  # a manager's name is not personal data


# --- Exercise 2: trust laundering through summaries ---------------------------------------------


def summary_chain() -> list[MemoryCandidate]:
    m1 = make_candidate("mem_m1", requested_uses=[C.FACTUAL_EVIDENCE])
    chain = [m1]
    for name in ("mem_m2", "mem_m3", "mem_m4"):
        chain.append(make_candidate(
            name, origin_kind=Origin.MEMORY_DERIVED, memory_type=MemoryType.DERIVED_SUMMARY,
            content="Third-quarter revenue was about forty-six million dollars.",
            parent_memory_ids=[chain[-1].memory_id], requested_uses=[C.FACTUAL_EVIDENCE],
        ))  # fmt: skip
    return chain


def test_exercise_2_summaries_of_model_output_never_gain_factual_evidence():
    decisions = admit(summary_chain())
    m4 = decisions[-1]
    assert m4.inherited_from == ["mem_m1", "mem_m2", "mem_m3"]  # still linked to m1
    for d in decisions:
        assert C.FACTUAL_EVIDENCE not in d.allowed_uses
        assert d.lifecycle_state is LifecycleState.QUARANTINED
    assert "derived-inherits-parent-obligations" in fired(m4)
    assert m4.denied_requested_uses[0].use is C.FACTUAL_EVIDENCE


def test_exercise_2_independent_verified_source_lets_the_policy_upgrade_a_new_version():
    chain = summary_chain()
    verified = make_candidate(
        "mem_m5", origin_kind=Origin.EXTERNAL_SOURCE, memory_type=MemoryType.EXTERNAL_SOURCE_CLAIM,
        verification_state=VerificationState.VERIFIED, content="Q3 revenue was $46.1 million.",
        parent_memory_ids=["mem_m4"], requested_uses=[C.FACTUAL_EVIDENCE],
    )  # fmt: skip
    *old, new = admit([*chain, verified])
    assert C.FACTUAL_EVIDENCE not in old[-1].allowed_uses
    assert new.lifecycle_state is LifecycleState.ACTIVE
    assert C.FACTUAL_EVIDENCE in new.allowed_uses and not new.denied_requested_uses
    assert "independent-verification-resolves-lineage" in fired(new)
    assert "derived-inherits-parent-obligations" not in fired(new)
    # a "verified" summary is not independent: transformation never upgrades provenance
    laundered = verified.model_copy(update={"origin_kind": Origin.MEMORY_DERIVED})
    assert C.FACTUAL_EVIDENCE not in admit([*chain, laundered])[-1].allowed_uses


def test_seed_governed_store_summary_of_verified_and_unverified_stays_quarantined():
    m1 = make_candidate("mem_m1")
    m2 = make_candidate("mem_m2", origin_kind=Origin.EXTERNAL_SOURCE,
                        memory_type=MemoryType.EXTERNAL_SOURCE_CLAIM,
                        verification_state=VerificationState.VERIFIED,
                        content="Q2 revenue was $43.8M.")  # fmt: skip
    m3 = make_candidate("mem_m3", origin_kind=Origin.MEMORY_DERIVED,
                        memory_type=MemoryType.DERIVED_SUMMARY, parent_memory_ids=["mem_m1", "mem_m2"],
                        content="Q2 revenue was $43.8M and Q3 about $46M.")  # fmt: skip
    d1, d2, d3 = admit([m3, m2, m1])  # batch order does not matter: parents are decided first
    assert d3.lifecycle_state is LifecycleState.QUARANTINED
    assert d2.lifecycle_state is LifecycleState.ACTIVE and C.FACTUAL_EVIDENCE in d2.allowed_uses
    assert d1.lifecycle_state is LifecycleState.QUARANTINED
    assert C.FACTUAL_EVIDENCE not in d1.allowed_uses and d1.inherited_from == ["mem_m1", "mem_m2"]


# --- Section 19: metamorphic tests --------------------------------------------------------------


def test_same_content_from_verified_source_vs_model_output_loses_factual_admissibility():
    text = "Q2 revenue was $43.8M."
    source = make_candidate(content=text, origin_kind=Origin.EXTERNAL_SOURCE,
                            memory_type=MemoryType.EXTERNAL_SOURCE_CLAIM,
                            verification_state=VerificationState.VERIFIED)  # fmt: skip
    model = source.model_copy(
        update={"origin_kind": Origin.MODEL_OUTPUT, "memory_type": MemoryType.MODEL_INFERENCE,
                "verification_state": VerificationState.UNVERIFIED}
    )  # fmt: skip
    (d_source,), (d_model,) = admit([source]), admit([model])
    assert C.FACTUAL_EVIDENCE in d_source.allowed_uses
    assert C.FACTUAL_EVIDENCE not in d_model.allowed_uses
    assert C.FACTUAL_EVIDENCE in d_model.forbidden_uses


def test_hold_to_permit_makes_eligible_but_never_auto_admits():
    held = make_candidate(response_commitment=Commitment.HOLD,
                          verification_state=VerificationState.INSUFFICIENT_EVIDENCE)  # fmt: skip
    permitted = held.model_copy(update={"response_commitment": Commitment.PERMIT,
                                        "verification_state": VerificationState.UNVERIFIED})  # fmt: skip
    (d_hold,), (d_permit,) = admit([held]), admit([permitted])
    assert not d_hold.eligible_for_admission and "HELD_RESPONSE" in d_hold.flags
    assert d_hold.lifecycle_state is not LifecycleState.ACTIVE
    assert C.FACTUAL_EVIDENCE not in d_hold.allowed_uses
    assert d_permit.eligible_for_admission
    assert d_permit.lifecycle_state is not LifecycleState.ACTIVE
    # even a verified model claim under PERMIT is not admitted automatically
    verified = permitted.model_copy(update={"verification_state": VerificationState.VERIFIED})
    (d_verified,) = admit([verified])
    assert d_verified.lifecycle_state is LifecycleState.PROVISIONAL
    assert "permit-is-eligibility-not-admission" in fired(d_verified)


def test_held_user_facing_claim_never_becomes_active_factual_memory_whatever_its_origin():
    cand = make_candidate(origin_kind=Origin.EXTERNAL_SOURCE, memory_type=MemoryType.EXTERNAL_SOURCE_CLAIM,
                          verification_state=VerificationState.VERIFIED,
                          response_commitment=Commitment.HOLD)  # fmt: skip
    (d,) = admit([cand])
    assert d.lifecycle_state is LifecycleState.QUARANTINED
    assert C.FACTUAL_EVIDENCE not in d.allowed_uses


def test_moving_as_of_past_valid_to_removes_current_state_authority():
    cand = make_candidate(origin_kind=Origin.EXTERNAL_SOURCE, memory_type=MemoryType.EXTERNAL_SOURCE_CLAIM,
                          verification_state=VerificationState.VERIFIED, content="Bob is CEO of Globex.",
                          temporal=TemporalScope(kind=TemporalKind.CURRENT, valid_from="2026-07-01",
                                                 valid_to="2026-12-31"))  # fmt: skip
    (before,) = admit([cand], as_of=datetime(2026, 9, 1))
    (after,) = admit([cand], as_of=datetime(2027, 1, 1))
    assert C.AUTONOMOUS_ACTION_JUSTIFICATION in before.allowed_uses
    assert before.evidence_as_of is None and "STALE" not in before.flags
    assert C.AUTONOMOUS_ACTION_JUSTIFICATION in after.forbidden_uses
    assert "STALE" in after.flags and after.evidence_as_of == "2026-12-31"
    assert after.as_of == datetime(2027, 1, 1)
    detail = next(
        r.detail for r in after.rules_fired if r.rule_id == "expired-loses-current-authority"
    )
    assert detail and "EXPIRED as of 2027-01-01" in detail


def test_as_of_none_judges_each_candidate_at_its_own_time_and_never_reads_the_clock():
    past = make_candidate(temporal=TemporalScope(kind=TemporalKind.PAST, valid_to="2019"),
                          origin_kind=Origin.USER, memory_type=MemoryType.WORLD_PROPOSITION)  # fmt: skip
    (d,) = admit([past])
    assert d.as_of == past.observed_at and "STALE" in d.flags
    untimed = past.model_copy(update={"observed_at": None})
    assert admit([untimed])[0].as_of == untimed.recorded_at


# --- Other seed rules ---------------------------------------------------------------------------


def test_tool_observation_without_time_is_not_evidence():
    cand = make_candidate(origin_kind=Origin.TOOL, memory_type=MemoryType.TOOL_OBSERVATION,
                          kind=CandidateKind.OBSERVATION, observed_at=None,
                          verification_state=VerificationState.VERIFIED_OBSERVATION_OF_EVENT)  # fmt: skip
    (d,) = admit([cand])
    assert C.FACTUAL_EVIDENCE in d.forbidden_uses and "NO_OBSERVATION_TIME" in d.flags


@pytest.mark.parametrize(
    ("content", "verified", "imitable", "rule"),
    [
        ("Ran `pip install foo==2.1` on Ubuntu 22.04 and the tests passed.", True, True, None),
        # the text says it passed; nothing else established it (issue 17, item 6)
        ("Ran `pip install foo==2.1` on Ubuntu 22.04 and the tests passed.", False, False,
         "procedure-success-not-established"),
        ("Restarting the router fixed it.", True, False,
         "procedure-without-environment-not-imitable"),
        ("Ran `make deploy` and it worked.", True, False,  # command, no version or precondition
         "procedure-without-environment-not-imitable"),
    ],
)  # fmt: skip
def test_a_procedure_is_imitable_only_verified_and_with_its_environment(
    content: str, verified: bool, imitable: bool, rule: str | None
):
    state = VerificationState.VERIFIED if verified else VerificationState.UNVERIFIED
    cand = make_candidate(origin_kind=Origin.USER, memory_type=MemoryType.PROCEDURE, content=content,
                          verification_state=state, requested_uses=[C.PROCEDURE_IMITATION])  # fmt: skip
    (d,) = admit([cand])
    assert (C.PROCEDURE_IMITATION in d.allowed_uses) is imitable
    assert ("ENVIRONMENT_MISSING" in d.flags) is (
        rule == "procedure-without-environment-not-imitable"
    )
    if not imitable:
        assert d.denied_requested_uses[0].rule_id == rule
    if rule == "procedure-without-environment-not-imitable":
        assert "environment lacks" in "; ".join(r.detail or "" for r in d.rules_fired)


def test_third_party_personal_data_is_flagged_and_scoped_not_general_context():
    cand = make_candidate(origin_kind=Origin.USER, memory_type=MemoryType.WORLD_PROPOSITION,
                          content="Bob's phone number is 555-123-4567.",
                          entities=[Entity(name="Bob", type="PERSON")],
                          requested_uses=[C.CONVERSATIONAL_CONTEXT])  # fmt: skip
    (d,) = admit([cand])
    assert {"THIRD_PARTY_PERSONAL_DATA", "SCOPE_REQUESTING_USER"} <= set(d.flags)
    assert C.CONVERSATIONAL_CONTEXT in d.forbidden_uses
    assert d.lifecycle_state is LifecycleState.PROVISIONAL
    assert d.denied_requested_uses[0].rule_id == "third-party-personal-data-scoped"
    assert "about Bob: PHONE" in (d.rules_fired[-1].detail or "")
    # the user's own number is not third-party data
    own = cand.model_copy(
        update={"content": "User's phone number is 555-123-4567.", "entities": []}
    )
    assert "THIRD_PARTY_PERSONAL_DATA" not in admit([own])[0].flags


def test_children_inherit_personal_data_flags_and_ineligibility():
    held = make_candidate("mem_a", response_commitment=Commitment.HOLD,
                          content="My sister was diagnosed with asthma.")  # fmt: skip
    child = make_candidate("mem_b", origin_kind=Origin.MEMORY_DERIVED,
                           memory_type=MemoryType.DERIVED_SUMMARY, content="Family health notes.",
                           parent_memory_ids=["mem_a"])  # fmt: skip
    _, d = admit([held, child])
    assert not d.eligible_for_admission
    assert {"THIRD_PARTY_PERSONAL_DATA", "HELD_RESPONSE"} <= set(d.flags)


def test_parent_outside_the_batch_fails_closed_unless_given():
    child = make_candidate("mem_child", origin_kind=Origin.USER, memory_type=MemoryType.ASSERTION_EVENT,
                           kind=CandidateKind.OBSERVATION, parent_memory_ids=["mem_elsewhere"],
                           verification_state=VerificationState.VERIFIED_OBSERVATION_OF_EVENT)  # fmt: skip
    (d,) = admit([child])
    assert d.lifecycle_state is LifecycleState.QUARANTINED and "PARENT_DECISION_UNKNOWN" in d.flags
    assert C.FACTUAL_EVIDENCE in d.forbidden_uses
    (parent_d,) = admit([make_candidate("mem_elsewhere", origin_kind=Origin.EXTERNAL_SOURCE,
                                        verification_state=VerificationState.VERIFIED,
                                        memory_type=MemoryType.EXTERNAL_SOURCE_CLAIM)])  # fmt: skip
    (known,) = admit([child], parents={"mem_elsewhere": parent_d})
    assert (
        known.lifecycle_state is LifecycleState.ACTIVE and C.FACTUAL_EVIDENCE in known.allowed_uses
    )
    assert known.inherited_from == ["mem_elsewhere"]
    assert known.input_hash != d.input_hash  # the parent's decision is an input


def test_cycles_are_broken_deterministically_and_fail_closed():
    a = make_candidate("mem_a", origin_kind=Origin.USER, memory_type=MemoryType.WORLD_PROPOSITION,
                       parent_memory_ids=["mem_b"])  # fmt: skip
    b = a.model_copy(update={"memory_id": "mem_b", "parent_memory_ids": ["mem_a"]})
    first = admit([a, b])
    assert [canonical_json(d) for d in first] == [canonical_json(d) for d in admit([a, b])]
    assert any("PARENT_DECISION_UNKNOWN" in d.flags for d in first)


def test_requested_use_no_rule_grants_is_denied_by_default_deny():
    cand = make_candidate(origin_kind=Origin.USER, memory_type=MemoryType.PREFERENCE,
                          requested_uses=[C.REGRESSION_TEST])  # fmt: skip
    (d,) = admit([cand])
    assert [(x.use, x.rule_id) for x in d.denied_requested_uses] == [
        (C.REGRESSION_TEST, DEFAULT_DENY)
    ]


# --- Determinism and the input hash -------------------------------------------------------------


def test_same_candidate_and_policy_give_byte_identical_decisions():
    batch = [*summary_chain(), make_candidate("mem_x", content="Bob's phone is 555-123-4567.",
                                              entities=[Entity(name="Bob", type="PERSON")])]  # fmt: skip
    first = [canonical_json(d) for d in admit(batch, POLICY)]
    again = [canonical_json(d) for d in admit(batch, load_policy())]
    assert first == again
    round_trip = [canonical_json(AdmissionDecision.model_validate_json(t)) for t in first]
    assert round_trip == first


def test_input_hash_covers_what_the_decision_depends_on_and_nothing_else():
    cand = make_candidate()
    (base,) = admit([cand])
    rerecorded = cand.model_copy(update={"recorded_at": datetime(2030, 1, 1, tzinfo=UTC)})
    assert admit([rerecorded])[0].input_hash == base.input_hash  # observed_at fixes as_of
    assert admit([cand], as_of=datetime(2027, 1, 1))[0].input_hash != base.input_hash
    edited = cand.model_copy(update={"content": "Q3 revenue was $47 million."})
    assert admit([edited])[0].input_hash != base.input_hash
    other_policy = load_policy().document.model_copy(update={"version": "2099.1"})
    assert admit([cand], Policy(other_policy, "x"))[0].input_hash != base.input_hash


def test_a_candidate_no_rule_admits_is_not_persisted_and_says_so():
    odd = make_candidate(origin_kind=Origin.USER, memory_type=MemoryType.INTERACTION_EVENT,
                         kind=CandidateKind.OBSERVATION, requested_uses=[C.CONVERSATIONAL_CONTEXT],
                         verification_state=VerificationState.UNVERIFIED)  # fmt: skip
    (d,) = admit([odd])
    assert not d.persist and d.lifecycle_state is LifecycleState.EPHEMERAL and d.allowed_uses == []
    assert fired(d)[-1] == DEFAULT_DENY
    assert [(x.use, x.rule_id) for x in d.denied_requested_uses] == [
        (C.CONVERSATIONAL_CONTEXT, DEFAULT_DENY)
    ]
