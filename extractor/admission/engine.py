"""The write gate: a small interpreter that applies a :class:`~.policy.Policy` to candidates.

No model, no clock, no I/O: a decision is a pure function of the candidate, the policy, the as-of
time and the decisions of the candidate's parents, and serializes to the same canonical JSON
every time.

Batches are decided parents first, so a derived candidate can inherit the unresolved
obligations of every parent (seed section 5: transformation never upgrades provenance). A parent
that is neither in the batch nor passed in ``parents`` has no decision to inherit from; the
candidate then has the ``missing_parents`` fact, and the default policy fails closed on it
(quarantine, no factual or action use). Parents on a cycle are treated the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from ..candidates import MemoryCandidate
from ..decisions import AdmissionDecision, DeniedUse, FiredRule
from ..hashing import content_hash
from ..temporal import interval
from ..vocab import Capability, LifecycleState
from .facts import Facts, default_as_of, facts_for
from .policy import DEFAULT_DENY, LADDER, Effect, Match, Policy, Rule, load_policy, rank

#: Candidate fields admission does not read, so they are left out of ``input_hash``:
#: ``recorded_at`` (the effective as-of time is hashed instead) and the extraction provenance.
UNHASHED_FIELDS = frozenset({"recorded_at", "provenance"})

NOT_ADMITTED = "no rule of the policy admits this candidate"

ParentDecisions = Mapping[str, AdmissionDecision | None]


@dataclass
class _Outcome:
    """The decision under construction while rules are evaluated."""

    grant: int = 0
    cap: int = len(LADDER) - 1
    capped_by: tuple[str, str] | None = None
    allowed: dict[Capability, None] = field(default_factory=dict)
    forbidden: dict[Capability, tuple[str, str]] = field(default_factory=dict)
    eligible: bool = True
    flags: dict[str, None] = field(default_factory=dict)
    evidence_as_of: str | None = None
    inherited: set[str] = field(default_factory=set)
    fired: list[FiredRule] = field(default_factory=list)

    def cap_at(self, level: int, rule_id: str, reason: str) -> None:
        if level < self.cap:
            self.cap, self.capped_by = level, (rule_id, reason)

    def scope_evidence(self, when: str | None) -> None:
        """Keep the earliest as-of time: evidence is only as current as its oldest scope."""
        if when is None:
            return
        if self.evidence_as_of is None or _start(when) < _start(self.evidence_as_of):
            self.evidence_as_of = when


def _start(value: str) -> datetime:
    bounds = interval(value)
    return bounds[0] if bounds else datetime.max


#: What a rule can ask about a candidate's own fields: its origin, memory type, kind,
#: verification state, response commitment, whether it has parents and an observation time.
_StaticKey = tuple[object, object, object, object, object, bool, bool]


@dataclass(frozen=True)
class _Condition:
    """The part of a :class:`Match` that a candidate's own fields cannot settle: derived facts
    (temporal status, missing parents, text detectors) and flags added by earlier rules."""

    flags: tuple[str, ...] | None
    missing_parents: bool | None
    temporal_status: frozenset[object] | None
    temporal_kind: frozenset[object] | None
    third_party_personal_data: bool | None
    has_environment: bool | None
    harmful_content: bool | None
    untrusted_instruction: bool | None

    def holds(self, facts: Facts, flags: Mapping[str, None]) -> bool:
        """Cheapest first; each fact is computed (once, then cached) only when asked."""
        if self.flags is not None and not any(f in flags for f in self.flags):
            return False
        if self.missing_parents is not None and self.missing_parents is not bool(
            facts.missing_parents
        ):
            return False
        if self.temporal_status is not None and facts.temporal_status not in self.temporal_status:
            return False
        kinds = self.temporal_kind
        if kinds is not None and facts.candidate.temporal.kind not in kinds:
            return False
        if self.third_party_personal_data is not None and self.third_party_personal_data is not (
            facts.personal_data is not None
        ):
            return False
        if self.harmful_content is not None and self.harmful_content is not (
            facts.harm is not None
        ):
            return False
        if self.untrusted_instruction is not None and self.untrusted_instruction is not (
            facts.instruction is not None
        ):
            return False
        return self.has_environment is None or self.has_environment is facts.environment.complete


@dataclass(frozen=True)
class _Step:
    """A rule whose static conditions hold for a candidate key, with what is left to check."""

    rule: Rule
    match: _Condition
    unless: tuple[_Condition, ...]

    def fires(self, facts: Facts, flags: Mapping[str, None]) -> bool:
        if not self.match.holds(facts, flags):
            return False
        return not any(u.holds(facts, flags) for u in self.unless)


def _static_key(c: MemoryCandidate) -> _StaticKey:
    return (c.origin_kind, c.memory_type, c.kind, c.verification_state, c.response_commitment,
            bool(c.parent_memory_ids), c.observed_at is not None)  # fmt: skip


def _static_holds(m: Match, key: _StaticKey) -> bool:
    enums = (m.origin_kind, m.memory_type, m.kind, m.verification_state, m.response_commitment)
    pairs = zip(enums, key[:5], strict=True)
    if any(wanted is not None and value not in wanted for wanted, value in pairs):
        return False
    booleans = zip((m.has_parents, m.has_observed_at), key[5:], strict=True)
    return all(wanted is None or wanted is value for wanted, value in booleans)


def _condition(m: Match) -> _Condition | None:
    """The dynamic rest of ``m``; ``None`` when nothing is left (the static part decides)."""
    status = frozenset(m.temporal_status) if m.temporal_status is not None else None
    kinds = frozenset(m.temporal_kind) if m.temporal_kind is not None else None
    parts = (
        m.flags,
        m.missing_parents,
        status,
        kinds,
        m.third_party_personal_data,
        m.has_environment,
        m.harmful_content,
        m.untrusted_instruction,
    )
    if all(p is None for p in parts):
        return None
    flags = tuple(m.flags) if m.flags is not None else None
    return _Condition(flags, *parts[1:])


_ALWAYS = _Condition(None, None, None, None, None, None, None, None)


def _plan(policy: Policy, key: _StaticKey) -> list[_Step]:
    """The rules that can fire for candidates with ``key``, in policy order (cached per policy):
    static conditions are evaluated once per key instead of once per candidate."""
    plan: list[_Step] | None = policy.plans.get(key)
    if plan is not None:
        return plan
    plan = []
    for rule in policy.rules:
        if not _static_holds(rule.match, key):
            continue
        unless = [_condition(u) for u in rule.unless if _static_holds(u, key)]
        if None in unless:  # an exception holds on static fields alone: never fires
            continue
        rest = tuple(u for u in unless if u is not None)
        plan.append(_Step(rule, _condition(rule.match) or _ALWAYS, rest))
    policy.plans[key] = plan
    return plan


def _detail(m: Match, c: MemoryCandidate, facts: Facts) -> list[str]:
    """Say which candidate-specific facts made the rule match (for the audit trail)."""
    parts = []
    if m.temporal_status is not None:
        t = c.temporal
        parts.append(
            f"valid {t.valid_from or '…'} to {t.valid_to or '…'} ({t.kind.value}) is "
            f"{facts.temporal_status.value} as of {facts.as_of.isoformat()}"
        )
    if m.third_party_personal_data and facts.personal_data is not None:
        parts.append(facts.personal_data.describe())
    if m.harmful_content and facts.harm is not None:
        parts.append(facts.harm.describe())
    if m.untrusted_instruction and facts.instruction is not None:
        parts.append(facts.instruction.describe())
    if m.has_environment is False:
        parts.append("environment lacks " + ", ".join(facts.environment.missing()))
    if m.missing_parents and facts.missing_parents:
        parts.append("no decision for parent " + ", ".join(facts.missing_parents))
    return parts


def _inherit(effect: Effect, rule: Rule, parents: ParentDecisions, out: _Outcome) -> list[str]:
    """Carry each decided parent's forbidden uses, lifecycle, eligibility and evidence scope."""
    sources = []
    for pid, parent in parents.items():
        if parent is None:
            continue
        sources.append(pid)
        why = f"{rule.reason} (inherited from {pid})"
        for use in parent.forbidden_uses:
            out.forbidden.setdefault(use, (rule.id, why))
        out.cap_at(rank(parent.lifecycle_state), rule.id, why)
        out.eligible = out.eligible and parent.eligible_for_admission
        out.scope_evidence(parent.evidence_as_of)
        for flag in parent.flags:
            if flag in effect.inherit_flags:
                out.flags.setdefault(flag)
        out.inherited.update([pid, *parent.inherited_from])
    return ["inherits from " + ", ".join(sources)] if sources else []


