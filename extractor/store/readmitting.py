"""A policy change re-admits what the store holds (:meth:`MemoryStore.readmit`, seed §17).

When the admission policy changes, every stored claim is decided again by the *policy* -- never
by the store -- from what its events recorded:

* an extracted claim from its candidate (``INGEST`` payloads carry it), at the as-of time its
  first decision used, with the decisions of its parents: re-decided ones when the parent is
  stored, the recorded decision otherwise (a parent the gate did not persist);
* a derived claim as ``MEMORY_DERIVED`` output of its required parents (as :meth:`derive`
  decides it), with the parents' current state;
* an independent verification as :meth:`verify` decides it.

The new decisions go into one ``READMIT`` event; the claims whose outcome changed (lifecycle,
uses, flags, rules) are revalidated with their dependents exactly as after a revocation, and
settle as ever: a claim's uses are at most what its (new) decision allows, met with its current
support. Claims ingested before candidates were recorded cannot be re-decided and are listed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..admission import decide, load_policy
from ..admission.facts import default_as_of
from ..admission.policy import Policy
from ..candidates import MemoryCandidate
from ..decisions import AdmissionDecision
from ..errors import StoreError
from ..vocab import Capability, LifecycleState, Origin, VerificationState
from .apply import claim_id_for
from .core import StoreCore
from .derivation import (
    DerivedClaim,
    ParentView,
    admit_derived,
    decision_payload,
    derived_candidate,
    parent_decision,
)
from .models import (
    ReadmitChange,
    ReadmitReport,
    ReadmitSkip,
    RevocationReport,
    RevocationTrigger,
)

NOT_RECORDED = (
    "ingested before the store recorded candidates in its events: decide it again with "
    "'extractor admit --policy FILE' on its result file and ingest that result into a new store"
)


class Readmitting(StoreCore):
    """``readmit`` and the automatic trigger on ingest."""

    def readmit(
        self,
        policy: Policy | None = None,
        *,
        reason: str = "admission policy changed",
        trigger: RevocationTrigger = "POLICY_CHANGE",
        actor: str | None = None,
    ) -> ReadmitReport:
        """Decide every stored claim again under ``policy`` (the shipped one when ``None``).

        Records one ``READMIT`` event when any decision changed (or was made under another
        policy version); the claims whose outcome changed are revalidated with their dependents,
        as after a revocation, and the report lists them, the dependents and the reads that
        already consumed them. Never grants a use the policy does not.
        """
        chosen = policy if policy is not None else load_policy()
        with self.backend.transaction():
            report = ReadmitReport(
                event_seq=None, policy_id=chosen.id, policy_version=chosen.version,
                previous_policies=[], trigger=trigger, decided=0,
            )  # fmt: skip
            changes: dict[str, ReadmitChange] = {}
            # A derived claim is decided with its parents' current state, so a change reaches
            # it one round later: rounds until nothing changes (at most the derivation depth).
            for _ in range(MAX_ROUNDS):
                skipped = ReadmitReport.model_validate(report.model_dump())
                skipped.skipped = []
                claims = {r["claim_id"]: r for r in self.backend.select("claims", {"erased": 0})}
                decisions = self._redecide_extracted(chosen, claims, skipped)
                decisions.update(self._redecide_derived(chosen, claims, skipped))
                verifications = self._redecide_verifications(chosen, claims)
                if report.event_seq is None:
                    report.skipped = skipped.skipped
                    report.decided = len(decisions) + len(verifications)
                    report.previous_policies = sorted({
                        f"{claims[c]['policy_id']} {claims[c]['policy_version']}" for c in decisions
                    })  # fmt: skip
                moved = {c: d for c, d in decisions.items() if _differs(claims[c], d)}
                changed = sorted(
                    {c for c, d in moved.items() if _outcome_changed(claims[c], d)}
                    | {cid for cid, _ in verifications.values()}
                )
                if not moved and not verifications:
                    break
                for cid in changed:
                    if cid in moved:
                        change = _change(claims[cid], moved[cid])
                        first = changes.get(cid)
                        if first is not None:
                            change.lifecycle_before = first.lifecycle_before
                            change.allowed_before = first.allowed_before
                            change.rules_before = first.rules_before
                        changes[cid] = change
                payload = {
                    "policy_id": chosen.id, "policy_version": chosen.version,
                    "policy_hash": chosen.hash, "reason": reason, "trigger": trigger,
                    "decisions": moved,
                    "verifications": {v: d for v, (_, d) in verifications.items()},
                    "claims": changed, "sources": [],
                }  # fmt: skip
                seq, outcome = self._record("READMIT", payload, tenant=None, actor=actor)
                assert seq is not None
                assert outcome is not None
                report.event_seq = seq
                at = str(self.backend.select("memory_events", {"seq": seq})[0]["at"])
                impact = self._impact(seq, changed, payload, outcome, at)
                report.revocation = _merge(report.revocation, impact)
            else:
                raise StoreError(f"readmission did not settle in {MAX_ROUNDS} rounds")
            report.changed = [changes[c] for c in sorted(changes)]
            return report

    def _redecide_extracted(
        self, policy: Policy, claims: Mapping[str, Mapping[str, Any]], report: ReadmitReport
    ) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        new: dict[str, AdmissionDecision] = {}  # by store memory id
        for event in self.backend.events():
            if event["kind"] != "INGEST":
                continue
            payload = json.loads(event["payload_json"])
            for m in payload["memories"]:
                cid = claim_id_for(m["memory_id"])
                if cid not in claims:
                    continue  # erased
                if m.get("candidate") is None:
                    report.skipped.append(ReadmitSkip(claim_id=cid, reason=NOT_RECORDED))
                    continue
                candidate = MemoryCandidate.model_validate(m["candidate"])
                stored_ids = dict(zip(candidate.parent_memory_ids, m["parent_memory_ids"],
                                      strict=False))  # fmt: skip
                recorded = m.get("parent_decisions") or {}
                parents: dict[str, AdmissionDecision | None] = {}
                for pid in candidate.parent_memory_ids:
                    store_id = stored_ids.get(pid)
                    if store_id is not None and store_id in new:
                        parents[pid] = new[store_id]
                    elif pid in recorded:
                        parents[pid] = AdmissionDecision.model_validate(recorded[pid])
                    else:
                        parents[pid] = None
                as_of = _moment(m.get("as_of")) or default_as_of(candidate)
                decision = decide(candidate, policy, as_of, parents)
                new[m["memory_id"]] = decision
                out[cid] = decision_payload(decision)
        return out

    def _redecide_derived(
        self, policy: Policy, claims: Mapping[str, Mapping[str, Any]], report: ReadmitReport
    ) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for event in self.backend.events():
            if event["kind"] != "DERIVE":
                continue
            payload = json.loads(event["payload_json"])
            at = datetime.fromisoformat(str(event["at"]))
            for c in payload["claims"]:
                if c["claim_id"] not in claims:
                    continue
                parents = [self._view(claims[p]) for p in c["requires"] if p in claims]
                if len(parents) != len(c["requires"]):
                    report.skipped.append(ReadmitSkip(
                        claim_id=c["claim_id"], reason="a required parent was erased",
                    ))  # fmt: skip
                    continue
                claim = DerivedClaim(content=c["content"], requires=c["requires"],
                                     context=c["context"], relation=c["relation"],
                                     hedges=c["hedges"])  # fmt: skip
                _, decision = admit_derived(
                    claim, c["claim_id"], parents, policy=policy,
                    produced_by=payload["produced_by"], now=at,
                    requested_uses=[Capability(u) for u in payload.get("requested_uses", [])],
                )  # fmt: skip
                out[c["claim_id"]] = decision_payload(decision)
        return out

    def _redecide_verifications(
        self, policy: Policy, claims: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, tuple[str, dict[str, Any]]]:
        """The verifications whose decision the policy now makes differently."""
        out: dict[str, tuple[str, dict[str, Any]]] = {}
        rows = self.backend.select_in("verifications", "claim_id", claims)
        events = {e["seq"]: e for e in self.backend.events() if e["kind"] == "VERIFY"}
        for r in rows:
            event = events.get(r["cause_seq"])
            if event is None:
                continue
            view: ParentView = self._view(claims[r["claim_id"]])
            content = DerivedClaim(content=view.content, requires=[view.claim_id],
                                   hedges=view.hedges)  # fmt: skip
            at = datetime.fromisoformat(str(event["at"]))
            candidate = derived_candidate(content, view.claim_id, [view],
                                          VerificationState.VERIFIED, r["verifier"], at,
                                          origin=Origin.EXTERNAL_SOURCE)  # fmt: skip
            decision = decide(candidate, policy, candidate.recorded_at,
                              {view.memory_id: parent_decision(view, policy)})  # fmt: skip
            old = {
                "lifecycle_state": r["lifecycle_state"],
                "allowed_uses": json.loads(r["allowed_uses"]),
                "forbidden_uses": json.loads(r["forbidden_uses"]),
                "flags": sorted(json.loads(r["flags"])),
                "rules_fired": json.loads(r["rules_fired"]),
                "policy_id": r["policy_id"], "policy_version": r["policy_version"],
                "input_hash": r["decision_input_hash"],
            }  # fmt: skip
            new = decision_payload(decision)
            if _normal(old) != _normal(new):
                out[r["verification_id"]] = (r["claim_id"], new)
        return out

    def _policy_now(self) -> tuple[str, str] | None:
        """The admission policy the store's decisions follow: that of the last ``READMIT``,
        else that of the last claim stored; ``None`` for an empty store."""
        row = self.backend.latest("memory_events", "seq", {"kind": "READMIT"})
        if row is not None:
            payload = json.loads(row["payload_json"])
            return str(payload["policy_id"]), str(payload["policy_version"])
        claim = self.backend.latest("claims", "claim_rowid")
        if claim is None:
            return None
        return str(claim["policy_id"]), str(claim["policy_version"])

    def _follow_policy(
        self, decided_under: tuple[str, str] | None, policy: Policy | None
    ) -> ReadmitReport | None:
        """Before an ingest of results decided under ``decided_under``: when that is not the
        store's policy and the policy is at hand (given, or the shipped one), re-admit."""
        if decided_under is None:
            return None
        now = self._policy_now()
        if now is None or now == decided_under:
            return None
        chosen = policy if policy is not None else load_policy()
        if (chosen.id, chosen.version) != decided_under:
            return None
        return self.readmit(chosen, reason=f"results decided under {' '.join(decided_under)}")


