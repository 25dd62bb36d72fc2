"""How each kind of event changes the projection (one function per event kind).

Every function here reads only its event (payload, ``seq``, ``at``) and rows earlier events
wrote, so replaying the log reproduces the projection exactly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from .backend import Row
from .projection import Cause, Projector, dumps, uses_json

Payload = Mapping[str, Any]


def claim_id_for(memory_id: str, ordinal: int = 1) -> str:
    return f"{memory_id}:c{ordinal}"


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
        "revoked": 0,
        "revoked_reason": None,
        "support_level": None,
        "erased": 0,
    }


def apply_ingest(p: Projector, payload: Payload, cause: Cause) -> list[str]:
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
            }
        )
        claims.append(_claim_row(m, tenant, subject, cause))
        source = message_source(payload["conversation_hash"], m["message_id"])
        sources.append(
            {"source_id": source, "tenant": tenant, "kind": "MESSAGE", "uri": None,
             "published_at": m["observed_at"], "status": "ACTIVE", "cause_seq": cause.seq}
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
    new_claims = [c["claim_id"] for c in claims]
    p.recompute(new_claims, cause)
    return new_claims


APPLIERS: dict[str, Callable[[Projector, Payload, Cause], Any]] = {
    "INGEST": apply_ingest,
}


def apply_event(p: Projector, row: Mapping[str, Any]) -> Any:
    cause = Cause(seq=int(row["seq"]), kind=str(row["kind"]), at=str(row["at"]))
    return APPLIERS[cause.kind](p, json.loads(row["payload_json"]), cause)


__all__ = ["APPLIERS", "apply_event", "claim_id_for", "dumps", "message_source"]