def _apply(rule: Rule, c: MemoryCandidate, parents: ParentDecisions, out: _Outcome) -> list[str]:
    e = rule.effect
    if e.lifecycle is not None:
        out.grant = max(out.grant, rank(e.lifecycle))
    if e.persist is True:
        out.grant = max(out.grant, rank(LifecycleState.QUARANTINED))
    if e.max_lifecycle is not None:
        out.cap_at(rank(e.max_lifecycle), rule.id, rule.reason)
    if e.persist is False:
        out.cap_at(rank(LifecycleState.EPHEMERAL), rule.id, rule.reason)
    for use in e.allow:
        out.allowed.setdefault(use)
    for use in e.forbid:
        out.forbidden.setdefault(use, (rule.id, rule.reason))
    if e.eligible is False:
        out.eligible = False
    for flag in e.flags:
        out.flags.setdefault(flag)
    if e.evidence_as_of == "observed_at" and c.observed_at is not None:
        out.scope_evidence(c.observed_at.isoformat())
    elif e.evidence_as_of == "valid_to":
        out.scope_evidence(c.temporal.valid_to)
    return _inherit(e, rule, parents, out) if e.inherit_parent_obligations else []


def _denials(c: MemoryCandidate, out: _Outcome, allowed: list[Capability]) -> list[DeniedUse]:
    denied = []
    persisted = min(out.grant, out.cap) > 0
    for use in c.requested_uses:
        if use in allowed:
            continue
        if use in out.forbidden:
            rule_id, reason = out.forbidden[use]
        elif not persisted and out.capped_by is not None and out.cap == 0:
            rule_id, reason = out.capped_by
        elif not persisted:
            rule_id, reason = DEFAULT_DENY, NOT_ADMITTED
        else:
            rule_id, reason = DEFAULT_DENY, f"no rule of the policy grants {use.value}"
        denied.append(DeniedUse(use=use, rule_id=rule_id, reason=reason))
    return denied


