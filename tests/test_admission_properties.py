"""Invariants of the default admission policy, over generated candidates and batches."""

from __future__ import annotations

from datetime import timedelta

from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import UNVERIFIED_STATES, candidate_batches, memory_candidates

from extractor.admission import admit, load_policy
from extractor.candidates import MemoryCandidate
from extractor.hashing import canonical_json
from extractor.temporal import interval
from extractor.vocab import (
    Capability,
    Commitment,
    LifecycleState,
    MemoryType,
    Origin,
    TemporalKind,
    VerificationState,
)

POLICY = load_policy()
SETTINGS = settings(
    max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
C = Capability


@SETTINGS
@given(candidate_batches(origin_kind=Origin.MODEL_OUTPUT) | candidate_batches())
def test_no_model_output_candidate_ever_receives_factual_evidence(batch: list[MemoryCandidate]):
    for cand, d in zip(batch, admit(batch, POLICY), strict=True):
        if cand.origin_kind is Origin.MODEL_OUTPUT:
            assert C.FACTUAL_EVIDENCE not in d.allowed_uses
            assert C.FACTUAL_EVIDENCE in d.forbidden_uses


@SETTINGS
@given(candidate_batches(), st.randoms(use_true_random=False))
def test_decisions_are_deterministic_and_independent_of_batch_order(batch, rnd):
    first = [canonical_json(d) for d in admit(batch, POLICY)]
    assert first == [canonical_json(d) for d in admit(batch, POLICY)]
    shuffled = list(batch)
    rnd.shuffle(shuffled)
    by_id = {d.memory_id: canonical_json(d) for d in admit(shuffled, POLICY)}
    assert [by_id[c.memory_id] for c in batch] == first


@SETTINGS
@given(candidate_batches())
def test_one_decision_per_candidate_and_allowed_and_forbidden_never_overlap(batch):
    decisions = admit(batch, POLICY)
    assert [d.memory_id for d in decisions] == [c.memory_id for c in batch]
    for cand, d in zip(batch, decisions, strict=True):
        assert not set(d.allowed_uses) & set(d.forbidden_uses)
        assert d.persist is (d.lifecycle_state is not LifecycleState.EPHEMERAL)
        assert d.persist or not d.allowed_uses
        denied = [x.use for x in d.denied_requested_uses]
        assert denied == [u for u in cand.requested_uses if u not in d.allowed_uses]
        assert d.rules_fired, "every decision records why"


def independent(cand: MemoryCandidate) -> bool:
    return (
        cand.origin_kind in (Origin.EXTERNAL_SOURCE, Origin.TOOL)
        and cand.verification_state is VerificationState.VERIFIED
    )


@SETTINGS
@given(
    memory_candidates(memory_id="mem_root", verification_state=st.sampled_from(UNVERIFIED_STATES)),
    st.lists(memory_candidates().filter(lambda c: not independent(c)), min_size=1, max_size=6),
)
def test_chain_from_unverified_root_never_gains_factual_evidence(root, links):
    chain = [root]
    for i, link in enumerate(links):
        chain.append(
            link.model_copy(
                update={"memory_id": f"mem_{i}", "parent_memory_ids": [chain[-1].memory_id]}
            )
        )
    decisions = admit(chain, POLICY)
    for d in decisions:
        assert C.FACTUAL_EVIDENCE not in d.allowed_uses
    assert all("mem_root" in d.inherited_from for d in decisions[1:])


@SETTINGS
@given(memory_candidates(parent_memory_ids=[]))
def test_changing_origin_from_verified_source_to_model_output_never_adds_factual_use(cand):
    source = cand.model_copy(
        update={
            "origin_kind": Origin.EXTERNAL_SOURCE,
            "verification_state": VerificationState.VERIFIED,
        }
    )
    model = cand.model_copy(
        update={
            "origin_kind": Origin.MODEL_OUTPUT,
            "verification_state": VerificationState.UNVERIFIED,
        }
    )
    (d_source,), (d_model,) = admit([source], POLICY), admit([model], POLICY)
    assert C.FACTUAL_EVIDENCE not in d_model.allowed_uses
    assert set(d_model.allowed_uses) <= set(d_source.allowed_uses) | {C.REGRESSION_TEST}


@SETTINGS
@given(memory_candidates(origin_kind=Origin.MODEL_OUTPUT, parent_memory_ids=[]))
def test_hold_to_permit_gives_eligibility_but_never_activation(cand):
    held = cand.model_copy(update={"response_commitment": Commitment.HOLD})
    permitted = cand.model_copy(update={"response_commitment": Commitment.PERMIT})
    (d_held,), (d_permit,) = admit([held], POLICY), admit([permitted], POLICY)
    assert not d_held.eligible_for_admission and d_permit.eligible_for_admission
    assert LifecycleState.ACTIVE not in (d_held.lifecycle_state, d_permit.lifecycle_state)
    assert C.FACTUAL_EVIDENCE not in d_held.allowed_uses + d_permit.allowed_uses


@SETTINGS
@given(memory_candidates(parent_memory_ids=[]).filter(lambda c: c.temporal.valid_to is not None))
def test_as_of_past_valid_to_never_leaves_action_authority(cand):
    end = interval(cand.temporal.valid_to)
    assert end is not None
    (after,) = admit([cand], POLICY, as_of=end[1] + timedelta(days=1))
    assert C.AUTONOMOUS_ACTION_JUSTIFICATION in after.forbidden_uses
    assert C.AUTONOMOUS_ACTION_JUSTIFICATION not in after.allowed_uses
    told_event = (
        cand.origin_kind is Origin.USER and cand.temporal.kind is TemporalKind.POINT_IN_TIME
    )
    if told_event:  # "I moved to Lisbon in 2021": a fact about 2021 that stays true
        assert "STALE" not in after.flags
    elif cand.memory_type not in (MemoryType.ASSERTION_EVENT, MemoryType.INTERACTION_EVENT):
        assert "STALE" in after.flags and after.evidence_as_of is not None
