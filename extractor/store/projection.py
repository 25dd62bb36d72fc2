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
from .timeline import (
    IMMUTABLE,
    ORIGIN_AUTHORITY,
    VERIFIED_AUTHORITY,
    Keyed,
    Resolution,
    resolve,
)

CAPABILITY_BITS = {c: 1 << i for i, c in enumerate(Capability)}

#: Derivation relations whose child repeats the parent's content: a copy of a revoked claim is
#: revoked with it, not merely quarantined.
COPY_RELATIONS = frozenset({"COPIED_FROM", "QUOTED_FROM"})


def mask(uses: Iterable[Capability | str]) -> int:
    return sum(CAPABILITY_BITS[Capability(u)] for u in set(uses))


def uses_json(uses: Iterable[Capability | str]) -> str:
    chosen = {Capability(u) for u in uses}
    return json.dumps([c.value for c in Capability if c in chosen])


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
    #: The current ``claim_versions`` row of each region claim before this change (the impact
    #: report's "before"), read once by the write.
    before: Mapping[str, Row] = field(default_factory=dict)


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
        self,
        depth: dict[str, int],
        cause: Cause,
        *,
        revalidate: bool,
        write: bool = True,
        keys: bool = True,
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
        if write and keys:
            extra = self._resolve_keys(claims, levels, cause) - region
            if extra:
                wider = {**forward_closure(extra, self.consumers), **dict.fromkeys(extra, 0)}
                wider.update(depth)
                return self.settle_region(wider, cause, revalidate=revalidate, keys=False)
        outcome = self._settle_region(claims, justs, levels, outside, source_in)
        outcome.depth = depth
        outcome.levels = levels
        if write:
            outcome.before = self.db.current_in(claims)
            outcome.changed = self._write(
                claims, outcome.states, levels, cause, revalidate, outcome.before
            )
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
        starts = self._successor_starts(claims)
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
                    valid_from=_valid(row, "stated_valid_from") or starts.get(cid),
                    valid_to=_valid(row, "stated_valid_to"),
                    label_in=levels[cid] is not None,
                    support=parent_states,
                    verified=_latest(verified, holding),
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
        current: Mapping[str, Row],
    ) -> set[str]:
        rows: list[Row] = []
        changed: set[str] = set()
        for cid in sorted(new_states):
            state = new_states[cid]
            old = current.get(cid)
            was = None if old is None else state_of(old)
            version = (old["version"] if old else 0) + 1
            if revalidate and was is not None:
                rows.append(version_row(cid, version, _pending(was), cause))
                version += 1
            if was is None or revalidate or was != state:
                rows.append(version_row(cid, version, state, cause))
                if was != state:
                    changed.add(cid)
        self.db.write_versions(rows)
        self.db.set_levels({c: lv for c, lv in levels.items() if claims[c]["support_level"] != lv})
        return changed

    # -- supersession and conflict ---------------------------------------------------------------

    def _resolve_keys(
        self, claims: Mapping[str, Row], levels: Mapping[str, int | None], cause: Cause
    ) -> set[str]:
        """Re-resolve the timeline of every structural key the region touches; return the
        claims whose supersession or conflict changed."""
        groups = sorted({
            (r["tenant"], r["key_subject"], r["key_relation"], r["key_scope"])
            for r in claims.values() if r["key_relation"] is not None
        }, key=repr)  # fmt: skip
        changed: set[str] = set()
        for tenant, subject, relation, scope in groups:
            where = {"tenant": tenant, "key_subject": subject, "key_relation": relation,
                     "key_scope": scope}  # fmt: skip
            members = {r["claim_id"]: r for r in self.db.select("claims", where)}
            keyed = self._keyed(members, levels)
            res = resolve(keyed)
            key = dumps([tenant, subject, relation, scope])
            changed |= self._write_resolution(members, res, key, cause)
        return changed

    def _keyed(self, members: Mapping[str, Row], levels: Mapping[str, int | None]) -> list[Keyed]:
        ids = list(members)
        origins = {r["memory_id"]: r["origin_kind"] for r in self.db.select_in(
            "memories", "memory_id", [m["memory_id"] for m in members.values()])}  # fmt: skip
        verified = self.db.select_in("verifications", "claim_id", ids)
        live = {
            r["source_id"]
            for r in self.db.select_in("sources", "source_id", [v["source_id"] for v in verified])
            if r["status"] == "ACTIVE"
        }
        held = {v["claim_id"] for v in verified if v["source_id"] in live}
        out = []
        for cid, r in members.items():
            level = levels[cid] if cid in levels else r["support_level"]
            if level is None or r["revoked"] or r["erased"]:
                continue
            authority = VERIFIED_AUTHORITY if cid in held else ORIGIN_AUTHORITY.get(
                origins[r["memory_id"]], 1)  # fmt: skip
            start = r["stated_valid_from"] or naive(r["observed_at"] or r["recorded_at"])
            timed = r["stated_valid_from"] is not None or r["observed_at"] is not None
            out.append(Keyed(cid, r["key_object"], start, authority, timed=timed,
                             mutable=r["key_relation"] not in IMMUTABLE))  # fmt: skip
        return out

    def _write_resolution(
        self, members: Mapping[str, Row], res: Resolution, key: str, cause: Cause
    ) -> set[str]:
        ids = list(members)
        old_sup = {(r["old_claim_id"], r["new_claim_id"]): r
                   for r in self.db.select_in("supersessions", "old_claim_id", ids)}  # fmt: skip
        old_con = {(r["claim_a"], r["claim_b"]): r
                   for r in self.db.select_in("conflicts", "claim_a", ids)}  # fmt: skip
        new_sup = {(o, n): e for o, n, e in res.supersessions}
        new_con = {(a, b): f for a, b, f in res.conflicts}
        changed: set[str] = set()
        for pair in set(old_sup) ^ set(new_sup):
            changed.update(pair)  # the new claim's start may become its valid_from
        for pair in set(old_con) | set(new_con):
            before = json.loads(old_con[pair]["flag_json"]) if pair in old_con else []
            after = list(new_con.get(pair, ()))
            if before != after:
                changed.update(before + after)
        for o, n in old_sup:
            self.db.delete("supersessions", {"old_claim_id": o, "new_claim_id": n})
        for a, b in old_con:
            self.db.delete("conflicts", {"claim_a": a, "claim_b": b})
        self.db.insert("supersessions", [{
            "old_claim_id": o, "new_claim_id": n, "key_json": key, "effective_at": e,
            "sys_at": old_sup[(o, n)]["sys_at"] if (o, n) in old_sup else cause.at,
            "rule_id": "functional-key-later-valid-time",
            "cause_seq": old_sup[(o, n)]["cause_seq"] if (o, n) in old_sup else cause.seq,
        } for (o, n), e in sorted(new_sup.items())])  # fmt: skip
        self.db.insert("conflicts", [{
            "claim_a": a, "claim_b": b, "key_json": key, "flag_json": json.dumps(list(f)),
            "rule_id": "functional-key-unresolvable",
            "cause_seq": old_con[(a, b)]["cause_seq"] if (a, b) in old_con else cause.seq,
        } for (a, b), f in sorted(new_con.items())])  # fmt: skip
        return changed

    # -- per-claim inputs kept in other tables --------------------------------------------------

    def _verified(self, claims: Iterable[str]) -> dict[str, tuple[int, Decision]]:
        """Verification decisions, with the VERIFY event's seq, by verification id (= its
        justification id)."""
        out: dict[str, tuple[int, Decision]] = {}
        rows = self.db.select_in("verifications", "claim_id", claims)
        for r in rows:
            out[r["verification_id"]] = (
                int(r["cause_seq"]),
                Decision(
                    lifecycle=LifecycleState(r["lifecycle_state"]),
                    verification="VERIFIED",
                    allowed=frozenset(Capability(u) for u in json.loads(r["allowed_uses"])),
                    forbidden=frozenset(Capability(u) for u in json.loads(r["forbidden_uses"])),
                    flags=tuple(json.loads(r["flags"])),
                    reason=f"verified by {r['verifier']}; " + _reason(json.loads(r["rules_fired"])),
                ),
            )
        return out

    def _supersessions(self, claims: Iterable[str]) -> dict[str, tuple[str, str, str]]:
        rows = self.db.select_in("supersessions", "old_claim_id", claims)
        out: dict[str, tuple[str, str, str]] = {}
        for r in sorted(rows, key=lambda r: (r["effective_at"], r["new_claim_id"])):
            out.setdefault(r["old_claim_id"], (r["new_claim_id"], r["sys_at"], r["effective_at"]))
        return out

    def _successor_starts(self, claims: Iterable[str]) -> dict[str, str]:
        """A claim that supersedes another without a stated start holds from its effective
        start (when it was said), so the two never overlap in valid time."""
        rows = self.db.select_in("supersessions", "new_claim_id", claims)
        return {r["new_claim_id"]: r["effective_at"] for r in rows}

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


def naive(system: str) -> str:
    """A system-time instant as a valid-time instant (the UTC wall clock, no zone)."""
    return system[:19]


def _latest(verified: Mapping[str, tuple[int, Decision]], holding: list[str]) -> Decision | None:
    """The decision of the last verification (by its VERIFY event) that holds the claim."""
    if not holding:
        return None
    return verified[max(holding, key=lambda v: verified[v][0])][1]


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
