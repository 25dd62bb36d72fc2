"""The store's core: opening, the event log, reading claims, replay (see :class:`MemoryStore`).

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
from typing import Any, Self

from ..errors import StoreError, UnknownMemory
from ..hashing import canonical_json
from ..vocab import Capability, LifecycleState
from .apply import apply_event
from .backend import Backend, SQLiteBackend
from .derivation import ParentView
from .migrations import PROJECTION_TABLES
from .models import (
    AffectedClaim,
    ClaimVersion,
    Exposure,
    MemoryEvent,
    RebuildReport,
    RevocationReport,
    StoredClaim,
)
from .projection import Cause, Outcome, Projector, state_of
from .support import forward_closure
from .timeaxes import system_time, utc_now, valid_point

QUARANTINED = LifecycleState.QUARANTINED
REVOKED = LifecycleState.REVOKED

#: Tenant used when neither the caller nor the result names one.
DEFAULT_TENANT = "default"

Clock = Callable[[], datetime]


class StoreCore:
    """Opening and closing, the event log, reading, replay: what every operation builds on."""

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
        self._erase_hooks: list[Callable[[list[str]], None]] = []

    # -- lifecycle ------------------------------------------------------------------------------

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> Self:
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
        apply: bool = True,
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
            if seq is None or not apply:
                return seq, None
            return seq, apply_event(self._projector, {**row, "seq": seq})

    def _last_seq(self) -> tuple[int, str] | None:
        return self.backend.last_event()

    def events(self, after_seq: int = 0) -> Iterator[MemoryEvent]:
        for r in self.backend.events(after_seq):
            yield MemoryEvent(
                seq=r["seq"], event_id=r["event_id"], kind=r["kind"], at=r["at"],
                tenant=r["tenant"], actor=r["actor"], payload=json.loads(r["payload_json"]),
                redacted=bool(r["redacted"]),
            )  # fmt: skip

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
        if memory_id is not None:
            memory_id = self.resolve(memory_id, tenant=tenant)
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

    def without_subject(self, tenant: str = DEFAULT_TENANT) -> int:
        """How many stored (unerased) memories of ``tenant`` have no subject: the read path
        reads one subject at a time and never reads them."""
        return len(self.backend.select("memories", {"tenant": tenant, "subject": None,
                                                    "erased": 0}))  # fmt: skip

    def _history_where(self, where: Mapping[str, Any]) -> list[dict[str, Any]]:
        ids = [r["claim_id"] for r in self.backend.select("claims", where)]
        return self.backend.history(ids, view=True)

    def resolve(self, ref: str, *, tenant: str | None = None) -> str:
        """The store's own id for ``ref``: a claim or memory id of the store is itself; the id
        a memory has outside the store (a candidate's ``memory_id`` in a result file, the id
        given to ``derive``), optionally with its claim suffix (``:c1``), is translated when it
        names exactly one memory (of ``tenant``, when given). Anything else comes back unchanged
        (and is then not found).

        With ``tenant`` only that tenant's rows are looked at, its store ids first, then its
        external ids: another tenant's id comes back unchanged, exactly as an unknown one, and
        never stands in the way of the tenant's own external id that happens to spell it."""
        scope = {} if tenant is None else {"tenant": tenant}
        if self.backend.select("claims", {"claim_id": ref, **scope}) or self.backend.select(
            "memories", {"memory_id": ref, **scope}
        ):
            return ref
        base, suffix = ref, ""
        head, sep, ordinal = ref.rpartition(":c")
        if sep and ordinal.isdigit():
            base, suffix = head, f":c{ordinal}"
        rows = self.backend.select("memories", {"external_id": base, **scope})
        return rows[0]["memory_id"] + suffix if len(rows) == 1 else ref

    def claim(self, ref: str) -> StoredClaim:
        """The current state of one claim (``mem_...:c1``) or of a one-claim memory."""
        ref = self.resolve(ref)
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
        ref = self.resolve(ref)
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

    def _one_claim(self, ref: str, *, tenant: str | None = None) -> dict[str, Any]:
        """The claim ``ref`` names (a claim, or a memory of one claim), of ``tenant`` when given:
        another tenant's is :class:`UnknownMemory`, as a claim that does not exist."""
        ref = self.resolve(ref, tenant=tenant)
        scope = {} if tenant is None else {"tenant": tenant}
        rows = self.backend.select("claims", {"claim_id": ref, **scope})
        if not rows:
            rows = self.backend.select("claims", {"memory_id": ref, **scope})
            if len(rows) > 1:
                raise StoreError(f"memory {ref!r} has {len(rows)} claims: name one ({ref}:c1)")
        if not rows:
            raise UnknownMemory(ref)
        return rows[0]

    def _dependents(self, seeds: Sequence[str]) -> set[str]:
        return set(forward_closure(seeds, self._projector.consumers))

    def consistent(self) -> bool:
        """Whether a full recompute of every claim gives exactly the current states (what
        every incremental update must preserve)."""
        outcome = self._projector.recompute_all(Cause(0, "CHECK", ""), write=False)
        current = self.backend.current_in(outcome.states)
        return all(state_of(current[c]) == s for c, s in outcome.states.items())

    # -- shared by revocation, readmission ------------------------------------------------------

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
            observation=current["kind"] == "OBSERVATION",
        )  # fmt: skip

    def _impact(
        self,
        seq: int,
        targets: list[str],
        payload: Mapping[str, Any],
        outcome: Outcome,
        at: str,
    ) -> RevocationReport:
        before = outcome.before
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
        policy_version=r["policy_version"], reason=r["reason"], external_id=r["external_id"],
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
