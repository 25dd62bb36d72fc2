"""Replaying a recorded read under another read policy: which uses would change.

Every read records, per retrieved claim, the claim version it judged, the decision, and the
judge's two inputs that are not part of that version: the evidence check's result and the number
of independent source families (``read_items``, migration ``s004_read_replay``). Replay loads
exactly those versions (whatever happened to the claims since: revocation, supersession,
erasure), re-applies the one stage-1 rule a policy chooses (the lifecycles of the purpose), and
judges each claim again under the other policy at the same instant (``reads.as_of``, or the
read's own time for a current-state read). Judging is a pure function, so replay under the
recording policy reproduces every recorded decision (a hypothesis test holds it).

The evidence check is not repeated when both policies dereference for the purpose: the recorded
result is what the source looked like then. When only the replay policy dereferences, the hit
is dereferenced now (with the reader's ``transcripts``; without them ``NOT_CHECKED``, which the
shipped policy refuses: fail closed); when it does not, the judge is told ``NOT_CHECKED``, as a
fresh read under it would be.

Only recorded candidates are replayed: a claim the other policy would newly make eligible was
never retrieved, so it is not in the report (``MemoryReader.decide`` judges named claims now).
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..errors import StoreError
from ..vocab import Capability, LifecycleState
from .evidence import TranscriptCache, check_evidence
from .judge import judge
from .models import EvidenceStatus, Stage, UseDecision
from .policy import ReadPolicy
from .views import Hit, load_hits

LIFECYCLE_RULE = "lifecycle-not-eligible"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PolicyRef(_Strict):
    id: str
    version: str
    hash: str | None = Field(description="content_hash of the policy's meaning; None if unknown.")


class ItemOutcome(_Strict):
    """What one policy decided for one candidate."""

    stage: Stage = Field(description="ADMISSIBILITY when judged, ELIGIBILITY when stage 1 refused.")
    admissible: bool
    use: str | None
    excluded_by: str | None = Field(description="The rule that refused the use, if any.")


class ReplayedItem(_Strict):
    claim_id: str
    memory_id: str
    rank: int = Field(ge=1, description="Its rank in the recorded read.")
    version: int = Field(description="The claim version judged, then and now.")
    recorded: ItemOutcome
    replayed: ItemOutcome
    changed: bool = Field(description="admissible, use or excluding rule differ.")
    erased_since: bool = Field(description="The claim was erased after the read.")
    decision: UseDecision | None = Field(
        description="The replay policy's full decision; None when stage 1 refused."
    )


class ReplayReport(BaseModel):
    """A recorded read judged again under another read policy (``schemas/read-replay``)."""

    model_config = ConfigDict(extra="forbid", title="ReadReplay")

    read_id: str
    at: str = Field(description="When the read was made (system time).")
    tenant: str
    subject: str
    purpose: Capability
    as_of: str | None
    known_at: str | None
    k: int
    recorded_policy: PolicyRef
    replay_policy: PolicyRef
    items: list[ReplayedItem] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list, description="Claims whose outcome changed.")
    admitted_recorded: list[str] = Field(
        default_factory=list, description="The read's top-k admitted claims, in rank order."
    )
    admitted_replayed: list[str] = Field(
        default_factory=list, description="The top k the replay policy admits, in rank order."
    )


def lifecycle_eligible(
    lifecycle: LifecycleState | str, policy: ReadPolicy, purpose: Capability, *, as_of_read: bool
) -> bool:
    """Stage 1's policy-chosen rule: the lifecycle is one the policy lists for the purpose
    (``SUPERSEDED`` also, for an as-of read, when the purpose takes ACTIVE memories)."""
    lifecycles = {str(s) for s in policy.purpose(purpose).lifecycles}
    historical = as_of_read and str(LifecycleState.ACTIVE) in lifecycles
    return str(lifecycle) in lifecycles or (str(lifecycle) == "SUPERSEDED" and historical)


def replay_read(
    db: sqlite3.Connection,
    read_id: str,
    policy: ReadPolicy,
    *,
    transcripts: TranscriptCache | None = None,
) -> ReplayReport:
    """Judge the candidates of recorded read ``read_id`` again under ``policy``."""
    read = _read_row(db, read_id)
    purpose = Capability(read["purpose"])
    rows = db.execute(
        "SELECT claim_id, rank, version, admissible, use, excluded_by, evidence, families "
        "FROM read_items WHERE read_id = ? AND stage = 'RETRIEVED' ORDER BY rank, claim_id",
        (read_id,),
    ).fetchall()
    admitted = [
        str(r[0])
        for r in db.execute(
            "SELECT claim_id FROM read_items WHERE read_id = ? AND stage = 'ADMITTED' "
            "ORDER BY rank, claim_id",
            (read_id,),
        )
    ]
    hits = _versions(db, [(str(r[0]), int(r[2])) for r in rows])
    erased = _erased(db, [str(r[0]) for r in rows])
    at = _judged_at(read)
    dereference = policy.purpose(purpose).dereference
    items: list[ReplayedItem] = []
    for claim_id, rank, version, admissible, use, excluded_by, evidence, families in rows:
        hit = hits[claim_id]
        recorded = ItemOutcome(
            stage=Stage.ADMISSIBILITY, admissible=bool(admissible), use=use, excluded_by=excluded_by
        )
        decision: UseDecision | None = None
        if not lifecycle_eligible(
            hit.view.lifecycle_state, policy, purpose, as_of_read=read["as_of"] is not None
        ):
            replayed = ItemOutcome(
                stage=Stage.ELIGIBILITY, admissible=False, use=None, excluded_by=LIFECYCLE_RULE
            )
        else:
            view = hit.view.model_copy(update={"independent_families": int(families)})
            status = _evidence(
                EvidenceStatus(evidence), dereference, hit, transcripts, claim_id in erased
            )
            decision = judge(view, purpose=purpose, policy=policy, as_of=at, evidence=status)
            replayed = ItemOutcome(
                stage=Stage.ADMISSIBILITY,
                admissible=decision.admissible,
                use=decision.use,
                excluded_by=decision.excluded_by,
            )
        items.append(
            ReplayedItem(
                claim_id=claim_id, memory_id=hit.view.memory_id, rank=int(rank),
                version=int(version), recorded=recorded, replayed=replayed,
                changed=_differs(recorded, replayed), erased_since=claim_id in erased,
                decision=decision,
            )
        )  # fmt: skip
    k = int(read["k"])
    return ReplayReport(
        read_id=read_id, at=read["at"], tenant=read["tenant"], subject=read["subject"],
        purpose=purpose, as_of=read["as_of"], known_at=read["known_at"], k=k,
        recorded_policy=PolicyRef(id=read["read_policy_id"] or "",
                                  version=read["read_policy_version"] or "",
                                  hash=read["read_policy_hash"]),
        replay_policy=PolicyRef(id=policy.id, version=policy.version, hash=policy.hash),
        items=items, changed=[i.claim_id for i in items if i.changed],
        admitted_recorded=admitted,
        admitted_replayed=[i.claim_id for i in items if i.replayed.admissible][:k],
    )  # fmt: skip


def _differs(a: ItemOutcome, b: ItemOutcome) -> bool:
    return (a.admissible, a.use, a.excluded_by) != (b.admissible, b.use, b.excluded_by)


def _evidence(
    recorded: EvidenceStatus,
    dereference: bool,
    hit: Hit,
    transcripts: TranscriptCache | None,
    erased: bool,
) -> EvidenceStatus:
    if not dereference:
        return EvidenceStatus.NOT_CHECKED
    if recorded is not EvidenceStatus.NOT_CHECKED:
        return recorded
    if erased:
        return EvidenceStatus.SOURCE_INADMISSIBLE
    return check_evidence(
        hit.evidence_ref, hit.quote_hash, transcripts=transcripts,
        sources_admissible=hit.sources_admissible,
    )  # fmt: skip


def _read_row(db: sqlite3.Connection, read_id: str) -> dict[str, Any]:
    db.row_factory = sqlite3.Row
    try:
        row = db.execute("SELECT * FROM reads WHERE read_id = ?", (read_id,)).fetchone()
    finally:
        db.row_factory = None
    if row is None:
        raise StoreError(f"no recorded read {read_id!r} in this store (see the reads table)")
    if row["subject"] is None or row["k"] is None:
        raise StoreError(
            f"read {read_id!r} was recorded before migration s004_read_replay and lacks what "
            "replay needs (its subject and per-item versions): it cannot be replayed"
        )
    return dict(row)


def _judged_at(read: dict[str, Any]) -> datetime:
    """The instant the recorded read judged at (see ``reader.judged_at``)."""
    if read["as_of"] is not None:
        return datetime.fromisoformat(read["as_of"]).replace(tzinfo=None, microsecond=0)
    return datetime.fromisoformat(read["at"]).astimezone(UTC).replace(tzinfo=None)


def _versions(db: sqlite3.Connection, pairs: list[tuple[str, int]]) -> dict[str, Hit]:
    """The recorded version of each claim, as a :class:`Hit` (families are the recorded ones)."""
    out: dict[str, Hit] = {}
    for start in range(0, len(pairs), 400):
        chunk = pairs[start : start + 400]
        values = ",".join("(?, ?)" for _ in chunk)
        source = f"(SELECT * FROM claim_history WHERE (claim_id, version) IN (VALUES {values}))"
        params = [x for pair in chunk for x in pair]
        out.update(load_hits(db, source, params, [c for c, _ in chunk]))
    missing = [c for c, _ in pairs if c not in out]
    if missing:
        raise StoreError(f"the claim version of {missing[0]!r} the read judged is not in the store")
    return out


def _erased(db: sqlite3.Connection, claim_ids: list[str]) -> set[str]:
    out: set[str] = set()
    for start in range(0, len(claim_ids), 500):
        chunk = claim_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        sql = f"SELECT claim_id FROM claims WHERE erased != 0 AND claim_id IN ({marks})"
        out.update(str(r[0]) for r in db.execute(sql, chunk))
    return out
