"""The admission decision: what the write gate decided for one memory candidate, and why.

A decision is a pure function of (candidate, policy, as-of time). It carries the rules that
fired in order, the policy id and version, and a hash of its inputs, so that it can be replayed
byte for byte and audited later.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from .vocab import Capability, LifecycleState


class DeniedUse(BaseModel):
    """A requested use the policy refused, with the rule that refused it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    use: Capability
    rule_id: str
    reason: str | None = Field(
        default=None,
        description="Why. Result lines (format 2, 3) leave out a reason that is the reason of a "
        "rule that fired for the decision (null when read until a policy fills it in).",
    )


class FiredRule(BaseModel):
    """A policy rule that matched the candidate, in evaluation order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rule_id: str
    reason: str | None = Field(
        default=None,
        description="The rule's reason sentence. Result lines (format 2, 3) do not repeat it (it "
        "is the policy's, found by policy id/version and rule id): null when read from such a "
        "line until a policy fills it in (extractor.admission.explain).",
    )
    detail: str | None = Field(
        default=None, description="What about this candidate made it fire (e.g. which parents)."
    )
    rule_hash: str | None = Field(
        default=None, description="Short hash of the rule's definition, so replay sees edits."
    )


class AdmissionDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_id: str
    persist: bool
    lifecycle_state: LifecycleState
    allowed_uses: list[Capability] = Field(default_factory=list)
    forbidden_uses: list[Capability] = Field(default_factory=list)
    denied_requested_uses: list[DeniedUse] = Field(default_factory=list)
    eligible_for_admission: bool = Field(
        description="False when the source is ineligible (e.g. held assistant output)."
    )
    flags: list[str] = Field(
        default_factory=list, description="e.g. THIRD_PARTY_PERSONAL_DATA, STALE."
    )
    rules_fired: list[FiredRule] = Field(default_factory=list)
    policy_id: str
    policy_version: str
    as_of: datetime | None = Field(description="The time current-state authority is judged at.")
    evidence_as_of: str | None = Field(
        default=None,
        description="ISO time: FACTUAL_EVIDENCE holds only as of then (tool observation, stale).",
    )
    inherited_from: list[str] = Field(
        default_factory=list,
        description="Ancestor memory ids whose unresolved obligations this decision carries.",
    )
    input_hash: str = Field(description="Hash of the canonical candidate, policy and as-of.")