def _hash_of(decision: AdmissionDecision | None) -> str | None:
    return decision.input_hash if decision is not None else None


def input_hash(
    c: MemoryCandidate, policy: Policy, as_of: datetime, parents: ParentDecisions
) -> str:
    """Hash of everything a decision depends on: the candidate (minus :data:`UNHASHED_FIELDS`),
    the input hash of each parent's decision (``None`` when unknown), the policy's id, version
    and content hash, and the as-of time."""
    digest: str = content_hash(
        {
            "candidate": c.model_dump(mode="json", exclude=set(UNHASHED_FIELDS)),
            "parents": [[pid, _hash_of(parents.get(pid))] for pid in c.parent_memory_ids],
            "policy": [policy.id, policy.version, policy.hash],
            "as_of": as_of.isoformat(),
        }
    )
    return digest


def decide(
    c: MemoryCandidate, policy: Policy, as_of: datetime, parents: ParentDecisions
) -> AdmissionDecision:
    """The decision for one candidate, given the decisions of its parents (``None`` = unknown)."""
    missing = tuple(pid for pid in c.parent_memory_ids if parents.get(pid) is None)
    facts = facts_for(c, as_of, missing)
    out = _Outcome()
    for step in _plan(policy, _static_key(c)):
        if not step.fires(facts, out.flags):
            continue
        rule = step.rule
        details = _detail(rule.match, c, facts) + _apply(rule, c, parents, out)
        out.fired.append(
            FiredRule(
                rule_id=rule.id,
                reason=rule.reason,
                detail="; ".join(details) or None,
                rule_hash=policy.rule_hashes[rule.id],
            )
        )
    lifecycle = LADDER[min(out.grant, out.cap)]
    persisted = lifecycle is not LifecycleState.EPHEMERAL
    if out.grant == 0:  # default deny is a decision too, and is recorded like one
        out.fired.append(FiredRule(rule_id=DEFAULT_DENY, reason=NOT_ADMITTED))
    allowed = [u for u in Capability if u in out.allowed and u not in out.forbidden]
    allowed = allowed if persisted else []
    return AdmissionDecision(
        memory_id=c.memory_id,
        persist=persisted,
        lifecycle_state=lifecycle,
        allowed_uses=allowed,
        forbidden_uses=[u for u in Capability if u in out.forbidden],
        denied_requested_uses=_denials(c, out, allowed),
        eligible_for_admission=out.eligible,
        flags=list(out.flags),
        rules_fired=out.fired,
        policy_id=policy.id,
        policy_version=policy.version,
        as_of=as_of,
        evidence_as_of=out.evidence_as_of,
        inherited_from=sorted(out.inherited),
        input_hash=input_hash(c, policy, as_of, parents),
    )


