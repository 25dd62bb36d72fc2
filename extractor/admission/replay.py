"""Replay: re-admit stored candidates under another policy and report what changes, and why.

A result line (:class:`~extractor.results.ConversationResult`) stores the candidates and the
decisions they got. :func:`replay` decides the same candidates again under a new policy and
compares the *outcome* of each decision (persistence, lifecycle, uses, denials, eligibility,
flags, evidence scope, lineage). Policy id/version, input hash and the fired-rule list are not
outcomes: they explain a change rather than being one.

Each change is explained by rule deltas -- a rule that now fires, no longer fires, or fired in
both but whose definition (``rule_hash``) or reason changed -- and by notes for changes that do
not come from a rule of this candidate (a parent's decision changed, a different as-of time).

By default every candidate is replayed at the as-of time its stored decision used, so the only
difference is the policy; pass ``as_of`` to judge everything at one time instead.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..candidates import MemoryCandidate
from ..decisions import AdmissionDecision, FiredRule
from ..errors import InputError, InputLocation
from ..resultline import load_result
from ..results import ConversationResult
from .engine import admit_with
from .explain import with_reasons
from .facts import default_as_of
from .policy import Policy

#: The decision fields compared by replay, in report order.
OUTCOME_FIELDS = (
    "persist",
    "lifecycle_state",
    "allowed_uses",
    "forbidden_uses",
    "denied_requested_uses",
    "eligible_for_admission",
    "flags",
    "evidence_as_of",
    "inherited_from",
)


class FieldChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    field: str
    before: Any = Field(description="JSON value before; null when there was no stored decision.")
    after: Any


class RuleChange(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rule_id: str
    change: Literal["NOW_FIRES", "NO_LONGER_FIRES", "DEFINITION_CHANGED", "DETAIL_CHANGED"]
    reason: str


class DecisionChange(BaseModel):
    """One decision whose outcome differs between the stored and the replayed decision."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    memory_id: str
    candidate_id: str
    content: str
    fields: list[FieldChange]
    rules: list[RuleChange] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class ReplayReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    policy_id: str
    policy_version: str
    policy_hash: str
    previous_policies: list[str] = Field(
        default_factory=list, description="'id version' of the stored decisions, sorted."
    )
    conversations: int = 0
    decisions: int = 0
    unchanged: int = 0
    changed: list[DecisionChange] = Field(default_factory=list)


def _outcome(decision: AdmissionDecision | None) -> dict[str, Any]:
    if decision is None:
        return dict.fromkeys(OUTCOME_FIELDS)
    fields: dict[str, Any] = decision.model_dump(mode="json", include=set(OUTCOME_FIELDS))
    # which use which rule denied is the outcome; the rule's reason is the policy's text (its
    # changes are rule changes), and a stored decision of an older policy version may not have
    # it (result line format 2 stores none): never a change of the decision by itself
    for denied in fields["denied_requested_uses"]:
        denied.pop("reason", None)
    return fields


def _rule_changes(before: list[FiredRule], after: list[FiredRule]) -> list[RuleChange]:
    """Rule deltas; a stored rule without its reason (result line format 2) is compared by its
    definition hash alone, and named with the new policy's reason when that policy has it."""
    old = {r.rule_id: r for r in before}
    new = {r.rule_id: r for r in after}
    changes = [RuleChange(rule_id=r.rule_id, change="NOW_FIRES", reason=r.reason or "")
               for r in after if r.rule_id not in old]  # fmt: skip
    changes += [RuleChange(rule_id=r.rule_id, change="NO_LONGER_FIRES",
                           reason=r.reason or "(not a rule of this policy as it was)")
                for r in before if r.rule_id not in new]  # fmt: skip
    for r in after:
        prev = old.get(r.rule_id)
        if prev is None:
            continue
        reason_changed = prev.reason is not None and prev.reason != r.reason
        if prev.rule_hash != r.rule_hash or reason_changed:
            changes.append(
                RuleChange(rule_id=r.rule_id, change="DEFINITION_CHANGED", reason=r.reason or "")
            )
        elif prev.detail != r.detail:
            detail = f"{prev.detail or '-'} -> {r.detail or '-'}"
            changes.append(RuleChange(rule_id=r.rule_id, change="DETAIL_CHANGED", reason=detail))
    return changes


