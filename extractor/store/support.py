"""The support graph: well-founded labelling of claims, truth-maintenance style (seed §7, §13).

A claim is IN only through a *justification* (an AND of antecedents: other claims and sources)
whose antecedents are all IN; a claim with several justifications is IN when any one holds (OR).
Sources are premises: IN while ACTIVE. Labels are the least fixpoint reached from "everything
OUT", so support that only leads back to the claim itself -- "model invents X, stores X,
retrieves X, cites X" -- holds nothing up (Doyle 1979; Forbus & de Kleer 1993).

Each IN claim also gets a *level*: 1 + the smallest, over its holding justifications, of the
largest antecedent level (sources are level 0). The justifications that achieve it are the
claim's *current support*, the ones its capabilities are computed along; levels are canonical (a
function of the graph, not of the order anything was processed in), so an incremental relabel of
a region and a full recompute agree exactly.

Incremental relabel: a level depends only on a claim's ancestors, so after a change the claims
whose level can change are exactly the forward closure (consumers, transitively) of what
changed. :func:`relabel` recomputes that region with every claim outside it held fixed.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Justification:
    """``claim_id`` holds when every claim in ``claims`` and every source in ``sources`` is IN."""

    just_id: str
    claim_id: str
    kind: str
    claims: tuple[str, ...]
    sources: tuple[str, ...]


def relabel(
    region: Iterable[str],
    justifications: Mapping[str, list[Justification]],
    *,
    outside_level: Callable[[str], int | None],
    source_in: Callable[[str], bool],
    blocked: Iterable[str] = (),
) -> dict[str, int | None]:
    """Levels (``None`` = OUT) for every claim of ``region``.

    ``justifications[c]`` lists the justifications of claim ``c``; ``outside_level`` gives the
    fixed level of a claim outside the region (``None`` if OUT); ``source_in`` says whether a
    source is IN; ``blocked`` claims (revoked, erased) are OUT whatever supports them.
    """
    members = set(region)
    stop = set(blocked)
    waiting: dict[str, list[tuple[Justification, int]]] = {}
    missing: dict[str, int] = {}
    heap: list[tuple[int, str]] = []
    for cid in sorted(members - stop):
        for j in justifications.get(cid, []):
            if not all(source_in(s) for s in j.sources):
                continue
            inside = [a for a in j.claims if a in members]
            top = 0
            usable = True
            for a in j.claims:
                if a in members:
                    continue
                level = outside_level(a)
                if level is None:
                    usable = False
                    break
                top = max(top, level)
            if not usable:
                continue
            if not inside:
                heapq.heappush(heap, (top + 1, cid))
                continue
            missing[j.just_id] = len(set(inside))
            for a in set(inside):
                waiting.setdefault(a, []).append((j, top))
    levels: dict[str, int | None] = dict.fromkeys(members)
    floor: dict[str, int] = {}
    while heap:
        level, cid = heapq.heappop(heap)
        if levels[cid] is not None:
            continue
        levels[cid] = level
        for j, top in waiting.get(cid, []):
            floor[j.just_id] = max(floor.get(j.just_id, top), level)
            missing[j.just_id] -= 1
            if missing[j.just_id] == 0 and levels[j.claim_id] is None:
                heapq.heappush(heap, (floor[j.just_id] + 1, j.claim_id))
    return levels


def current_support(
    claim_id: str,
    level: int | None,
    justifications: list[Justification],
    level_of: Callable[[str], int | None],
    source_in: Callable[[str], bool],
) -> list[Justification]:
    """The holding justifications of an IN claim whose antecedents are all below its level."""
    if level is None:
        return []
    out = []
    for j in justifications:
        if not all(source_in(s) for s in j.sources):
            continue
        levels = [level_of(a) for a in j.claims]
        if all(lv is not None and lv < level for lv in levels):
            out.append(j)
    return out


def forward_closure(
    seeds: Iterable[str], consumers: Callable[[list[str]], Mapping[str, list[str]]]
) -> dict[str, int]:
    """Every claim reachable from ``seeds`` along "is an antecedent of", with its distance (the
    propagation depth: 1 for a direct consumer). Seeds are not included.

    ``consumers(batch)`` maps each id of a batch (claims or sources) to the claims it supports.
    """
    seen: set[str] = set()
    frontier = list(dict.fromkeys(seeds))
    reached: dict[str, int] = {}
    depth = 0
    while frontier:
        depth += 1
        seen.update(frontier)
        found = consumers(frontier)
        frontier = []
        for key in sorted(found):
            for t in found[key]:
                if t not in seen:
                    seen.add(t)
                    reached[t] = depth
                    frontier.append(t)
    return reached