def _parents_first(candidates: Sequence[MemoryCandidate]) -> list[tuple[int, list[int]]]:
    """Each candidate index with the in-batch parent indexes it may inherit from, ordered so
    every parent comes before its children. A parent reached again while its own ancestors are
    still being visited closes a cycle and is left out (treated as unknown)."""
    first: dict[str, int] = {}
    for i, c in enumerate(candidates):
        first.setdefault(c.memory_id, i)
    order: list[tuple[int, list[int]]] = []
    done: set[int] = set()
    for root in range(len(candidates)):
        stack: list[tuple[int, list[int] | None]] = [(root, None)]
        active: set[int] = set()
        while stack:
            i, usable = stack.pop()
            if i in done:
                continue
            if usable is not None:
                active.discard(i)
                done.add(i)
                order.append((i, usable))
                continue
            active.add(i)
            ids = candidates[i].parent_memory_ids
            usable = [first[p] for p in ids if p in first and first[p] not in active]
            stack.append((i, usable))
            stack.extend((j, None) for j in reversed(usable) if j not in done)
    return order


def admit_with(
    candidates: Sequence[MemoryCandidate],
    policy: Policy,
    as_of_for: Callable[[MemoryCandidate], datetime],
    parents: Mapping[str, AdmissionDecision] | None = None,
) -> list[AdmissionDecision]:
    """:func:`admit` with a per-candidate as-of time (replay uses each stored decision's)."""
    known: dict[str, AdmissionDecision | None] = dict(parents or {})
    decided: dict[int, AdmissionDecision] = {}
    for i, usable in _parents_first(candidates):
        c = candidates[i]
        view = {pid: known.get(pid) for pid in c.parent_memory_ids}
        view.update({candidates[j].memory_id: decided[j] for j in usable})
        decided[i] = decide(c, policy, as_of_for(c), view)
    return [decided[i] for i in range(len(candidates))]


def admit(
    candidates: Sequence[MemoryCandidate],
    policy: Policy | None = None,
    *,
    as_of: datetime | None = None,
    parents: Mapping[str, AdmissionDecision] | None = None,
) -> list[AdmissionDecision]:
    """Decide every candidate under ``policy`` (the shipped default when ``None``).

    Returns one decision per candidate, in order. ``as_of`` is the time current-state authority
    is judged at; ``None`` judges each candidate at its own ``observed_at`` (else
    ``recorded_at``) -- the clock is never read. ``parents`` supplies decisions for parents
    admitted earlier (e.g. from a ledger); parents in the batch are decided first.
    """
    chosen = policy if policy is not None else load_policy()
    return admit_with(candidates, chosen, lambda c: as_of or default_as_of(c), parents)
