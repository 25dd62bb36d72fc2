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

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from ..admission import decide, load_policy
from ..admission.policy import Policy
from ..errors import StoreError, UnknownMemory
from ..hashing import canonical_json, content_hash, text_hash
from ..results import ConversationResult
from ..vocab import Capability, LifecycleState, Origin, VerificationState
from .apply import apply_event, claim_id_for
from .backend import Backend, SQLiteBackend
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
from .migrations import PROJECTION_TABLES
from .models import (
    AffectedClaim,
    ClaimVersion,
    Corroboration,
    DerivationRejectionRecord,
    DeriveReport,
    Exposure,
    IngestReport,
    Lineage,
    LineageEdge,
    MemoryEvent,
    RebuildReport,
    RevocationReport,
    RevocationTrigger,
    SourceRelation,
    StoredClaim,
    VerifyReport,
)
from .projection import Cause, Outcome, Projector, state_of
from .support import forward_closure
from .timeaxes import system_time, utc_now, valid_bounds, valid_point

#: Tenant used when neither the caller nor the result names one.
DEFAULT_TENANT = "default"

Clock = Callable[[], datetime]

QUARANTINED = LifecycleState.QUARANTINED
REVOKED = LifecycleState.REVOKED


def _derived_id(activity: str, produced_by: str, claims: Sequence[DerivedClaim]) -> str:
    body = [activity, produced_by, [c.model_dump(mode="json") for c in claims]]
    return "der_" + content_hash(body).removeprefix("sha256:")[:20]


