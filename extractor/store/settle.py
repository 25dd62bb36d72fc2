"""The state of a claim as a pure function of its inputs (decision, support, parents, time).

This is where the non-upgrade rule lives (seed §5, §11, Exercise 2): a claim's capabilities are
at most what its admission decision allowed *and* what every claim of its current support
allows (a meet on the capability lattice, not a scalar minimum). The store never grants a use by
itself: the only way up is a new admission decision, made by the admission policy for an
independent verification (:meth:`MemoryStore.verify`), and it counts only while the verifying
source still holds the claim up.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..admission.policy import LADDER
from ..vocab import Capability, LifecycleState

#: Lifecycle states that keep their admission rank when a child meets over them.
_KEEPS_RANK = frozenset({LifecycleState.SUPERSEDED, LifecycleState.ARCHIVED})

#: Uses a claim without admissible support keeps: it stays available as a regression artifact.
QUARANTINE_USES = frozenset({Capability.REGRESSION_TEST})

#: Uses a claim in an unresolved conflict keeps (seed §9: use=CONTEXT_ONLY).
CONFLICT_USES = frozenset({Capability.CONVERSATIONAL_CONTEXT})


@dataclass(frozen=True)
class Decision:
    """An admission decision as the store keeps it (ingest, derive or verify)."""

    lifecycle: LifecycleState
    verification: str
    allowed: frozenset[Capability]
    forbidden: frozenset[Capability]
    flags: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class State:
    """A claim's settled state: what one ``claim_versions`` row holds."""

    lifecycle: LifecycleState
    verification: str
    allowed: frozenset[Capability]
    forbidden: frozenset[Capability]
    flags: tuple[str, ...]
    label: str
    valid_from: str | None
    valid_to: str | None
    superseded_at: str | None = None
    superseded_by: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class Inputs:
    """Everything a claim's state depends on."""

    decision: Decision
    valid_from: str | None
    valid_to: str | None
    label_in: bool
    support: Sequence[State] = ()
    verified: Decision | None = None
    revoked: str | None = None
    erased: bool = False
    copies_revoked: bool = False
    conflict: bool = False
    superseded_by: str | None = None
    superseded_at: str | None = None
    successor_start: str | None = None


def _rank(state: LifecycleState) -> int:
    return LADDER.index(state) if state in LADDER else 1


def _meet(decision: Decision, support: Sequence[State]) -> tuple[LifecycleState, set[Capability]]:
    lifecycle = decision.lifecycle
    allowed = set(decision.allowed)
    for parent in support:
        allowed &= parent.allowed
        if parent.lifecycle not in _KEEPS_RANK and _rank(parent.lifecycle) < _rank(lifecycle):
            lifecycle = parent.lifecycle
    return lifecycle, allowed


def _flags(*groups: Sequence[str]) -> tuple[str, ...]:
    return tuple(sorted({f for g in groups for f in g}))


def settle(x: Inputs) -> State:
    """The claim's state. Order: erasure, revocation, support, verification/meet, conflict,
    supersession -- each can only take capabilities away from what the decision allowed."""
    d = x.verified if x.verified is not None else x.decision
    base = State(
        lifecycle=d.lifecycle,
        verification=d.verification,
        allowed=frozenset(),
        forbidden=d.forbidden,
        flags=d.flags,
        label="IN" if x.label_in else "OUT",
        valid_from=x.valid_from,
        valid_to=x.valid_to,
    )
    if x.erased:
        return replace(
            base, lifecycle=LifecycleState.REVOKED, flags=_flags(d.flags, ["ERASED"]),
            label="OUT", reason="erased",
        )  # fmt: skip
    if x.revoked is not None:
        return replace(
            base, lifecycle=LifecycleState.REVOKED, label="OUT", reason=f"revoked: {x.revoked}",
        )  # fmt: skip
    if not x.label_in:
        if x.copies_revoked:
            return replace(
                base, lifecycle=LifecycleState.REVOKED, reason="copy of a revoked claim",
            )  # fmt: skip
        return replace(
            base, lifecycle=LifecycleState.QUARANTINED,
            allowed=frozenset(d.allowed & QUARANTINE_USES),
            flags=_flags(d.flags, ["NO_ADMISSIBLE_SUPPORT"]),
            reason="no admissible support: every justification lost an antecedent",
        )  # fmt: skip
    lifecycle, allowed = _meet(d, () if x.verified is not None else x.support)
    forbidden = set(d.forbidden)
    flags = list(d.flags)
    for parent in () if x.verified is not None else x.support:
        forbidden |= parent.forbidden
        flags += [f for f in parent.flags if f in INHERITED_FLAGS]
    allowed -= forbidden
    reason = d.reason
    verification = d.verification
    if x.conflict:
        allowed &= CONFLICT_USES
        verification = "CONFLICTING"
        flags.append("CONFLICTING")
        if _rank(lifecycle) > _rank(LifecycleState.PROVISIONAL):
            lifecycle = LifecycleState.PROVISIONAL
        reason += "; conflicts with another claim on the same key"
    valid_to = x.valid_to
    if x.superseded_by is not None:
        lifecycle = LifecycleState.SUPERSEDED
        if x.successor_start is not None and (valid_to is None or x.successor_start < valid_to):
            valid_to = x.successor_start
        reason += f"; superseded by {x.superseded_by}"
    return State(
        lifecycle=lifecycle,
        verification=verification,
        allowed=frozenset(allowed),
        forbidden=frozenset(forbidden),
        flags=_flags(flags),
        label="IN",
        valid_from=x.valid_from,
        valid_to=valid_to,
        superseded_at=x.superseded_at if x.superseded_by is not None else None,
        superseded_by=x.superseded_by,
        reason=reason,
    )


#: Flags a claim carries into the claims it supports (the admission policy's inherit_flags).
INHERITED_FLAGS = frozenset(
    {"THIRD_PARTY_PERSONAL_DATA", "SCOPE_REQUESTING_USER", "HELD_RESPONSE", "STALE", "CONFLICTING"}
)