#: Rounds of re-decision before readmission gives up (a derivation chain this deep).
MAX_ROUNDS = 64


def _merge(old: RevocationReport | None, new: RevocationReport) -> RevocationReport:
    """One impact report for the rounds of a readmission: a claim's first state before, its
    last after, its smallest depth; every exposure once."""
    if old is None:
        return new
    affected = {a.claim_id: a for a in old.affected}
    for a in new.affected:
        seen = affected.get(a.claim_id)
        if seen is not None:
            a = a.model_copy(update={"lifecycle_before": seen.lifecycle_before,
                                     "allowed_before": seen.allowed_before,
                                     "depth": min(seen.depth, a.depth)})  # fmt: skip
        affected[a.claim_id] = a
    ended = {c: a.lifecycle_after for c, a in affected.items()}
    exposures = {(e.read_id, e.claim_id, e.stage): e for e in [*old.exposures, *new.exposures]}
    return new.model_copy(update={
        "targets": sorted({*old.targets, *new.targets}),
        "affected": [affected[c] for c in sorted(affected)],
        "restored": sorted(c for c, s in ended.items()
                           if s not in (LifecycleState.QUARANTINED, LifecycleState.REVOKED)),
        "quarantined": sorted(c for c, s in ended.items() if s == LifecycleState.QUARANTINED),
        "revoked": sorted(c for c, s in ended.items() if s == LifecycleState.REVOKED),
        "max_depth": max((a.depth for a in affected.values()), default=0),
        "exposures": sorted(exposures.values(), key=lambda e: (e.at, e.read_id, e.claim_id)),
    })  # fmt: skip


