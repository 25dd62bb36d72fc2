"""Repetition inside one conversation: the same statement made again is one candidate.

A user who says "I live in Denver." seventeen times in a long chat has stated one thing, not
seventeen. Candidates that say the same thing -- same kind, memory type, origin, verification,
speaker, hedges and reporter, the same content up to case and spacing, and (for propositions)
the same time scope -- are folded into the first of them: it keeps its own span, memory id,
verification and time, and lists the others' spans in ``repeated_spans`` and their messages in
``evidence_ids``. Children of a folded candidate point to the one kept.

Repetition never upgrades provenance (seed: "transformation and repetition never upgrade
provenance"): the kept candidate's verification state, origin and everything the admission
policy reads are exactly those of its first occurrence; the extra spans are evidence of where
it was said again, nothing more. Pure function; the pipeline applies it before admission.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from .candidates import MemoryCandidate
from .vocab import CandidateKind


def fold_repeats(candidates: Sequence[MemoryCandidate]) -> list[MemoryCandidate]:
    """``candidates`` with every repetition folded into its first occurrence (order kept)."""
    kept: dict[Hashable, MemoryCandidate] = {}
    renamed: dict[str, str] = {}
    for candidate in candidates:
        key = _sameness(candidate)
        first = kept.get(key)
        if first is None:
            kept[key] = candidate
            continue
        renamed[candidate.memory_id] = first.memory_id
        kept[key] = _absorb(first, candidate)
    if not renamed:
        return list(candidates)
    return [_reparent(c, renamed) for c in kept.values()]


def _sameness(c: MemoryCandidate) -> Hashable:
    time = c.temporal.model_dump_json() if c.kind is CandidateKind.PROPOSITION else None
    return (
        c.kind, c.memory_type, c.origin_kind, c.verification_state, c.speaker,
        " ".join(c.content.casefold().split()), tuple(c.uncertainty.hedges),
        c.uncertainty.reported_by, c.response_commitment, time,
    )  # fmt: skip


def _absorb(first: MemoryCandidate, again: MemoryCandidate) -> MemoryCandidate:
    spans = [*first.repeated_spans, again.source_span, *again.repeated_spans]
    evidence = list(dict.fromkeys([*first.evidence_ids, *again.evidence_ids]))
    parents = list(dict.fromkeys([*first.parent_memory_ids, *again.parent_memory_ids]))
    return first.model_copy(
        update={"repeated_spans": spans, "evidence_ids": evidence, "parent_memory_ids": parents}
    )


def _reparent(c: MemoryCandidate, renamed: dict[str, str]) -> MemoryCandidate:
    parents = [renamed.get(p, p) for p in c.parent_memory_ids]
    parents = [p for p in dict.fromkeys(parents) if p != c.memory_id]
    if parents == c.parent_memory_ids:
        return c
    return c.model_copy(update={"parent_memory_ids": parents})


__all__ = ["fold_repeats"]
