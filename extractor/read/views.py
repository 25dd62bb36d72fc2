"""Building :class:`~extractor.read.models.MemoryView` rows for ranked hits, from the store.

Only hits of the eligible slice come here (stage 2 output), so what is read is what stage 1
already let through. Besides the claim's own version, a view carries what stage 3 judges:
conflict (the store marks a conflicted claim ``CONFLICTING``), supersession, the number of
independent source families of its ACTIVE evidence (the store's corroboration count), the
admission's evidence scope (``evidence_as_of``), and the evidence reference and quote hash that
dereferencing re-checks.

Evidence is read as the store knew it at the read's ``known_at``: an evidence row recorded later
(a chunk added by a later ``EVIDENCE`` event) neither adds a family nor a source to check. A
source must be ACTIVE *now* as well: looking back in time never undoes a revocation or an
erasure (fail closed).

A *derived* claim (one with required derivation parents: a summary, or a proposition extracted
from an assertion event) has the families of its parents, transitively, and never more: its
support is what it was made from, so it can be no more independent than that.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from ..hashing import text_hash
from ..vocab import LifecycleState, MemoryType
from .models import MemoryView

#: Evidence known at a system time (``?`` = known_at, or NULL for everything recorded).
_KNOWN = "(? IS NULL OR (SELECT ev.at FROM memory_events AS ev WHERE ev.seq = e.cause_seq) <= ?)"

#: Independent source families of each hit (``json_each(?)``: the hits' claim ids), as the
#: store's ``corroboration`` counts them: the distinct families of the ACTIVE sources of its
#: evidence (never chunks, URLs or paraphrases); for a derived claim, of its underived
#: ancestors along required derivation edges.
_FAMILIES = f"""WITH RECURSIVE lineage (hit, claim_id) AS (
    SELECT value, value FROM json_each(?)
    UNION
    SELECT l.hit, d.parent_claim_id FROM derivations AS d JOIN lineage AS l
        ON d.child_claim_id = l.claim_id WHERE d.required = 1
), roots (hit, claim_id) AS (
    SELECT l.hit, l.claim_id FROM lineage AS l WHERE NOT EXISTS (
        SELECT 1 FROM derivations AS d WHERE d.child_claim_id = l.claim_id AND d.required = 1)
)
SELECT r.hit, COUNT(DISTINCT COALESCE(f.family_id, s.source_id)) FROM roots AS r
JOIN evidence AS e ON e.claim_id = r.claim_id
JOIN sources AS s ON s.source_id = e.source_id AND s.status = 'ACTIVE'
LEFT JOIN source_families AS f ON f.source_id = s.source_id
WHERE {_KNOWN} GROUP BY r.hit"""

_SOURCES = f"""SELECT e.claim_id, s.source_id, s.uri, s.status FROM evidence AS e
JOIN sources AS s ON s.source_id = e.source_id
WHERE e.claim_id IN (SELECT value FROM json_each(?)) AND {_KNOWN}
ORDER BY e.claim_id, e.evidence_id"""


@dataclass(frozen=True)
class Hit:
    """A ranked claim with what dereferencing needs (kept outside the view: never serialized)."""

    view: MemoryView
    evidence_ref: str | None
    quote_hash: str | None
    sources_admissible: bool
    version: int = 0


def _scope(r: sqlite3.Row, memory_type: MemoryType) -> str | None:
    """The admission's evidence scope (``claims.evidence_as_of``); for a tool observation
    stored before the store kept it, its observation time (what admission scopes it to)."""
    if r["scoped_as_of"] is not None:
        return str(r["scoped_as_of"])
    return r["observed_at"] if memory_type is MemoryType.TOOL_OBSERVATION else None


def _uses(text: str | None) -> tuple[str, ...]:
    return tuple(json.loads(text)) if text else ()


def load_hits(
    db: sqlite3.Connection,
    source: str,
    params: Sequence[object],
    claim_ids: Sequence[str],
    *,
    known_at: str | None = None,
) -> dict[str, Hit]:
    """Views of ``claim_ids`` from ``source`` (``memory_current`` or a ``known_at`` slice);
    ``known_at`` (system time, the store's UTC ISO form) limits evidence to what was known."""
    if not claim_ids:
        return {}
    marks = ",".join("?" * len(claim_ids))
    sql = (
        "SELECT v.*, c.quote, c.evidence_as_of AS scoped_as_of FROM "
        + source
        + f" AS v JOIN claims AS c ON c.claim_id = v.claim_id WHERE v.claim_id IN ({marks})"
    )
    db.row_factory = sqlite3.Row
    try:
        rows = db.execute(sql, [*params, *claim_ids]).fetchall()
    finally:
        db.row_factory = None
    ids = json.dumps([str(r["claim_id"]) for r in rows])
    families = dict(db.execute(_FAMILIES, (ids, known_at, known_at)).fetchall())
    sources: dict[str, list[tuple[str, str | None, str]]] = {}
    for claim_id, source_id, uri, status in db.execute(_SOURCES, (ids, known_at, known_at)):
        sources.setdefault(claim_id, []).append((source_id, uri, status))
    return {
        str(r["claim_id"]): _hit(r, sources.get(r["claim_id"], []), families.get(r["claim_id"], 0))
        for r in rows
    }


def _hit(r: sqlite3.Row, sources: list[tuple[str, str | None, str]], families: int) -> Hit:
    flags = _uses(r["flags"])
    label = next((str(uri or sid) for sid, uri, status in sources if status == "ACTIVE"), None)
    memory_type = MemoryType(r["memory_type"])
    view = MemoryView(
        claim_id=r["claim_id"],
        memory_id=r["memory_id"],
        tenant=r["tenant"],
        subject=r["subject"] or "",  # erasure blanks it (only a replay loads erased claims)
        content=r["content"],
        memory_type=memory_type,
        kind=r["kind"] or "PROPOSITION",
        origin_kind=r["origin_kind"],
        verification_state=r["verification_state"],
        lifecycle_state=LifecycleState(r["lifecycle_state"]),
        allowed_uses=_uses(r["allowed_uses"]),
        forbidden_uses=_uses(r["forbidden_uses"]),
        flags=flags,
        valid_from=r["valid_from"],
        valid_to=r["valid_to"],
        observed_at=r["observed_at"],
        evidence_as_of=_scope(r, memory_type),
        conflicting="CONFLICTING" in flags or r["verification_state"] == "CONFLICTING",
        superseded=r["superseded_by"] is not None,
        independent_families=int(families),
        source_label=None if label is None or label.startswith("msg:") else label,
    )
    quote = r["quote"]
    return Hit(
        view=view,
        evidence_ref=r["evidence_ref"],
        quote_hash=text_hash(quote) if quote else None,
        sources_admissible=bool(sources) and all(s[2] == "ACTIVE" for s in sources),
        version=int(r["version"]),
    )
