"""How each kind of event changes the projection (one function per event kind).

Every function here reads only its event (payload, ``seq``, ``at``) and rows earlier events
wrote, so replaying the log reproduces the projection exactly.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from .backend import Row
from .projection import Cause, Outcome, Projector, dumps, uses_json

Payload = Mapping[str, Any]


def claim_id_for(memory_id: str, ordinal: int = 1) -> str:
    return f"{memory_id}:c{ordinal}"


def store_memory_id(tenant: str, external_id: str, *, prefix: str = "mem") -> str:
    """The store's id for a memory of ``tenant`` known outside the store as ``external_id`` (a
    candidate's ``memory_id`` in result files, or the id given to ``derive``): its prefix
    (``mem``, ``der``, ...) and 20 hex digits of a hash of the tenant and the external id, so
    the same content stored for two tenants never shares an id."""
    head = external_id.split("_", 1)[0] if "_" in external_id else prefix
    prefix = head if head.isalnum() and len(head) <= 8 else prefix
    digest = hashlib.sha256(f"memory-id\n{tenant}\n{external_id}".encode()).hexdigest()
    return f"{prefix}_{digest[:20]}"


def message_source(conversation_hash: str, message_id: str) -> str:
    return f"msg:{conversation_hash}#{message_id}"


def _ensure_sources(p: Projector, rows: list[Row]) -> None:
    ids = [r["source_id"] for r in rows]
    known = {r["source_id"] for r in p.db.select_in("sources", "source_id", ids)}
    fresh: dict[str, Row] = {}
    for r in rows:
        if r["source_id"] not in known:
            fresh.setdefault(r["source_id"], r)
    p.db.insert("sources", list(fresh.values()))
    p.db.insert("source_families", [{"source_id": s, "family_id": s} for s in sorted(fresh)])


def _claim_row(m: Payload, tenant: str, subject: str | None, cause: Cause) -> Row:
    d = m["decision"]
    key = m.get("key") or {}
    return {
        "claim_id": claim_id_for(m["memory_id"]),
        "memory_id": m["memory_id"],
        "ordinal": 1,
        "tenant": tenant,
        "subject": subject,
        "content": m["content"],
        "content_hash": m["content_hash"],
        "quote": m["quote"],
        "evidence_ref": m["evidence_ref"],
        "hedges": json.dumps(m["hedges"]),
        "observed_at": m["observed_at"],
        "recorded_at": cause.at,
        "key_subject": key.get("subject"),
        "key_relation": key.get("relation"),
        "key_object": key.get("object"),
        "key_scope": key.get("scope"),
        "normalizer_version": key.get("normalizer_version"),
        "base_lifecycle": d["lifecycle_state"],
        "base_verification": m["verification_state"],
        "base_allowed": uses_json(d["allowed_uses"]),
        "base_forbidden": uses_json(d["forbidden_uses"]),
        "base_flags": json.dumps(sorted(d["flags"])),
        "rules_fired": json.dumps(d["rules_fired"]),
        "policy_id": d["policy_id"],
        "policy_version": d["policy_version"],
        "decision_input_hash": d["input_hash"],
        "stated_valid_from": m["valid_from"],
        "stated_valid_to": m["valid_to"],
        "evidence_as_of": d.get("evidence_as_of"),
        "revoked": 0,
        "revoked_reason": None,
        "support_level": None,
        "erased": 0,
    }


def apply_ingest(p: Projector, payload: Payload, cause: Cause) -> Outcome:
    """Memories, claims, message sources, evidence, justifications and derivation edges."""
    tenant, subject = payload["tenant"], payload["subject"]
    memories: list[Row] = []
    claims: list[Row] = []
    sources: list[Row] = []
    evidence: list[Row] = []
    justs: list[Row] = []
    antecedents: list[Row] = []
    derivations: list[Row] = []
    batch = {m["memory_id"] for m in payload["memories"]}
    parents = {pid for m in payload["memories"] for pid in m["parent_memory_ids"]} - batch
    stored = {r["memory_id"] for r in p.db.select_in("memories", "memory_id", parents)}
    for m in payload["memories"]:
        cid = claim_id_for(m["memory_id"])
        memories.append(
            {
                "memory_id": m["memory_id"],
                "tenant": tenant,
                "subject": subject,
                "conversation_id": payload["conversation_id"],
                "conversation_hash": payload["conversation_hash"],
                "memory_type": m["memory_type"],
                "kind": m["kind"],
                "origin_kind": m["origin_kind"],
                "activity": None,
                "produced_by": m["produced_by"],
                "created_seq": cause.seq,
                "erased": 0,
                "external_id": m.get("external_id", m["memory_id"]),
            }
        )
        claims.append(_claim_row(m, tenant, subject, cause))
        source = message_source(payload["conversation_hash"], m["message_id"])
        sources.append(
            {"source_id": source, "tenant": tenant, "kind": "MESSAGE", "uri": None,
             "published_at": m["observed_at"], "status": "ACTIVE", "cause_seq": cause.seq,
             "derived_from": "[]"}
        )  # fmt: skip
        evidence.append(
            {"evidence_id": f"{cid}#e1", "claim_id": cid, "source_id": source,
             "locator": m["evidence_ref"], "quote": m["quote"], "cause_seq": cause.seq}
        )  # fmt: skip
        just = f"{cid}/evidence"
        justs.append({"just_id": just, "claim_id": cid, "kind": "EVIDENCE",
                      "informant": "ingest", "cause_seq": cause.seq})  # fmt: skip
        antecedents.append({"just_id": just, "antecedent_kind": "source", "antecedent_id": source})
        for pid in m["parent_memory_ids"]:
            if pid not in batch and pid not in stored:
                continue
            parent = claim_id_for(pid)
            antecedents.append(
                {"just_id": just, "antecedent_kind": "claim", "antecedent_id": parent}
            )
            derivations.append(
                {"child_claim_id": cid, "parent_claim_id": parent, "relation": "DERIVED_FROM",
                 "required": 1, "carries_content": 0, "activity": "EXTRACT",
                 "cause_seq": cause.seq}
            )  # fmt: skip
    p.db.insert("memories", memories)
    p.db.insert("claims", claims)
    _ensure_sources(p, sources)
    p.db.insert("evidence", evidence)
    p.db.insert("justifications", justs)
    p.db.insert("justification_antecedents", antecedents)
    p.db.insert("derivations", derivations)
    return p.recompute([c["claim_id"] for c in claims], cause)


def _derived_claim_row(c: Payload, payload: Payload, cause: Cause) -> Row:
    d = c["decision"]
    key = c.get("key") or {}
    return {
        "claim_id": c["claim_id"], "memory_id": payload["memory_id"], "ordinal": c["ordinal"],
        "tenant": payload["tenant"], "subject": payload["subject"], "content": c["content"],
        "content_hash": c["content_hash"], "quote": None, "evidence_ref": None,
        "hedges": json.dumps(c["hedges"]), "observed_at": None, "recorded_at": cause.at,
        "key_subject": key.get("subject"), "key_relation": key.get("relation"),
        "key_object": key.get("object"), "key_scope": key.get("scope"),
        "normalizer_version": key.get("normalizer_version"), "base_lifecycle": d["lifecycle_state"],
        "base_verification": c["verification_state"],
        "base_allowed": uses_json(d["allowed_uses"]),
        "base_forbidden": uses_json(d["forbidden_uses"]),
        "base_flags": json.dumps(sorted(d["flags"])), "rules_fired": json.dumps(d["rules_fired"]),
        "policy_id": d["policy_id"], "policy_version": d["policy_version"],
        "decision_input_hash": d["input_hash"], "stated_valid_from": c["valid_from"],
        "stated_valid_to": c["valid_to"], "evidence_as_of": d.get("evidence_as_of"),
        "revoked": 0, "revoked_reason": None,
        "support_level": None, "erased": 0,
    }  # fmt: skip


def apply_derive(p: Projector, payload: Payload, cause: Cause) -> Outcome:
    """A derived memory: its claims, derivation edges and one DERIVATION justification each."""
    p.db.insert("memories", [{
        "memory_id": payload["memory_id"], "tenant": payload["tenant"],
        "subject": payload["subject"], "conversation_id": None, "conversation_hash": None,
        "memory_type": "DERIVED_SUMMARY", "kind": None, "origin_kind": "MEMORY_DERIVED",
        "activity": payload["activity"], "produced_by": payload["produced_by"],
        "created_seq": cause.seq, "erased": 0,
        "external_id": payload.get("external_id", payload["memory_id"]),
    }])  # fmt: skip
    p.db.insert("claims", [_derived_claim_row(c, payload, cause) for c in payload["claims"]])
    edges: list[Row] = []
    justs: list[Row] = []
    antecedents: list[Row] = []
    for c in payload["claims"]:
        cid = c["claim_id"]
        for parent in c["requires"]:
            edges.append({"child_claim_id": cid, "parent_claim_id": parent,
                          "relation": c["relation"], "required": 1, "carries_content": 1,
                          "activity": payload["activity"], "cause_seq": cause.seq})  # fmt: skip
        for parent in c["context"]:
            if parent not in c["requires"]:
                edges.append({"child_claim_id": cid, "parent_claim_id": parent,
                              "relation": c["relation"], "required": 0, "carries_content": 0,
                              "activity": payload["activity"], "cause_seq": cause.seq})  # fmt: skip
        just = f"{cid}/derivation"
        justs.append({"just_id": just, "claim_id": cid, "kind": "DERIVATION",
                      "informant": payload["produced_by"], "cause_seq": cause.seq})  # fmt: skip
        antecedents += [{"just_id": just, "antecedent_kind": "claim", "antecedent_id": a}
                        for a in sorted(set(c["requires"]))]  # fmt: skip
    p.db.insert("derivations", edges)
    p.db.insert("justifications", justs)
    p.db.insert("justification_antecedents", antecedents)
    return p.recompute([c["claim_id"] for c in payload["claims"]], cause)


def apply_support(p: Projector, payload: Payload, cause: Cause) -> Outcome:
    """Another way a claim is held up: an AND of other claims (an OR beside its others)."""
    just = payload["just_id"]
    p.db.insert("justifications", [{"just_id": just, "claim_id": payload["claim_id"],
                                    "kind": "SUPPORT", "informant": payload["informant"],
                                    "cause_seq": cause.seq}])  # fmt: skip
    p.db.insert("justification_antecedents", [
        {"just_id": just, "antecedent_kind": "claim", "antecedent_id": a}
        for a in sorted(set(payload["by"]))
    ])  # fmt: skip
    return p.recompute([payload["claim_id"]], cause)


def _set_revoked(p: Projector, payload: Payload, cause: Cause, revoked: bool) -> Outcome:
    for cid in payload["claims"]:
        values = {"revoked": int(revoked), "revoked_reason": payload["reason"] if revoked else None}
        p.db.update("claims", {"claim_id": cid}, values)
    status = "REVOKED" if revoked else "ACTIVE"
    for sid in payload["sources"]:
        p.db.update("sources", {"source_id": sid}, {"status": status, "cause_seq": cause.seq})
    return p.recompute([*payload["claims"], *payload["sources"]], cause, revalidate=True)


def apply_revoke(p: Projector, payload: Payload, cause: Cause) -> Outcome:
    """Targets OUT; every dependent NEEDS_REVALIDATION, then settled (seed §13)."""
    return _set_revoked(p, payload, cause, True)


def apply_restore(p: Projector, payload: Payload, cause: Cause) -> Outcome:
    """A revocation withdrawn: targets back, dependents revalidated the same way."""
    return _set_revoked(p, payload, cause, False)


def apply_source(p: Projector, payload: Payload, cause: Cause) -> None:
    """A primary source: a document, URL, press release, tool result."""
    _ensure_sources(p, [{
        "source_id": payload["source_id"], "tenant": payload["tenant"], "kind": payload["kind"],
        "uri": payload["uri"], "published_at": payload["published_at"], "status": "ACTIVE",
        "cause_seq": cause.seq, "derived_from": json.dumps(payload["derived_from"]),
    }])  # fmt: skip


def apply_link(p: Projector, payload: Payload, cause: Cause) -> None:
    """A relation between sources; their families merge (union by smallest id)."""
    a, b = payload["a"], payload["b"]
    p.db.insert("source_links", [{"a": a, "b": b, "relation": payload["relation"],
                                  "cause_seq": cause.seq}])  # fmt: skip
    families = {r["family_id"] for r in p.db.select_in("source_families", "source_id", [a, b])}
    members = p.db.select_in("source_families", "family_id", families)
    family = min(r["source_id"] for r in members)
    for r in members:
        if r["family_id"] != family:
            p.db.update("source_families", {"source_id": r["source_id"]}, {"family_id": family})


def apply_evidence(p: Projector, payload: Payload, cause: Cause) -> Outcome:
    """A span of a source that states a claim (a chunk): evidence, and one more way the claim
    is held up (the source is its antecedent)."""
    cid, n = payload["claim_id"], payload["evidence_id"]
    p.db.insert("evidence", [{"evidence_id": n, "claim_id": cid, "source_id": payload["source_id"],
                              "locator": payload["locator"], "quote": payload["quote"],
                              "cause_seq": cause.seq}])  # fmt: skip
    held_by_source(p, f"{n}/evidence", cid, "EVIDENCE", payload["informant"], payload, cause)
    return p.recompute([cid], cause)


def held_by_source(
    p: Projector, just: str, cid: str, kind: str, informant: str, payload: Payload, cause: Cause
) -> None:
    """One justification of ``cid`` whose only antecedent is ``payload["source_id"]``."""
    p.db.insert("justifications", [{"just_id": just, "claim_id": cid, "kind": kind,
                                    "informant": informant, "cause_seq": cause.seq}])  # fmt: skip
    p.db.insert("justification_antecedents", [{"just_id": just, "antecedent_kind": "source",
                                               "antecedent_id": payload["source_id"]}])  # fmt: skip


def apply_verify(p: Projector, payload: Payload, cause: Cause) -> Outcome:
    """An independent verification and the admission decision it produced; the claim is held
    by the verifying source through a VERIFICATION justification."""
    cid, d = payload["claim_id"], payload["decision"]
    # Named by the store when verified (``<claim>/verify/v<n>``, the claim's n-th); a VERIFY
    # event recorded before it was named carries none, and its id is its store-wide seq.
    vid = payload.get("verification_id") or f"{cid}/verify/{cause.seq}"
    p.db.insert("verifications", [{
        "verification_id": vid, "claim_id": cid, "source_id": payload["source_id"],
        "verifier": payload["verifier"], "lifecycle_state": d["lifecycle_state"],
        "allowed_uses": uses_json(d["allowed_uses"]),
        "forbidden_uses": uses_json(d["forbidden_uses"]), "flags": json.dumps(sorted(d["flags"])),
        "rules_fired": json.dumps(d["rules_fired"]), "policy_id": d["policy_id"],
        "policy_version": d["policy_version"], "decision_input_hash": d["input_hash"],
        "cause_seq": cause.seq,
    }])  # fmt: skip
    held_by_source(p, vid, cid, "VERIFICATION", payload["verifier"], payload, cause)
    return p.recompute([cid], cause)


def apply_erase(p: Projector, payload: Payload, cause: Cause) -> Outcome:
    """Privacy erasure: content gone from the claims and evidence (the events were redacted
    before this one was appended), the claims blocked, their key relations dropped, the
    dependents revalidated, and a content-free tombstone row."""
    claims = list(payload["claims"])
    rows = p.db.select_in("claims", "claim_id", claims)
    neighbours: set[str] = set()
    for r in rows:
        if r["key_relation"] is not None:
            where = {"tenant": r["tenant"], "key_subject": r["key_subject"],
                     "key_relation": r["key_relation"], "key_scope": r["key_scope"]}  # fmt: skip
            neighbours |= {m["claim_id"] for m in p.db.select("claims", where)}
    blank = {
        "content": "",
        "content_hash": None,
        "quote": "",
        "hedges": "[]",
        "subject": None,
        "key_subject": None,
        "key_relation": None,
        "key_object": None,
        "key_scope": None,
        "normalizer_version": None,
        "erased": 1,
    }  # as a replay of the redacted log has it
    for cid in claims:
        p.db.update("claims", {"claim_id": cid}, blank)
        p.db.update("evidence", {"claim_id": cid}, {"quote": ""})
        for column in ("old_claim_id", "new_claim_id"):
            p.db.delete("supersessions", {column: cid})
        for column in ("claim_a", "claim_b"):
            p.db.delete("conflicts", {column: cid})
    for mid in payload["memories"]:
        p.db.update("memories", {"memory_id": mid}, {"erased": 1, "subject": None})
    for sid in payload["sources"]:
        p.db.update("sources", {"source_id": sid}, {"status": "ERASED", "cause_seq": cause.seq})
        p.db.update("evidence", {"source_id": sid}, {"quote": ""})
    detached = payload.get("detached", {})  # absent from ERASE events before it existed
    for sid, cids in sorted(detached.items()):
        _detach(p, sid, cids)
    p.db.insert("erasures", [{"erasure_id": payload["erasure_id"],
                              "selector_kind": payload["selector_kind"],
                              "requested_at": cause.at, "counts_json": dumps(payload["counts"]),
                              "cause_seq": cause.seq}])  # fmt: skip
    seeds = [*claims, *sorted(neighbours - set(claims)), *payload["sources"]]
    seeds += [c for cids in detached.values() for c in cids]
    return p.recompute(seeds, cause, revalidate=True)


def _detach(p: Projector, source_id: str, claim_ids: list[str]) -> None:
    """The claims no longer cite or rest on the source (a tenant erased it while another
    tenant's claims still use it): their evidence from it and every justification that needs
    it are deleted."""
    for cid in claim_ids:
        p.db.delete("evidence", {"claim_id": cid, "source_id": source_id})
        for j in p.db.select("justifications", {"claim_id": cid}):
            needs = p.db.select("justification_antecedents", {"just_id": j["just_id"]})
            if any(a["antecedent_kind"] == "source" and a["antecedent_id"] == source_id
                   for a in needs):  # fmt: skip
                p.db.delete("justification_antecedents", {"just_id": j["just_id"]})
                p.db.delete("justifications", {"just_id": j["just_id"]})


def apply_readmit(p: Projector, payload: Payload, cause: Cause) -> Outcome:
    """A policy change: the claims' and verifications' decisions replaced by the ones the new
    policy made; the claims whose outcome changed are revalidated with their dependents."""
    for cid, d in payload["decisions"].items():
        p.db.update("claims", {"claim_id": cid}, {
            "base_lifecycle": d["lifecycle_state"], "base_allowed": uses_json(d["allowed_uses"]),
            "base_forbidden": uses_json(d["forbidden_uses"]),
            "base_flags": json.dumps(sorted(d["flags"])),
            "rules_fired": json.dumps(d["rules_fired"]),
            "policy_id": d["policy_id"], "policy_version": d["policy_version"],
            "decision_input_hash": d["input_hash"],
        })  # fmt: skip
    for vid, d in payload["verifications"].items():
        p.db.update("verifications", {"verification_id": vid}, {
            "lifecycle_state": d["lifecycle_state"], "allowed_uses": uses_json(d["allowed_uses"]),
            "forbidden_uses": uses_json(d["forbidden_uses"]),
            "flags": json.dumps(sorted(d["flags"])), "rules_fired": json.dumps(d["rules_fired"]),
            "policy_id": d["policy_id"], "policy_version": d["policy_version"],
            "decision_input_hash": d["input_hash"],
        })  # fmt: skip
    return p.recompute(payload["claims"], cause, revalidate=True)


APPLIERS: dict[str, Callable[[Projector, Payload, Cause], Any]] = {
    "READMIT": apply_readmit,
    "ERASE": apply_erase,
    "SOURCE": apply_source,
    "LINK": apply_link,
    "EVIDENCE": apply_evidence,
    "VERIFY": apply_verify,
    "INGEST": apply_ingest,
    "DERIVE": apply_derive,
    "SUPPORT": apply_support,
    "REVOKE": apply_revoke,
    "RESTORE": apply_restore,
}


def apply_event(p: Projector, row: Mapping[str, Any]) -> Any:
    cause = Cause(seq=int(row["seq"]), kind=str(row["kind"]), at=str(row["at"]))
    return APPLIERS[cause.kind](p, json.loads(row["payload_json"]), cause)


__all__ = ["APPLIERS", "apply_event", "claim_id_for", "dumps", "message_source", "store_memory_id"]
