"""Explaining a claim: ``why``, ``lineage``, ``export`` (CLI ``store why/lineage/export``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..errors import StoreError
from .core import StoreCore
from .migrations import PROJECTION_TABLES
from .models import (
    Antecedent,
    JustificationView,
    Lineage,
    LineageEdge,
    Why,
)

#: What ``export`` can read, in the order ``extractor store export`` lists them.
EXPORTABLE = ("memory_current", "claim_history", *PROJECTION_TABLES, "memory_events", "reads",
              "read_items")  # fmt: skip

#: Columns that hold JSON text.
JSON_COLUMNS = frozenset({
    "allowed_uses", "forbidden_uses", "flags", "hedges", "base_allowed", "base_forbidden",
    "base_flags", "rules_fired", "payload_json", "key_json", "flag_json", "counts_json",
    "derived_from",
})  # fmt: skip


class Explaining(StoreCore):
    """``why``, ``lineage`` and ``export``."""

    def why(self, ref: str) -> Why:
        """Everything that explains a claim's state: the rules that gave each capability, its
        justifications (which hold, which are its current support), the source families under
        it, its lineage, supersession and conflicts, and its versions (CLI ``store why``)."""
        row = self._one_claim(ref)
        cid = row["claim_id"]
        justs = self._projector.justifications([cid]).get(cid, [])
        claims = {r["claim_id"]: r for r in self.backend.select_in(
            "claims", "claim_id", [a for j in justs for a in j.claims])}  # fmt: skip
        labels = {c: r["support_label"] for c, r in self.backend.current_in(claims).items()}
        sources = {r["source_id"]: r for r in self.backend.select_in(
            "sources", "source_id", [s for j in justs for s in j.sources])}  # fmt: skip
        families = {r["source_id"]: r["family_id"] for r in self.backend.select_in(
            "source_families", "source_id", list(sources))}  # fmt: skip
        level = row["support_level"]
        views = []
        for j in justs:
            ants = [Antecedent(kind="claim", id=a, standing=labels.get(a, "OUT"), family=None)
                    for a in j.claims]  # fmt: skip
            ants += [Antecedent(kind="source", id=s, standing=sources[s]["status"],
                                family=families.get(s)) for s in j.sources]  # fmt: skip
            holds = all(a.standing in ("IN", "ACTIVE") for a in ants)
            levels = [claims[a]["support_level"] for a in j.claims]
            current = holds and level is not None and all(
                lv is not None and lv < level for lv in levels)  # fmt: skip
            views.append(JustificationView(
                just_id=j.just_id, kind=j.kind, informant=None, holds=holds, current=current,
                antecedents=ants,
            ))  # fmt: skip
        informants = {r["just_id"]: r["informant"] for r in self.backend.select(
            "justifications", {"claim_id": cid})}  # fmt: skip
        views = [v.model_copy(update={"informant": informants.get(v.just_id)}) for v in views]
        _, under = self._projector.ancestry([cid])
        fams = sorted({r["family_id"] for r in self.backend.select_in(
            "source_families", "source_id", under)})  # fmt: skip
        verified = [f"{v['verification_id']} by {v['verifier']} ({v['source_id']}): "
                    + ", ".join(json.loads(v["rules_fired"]))
                    for v in self.backend.select("verifications", {"claim_id": cid})]  # fmt: skip
        claim = self.claim(cid)
        sup = self.backend.select("supersessions", {"new_claim_id": cid})
        con = self.backend.select("conflicts", {"claim_a": cid}) + self.backend.select(
            "conflicts", {"claim_b": cid})  # fmt: skip
        return Why(
            claim=claim, rules=json.loads(row["rules_fired"]), verified_by=verified,
            support=views, families=fams, lineage=self.lineage(cid),
            superseded_by=claim.superseded_by, supersedes=sorted(r["old_claim_id"] for r in sup),
            conflicts_with=sorted({r["claim_b"] if r["claim_a"] == cid else r["claim_a"]
                                   for r in con}),
            history=self.history(cid),
        )  # fmt: skip

    def export(self, table: str = "memory_current") -> Iterator[dict[str, Any]]:
        """Every row of a store table or view, JSON columns decoded (CLI ``store export``)."""
        if table not in EXPORTABLE:
            raise StoreError(f"cannot export {table!r}: choose one of {', '.join(EXPORTABLE)}")
        for row in self.backend.select(table):
            yield {k: json.loads(v) if k in JSON_COLUMNS and isinstance(v, str) else v
                   for k, v in row.items()}  # fmt: skip

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