class MemoryStore:
    """A memory store. ``path`` is a SQLite file (created with its migrations when missing).

    ``clock`` supplies system time (tests pass a fake one); ``backend`` replaces the SQLite
    backend (anything implementing :class:`~extractor.store.backend.Backend`).
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        *,
        create: bool = True,
        clock: Clock | None = None,
        backend: Backend | None = None,
    ) -> None:
        self.backend: Backend = backend or SQLiteBackend(path, create=create)
        self._clock = clock or utc_now
        self._projector = Projector(self.backend)

    # -- lifecycle ------------------------------------------------------------------------------

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def migrations(self) -> list[str]:
        return self.backend.migrations()

    # -- events ---------------------------------------------------------------------------------

    def _now(self) -> str:
        return system_time(self._clock(), option="clock")

    def _record(
        self,
        kind: str,
        payload: Mapping[str, Any],
        *,
        tenant: str | None,
        actor: str | None = None,
        key: str | None = None,
    ) -> tuple[int | None, Any]:
        """Append one event and apply it, in one transaction. ``(None, None)`` when ``key`` is
        already in the log (the same request was recorded before)."""
        with self.backend.transaction():
            at = self._now()
            last = self._last_seq()
            if last is not None and at < last[1]:
                at = last[1]  # system time never runs backwards, even if the clock does
            body = canonical_json(payload)
            event_id = (
                "ev_"
                + hashlib.sha256(
                    f"{kind}\n{at}\n{(last or (0, ''))[0] + 1}\n{body}".encode()
                ).hexdigest()[:24]
            )
            row = {"event_id": event_id, "kind": kind, "at": at, "tenant": tenant,
                   "actor": actor, "idempotency_key": key, "payload_json": body,
                   "redacted": 0}  # fmt: skip
            seq = self.backend.append_event(row)
            if seq is None:
                return None, None
            return seq, apply_event(self._projector, {**row, "seq": seq})

    def _last_seq(self) -> tuple[int, str] | None:
        rows = self.backend.select("memory_events", order_by="seq DESC")[:1]
        return (int(rows[0]["seq"]), str(rows[0]["at"])) if rows else None

    def events(self, after_seq: int = 0) -> Iterator[MemoryEvent]:
        for r in self.backend.events(after_seq):
            yield MemoryEvent(
                seq=r["seq"], event_id=r["event_id"], kind=r["kind"], at=r["at"],
                tenant=r["tenant"], actor=r["actor"], payload=json.loads(r["payload_json"]),
                redacted=bool(r["redacted"]),
            )  # fmt: skip

    # -- ingest ---------------------------------------------------------------------------------

    def ingest(
        self,
        result: ConversationResult,
        *,
        tenant: str | None = None,
        subject: str | None = None,
    ) -> IngestReport:
        """Persist every candidate of ``result`` whose decision says ``persist``.

        ``tenant`` and ``subject`` default to the result's own fields (set from the
        conversation's ``metadata.tenant`` / ``metadata.user_id``); the tenant falls back to
        :data:`DEFAULT_TENANT`. Idempotent: a result (or a memory) already stored adds nothing.
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
        with self.backend.transaction():
            existing = self._existing([c.memory_id for c, _ in chosen], tenant)
            fresh = [(c, d) for c, d in chosen if c.memory_id not in existing]
            report.already_stored = [c.memory_id for c, _ in chosen if c.memory_id in existing]
            if not fresh:
                return report
            payload = {
                "tenant": tenant,
                "subject": subject,
                "conversation_id": result.conversation_id,
                "conversation_hash": result.conversation_hash,
                "memories": [_memory_payload(c, d, result) for c, d in fresh],
            }
            seq, _ = self._record(
                "INGEST", payload, tenant=tenant, actor=result.provenance.model,
                key=content_hash(["INGEST", payload]),
            )  # fmt: skip
        report.event_seq = seq
        report.stored = [c.memory_id for c, _ in fresh]
        return report

    def _existing(self, memory_ids: list[str], tenant: str) -> set[str]:
        rows = self.backend.select_in("memories", "memory_id", memory_ids)
        other = [r for r in rows if r["tenant"] != tenant]
        if other:
            raise StoreError(
                f"memory {other[0]['memory_id']!r} of conversation "
                f"{other[0]['conversation_id']!r} is already stored for tenant "
                f"{other[0]['tenant']!r}, not {tenant!r}: give each tenant's conversations "
                "distinct ids, or use one store file per tenant"
            )
        return {r["memory_id"] for r in rows}

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
            parents = self._parent_views(refs)
            known = [p for p in parents.values() if p is not None]
            tenant = tenant or (known[0].tenant if known else DEFAULT_TENANT)
            subject = subject or self._subject_of(known)
            mid = memory_id or _derived_id(activity, produced_by, claims)
            report = DeriveReport(memory_id=mid, event_seq=None)
            if self.backend.select("memories", {"memory_id": mid}):
                report.stored = self.claims(memory_id=mid)
                return report
            now = self._clock()
            payload_claims: list[dict[str, Any]] = []
            for i, claim in enumerate(claims):
                problem = check_claim(i, claim, parents, tenant)
                if problem is not None:
                    report.rejected.append(DerivationRejectionRecord(**problem.model_dump()))
                    continue
                payload_claims.append(self._derived_payload(
                    claim, f"{mid}:c{len(payload_claims) + 1}", parents, policy=policy,
                    produced_by=produced_by, now=now, requested_uses=requested_uses,
                ))  # fmt: skip
            if not payload_claims:
                return report
            payload = {"tenant": tenant, "subject": subject, "memory_id": mid,
                       "activity": activity, "produced_by": produced_by,
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
        **admission: Any,
    ) -> dict[str, Any]:
        required = [p for r in claim.requires if (p := parents[r]) is not None]
        context = [p.claim_id for r in claim.context if (p := parents[r]) is not None]
        verification, decision = admit_derived(claim, claim_id, required, **admission)
        lo, hi = overlap(required)
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
            "decision": decision_payload(decision),
        }

    def _parent_views(self, refs: Sequence[str]) -> dict[str, ParentView | None]:
        out: dict[str, ParentView | None] = {}
        for ref in dict.fromkeys(refs):
            rows = self.backend.select("claims", {"claim_id": ref})
            if not rows:
                rows = self.backend.select("claims", {"memory_id": ref})
                rows = rows if len(rows) == 1 else []
            out[ref] = self._view(rows[0]) if rows else None
        return out

    def _view(self, row: Mapping[str, Any]) -> ParentView:
        (current,) = self.backend.current({"claim_id": row["claim_id"]})
        return ParentView(
            claim_id=row["claim_id"], memory_id=row["memory_id"], tenant=row["tenant"],
            content=row["content"], hedges=json.loads(row["hedges"]),
            lifecycle=current["lifecycle_state"], verification=current["verification_state"],
            allowed=json.loads(current["allowed_uses"]),
            forbidden=json.loads(current["forbidden_uses"]), flags=json.loads(current["flags"]),
            revoked=bool(row["revoked"]), erased=bool(row["erased"]),
            valid_from=current["valid_from"], valid_to=current["valid_to"],
            decision_input_hash=row["decision_input_hash"],
        )  # fmt: skip

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
            for a in antecedents:
                if a["tenant"] != target["tenant"]:
                    raise StoreError(f"claim {a['claim_id']!r} belongs to another tenant")
            ids = sorted({a["claim_id"] for a in antecedents})
            just = f"{target['claim_id']}/support/" + content_hash(ids).removeprefix("sha256:")[:12]
            if not self.backend.select("justifications", {"just_id": just}):
                payload = {"claim_id": target["claim_id"], "by": ids, "informant": informant,
                           "just_id": just}  # fmt: skip
                self._record("SUPPORT", payload, tenant=target["tenant"], actor=informant)
            return self.claim(target["claim_id"])

    def _one_claim(self, ref: str) -> dict[str, Any]:
        rows = self.backend.select("claims", {"claim_id": ref})
        if not rows:
            rows = self.backend.select("claims", {"memory_id": ref})
            if len(rows) > 1:
                raise StoreError(f"memory {ref!r} has {len(rows)} claims: name one ({ref}:c1)")
        if not rows:
            raise UnknownMemory(ref)
        return rows[0]

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
        chunks, sources, URLs and families of their ACTIVE evidence. Corroboration is the
        family count -- never chunks, URLs or paraphrases (seed §6)."""
        ids = [self._one_claim(c)["claim_id"] for c in claims]
        evidence = self.backend.select_in("evidence", "claim_id", ids)
        sources = {r["source_id"]: r for r in self.backend.select_in(
            "sources", "source_id", [e["source_id"] for e in evidence])}  # fmt: skip
        live = [e for e in evidence if sources[e["source_id"]]["status"] == "ACTIVE"]
        used = sorted({e["source_id"] for e in live})
        fams = sorted({r["family_id"] for r in self.backend.select_in(
            "source_families", "source_id", used)})  # fmt: skip
        uris = {sources[s]["uri"] for s in used if sources[s]["uri"] is not None}
        return Corroboration(claim_ids=ids, chunks=len(live), sources=len(used), urls=len(uris),
                             families=len(fams), family_ids=fams)  # fmt: skip

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
            payload = {"claim_id": cid, "source_id": source, "verifier": verifier,
                       "decision": decision_payload(decision)}  # fmt: skip
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
            before = self.backend.current_in(self._dependents(region) | set(claims))
            payload = {"claims": claims, "sources": sources, "reason": reason, "trigger": trigger}
            seq, outcome = self._record(kind, payload, tenant=tenant, actor=actor)
            assert seq is not None
            assert outcome is not None
            at = str(self.backend.select("memory_events", {"seq": seq})[0]["at"])
            return self._impact(seq, region, payload, before, outcome, at)

    def _targets(self, ref: str) -> tuple[list[str], list[str], str | None]:
        sources = self.backend.select("sources", {"source_id": ref})
        if sources:
            return [], [ref], sources[0]["tenant"]
        rows = self.backend.select("claims", {"claim_id": ref}) or self.backend.select(
            "claims", {"memory_id": ref}, order_by="ordinal"
        )
        if not rows:
            raise UnknownMemory(ref, what="memory, claim or source")
        return [r["claim_id"] for r in rows], [], rows[0]["tenant"]

    def _dependents(self, seeds: Sequence[str]) -> set[str]:
        return set(forward_closure(seeds, self._projector.consumers))

    def _impact(
        self,
        seq: int,
        targets: list[str],
        payload: Mapping[str, Any],
        before: Mapping[str, Mapping[str, Any]],
        outcome: Outcome,
        at: str,
    ) -> RevocationReport:
        affected = []
        for cid in sorted(c for c, d in outcome.depth.items() if d > 0):
            old, new = before.get(cid), outcome.states[cid]
            affected.append(AffectedClaim(
                claim_id=cid, depth=outcome.depth[cid],
                lifecycle_before=old["lifecycle_state"] if old else new.lifecycle,
                lifecycle_after=new.lifecycle,
                allowed_before=json.loads(old["allowed_uses"]) if old else [],
                allowed_after=sorted(new.allowed, key=list(Capability).index),
                support=outcome.support.get(cid, []),
            ))  # fmt: skip
        ended = {a.claim_id: a.lifecycle_after for a in affected}
        exposures = self._exposures([*payload["claims"], *ended], at)
        return RevocationReport(
            event_seq=seq, targets=targets, reason=payload["reason"], trigger=payload["trigger"],
            affected=affected,
            restored=[c for c, s in ended.items() if s not in (QUARANTINED, REVOKED)],
            quarantined=[c for c, s in ended.items() if s == QUARANTINED],
            revoked=[c for c, s in ended.items() if s == REVOKED],
            max_depth=max((a.depth for a in affected), default=0), exposures=exposures,
        )  # fmt: skip

    def _exposures(self, claim_ids: Sequence[str], until: str) -> list[Exposure]:
        items = self.backend.select_in("read_items", "claim_id", claim_ids)
        items = [i for i in items if i["stage"] in ("ADMITTED", "SERIALIZED")]
        reads = {r["read_id"]: r for r in self.backend.select_in(
            "reads", "read_id", [i["read_id"] for i in items])}  # fmt: skip
        out = [
            Exposure(
                read_id=i["read_id"],
                at=reads[i["read_id"]]["at"],
                caller=reads[i["read_id"]]["caller"],
                purpose=reads[i["read_id"]]["purpose"],
                claim_id=i["claim_id"],
                stage=i["stage"],
            )
            for i in items
            if i["read_id"] in reads and reads[i["read_id"]]["at"] <= until
        ]
        return sorted(out, key=lambda e: (e.at, e.read_id, e.claim_id, e.stage))

    def lineage(self, ref: str) -> Lineage:
        """Claim-level lineage: ancestors and descendants along the derivation graph."""
        cid = self._one_claim(ref)["claim_id"]
        up = self._walk(cid, "child_claim_id", "parent_claim_id")
        down = self._walk(cid, "parent_claim_id", "child_claim_id")
        parents = {e.parent_claim_id for e in up}
        children = {e.child_claim_id for e in up}
        _, sources = self._projector.ancestry([cid])
        return Lineage(claim_id=cid, ancestors=up, descendants=down,
                       roots=sorted(parents - children), sources=sorted(sources))  # fmt: skip

    def _walk(self, start: str, near: str, far: str) -> list[LineageEdge]:
        edges: list[LineageEdge] = []
        seen = {start}
        frontier = [start]
        depth = 0
        while frontier:
            depth += 1
            rows = self.backend.select_in("derivations", near, frontier)
            frontier = []
            for r in sorted(rows, key=lambda r: (r[near], r[far])):
                edges.append(LineageEdge(
                    child_claim_id=r["child_claim_id"], parent_claim_id=r["parent_claim_id"],
                    relation=r["relation"], required=bool(r["required"]), depth=depth,
                ))  # fmt: skip
                if r[far] not in seen:
                    seen.add(r[far])
                    frontier.append(r[far])
        return edges

    def consistent(self) -> bool:
        """Whether a full recompute of every claim gives exactly the current states (what
        every incremental update must preserve)."""
        outcome = self._projector.recompute_all(Cause(0, "CHECK", ""), write=False)
        current = self.backend.current_in(outcome.states)
        return all(state_of(current[c]) == s for c, s in outcome.states.items())

    # -- reading --------------------------------------------------------------------------------

    def claims(
        self,
        *,
        tenant: str | None = None,
        subject: str | None = None,
        memory_id: str | None = None,
        as_of: datetime | str | None = None,
        known_at: datetime | str | None = None,
    ) -> list[StoredClaim]:
        """Claims as the store holds them, by claim id.

        Without ``known_at``, the current version of each claim (``memory_current``); with it,
        the version that was current at that system time ("what did we believe on July 2?").
        With ``as_of``, only claims whose valid time contains that instant ("who was CEO on
        June 20?"). Lifecycle and capabilities are returned, never filtered on: deciding what
        may be used for which purpose is the read path's job.
        """
        where = {k: v for k, v in (("tenant", tenant), ("subject", subject),
                                   ("memory_id", memory_id)) if v is not None}  # fmt: skip
        if known_at is None:
            rows = self.backend.current(where)
        else:
            at = system_time(known_at)
            rows = [
                r for r in self._history_where(where)
                if r["sys_from"] <= at and (r["sys_to"] is None or r["sys_to"] > at)
                and r["recorded_at"] <= at
            ]  # fmt: skip
        if as_of is not None:
            point = valid_point(as_of)
            rows = [r for r in rows if _valid_at(r, point)]
        return [_stored(r) for r in rows]

    def _history_where(self, where: Mapping[str, Any]) -> list[dict[str, Any]]:
        ids = [r["claim_id"] for r in self.backend.select("claims", where)]
        return self.backend.history(ids, view=True)

    def claim(self, ref: str) -> StoredClaim:
        """The current state of one claim (``mem_...:c1``) or of a one-claim memory."""
        rows = self.backend.current({"claim_id": ref}) or self.backend.current({"memory_id": ref})
        if not rows:
            raise UnknownMemory(ref)
        if len(rows) > 1:
            raise StoreError(f"memory {ref!r} has {len(rows)} claims: name one (e.g. {ref}:c1)")
        return _stored(rows[0])

    def history(self, ref: str) -> list[ClaimVersion]:
        """Every system-time version of a claim (or of each claim of a memory), oldest first."""
        ids = self._claim_ids(ref)
        return [_version(r) for r in self.backend.history(ids)]

    def _claim_ids(self, ref: str) -> list[str]:
        rows = self.backend.select("claims", {"claim_id": ref}) or self.backend.select(
            "claims", {"memory_id": ref}, order_by="ordinal"
        )
        if not rows:
            raise UnknownMemory(ref)
        return [r["claim_id"] for r in rows]

    # -- replay ---------------------------------------------------------------------------------

    def state_hash(self) -> str:
        """``sha256:`` of every projection table, row by row in key order: equal hashes mean
        byte-identical state."""
        digest = hashlib.sha256()
        for table in PROJECTION_TABLES:
            digest.update(f"\x00{table}\x00".encode())
            for row in self.backend.dump(table):
                digest.update(canonical_json(list(row)).encode("utf-8") + b"\n")
        return "sha256:" + digest.hexdigest()

    def rebuild(self) -> RebuildReport:
        """Replay every event into an empty projection, in one transaction."""
        before = self.state_hash()
        with self.backend.transaction():
            self.backend.clear_projection()
            count = 0
            for row in self.backend.events():
                apply_event(self._projector, row)
                count += 1
        after = self.state_hash()
        return RebuildReport(events=count, state_hash_before=before, state_hash_after=after,
                             identical=before == after)  # fmt: skip


def _memory_payload(c: Any, d: Any, result: ConversationResult) -> dict[str, Any]:
    span = c.source_span
    valid_from, valid_to = valid_bounds(c.temporal.valid_from, c.temporal.valid_to)
    return {
        "memory_id": c.memory_id,
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
        "parent_memory_ids": list(c.parent_memory_ids),
        "produced_by": c.provenance.model,
        "decision": decision_payload(d),
    }


def _valid_at(row: Mapping[str, Any], point: str) -> bool:
    lo, hi = row["valid_from"], row["valid_to"]
    return (lo is None or lo <= point) and (hi is None or point < hi)


def _stored(r: Mapping[str, Any]) -> StoredClaim:
    return StoredClaim(
        claim_id=r["claim_id"], memory_id=r["memory_id"], tenant=r["tenant"],
        subject=r["subject"], conversation_id=r["conversation_id"],
        memory_type=r["memory_type"], kind=r["kind"], origin_kind=r["origin_kind"],
        verification_state=r["verification_state"], lifecycle_state=r["lifecycle_state"],
        allowed_uses=json.loads(r["allowed_uses"]), forbidden_uses=json.loads(r["forbidden_uses"]),
        flags=json.loads(r["flags"]), support_label=r["support_label"], content=r["content"],
        valid_from=r["valid_from"], valid_to=r["valid_to"], observed_at=r["observed_at"],
        recorded_at=r["recorded_at"], sys_from=r["sys_from"], superseded_at=r["superseded_at"],
        superseded_by=r["superseded_by"], erased=bool(r["erased"]), version=r["version"],
        evidence_ref=r["evidence_ref"], policy_id=r["policy_id"],
        policy_version=r["policy_version"], reason=r["reason"],
    )  # fmt: skip


def _version(r: Mapping[str, Any]) -> ClaimVersion:
    return ClaimVersion(
        claim_id=r["claim_id"], version=r["version"], sys_from=r["sys_from"], sys_to=r["sys_to"],
        lifecycle_state=r["lifecycle_state"], verification_state=r["verification_state"],
        allowed_uses=json.loads(r["allowed_uses"]), forbidden_uses=json.loads(r["forbidden_uses"]),
        flags=json.loads(r["flags"]), support_label=r["support_label"],
        valid_from=r["valid_from"], valid_to=r["valid_to"], superseded_at=r["superseded_at"],
        superseded_by=r["superseded_by"], reason=r["reason"], cause_seq=r["cause_seq"],
        cause_kind=r["cause_kind"],
    )  # fmt: skip


__all__ = ["DEFAULT_TENANT", "MemoryStore", "claim_id_for"]
