"""The :class:`MemoryStore`: governed memory after the write gate.

::

    from extractor import Extractor, MemoryStore

    with MemoryStore("memory.db") as store:
        report = store.ingest(result, tenant="acme", subject="user-42")
        store.claims(tenant="acme", subject="user-42")          # current state
        store.state_hash()                                      # what rebuild must reproduce

Every change is one append-only event in ``memory_events`` (one transaction with its
projection); the other tables are a projection of the events (:mod:`extractor.store.apply`).
Writes are serialized (``BEGIN IMMEDIATE``; several processes may share one file).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..admission import decide, load_policy
from ..admission.policy import Policy
from ..decisions import AdmissionDecision
from ..errors import StoreError, UnknownMemory
from ..hashing import content_hash, text_hash
from ..results import ConversationResult
from ..vocab import CandidateKind, Capability, LifecycleState, Origin, VerificationState
from .apply import claim_id_for, store_memory_id
from .core import DEFAULT_TENANT, StoreCore
from .derivation import (
    DerivedClaim,
    ParentView,
    admit_derived,
    check_claim,
    decision_payload,
    derived_candidate,
    overlap,
    parent_decision,
)
from .erasing import Erasing
from .explaining import EXPORTABLE, JSON_COLUMNS, Explaining
from .models import (
    Corroboration,
    DerivationRejectionRecord,
    DeriveReport,
    IngestReport,
    RevocationReport,
    RevocationTrigger,
    SourceRelation,
    StoredClaim,
    VerifyReport,
)
from .readmitting import Readmitting
from .timeaxes import system_time, valid_bounds
from .timeline import NORMALIZER_VERSION, claim_key

QUARANTINED = LifecycleState.QUARANTINED
REVOKED = LifecycleState.REVOKED


def _derived_id(activity: str, produced_by: str, claims: Sequence[DerivedClaim]) -> str:
    body = [activity, produced_by, [c.model_dump(mode="json") for c in claims]]
    return "der_" + content_hash(body).removeprefix("sha256:")[:20]


class MemoryStore(Readmitting, Erasing, Explaining, StoreCore):
    """A memory store. ``path`` is a SQLite file (created with its migrations when missing).

    ``clock`` supplies system time (tests pass a fake one); ``backend`` replaces the SQLite
    backend (anything implementing :class:`~extractor.store.backend.Backend`).
    """

    # -- ingest ---------------------------------------------------------------------------------

    def ingest(
        self,
        result: ConversationResult,
        *,
        tenant: str | None = None,
        subject: str | None = None,
        policy: Policy | None = None,
    ) -> IngestReport:
        """Persist every candidate of ``result`` whose decision says ``persist``.

        ``tenant`` and ``subject`` default to the result's own fields (set from the
        conversation's ``metadata.tenant`` / ``metadata.user_id``); the tenant falls back to
        :data:`DEFAULT_TENANT`. Idempotent: a result (or a memory) already stored adds nothing.

        A result decided under another admission policy version than the store's is a policy
        change: when that policy is at hand (``policy``, or the shipped one), every stored claim
        is re-decided under it first (:meth:`readmit`; ``IngestReport.readmit``).
        """
        tenant = tenant or result.tenant or DEFAULT_TENANT
        subject = subject or result.subject
        decisions = {d.memory_id: d for d in result.decisions}
        report = IngestReport(conversation_id=result.conversation_id, tenant=tenant,
                              subject=subject, event_seq=None)  # fmt: skip
        chosen = []
        for c in result.candidates:
            d = decisions.get(c.memory_id)
            if d is None or not d.persist:
                report.not_persisted.append(c.memory_id)
            else:
                chosen.append((c, d))
        under = {(d.policy_id, d.policy_version) for d in result.decisions}
        readmitted = self._follow_policy(under.pop() if len(under) == 1 else None, policy)
        report.readmit = readmitted
        with self.backend.transaction():
            existing = self._existing([c.memory_id for c, _ in chosen], tenant)
            fresh = [(c, d) for c, d in chosen if c.memory_id not in existing]
            report.already_stored = [existing[c.memory_id] for c, _ in chosen
                                     if c.memory_id in existing]  # fmt: skip
            if not fresh:
                return report
            unstored = {d.memory_id: d for d in result.decisions if not d.persist}
            memories = [_memory_payload(c, d, result, tenant, subject, unstored)
                        for c, d in fresh]  # fmt: skip
            payload = {
                "tenant": tenant,
                "subject": subject,
                "conversation_id": result.conversation_id,
                "conversation_hash": result.conversation_hash,
                "memories": memories,
            }
            seq, _ = self._record(
                "INGEST", payload, tenant=tenant, actor=result.provenance.model,
                key=content_hash(["INGEST", payload]),
            )  # fmt: skip
        report.event_seq = seq
        report.stored = [m["memory_id"] for m in memories]
        new = [claim_id_for(m) for m in report.stored]
        retired = self.backend.select_in("supersessions", "new_claim_id", new)
        report.superseded = sorted({r["old_claim_id"] for r in retired})
        pairs = self.backend.select_in("conflicts", "claim_a", new)
        pairs += self.backend.select_in("conflicts", "claim_b", new)
        report.conflicts = [list(p) for p in sorted({(r["claim_a"], r["claim_b"]) for r in pairs})]
        return report

    def _existing(self, external_ids: list[str], tenant: str) -> dict[str, str]:
        """The store ids of the memories of ``tenant`` already stored under these external ids
        (only this tenant's rows are looked at: other tenants' memories are never seen)."""
        rows = self.backend.select_in("memories", "external_id", external_ids,
                                      where={"tenant": tenant})  # fmt: skip
        return {r["external_id"]: r["memory_id"] for r in rows}

    # -- derivation and support -----------------------------------------------------------------

    def derive(
        self,
        claims: Sequence[DerivedClaim],
        *,
        activity: str = "SUMMARIZE",
        produced_by: str,
        memory_id: str | None = None,
        tenant: str | None = None,
        subject: str | None = None,
        requested_uses: Sequence[Capability] = (),
        policy: Policy | None = None,
    ) -> DeriveReport:
        """Record a derived memory (a summary, profile entry, compaction) with claim-level
        lineage. Each claim names the parent claims it requires; the gate checks it against them
        (:func:`~extractor.store.derivation.check_claim`) and the admission policy decides it as
        ``MEMORY_DERIVED`` output inheriting its parents' obligations. ``tenant`` and ``subject``
        default to the parents'. Idempotent: the same derivation gets the same ``memory_id``.
        """
        refs = [r for c in claims for r in (*c.requires, *c.context)]
        with self.backend.transaction():
            parents = self._parent_views(refs, tenant)
            known = [p for p in parents.values() if p is not None]
            tenant = tenant or (known[0].tenant if known else DEFAULT_TENANT)
            subject = subject or self._subject_of(known)
            external = memory_id or _derived_id(activity, produced_by, claims)
            mid = store_memory_id(tenant, external, prefix="der")
            report = DeriveReport(memory_id=mid, event_seq=None)
            if self.backend.select("memories", {"memory_id": mid}):
                report.stored = self.claims(memory_id=mid)
                return report
            now = self._clock()
            policy = policy if policy is not None else load_policy()
            payload_claims: list[dict[str, Any]] = []
            for i, claim in enumerate(claims):
                problem = check_claim(i, claim, parents, tenant)
                if problem is not None:
                    report.rejected.append(DerivationRejectionRecord(**problem.model_dump()))
                    continue
                payload_claims.append(self._derived_payload(
                    claim, f"{mid}:c{len(payload_claims) + 1}", parents, subject, policy=policy,
                    produced_by=produced_by, now=now, requested_uses=requested_uses,
                ))  # fmt: skip
            if not payload_claims:
                return report
            payload = {"tenant": tenant, "subject": subject, "memory_id": mid,
                       "external_id": external, "activity": activity,
                       "requested_uses": [u.value for u in requested_uses],
                       "produced_by": produced_by,
                       "claims": payload_claims}  # fmt: skip
            seq, _ = self._record("DERIVE", payload, tenant=tenant, actor=produced_by)
            report.event_seq = seq
            report.stored = self.claims(memory_id=mid)
        return report

    def _derived_payload(
        self,
        claim: DerivedClaim,
        claim_id: str,
        parents: Mapping[str, ParentView | None],
        subject: str | None,
        **admission: Any,
    ) -> dict[str, Any]:
        required = [p for r in claim.requires if (p := parents[r]) is not None]
        context = [p.claim_id for r in claim.context if (p := parents[r]) is not None]
        verification, decision = admit_derived(claim, claim_id, required, **admission)
        lo, hi = overlap(required) if not (claim.valid_from or claim.valid_to) else (None, None)
        stated = valid_bounds(claim.valid_from, claim.valid_to)
        return {
            "claim_id": claim_id,
            "ordinal": int(claim_id.rsplit(":c", 1)[1]),
            "content": claim.content,
            "content_hash": text_hash(claim.content),
            "requires": sorted({p.claim_id for p in required}),
            "context": sorted(set(context)),
            "relation": claim.relation,
            "hedges": list(claim.hedges),
            "valid_from": stated[0] if claim.valid_from else lo,
            "valid_to": stated[1] if claim.valid_to else hi,
            "verification_state": verification.value,
            "key": key_payload(claim.content, subject, proposition=True),
            "decision": decision_payload(decision),
        }

    def _parent_views(
        self, refs: Sequence[str], tenant: str | None = None
    ) -> dict[str, ParentView | None]:
        out: dict[str, ParentView | None] = {}
        for ref in dict.fromkeys(refs):
            found = self.resolve(ref, tenant=tenant)
            scope = {} if tenant is None else {"tenant": tenant}
            rows = self.backend.select("claims", {"claim_id": found, **scope})
            if not rows:
                rows = self.backend.select("claims", {"memory_id": found, **scope})
                rows = rows if len(rows) == 1 else []
            out[ref] = self._view(rows[0]) if rows else None
        return out

    def _subject_of(self, parents: Sequence[ParentView]) -> str | None:
        """The parents' subject when they all share one, else ``None``."""
        rows = self.backend.select_in("claims", "claim_id", [p.claim_id for p in parents])
        subjects = {r["subject"] for r in rows}
        return subjects.pop() if len(subjects) == 1 else None

    def support(self, claim: str, *, by: Sequence[str], informant: str) -> StoredClaim:
        """Record that the claims ``by`` (together) support ``claim``: one more justification,
        beside the ones it has. Support only decides whether a claim is held up (IN); it never
        adds a use, and circular support holds nothing up."""
        with self.backend.transaction():
            target = self._one_claim(claim)
            antecedents = [self._one_claim(b) for b in by]
            if not antecedents:
                raise StoreError("support needs at least one supporting claim (option by)")
            for ref, a in zip(by, antecedents, strict=True):
                if a["tenant"] != target["tenant"]:
                    raise UnknownMemory(ref)  # another tenant's claim is not there for it
            ids = sorted({a["claim_id"] for a in antecedents})
            just = f"{target['claim_id']}/support/" + content_hash(ids).removeprefix("sha256:")[:12]
            if not self.backend.select("justifications", {"just_id": just}):
                payload = {"claim_id": target["claim_id"], "by": ids, "informant": informant,
                           "just_id": just}  # fmt: skip
                self._record("SUPPORT", payload, tenant=target["tenant"], actor=informant)
            return self.claim(target["claim_id"])

    # -- sources and families -------------------------------------------------------------------

    def add_source(
        self,
        source_id: str,
        *,
        kind: str,
        uri: str | None = None,
        published_at: datetime | str | None = None,
        tenant: str | None = None,
        derived_from: Sequence[str] = (),
    ) -> None:
        """Register a primary source (a document, URL, press release). ``derived_from`` names
        claims the source was produced from: it can never verify them or their descendants."""
        if not source_id.strip():
            raise StoreError("a source needs a non-empty id")
        with self.backend.transaction():
            if self.backend.select("sources", {"source_id": source_id}):
                return
            for ref in derived_from:
                self._one_claim(ref)
            payload = {"source_id": source_id, "kind": kind, "uri": uri, "tenant": tenant,
                       "published_at": None if published_at is None
                       else system_time(published_at, option="published_at"),
                       "derived_from": sorted(derived_from)}  # fmt: skip
            self._record("SOURCE", payload, tenant=tenant)

    def link_sources(self, a: str, b: str, *, relation: SourceRelation) -> str:
        """Record that source ``a`` relates to ``b`` (COPIED_FROM, SYNDICATED_FROM,
        SHARES_PRIMARY_SOURCE_WITH, SAME_CONTENT): they are one family. Returns the family."""
        with self.backend.transaction():
            for sid in (a, b):
                if not self.backend.select("sources", {"source_id": sid}):
                    raise UnknownMemory(sid, what="source")
            if not self.backend.select("source_links", {"a": a, "b": b, "relation": relation}):
                self._record("LINK", {"a": a, "b": b, "relation": relation}, tenant=None)
            return self.family(a)

    def family(self, source_id: str) -> str:
        rows = self.backend.select("source_families", {"source_id": source_id})
        if not rows:
            raise UnknownMemory(source_id, what="source")
        return str(rows[0]["family_id"])

    def add_evidence(
        self,
        claim: str,
        *,
        source: str,
        locator: str | None = None,
        quote: str | None = None,
        informant: str = "caller",
    ) -> str:
        """Record that a span (a chunk) of ``source`` states ``claim``. Returns its id."""
        with self.backend.transaction():
            row = self._one_claim(claim)
            if not self.backend.select("sources", {"source_id": source}):
                raise UnknownMemory(source, what="source")
            cid = row["claim_id"]
            n = len(self.backend.select("evidence", {"claim_id": cid})) + 1
            payload = {"claim_id": cid, "source_id": source, "locator": locator, "quote": quote,
                       "evidence_id": f"{cid}#e{n}", "informant": informant}  # fmt: skip
            self._record("EVIDENCE", payload, tenant=row["tenant"], actor=informant)
            return f"{cid}#e{n}"

    def corroboration(self, *claims: str) -> Corroboration:
        """Independent evidence for ``claims`` (one claim, or paraphrases of one proposition):
        chunks, sources and URLs of their ACTIVE evidence, and the source families they rest
        on. Corroboration is the family count -- never chunks, URLs or paraphrases (seed §6).

        A claim with required derivation parents (a summary; a proposition extracted from an
        assertion event) rests on the families of its underived ancestors along required
        edges, never more: it can be no more independent than what it was made from. That is
        the count the read path judges (``MemoryView.independent_families``)."""
        ids = [self._one_claim(c)["claim_id"] for c in claims]
        live, sources = self._active_evidence(ids)
        used = sorted({e["source_id"] for e in live})
        uris = {sources[s]["uri"] for s in used if sources[s]["uri"] is not None}
        rests_on, _ = self._active_evidence(self._underived_roots(ids))
        fams = sorted({r["family_id"] for r in self.backend.select_in(
            "source_families", "source_id", {e["source_id"] for e in rests_on})})  # fmt: skip
        return Corroboration(claim_ids=ids, chunks=len(live), sources=len(used), urls=len(uris),
                             families=len(fams), family_ids=fams)  # fmt: skip

    def _active_evidence(
        self, claim_ids: Sequence[str]
    ) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
        """The evidence rows of ``claim_ids`` whose source is ACTIVE, and those sources."""
        evidence = self.backend.select_in("evidence", "claim_id", claim_ids)
        sources = {r["source_id"]: r for r in self.backend.select_in(
            "sources", "source_id", [e["source_id"] for e in evidence])}  # fmt: skip
        return [e for e in evidence if sources[e["source_id"]]["status"] == "ACTIVE"], sources

    def _underived_roots(self, claim_ids: Sequence[str]) -> list[str]:
        """The claims reached from ``claim_ids`` up required derivation edges that have no
        required parent themselves (a claim without one is its own root)."""
        seen, frontier, roots = set(claim_ids), sorted(set(claim_ids)), set()
        while frontier:
            edges = [e for e in self.backend.select_in("derivations", "child_claim_id", frontier)
                     if e["required"]]  # fmt: skip
            derived = {e["child_claim_id"] for e in edges}
            roots |= {c for c in frontier if c not in derived}
            frontier = sorted({e["parent_claim_id"] for e in edges} - seen)
            seen.update(frontier)
        return sorted(roots)

    def verify(
        self,
        claim: str,
        *,
        source: str,
        verifier: str,
        policy: Policy | None = None,
    ) -> VerifyReport:
        """New verification of ``claim`` by ``source`` (seed §5, Exercise 2).

        Accepted only when the source is ACTIVE, its family is not the family of any source in
        the claim's lineage, and it was not produced from the claim or its descendants. Then the
        admission policy -- not the store -- decides the verified version, as a ``VERIFIED``
        ``EXTERNAL_SOURCE`` claim; it holds while the source does.
        """
        with self.backend.transaction():
            row = self._one_claim(claim)
            cid = row["claim_id"]
            found = self.backend.select("sources", {"source_id": source})
            if not found:
                raise UnknownMemory(source, what="source")
            problem = self._not_independent(cid, found[0])
            if problem is not None:
                return VerifyReport(
                    claim_id=cid, source_id=source, accepted=False, reason=problem,
                    event_seq=None, claim=self.claim(cid),
                )  # fmt: skip
            view = self._view(row)
            content = DerivedClaim(content=view.content, requires=[cid], hedges=view.hedges)
            candidate = derived_candidate(
                content,
                cid,
                [view],
                VerificationState.VERIFIED,
                verifier,
                self._clock(),
                origin=Origin.EXTERNAL_SOURCE,
            )
            chosen = policy if policy is not None else load_policy()
            parents = {view.memory_id: parent_decision(view, chosen)}
            decision = decide(candidate, chosen, candidate.recorded_at, parents)
            # The claim's n-th verification: an id that tells nothing of other tenants (the
            # store-wide event seq it carried before would count their events in between).
            n = len(self.backend.select("verifications", {"claim_id": cid})) + 1
            payload = {"claim_id": cid, "source_id": source, "verifier": verifier,
                       "decision": decision_payload(decision),
                       "verification_id": f"{cid}/verify/v{n}"}  # fmt: skip
            seq, _ = self._record("VERIFY", payload, tenant=row["tenant"], actor=verifier)
            rules = ", ".join(r.rule_id for r in decision.rules_fired)
            return VerifyReport(
                claim_id=cid, source_id=source, accepted=True, reason=f"admitted by {rules}",
                event_seq=seq, claim=self.claim(cid),
            )  # fmt: skip

    def _not_independent(self, claim_id: str, source: Mapping[str, Any]) -> str | None:
        if source["status"] != "ACTIVE":
            return f"source {source['source_id']!r} is {source['status']}"
        claims, sources = self._projector.ancestry([claim_id])
        lineage = {claim_id, *claims}
        descendants = self._dependents([claim_id])
        made_from = set(json.loads(source["derived_from"]))
        loop = sorted(made_from & (lineage | descendants))
        if loop:
            return (f"source {source['source_id']!r} was produced from {loop[0]!r}, in this "
                    "claim's own lineage: a claim cannot verify itself")  # fmt: skip
        own = self.family(source["source_id"])
        shared = sorted(s for s in sources if self.family(s) == own)
        if shared:
            return (
                f"source {source['source_id']!r} is in the same family ({own!r}) as "
                f"{shared[0]!r}, which the claim already rests on: not independent"
            )
        return None

    # -- revocation -----------------------------------------------------------------------------

    def revoke(
        self,
        ref: str,
        *,
        reason: str,
        trigger: RevocationTrigger = "MANUAL",
        actor: str | None = None,
    ) -> RevocationReport:
        """Revoke a claim, every claim of a memory, or a source (seed §13, Exercise 4).

        The targets go OUT; every dependent is marked ``NEEDS_REVALIDATION``, its support is
        recomputed from the remaining admissible roots (out along current support, then
        alternative support to a fixpoint: circular support cannot hold itself up), and it ends
        ACTIVE or PROVISIONAL (restored, with the support that now holds it), QUARANTINED, or
        REVOKED (a copy of a revoked claim). Returns the impact report.
        """
        return self._revocation("REVOKE", ref, reason=reason, trigger=trigger, actor=actor)

    def restore(self, ref: str, *, reason: str, actor: str | None = None) -> RevocationReport:
        """Withdraw a revocation of a claim, memory or source; dependents are revalidated."""
        return self._revocation("RESTORE", ref, reason=reason, trigger="MANUAL", actor=actor)

    def _revocation(
        self, kind: str, ref: str, *, reason: str, trigger: str, actor: str | None
    ) -> RevocationReport:
        if not reason.strip():
            raise StoreError(f"{kind.lower()} needs a reason (option reason)")
        with self.backend.transaction():
            claims, sources, tenant = self._targets(ref)
            region = [*claims, *sources]
            payload = {"claims": claims, "sources": sources, "reason": reason, "trigger": trigger}
            seq, outcome = self._record(kind, payload, tenant=tenant, actor=actor)
            assert seq is not None
            assert outcome is not None
            at = str(self.backend.select("memory_events", {"seq": seq})[0]["at"])
            return self._impact(seq, region, payload, outcome, at)

    def _targets(self, ref: str) -> tuple[list[str], list[str], str | None]:
        sources = self.backend.select("sources", {"source_id": ref})
        if sources:
            return [], [ref], sources[0]["tenant"]
        ref = self.resolve(ref)
        rows = self.backend.select("claims", {"claim_id": ref}) or self.backend.select(
            "claims", {"memory_id": ref}, order_by="ordinal"
        )
        if not rows:
            raise UnknownMemory(ref, what="memory, claim or source")
        return [r["claim_id"] for r in rows], [], rows[0]["tenant"]


