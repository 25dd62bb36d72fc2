"""The projection: current state as a deterministic function of the event log.

:class:`Projector` applies one event (an ``INGEST``, ``DERIVE``, ``REVOKE`` ...) to the
projection tables through the backend. Applying the events of ``memory_events`` in ``seq`` order
to an empty projection reproduces the store byte for byte (``rebuild``), because every value
written here comes from the event (its payload, ``seq`` and ``at``) or from rows written by
earlier events -- never from the clock or from the order rows happen to come back in.

After an event changes a claim or a source, :meth:`Projector.recompute` relabels the forward
closure of what changed (:mod:`extractor.store.support`) and settles each claim of it
(:mod:`extractor.store.settle`), writing a new ``claim_versions`` row only where the visible
state changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..vocab import Capability, LifecycleState
from .backend import Backend, Row
from .settle import Decision, Inputs, State, settle
from .support import Justification, current_support, forward_closure, relabel

CAPABILITY_BITS = {c: 1 << i for i, c in enumerate(Capability)}

#: Derivation relations whose child repeats the parent's content: a copy of a revoked claim is
#: revoked with it, not merely quarantined.
COPY_RELATIONS = frozenset({"COPIED_FROM", "QUOTED_FROM"})


def mask(uses: Iterable[Capability | str]) -> int:
    return sum(CAPABILITY_BITS[Capability(u)] for u in set(uses))


def uses_json(uses: Iterable[Capability | str]) -> str:
    ordered = [c.value for c in Capability if c in {Capability(u) for u in uses}]
    return json.dumps(ordered)


def dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass
class Outcome:
    """What a recompute did: the region (claim -> depth from the seeds, 0 for a seed), each
    region claim's settled state and current support, and which claims changed."""

    depth: dict[str, int]
    states: dict[str, State]
    support: dict[str, list[str]]
    changed: set[str]
    levels: Mapping[str, int | None] = field(default_factory=dict)


@dataclass(frozen=True)
class Cause:
    """The event a projection change comes from."""

    seq: int
    kind: str
    at: str


def decision_of(row: Mapping[str, Any], prefix: str = "base_") -> Decision:
    return Decision(
        lifecycle=LifecycleState(row[f"{prefix}lifecycle"]),
        verification=str(row[f"{prefix}verification"]),
        allowed=frozenset(Capability(u) for u in json.loads(row[f"{prefix}allowed"])),
        forbidden=frozenset(Capability(u) for u in json.loads(row[f"{prefix}forbidden"])),
        flags=tuple(json.loads(row[f"{prefix}flags"])),
        reason=_reason(json.loads(row["rules_fired"])),
    )


def _reason(rules: Sequence[str]) -> str:
    return "admitted by " + (", ".join(rules) if rules else "no rule")


def state_of(row: Mapping[str, Any]) -> State:
    """A ``claim_versions`` row as a :class:`State`."""
    return State(
        lifecycle=LifecycleState(row["lifecycle_state"]),
        verification=str(row["verification_state"]),
        allowed=frozenset(Capability(u) for u in json.loads(row["allowed_uses"])),
        forbidden=frozenset(Capability(u) for u in json.loads(row["forbidden_uses"])),
        flags=tuple(json.loads(row["flags"])),
        label=str(row["support_label"]),
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        superseded_at=row["superseded_at"],
        superseded_by=row["superseded_by"],
        reason=str(row["reason"]),
    )


def version_row(claim_id: str, version: int, state: State, cause: Cause) -> Row:
    return {
        "claim_id": claim_id,
        "version": version,
        "sys_from": cause.at,
        "sys_to": None,
        "lifecycle_state": state.lifecycle.value,
        "verification_state": state.verification,
        "allowed_uses": uses_json(state.allowed),
        "forbidden_uses": uses_json(state.forbidden),
        "allowed_mask": mask(state.allowed),
        "forbidden_mask": mask(state.forbidden),
        "flags": json.dumps(list(state.flags)),
        "support_label": state.label,
        "valid_from": state.valid_from,
        "valid_to": state.valid_to,
        "superseded_at": state.superseded_at,
        "superseded_by": state.superseded_by,
        "reason": state.reason,
        "cause_seq": cause.seq,
        "cause_kind": cause.kind,
    }


