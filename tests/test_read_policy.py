"""The read policy (stage 3): loading, validation errors, and what the shipped policy decides."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from helpers import examples
from hypothesis import given, settings
from read_factories import view, views

from extractor.errors import PolicyError
from extractor.read.judge import judge, temporal_status
from extractor.read.models import CONTEXT_ONLY, EvidenceStatus
from extractor.read.policy import load_read_policy, parse_read_policy
from extractor.vocab import CandidateKind, Capability, MemoryType, Origin, VerificationState

POLICY = load_read_policy()
NOW = datetime(2026, 12, 1)
F = Capability.FACTUAL_EVIDENCE
P = Capability.PERSONALIZATION


def _decide(v, purpose=F, evidence=EvidenceStatus.VERIFIED, as_of=NOW):
    return judge(v, purpose=purpose, policy=POLICY, as_of=as_of, evidence=evidence)


def test_shipped_policy_loads_and_names_itself():
    assert POLICY.id == "memory-read"
    assert POLICY.version
    assert POLICY.purpose(F).dereference is True
    assert POLICY.purpose(Capability.AUTONOMOUS_ACTION_JUSTIFICATION).dereference is True
    assert POLICY.purpose(P).dereference is False


def test_verified_dereferenced_memory_is_factual_evidence():
    d = _decide(view())
    assert d.admissible and d.use == "FACTUAL_EVIDENCE" and d.excluded_by is None


@pytest.mark.parametrize(
    ("evidence", "rule"),
    [
        (EvidenceStatus.NOT_CHECKED, "high-risk-dereferences-evidence"),
        (EvidenceStatus.MISSING, "high-risk-dereferences-evidence"),
        (EvidenceStatus.HASH_MISMATCH, "high-risk-dereferences-evidence"),
        (EvidenceStatus.SOURCE_INADMISSIBLE, "high-risk-dereferences-evidence"),
    ],
)
def test_high_risk_use_without_checked_evidence_is_refused(evidence, rule):
    d = _decide(view(), evidence=evidence)
    assert not d.admissible and d.excluded_by == rule and d.use is None


def test_unchecked_evidence_is_fine_for_a_low_risk_purpose():
    d = _decide(view(), purpose=P, evidence=EvidenceStatus.NOT_CHECKED)
    assert d.admissible and d.use == "PERSONALIZATION"


def test_model_output_is_never_evidence_even_if_admission_granted_it():
    v = view(origin_kind=Origin.MODEL_OUTPUT, verification_state=VerificationState.UNVERIFIED)
    d = _decide(v)
    assert d.excluded_by == "high-risk-needs-verification"
    assert {r.rule_id for r in d.rules_fired} >= {"model-output-never-evidence"}


def test_conflict_downgrades_to_context_only():
    d = _decide(view(conflicting=True))
    assert d.admissible and d.use == CONTEXT_ONLY and "CONFLICTING" in d.flags


def test_context_only_needs_the_context_capability():
    v = view(conflicting=True, allowed_uses=(F,))
    d = _decide(v)
    assert not d.admissible and d.excluded_by == "context-only-needs-context-capability"


def test_circular_support_is_not_evidence():
    d = _decide(view(independent_families=0))
    assert d.excluded_by == "no-independent-support"


def test_expired_proposition_is_context_for_facts_and_refused_for_actions():
    v = view(valid_from="2025-01-01", valid_to="2026-07-01")
    assert temporal_status(v, NOW) == "EXPIRED"
    assert _decide(v).use == CONTEXT_ONLY
    act = _decide(v, purpose=Capability.AUTONOMOUS_ACTION_JUSTIFICATION)
    assert act.excluded_by == "outside-validity-no-action"
    # As of a date inside its validity it is evidence again (who was CEO on June 20?).
    assert _decide(v, as_of=datetime(2026, 6, 20)).use == "FACTUAL_EVIDENCE"


def test_valid_to_is_exclusive():
    v = view(valid_from="2026-01-01", valid_to="2026-07-01")
    assert temporal_status(v, datetime(2026, 6, 30, 23, 59)) == "CURRENT"
    assert temporal_status(v, datetime(2026, 7, 1)) == "EXPIRED"


def test_tool_observation_cannot_justify_acting_on_the_state_now():
    v = view(
        origin_kind=Origin.TOOL,
        memory_type=MemoryType.TOOL_OBSERVATION,
        kind=CandidateKind.OBSERVATION,
        verification_state=VerificationState.VERIFIED_OBSERVATION_OF_EVENT,
        evidence_as_of="2026-08-30T18:32:00",
    )
    assert _decide(v).admissible
    act = _decide(v, purpose=Capability.AUTONOMOUS_ACTION_JUSTIFICATION)
    assert act.excluded_by == "observation-not-current-for-action"


def test_third_party_personal_data_serves_personalization_only():
    v = view(flags=("THIRD_PARTY_PERSONAL_DATA",))
    assert _decide(v, purpose=P).admissible
    assert _decide(v, purpose=Capability.CONVERSATIONAL_CONTEXT).excluded_by == (
        "third-party-personal-data-personalization-only"
    )


def test_a_forbidden_use_is_never_granted_by_policy():
    v = view(forbidden_uses=(P,))
    assert _decide(v, purpose=P).excluded_by == "capability-invariant"


@settings(max_examples=examples(50))
@given(v=views(), purpose=..., evidence=...)
def test_no_decision_admits_a_use_the_memory_forbids(
    v, purpose: Capability, evidence: EvidenceStatus
):
    d = judge(v, purpose=purpose, policy=POLICY, as_of=NOW, evidence=evidence)
    if d.admissible:
        used = purpose if d.use == purpose.value else Capability.CONVERSATIONAL_CONTEXT
        assert used in v.allowed_uses and used not in v.forbidden_uses
        assert d.use in (purpose.value, CONTEXT_ONLY)
    else:
        assert d.use is None and d.excluded_by is not None
    assert d == judge(v, purpose=purpose, policy=POLICY, as_of=NOW, evidence=evidence)


# --- validation errors name the file and the rule -------------------------------------------


def _doc(**over):
    raw = json.loads(
        json.dumps(
            {
                "id": "p",
                "version": "1",
                "purposes": {
                    c.value: {"risk": "LOW", "lifecycles": ["ACTIVE"]} for c in Capability
                },
                "rules": [{"id": "r", "reason": "x", "effect": {"admit": False}}],
            }
        )
    )
    raw.update(over)
    return json.dumps(raw)


def test_a_missing_purpose_table_is_named():
    raw = json.loads(_doc())
    del raw["purposes"]["PERSONALIZATION"]
    with pytest.raises(PolicyError, match="no \\[purposes\\] table for PERSONALIZATION"):
        parse_read_policy(json.dumps(raw), source="p.json", json_format=True)


def test_never_eligible_lifecycle_is_refused():
    raw = json.loads(_doc())
    raw["purposes"]["PERSONALIZATION"]["lifecycles"] = ["REVOKED"]
    with pytest.raises(PolicyError, match="REVOKED can never be eligible"):
        parse_read_policy(json.dumps(raw), json_format=True)


def test_bad_rule_is_named_with_its_field():
    rules = [
        {"id": "bad-one", "reason": "x", "match": {"purpose": ["NOPE"]}, "effect": {"admit": False}}
    ]
    with pytest.raises(PolicyError) as info:
        parse_read_policy(_doc(rules=rules), source="p.json", json_format=True)
    assert (
        info.value.rule == "bad-one"
        and "p.json" in str(info.value)
        and "match.purpose" in str(info.value)
    )


def test_inert_effect_duplicate_and_reserved_ids_are_refused():
    with pytest.raises(PolicyError, match="effect does nothing"):
        parse_read_policy(_doc(rules=[{"id": "a", "reason": "x", "effect": {}}]), json_format=True)
    dup = [{"id": "a", "reason": "x", "effect": {"admit": False}}] * 2
    with pytest.raises(PolicyError, match="duplicate rule id"):
        parse_read_policy(_doc(rules=dup), json_format=True)
    reserved = [{"id": "capability-invariant", "reason": "x", "effect": {"admit": False}}]
    with pytest.raises(PolicyError, match="reserved"):
        parse_read_policy(_doc(rules=reserved), json_format=True)


def test_unreadable_and_malformed_files(tmp_path: Path):
    with pytest.raises(PolicyError, match="cannot read read-policy file"):
        load_read_policy(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("id = [", encoding="utf-8")
    with pytest.raises(PolicyError, match="not valid TOML"):
        load_read_policy(bad)


def test_policy_hash_ignores_formatting_but_not_meaning():
    shipped = (
        Path(__file__).resolve().parents[1] / "extractor" / "policies" / "read-default.toml"
    ).read_text()
    reformatted = "# another comment\n" + shipped
    assert parse_read_policy(reformatted).hash == POLICY.hash
    edited = shipped.replace('version = "', 'version = "x', 1)
    assert parse_read_policy(edited).hash != POLICY.hash
