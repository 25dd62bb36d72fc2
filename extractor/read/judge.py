"""Stage 3, evidential admissibility: the read policy applied to one retrieved memory.

A pure function of (memory, purpose, policy, as-of, evidence check): no clock, no I/O, so a read
can be replayed under another read-policy version to see which uses change. Two invariants hold
whatever the policy says, because they are what stage 1 already guaranteed and a policy edit must
not undo: a memory is never admitted for a use it does not allow or explicitly forbids, and a
``CONTEXT_ONLY`` downgrade needs the memory's ``CONVERSATIONAL_CONTEXT`` capability.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ..admission import TemporalStatus
from ..temporal import interval
from ..vocab import Capability
from .models import CONTEXT_ONLY, EvidenceStatus, FiredReadRule, MemoryView, Risk, UseDecision
from .policy import CAPABILITY_INVARIANT, CONTEXT_CAPABILITY_INVARIANT, ReadMatch, ReadPolicy


def temporal_status(view: MemoryView, as_of: datetime) -> TemporalStatus:
    """Where ``as_of`` falls in the half-open validity interval ``[valid_from, valid_to)``.

    Times are compared naive (calendar time in the speaker's zone, as the store keeps them);
    a partial date stands for its first instant (``2024-03`` starts March 2024).
    """
    when = as_of.replace(tzinfo=None)
    lo = interval(view.valid_from) if view.valid_from else None
    hi = interval(view.valid_to) if view.valid_to else None
    if (view.valid_from and lo is None) or (view.valid_to and hi is None):
        return TemporalStatus.UNKNOWN
    if hi is not None and hi[0] <= when:
        return TemporalStatus.EXPIRED
    if lo is not None and lo[0] > when:
        return TemporalStatus.NOT_YET_VALID
    return TemporalStatus.UNBOUNDED if lo is None and hi is None else TemporalStatus.CURRENT


def usable_for(view: MemoryView, use: Capability) -> bool:
    return use in view.allowed_uses and use not in view.forbidden_uses


@dataclass(frozen=True)
class _Facts:
    view: MemoryView
    purpose: Capability
    policy: ReadPolicy
    as_of: datetime
    evidence: EvidenceStatus
    risk: Risk

    def scoped_before_as_of(self) -> bool:
        scope = interval(self.view.evidence_as_of) if self.view.evidence_as_of else None
        return scope is not None and scope[1] < self.as_of.replace(tzinfo=None)

    def holds(self, m: ReadMatch, flags: dict[str, None]) -> bool:
        """Every key of ``m`` that is given holds; cheapest checks first."""
        v = self.view
        for allowed, value in (
            (m.purpose, self.purpose),
            (m.risk, self.risk),
            (m.origin_kind, v.origin_kind),
            (m.verification_state, v.verification_state),
            (m.memory_type, v.memory_type),
            (m.kind, v.kind),
            (m.lifecycle_state, v.lifecycle_state),
            (m.evidence, self.evidence),
        ):
            if allowed is not None and value not in allowed:
                return False
        if m.flags is not None and not any(f in flags for f in m.flags):
            return False
        if m.conflicting is not None and m.conflicting is not v.conflicting:
            return False
        if m.superseded is not None and m.superseded is not v.superseded:
            return False
        below = m.independent_families_below
        if below is not None and not v.independent_families < below:
            return False
        scoped = m.evidence_scoped_before_as_of
        if scoped is not None and scoped is not self.scoped_before_as_of():
            return False
        return m.temporal_status is None or temporal_status(v, self.as_of) in m.temporal_status


def judge(
    view: MemoryView,
    *,
    purpose: Capability,
    policy: ReadPolicy,
    as_of: datetime,
    evidence: EvidenceStatus = EvidenceStatus.NOT_CHECKED,
) -> UseDecision:
    """Decide whether ``view`` may be used for ``purpose`` at ``as_of``, and record why."""
    facts = _Facts(view, purpose, policy, as_of, evidence, policy.purpose(purpose).risk)
    flags: dict[str, None] = dict.fromkeys(view.flags)
    fired: list[FiredReadRule] = []
    excluded_by: str | None = None
    use: str = purpose.value
    for rule in policy.rules:
        if not facts.holds(rule.match, flags) or any(facts.holds(u, flags) for u in rule.unless):
            continue
        fired.append(FiredReadRule(rule_id=rule.id, reason=rule.reason))
        flags.update(dict.fromkeys(rule.effect.flags))
        if rule.effect.admit is False and excluded_by is None:
            excluded_by = rule.id
        if rule.effect.use == CONTEXT_ONLY:
            use = CONTEXT_ONLY
    if excluded_by is None:
        excluded_by = _invariant(view, purpose, use, fired)
    return UseDecision(
        claim_id=view.claim_id,
        memory_id=view.memory_id,
        purpose=purpose,
        admissible=excluded_by is None,
        use=None if excluded_by else use,
        risk=policy.purpose(purpose).risk,
        evidence=evidence,
        flags=tuple(flags),
        rules_fired=tuple(fired),
        excluded_by=excluded_by,
        policy_version=policy.version,
    )


def _invariant(
    view: MemoryView, purpose: Capability, use: str, fired: list[FiredReadRule]
) -> str | None:
    if not usable_for(view, purpose):
        fired.append(FiredReadRule(rule_id=CAPABILITY_INVARIANT, reason=INVARIANT_REASONS[0]))
        return CAPABILITY_INVARIANT
    if use == CONTEXT_ONLY and not usable_for(view, Capability.CONVERSATIONAL_CONTEXT):
        fired.append(
            FiredReadRule(rule_id=CONTEXT_CAPABILITY_INVARIANT, reason=INVARIANT_REASONS[1])
        )
        return CONTEXT_CAPABILITY_INVARIANT
    return None


INVARIANT_REASONS = (
    "The memory does not allow this purpose (or forbids it): no read policy can grant a use.",
    "Downgraded to context only, but the memory may not be used as conversational context.",
)