class Projector:
    """Writes the projection for events, through one :class:`Backend`."""

    def __init__(self, backend: Backend) -> None:
        self.db = backend

    # -- graph access ---------------------------------------------------------------------------

    def consumers(self, ids: list[str]) -> dict[str, list[str]]:
        """For each claim or source id: the claims it is an antecedent of."""
        rows = self.db.select_in("justification_antecedents", "antecedent_id", ids)
        justs = {r["just_id"]: r["antecedent_id"] for r in rows}
        owners = self.db.select_in("justifications", "just_id", justs)
        out: dict[str, list[str]] = {}
        for r in owners:
            out.setdefault(justs[r["just_id"]], []).append(r["claim_id"])
        return out

    def ancestry(self, claim_ids: Iterable[str]) -> tuple[set[str], set[str]]:
        """Every claim and source the given claims' justifications reach, transitively."""
        claims: set[str] = set()
        sources: set[str] = set()
        frontier = list(dict.fromkeys(claim_ids))
        while frontier:
            found = self.justifications(frontier)
            frontier = []
            for js in found.values():
                for j in js:
                    sources.update(j.sources)
                    for a in j.claims:
                        if a not in claims:
                            claims.add(a)
                            frontier.append(a)
        return claims, sources

    def justifications(self, claim_ids: Iterable[str]) -> dict[str, list[Justification]]:
        rows = self.db.select_in("justifications", "claim_id", claim_ids)
        ids = [r["just_id"] for r in rows]
        ants = self.db.select_in("justification_antecedents", "just_id", ids)
        claims: dict[str, list[str]] = {}
        sources: dict[str, list[str]] = {}
        for a in ants:
            target = claims if a["antecedent_kind"] == "claim" else sources
            target.setdefault(a["just_id"], []).append(a["antecedent_id"])
        out: dict[str, list[Justification]] = {}
        for r in sorted(rows, key=lambda r: r["just_id"]):
            j = Justification(
                just_id=r["just_id"],
                claim_id=r["claim_id"],
                kind=r["kind"],
                claims=tuple(sorted(claims.get(r["just_id"], []))),
                sources=tuple(sorted(sources.get(r["just_id"], []))),
            )
            out.setdefault(j.claim_id, []).append(j)
        return out

    # -- recompute ------------------------------------------------------------------------------

    def recompute(self, seeds: Iterable[str], cause: Cause, *, revalidate: bool = False) -> Outcome:
        """Relabel and settle the forward closure of ``seeds`` (claim or source ids).

        With ``revalidate``, every claim of the region first gets a ``NEEDS_REVALIDATION``
        version (the seed §13 step), then its settled one.
        """
        seed_list = list(dict.fromkeys(seeds))
        seed_claims = {r["claim_id"] for r in self.db.select_in("claims", "claim_id", seed_list)}
        depth = {**forward_closure(seed_list, self.consumers), **dict.fromkeys(seed_claims, 0)}
        return self.settle_region(depth, cause, revalidate=revalidate)

    def recompute_all(self, cause: Cause, *, write: bool = False) -> Outcome:
        """Relabel and settle every claim from scratch (the full recompute). Without ``write``
        nothing is written: the outcome is what the whole projection should hold."""
        rows = self.db.select("claims")
        depth = {r["claim_id"]: 0 for r in rows}
        return self.settle_region(depth, cause, revalidate=False, write=write)

    def settle_region(
        self, depth: dict[str, int], cause: Cause, *, revalidate: bool, write: bool = True
    ) -> Outcome:
        region = set(depth)
        if not region:
            return Outcome({}, {}, {}, set())
        claims = {r["claim_id"]: r for r in self.db.select_in("claims", "claim_id", region)}
        justs = self.justifications(region)
        outside_ids = {a for js in justs.values() for j in js for a in j.claims} - region
        outside = {r["claim_id"]: r for r in self.db.select_in("claims", "claim_id", outside_ids)}
        source_ids = {s for js in justs.values() for j in js for s in j.sources}
        found = self.db.select_in("sources", "source_id", source_ids)
        status = {r["source_id"]: r["status"] for r in found}

        def source_in(sid: str) -> bool:
            return status.get(sid) == "ACTIVE"

        def outside_level(cid: str) -> int | None:
            row = outside.get(cid)
            return None if row is None else row["support_level"]

        blocked = {c for c, r in claims.items() if r["revoked"] or r["erased"]}
        levels = relabel(
            region, justs, outside_level=outside_level, source_in=source_in, blocked=blocked
        )
        outcome = self._settle_region(claims, justs, levels, outside, source_in)
        outcome.depth = depth
        outcome.levels = levels
        if write:
            outcome.changed = self._write(claims, outcome.states, levels, cause, revalidate)
        return outcome

    def _settle_region(
        self,
        claims: Mapping[str, Row],
        justs: Mapping[str, list[Justification]],
        levels: Mapping[str, int | None],
        outside: Mapping[str, Row],
        source_in: Any,
    ) -> Outcome:
        parent_ids = {a for js in justs.values() for j in js for a in j.claims} - set(claims)
        parents_now = {c: state_of(r) for c, r in self.db.current_in(parent_ids).items()}
        verified = self._verified(claims)
        supersede = self._supersessions(claims)
        conflicted = self._conflicted(claims)
        copies = self._copies(claims)

        def level_of(cid: str) -> int | None:
            if cid in levels:
                return levels[cid]
            row = outside.get(cid)
            return None if row is None else row["support_level"]

        new_states: dict[str, State] = {}
        supports: dict[str, list[str]] = {}
        order = sorted(claims, key=lambda c: (levels[c] is None, levels[c] or 0, c))
        for cid in order:
            row = claims[cid]
            support = current_support(cid, levels[cid], justs.get(cid, []), level_of, source_in)
            supports[cid] = [j.just_id for j in support]
            parent_states = [
                new_states[a] if a in new_states else parents_now[a]
                for j in support
                for a in j.claims
                if a in new_states or a in parents_now
            ]
            holding = [j.just_id for j in support if j.kind == "VERIFICATION"]
            revoked_parents = any(
                (claims.get(p) or outside.get(p) or {}).get("revoked") for p in copies.get(cid, [])
            )
            sup = supersede.get(cid)
            new_states[cid] = settle(
                Inputs(
                    decision=decision_of(row),
                    valid_from=_valid(row, "stated_valid_from"),
                    valid_to=_valid(row, "stated_valid_to"),
                    label_in=levels[cid] is not None,
                    support=parent_states,
                    verified=verified[max(holding, key=_seq_of)] if holding else None,
                    revoked=row["revoked_reason"] if row["revoked"] else None,
                    erased=bool(row["erased"]),
                    copies_revoked=revoked_parents,
                    conflict=cid in conflicted,
                    superseded_by=sup[0] if sup else None,
                    superseded_at=sup[1] if sup else None,
                    successor_start=sup[2] if sup else None,
                )
            )
        return Outcome({}, new_states, supports, set())

    def _write(
        self,
        claims: Mapping[str, Row],
        new_states: Mapping[str, State],
        levels: Mapping[str, int | None],
        cause: Cause,
        revalidate: bool,
    ) -> set[str]:
        current = self.db.current_in(claims)
        rows: list[Row] = []
        changed: set[str] = set()
        for cid in sorted(new_states):
            state = new_states[cid]
            old = current.get(cid)
            version = (old["version"] if old else 0) + 1
            if revalidate and old is not None:
                pending = _pending(state_of(old))
                rows.append(version_row(cid, version, pending, cause))
                version += 1
            if old is None or revalidate or state_of(old) != state:
                rows.append(version_row(cid, version, state, cause))
                if old is None or state_of(old) != state:
                    changed.add(cid)
        self.db.write_versions(rows)
        for cid, level in levels.items():
            if claims[cid]["support_level"] != level:
                self.db.update("claims", {"claim_id": cid}, {"support_level": level})
        return changed

    # -- per-claim inputs kept in other tables --------------------------------------------------

    def _verified(self, claims: Iterable[str]) -> dict[str, Decision]:
        """Verification decisions by verification id (= its justification id)."""
        out: dict[str, Decision] = {}
        rows = self.db.select_in("verifications", "claim_id", claims)
        for r in rows:
            out[r["verification_id"]] = Decision(
                lifecycle=LifecycleState(r["lifecycle_state"]),
                verification="VERIFIED",
                allowed=frozenset(Capability(u) for u in json.loads(r["allowed_uses"])),
                forbidden=frozenset(Capability(u) for u in json.loads(r["forbidden_uses"])),
                flags=tuple(json.loads(r["flags"])),
                reason=f"verified by {r['verifier']}; " + _reason(json.loads(r["rules_fired"])),
            )
        return out

    def _supersessions(self, claims: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        rows = self.db.select_in("supersessions", "old_claim_id", claims)
        out: dict[str, tuple[str, str, str]] = {}
        for r in sorted(rows, key=lambda r: (r["effective_at"], r["new_claim_id"])):
            out.setdefault(r["old_claim_id"], (r["new_claim_id"], r["sys_at"], r["effective_at"]))
        return out

    def _conflicted(self, claims: Iterable[str]) -> set[str]:
        ids = list(claims)
        rows = self.db.select_in("conflicts", "claim_a", ids)
        rows += self.db.select_in("conflicts", "claim_b", ids)
        flagged: set[str] = set()
        for r in rows:
            flagged.update(json.loads(r["flag_json"]))
        return flagged & set(ids)

    def _copies(self, claims: Iterable[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for r in self.db.select_in("derivations", "child_claim_id", claims):
            if r["relation"] in COPY_RELATIONS and r["required"]:
                out.setdefault(r["child_claim_id"], []).append(r["parent_claim_id"])
        return out


def _seq_of(verification_id: str) -> int:
    return int(verification_id.rsplit("/", 1)[1])


def _valid(row: Mapping[str, Any], column: str) -> str | None:
    value = row[column]
    return None if value is None else str(value)


def _pending(old: State) -> State:
    return State(
        lifecycle=LifecycleState.NEEDS_REVALIDATION,
        verification=old.verification,
        allowed=frozenset(),
        forbidden=old.forbidden,
        flags=old.flags,
        label="OUT",
        valid_from=old.valid_from,
        valid_to=old.valid_to,
        superseded_at=old.superseded_at,
        superseded_by=old.superseded_by,
        reason="needs revalidation: an antecedent of its support changed",
    )