def _moment(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


def _as_decision(row: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "lifecycle_state": row["base_lifecycle"],
        "allowed_uses": json.loads(row["base_allowed"]),
        "forbidden_uses": json.loads(row["base_forbidden"]),
        "flags": sorted(json.loads(row["base_flags"])),
        "rules_fired": json.loads(row["rules_fired"]),
    }


def _normal(d: Mapping[str, Any]) -> dict[str, Any]:
    order = list(Capability)
    return {
        "lifecycle_state": d["lifecycle_state"],
        "allowed_uses": sorted(d["allowed_uses"], key=lambda u: order.index(Capability(u))),
        "forbidden_uses": sorted(d["forbidden_uses"], key=lambda u: order.index(Capability(u))),
        "flags": sorted(d["flags"]),
        "rules_fired": list(d["rules_fired"]),
    }


def _outcome_changed(row: Mapping[str, Any], d: Mapping[str, Any]) -> bool:
    return _normal(_as_decision(row)) != _normal(d)


def _differs(row: Mapping[str, Any], d: Mapping[str, Any]) -> bool:
    return (
        _outcome_changed(row, d)
        or row["policy_id"] != d["policy_id"]
        or row["policy_version"] != d["policy_version"]
    )


def _change(row: Mapping[str, Any], d: Mapping[str, Any]) -> ReadmitChange:
    before, after = _normal(_as_decision(row)), _normal(d)
    return ReadmitChange(
        claim_id=row["claim_id"],
        lifecycle_before=LifecycleState(before["lifecycle_state"]),
        lifecycle_after=LifecycleState(after["lifecycle_state"]),
        allowed_before=before["allowed_uses"], allowed_after=after["allowed_uses"],
        rules_before=before["rules_fired"], rules_after=after["rules_fired"],
    )  # fmt: skip