def key_payload(content: str, subject: str | None, *, proposition: bool) -> dict[str, Any] | None:
    key = claim_key(content, subject, proposition=proposition)
    if key is None:
        return None
    return {"subject": key.subject, "relation": key.relation, "object": key.object,
            "scope": key.scope, "normalizer_version": NORMALIZER_VERSION}  # fmt: skip


def _memory_payload(
    c: Any,
    d: Any,
    result: ConversationResult,
    tenant: str,
    subject: str | None,
    unstored: Mapping[str, AdmissionDecision],
) -> dict[str, Any]:
    span = c.source_span
    valid_from, valid_to = valid_bounds(c.temporal.valid_from, c.temporal.valid_to)
    return {
        "memory_id": store_memory_id(tenant, c.memory_id),
        "external_id": c.memory_id,
        "memory_type": c.memory_type.value,
        "kind": c.kind.value,
        "origin_kind": c.origin_kind.value,
        "verification_state": c.verification_state.value,
        "content": c.content,
        "content_hash": text_hash(c.content),
        "quote": span.quote,
        "message_id": span.message_id,
        "evidence_ref": f"{result.conversation_hash}#{span.message_id}[{span.start}:{span.end}]",
        "hedges": list(c.uncertainty.hedges),
        "observed_at": None if c.observed_at is None else system_time(c.observed_at),
        "valid_from": valid_from,
        "valid_to": valid_to,
        "parent_memory_ids": [store_memory_id(tenant, p) for p in c.parent_memory_ids],
        "produced_by": c.provenance.model,
        "key": key_payload(c.content, subject, proposition=c.kind is CandidateKind.PROPOSITION),
        "decision": decision_payload(d),
        "as_of": None if d.as_of is None else d.as_of.isoformat(),
        "candidate": c.model_dump(mode="json"),
        "parent_decisions": {
            p: unstored[p].model_dump(mode="json") for p in c.parent_memory_ids if p in unstored
        },
    }


__all__ = [
    "DEFAULT_TENANT",
    "EXPORTABLE",
    "JSON_COLUMNS",
    "MemoryStore",
    "StoreCore",
    "claim_id_for",
]