def _compare(
    result: ConversationResult,
    candidate: MemoryCandidate,
    before: AdmissionDecision | None,
    after: AdmissionDecision,
    changed_ids: set[str],
) -> DecisionChange | None:
    old, new = _outcome(before), _outcome(after)
    fields = [FieldChange(field=f, before=old[f], after=new[f]) for f in OUTCOME_FIELDS
              if old[f] != new[f]]  # fmt: skip
    if not fields:
        return None
    notes = []
    if before is None:
        notes.append("no stored decision for this candidate")
    elif before.as_of != after.as_of:
        notes.append(f"judged as of {after.as_of} instead of {before.as_of}")
    notes += [f"parent {p}'s decision changed" for p in candidate.parent_memory_ids
              if p in changed_ids]  # fmt: skip
    return DecisionChange(
        conversation_id=result.conversation_id,
        memory_id=candidate.memory_id,
        candidate_id=candidate.candidate_id,
        content=candidate.content,
        fields=fields,
        rules=_rule_changes(before.rules_fired if before else [], after.rules_fired),
        notes=notes,
    )


def _replay_one(
    result: ConversationResult, policy: Policy, as_of: datetime | None, report: ReplayReport
) -> None:
    stored: dict[str, AdmissionDecision] = {}
    for d in with_reasons(result.decisions, policy):
        stored.setdefault(d.memory_id, d)

    def when(c: MemoryCandidate) -> datetime:
        prior = stored.get(c.memory_id)
        return as_of or (prior.as_of if prior and prior.as_of else None) or default_as_of(c)

    fresh = admit_with(result.candidates, policy, when)
    pairs = [(c, stored.get(c.memory_id), a) for c, a in zip(result.candidates, fresh, strict=True)]
    changed_ids = {c.memory_id for c, b, a in pairs if _outcome(b) != _outcome(a)}
    for candidate, before, after in pairs:
        change = _compare(result, candidate, before, after, changed_ids)
        report.decisions += 1
        if change is None:
            report.unchanged += 1
        else:
            report.changed.append(change)


def replay(
    results: Iterable[ConversationResult], policy: Policy, *, as_of: datetime | None = None
) -> ReplayReport:
    """Re-admit every stored candidate under ``policy`` and report every changed decision.

    Parents are decided before their children, so a change that propagates through lineage is
    reported on the child too, with a note naming the parent.
    """
    report = ReplayReport(
        policy_id=policy.id, policy_version=policy.version, policy_hash=policy.hash
    )
    previous: set[str] = set()
    for result in results:
        report.conversations += 1
        previous.update(f"{d.policy_id} {d.policy_version}" for d in result.decisions)
        _replay_one(result, policy, as_of, report)
    report.previous_policies = sorted(previous)
    return report


def _open(source: str | Path) -> IO[str]:
    path = Path(source)
    if path.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")
    return path.open(encoding="utf-8")


def _line_error(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    parts = [f"{'.'.join(str(p) for p in e['loc']) or '<line>'}: {e['msg']}" for e in errors[:3]]
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "not a result line: " + "; ".join(parts) + more


def _conversation_id(line: str) -> str | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    cid = data.get("conversation_id") if isinstance(data, dict) else None
    return cid if isinstance(cid, str) else None


def iter_results(
    source: str | Path, stream: IO[str] | None = None
) -> Iterator[ConversationResult | InputError]:
    """Read a results JSONL file (``.gz`` too) line by line.

    A line that is not a valid result yields an :class:`~extractor.errors.InputError` naming the
    file, the line and (when readable) the conversation id, and reading goes on. Blank lines are
    skipped. Pass ``stream`` to read from an open text stream (e.g. stdin) named ``source``.
    """
    name = str(source)
    try:
        handle = stream if stream is not None else _open(source)
    except OSError as exc:
        yield InputError(f"cannot read results: {exc.strerror or exc}", InputLocation(source=name))
        return
    number = 0
    with handle if stream is None else contextlib.nullcontext(handle):
        try:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield load_result(line)
                except ValidationError as exc:
                    where = InputLocation(name, number, _conversation_id(line))
                    yield InputError(_line_error(exc), where)
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            yield InputError(f"cannot read further: {exc}", InputLocation(name, number + 1))
