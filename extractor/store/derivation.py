"""Derived memories: the gate that checks a derived claim against its parents, and the admission
decision that gives it capabilities (seed §5, §11, Exercise 2).

A summarizer -- an LLM or a program -- *proposes* a derivation: claims, each naming the parent
claims it requires. Nothing it says is trusted:

* **the gate** (:func:`check_claim`, pure) rejects a claim with no parent (no claim without a
  parent span), with a parent the store does not hold or holds revoked or erased, that is not
  faithful to its required parents' text -- the extraction gate's own faithfulness check
  (:func:`~extractor.content.faithfulness.check_faithful`) with the parents as the source:
  unsupported clauses, numbers or names, changed polarity, dropped hedges, approximations or
  attribution -- or that states as settled what a parent holds in conflict ("Sources disagree
  about X" must survive compaction);
* **admission** (:func:`admit_derived`) runs the admission policy on the claim as a candidate of
  origin ``MEMORY_DERIVED`` whose parents are its required parents, with their current
  decisions: the policy's ``derived-inherits-parent-obligations`` carries every parent's
  obligations, and the store then meets the result with the parents' current capabilities
  (:mod:`extractor.store.settle`). A derivation can never produce stronger evidence than its
  required sources contain.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .._version import SCHEMA_VERSION, __version__
from ..admission import decide, load_policy
from ..admission.policy import Policy
from ..candidates import MemoryCandidate, Provenance
from ..content.faithfulness import Finding, check_faithful, source_for, widen
from ..decisions import AdmissionDecision
from ..extraction import SourceSpan, TemporalScope, Uncertainty
from ..validation import uncertainty_cues
from ..vocab import (
    CandidateKind,
    Capability,
    LifecycleState,
    MemoryType,
    Origin,
    TemporalKind,
    VerificationState,
)
from .models import DerivationRelation

_DISAGREEMENT = re.compile(
    r"\b(disagree\w*|conflict\w*|disput\w*|contradict\w*|differ\w*|inconsistent|unclear|"
    r"uncertain|unresolved|contested|either)\b",
    re.IGNORECASE,
)

#: The gate's faithfulness codes as derivation rejection codes (the others keep their name).
FAITHFULNESS_CODES = {"CONTENT_UNSUPPORTED": "UNSUPPORTED_BY_PARENTS"}

#: Words a claim may use to state a disagreement its conflicting parents hold.
DISAGREEMENT_WORDS = (
    "sources source disagree disagreement conflict conflicting conflicts dispute disputed "
    "contradict contradictory differ different inconsistent unclear uncertain unresolved "
    "contested either or whether both"
)


def faithful_to_parents(
    content: str, parents: Sequence[ParentView], *, disagreement: bool = False
) -> Finding | None:
    """The extraction gate's faithfulness check (:func:`~extractor.content.faithfulness.
    check_faithful`) with the required parents' text as the source: every clause must be
    supported by a parent claim, keep its polarity, its hedges, reporters and approximations,
    and state no number, date or name no parent states. With ``disagreement`` (a parent is in
    conflict), the words that state a disagreement are allowed too."""
    text = "\n".join(p.content.strip() for p in parents)
    source = source_for(text, 0, len(text))
    if disagreement:
        source = widen(source, [DISAGREEMENT_WORDS])
    return check_faithful(content, source)


class DerivedClaim(BaseModel):
    """One claim of a derived memory, as a summarizer proposes it."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1)
    requires: list[str] = Field(
        default_factory=list, description="Parent claim (or one-claim memory) ids it needs."
    )
    context: list[str] = Field(
        default_factory=list,
        description="Parents that were in the summarizer's context but this claim does not need: "
        "recorded in the derivation graph, carry no obligation (seed §5).",
    )
    relation: DerivationRelation = "SUMMARIZED_FROM"
    hedges: list[str] = Field(default_factory=list)
    valid_from: str | None = Field(default=None, description="Default: the parents' overlap.")
    valid_to: str | None = None


class DerivationRejection(BaseModel):
    """A proposed claim the gate refused, with the rule and the reason."""

    model_config = ConfigDict(extra="forbid")

    index: int
    code: str
    message: str


class ParentView(BaseModel):
    """What the gate and the policy need to know about a parent claim."""

    model_config = ConfigDict(extra="forbid")

    claim_id: str
    memory_id: str
    tenant: str
    content: str
    hedges: list[str]
    lifecycle: LifecycleState
    verification: str
    allowed: list[Capability]
    forbidden: list[Capability]
    flags: list[str]
    revoked: bool
    erased: bool
    valid_from: str | None
    valid_to: str | None
    decision_input_hash: str | None
    observation: bool = Field(
        default=False, description="An observed event: its validity is an instant, not a span."
    )


def check_claim(
    index: int, claim: DerivedClaim, parents: Mapping[str, ParentView | None], tenant: str
) -> DerivationRejection | None:
    """The first rule ``claim`` breaks against its required ``parents``, or ``None``."""

    def reject(code: str, message: str) -> DerivationRejection:
        return DerivationRejection(index=index, code=code, message=message)

    if not claim.requires:
        return reject("PARENT_MISSING", "a derived claim must name the parent claims it requires")
    required = []
    for ref in claim.requires + claim.context:
        p = parents.get(ref)
        if p is None or p.tenant != tenant:  # another tenant's claim is not there for it
            return reject("PARENT_UNKNOWN", f"parent {ref!r} is not in this store")
        if p.erased or p.revoked:
            state = "erased" if p.erased else "revoked"
            return reject("PARENT_REVOKED", f"parent {ref!r} is {state}")
        if ref in claim.requires:
            required.append(p)
    conflicted = [p.claim_id for p in required if _in_conflict(p)]
    finding = faithful_to_parents(claim.content, required, disagreement=bool(conflicted))
    if finding is not None:
        return reject(FAITHFULNESS_CODES.get(finding.code, finding.code), finding.message)
    lost = _lost_uncertainty(claim, required)
    if lost:
        return reject("UNCERTAINTY_DROPPED", f"drops the {lost} of a required parent")
    if conflicted and not _DISAGREEMENT.search(claim.content):
        return reject(
            "CONFLICT_DROPPED",
            f"parent {conflicted[0]!r} is in conflict; the claim must state the disagreement "
            "(e.g. 'Sources disagree about ...')",
        )
    return None


def _lost_uncertainty(claim: DerivedClaim, parents: Sequence[ParentView]) -> str | None:
    """Which qualification of a required parent the claim drops: each hedge the parent lists
    must appear in the claim (by word stem: "I think" is kept by "the user thinks"), and an
    approximation or attribution the parent's text carries must survive as one."""
    text = claim.content.lower()
    child = uncertainty_cues(claim.content)
    for p in parents:
        for hedge in p.hedges:
            if not _kept(hedge, text):
                return f"hedge {hedge!r}"
        cues = uncertainty_cues(p.content)
        if cues.approximate and not child.approximate:
            return "approximation"
        if cues.reported and not child.reported:
            return "attribution"
    return None


_PRONOUNS = frozenset({"i", "i'm", "im", "i’m", "we", "me"})


def _kept(hedge: str, text: str) -> bool:
    words = [w for w in re.findall(r"[\w'’]+", hedge.lower()) if w not in _PRONOUNS]
    return all(w[:5] in text for w in words)


def _in_conflict(p: ParentView) -> bool:
    return p.verification == VerificationState.CONFLICTING or "CONFLICTING" in p.flags


def overlap(parents: Sequence[ParentView]) -> tuple[str | None, str | None]:
    """The valid time all required propositions share (their intersection). An observed event
    (a statement, a tool output) holds at an instant; what it reports is not bounded by that."""
    spans = [p for p in parents if not p.observation]
    starts = [p.valid_from for p in spans if p.valid_from is not None]
    ends = [p.valid_to for p in spans if p.valid_to is not None]
    return (max(starts) if starts else None, min(ends) if ends else None)


def parent_decision(p: ParentView, policy: Policy) -> AdmissionDecision:
    """A parent's *current* state as the decision the admission policy inherits from."""
    return AdmissionDecision(
        memory_id=p.memory_id,
        persist=True,
        lifecycle_state=_admission_lifecycle(p.lifecycle),
        allowed_uses=p.allowed,
        forbidden_uses=p.forbidden,
        eligible_for_admission=True,
        flags=p.flags,
        policy_id=policy.id,
        policy_version=policy.version,
        as_of=None,
        input_hash=p.decision_input_hash or p.claim_id,
    )


def _admission_lifecycle(state: LifecycleState) -> LifecycleState:
    ladder = (LifecycleState.QUARANTINED, LifecycleState.PROVISIONAL, LifecycleState.ACTIVE)
    return state if state in ladder else LifecycleState.QUARANTINED


def admit_derived(
    claim: DerivedClaim,
    claim_id: str,
    parents: Sequence[ParentView],
    *,
    policy: Policy | None,
    produced_by: str,
    now: datetime,
    requested_uses: Sequence[Capability] = (),
) -> tuple[VerificationState, AdmissionDecision]:
    """The admission decision for a derived claim (origin ``MEMORY_DERIVED``)."""
    chosen = policy if policy is not None else load_policy()
    verification = (
        VerificationState.CONFLICTING
        if any(_in_conflict(p) for p in parents)
        else VerificationState.UNVERIFIED
    )
    candidate = derived_candidate(claim, claim_id, parents, verification, produced_by, now,
                                  requested_uses)  # fmt: skip
    view = {p.memory_id: parent_decision(p, chosen) for p in parents}
    return verification, decide(candidate, chosen, now, view)


def derived_candidate(
    claim: DerivedClaim,
    claim_id: str,
    parents: Sequence[ParentView],
    verification: VerificationState,
    produced_by: str,
    now: datetime,
    requested_uses: Sequence[Capability] = (),
    origin: Origin = Origin.MEMORY_DERIVED,
) -> MemoryCandidate:
    """A derived claim as the :class:`MemoryCandidate` the admission policy decides."""
    quote = claim.content
    return MemoryCandidate(
        memory_id=claim_id,
        conversation_id=claim_id,
        candidate_id=claim_id,
        content=claim.content,
        memory_type=MemoryType.DERIVED_SUMMARY,
        kind=CandidateKind.PROPOSITION,
        origin_kind=origin,
        verification_state=verification,
        parent_memory_ids=sorted({p.memory_id for p in parents}),
        evidence_ids=[p.claim_id for p in parents],
        source_span=SourceSpan(message_id=claim_id, quote=quote, start=0, end=len(quote)),
        requested_uses=list(requested_uses),
        temporal=TemporalScope(kind=TemporalKind.UNKNOWN),
        uncertainty=Uncertainty(hedges=claim.hedges),
        observed_at=None,
        recorded_at=now,
        provenance=Provenance(
            model=produced_by,
            prompt_id="derive",
            prompt_version="1",
            prompt_hash="",
            schema_version=SCHEMA_VERSION,
            extractor_version=__version__,
        ),
    )


def decision_payload(d: AdmissionDecision) -> dict[str, Any]:
    return {
        "lifecycle_state": d.lifecycle_state.value,
        "allowed_uses": [u.value for u in d.allowed_uses],
        "forbidden_uses": [u.value for u in d.forbidden_uses],
        "flags": list(d.flags),
        "rules_fired": [r.rule_id for r in d.rules_fired],
        "policy_id": d.policy_id,
        "policy_version": d.policy_version,
        "input_hash": d.input_hash,
        # Only when admission scoped the evidence: unscoped payloads stay as they were.
        **({"evidence_as_of": d.evidence_as_of} if d.evidence_as_of is not None else {}),
    }
