"""Reusable hypothesis strategies and factories for memory candidates.

``memory_candidates(**fixed)`` draws valid :class:`~extractor.candidates.MemoryCandidate`
records across every axis (origin, verification, type, kind, commitment, temporal scope,
entities, uncertainty, timestamps); any field can be pinned to a value or to a strategy of its
own. The content is drawn from phrases that exercise the admission detectors (third-party
personal data, procedure environments) as well as plain text. ``make_candidate(**overrides)``
builds one deterministic candidate for example-based tests.

Import from tests as ``from strategies import memory_candidates``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from hypothesis import strategies as st

from extractor.candidates import MemoryCandidate, Provenance
from extractor.extraction import Entity, SourceSpan, TemporalScope, Uncertainty
from extractor.vocab import (
    CandidateKind,
    Capability,
    Commitment,
    MemoryType,
    Origin,
    TemporalKind,
    VerificationState,
)

PROVENANCE = Provenance(
    model="offline",
    prompt_id="extract",
    prompt_version="1",
    prompt_hash="sha256:0",
    schema_version="1.0.0",
    extractor_version="0.1.0",
)

PHRASES = [
    "Q3 revenue was approximately $46 million.",
    "My manager is Alice.",
    "I prefer dark mode in every editor.",
    "git status returned a clean working tree at 18:32.",
    "My sister's phone number is +44 20 7946 0958.",
    "Bob was diagnosed with diabetes last year.",
    "Alice lives at 42 Elm Street.",
    "Email carol@example.org about the offsite.",
    "Ran `pip install foo==2.1` on Ubuntu 22.04 and the tests passed.",
    "Restarting the router fixed it.",
    "The deploy failed after applying the migration.",
    "Sources disagree about the current CEO.",
    "Der Zug fährt um 7 Uhr. 列车七点出发。",
]
ORIGINS = st.sampled_from(list(Origin))
VERIFICATIONS = st.sampled_from(list(VerificationState))
UNVERIFIED_STATES = [
    s
    for s in VerificationState
    if s not in (VerificationState.VERIFIED, VerificationState.VERIFIED_OBSERVATION_OF_EVENT)
]
ISO_DATES = st.builds(
    lambda d, precision: d.isoformat()[:precision],
    st.dates(min_value=datetime(1990, 1, 1).date(), max_value=datetime(2035, 12, 31).date()),
    st.sampled_from([4, 7, 10]),
)
MOMENTS = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2035, 12, 31))


def _value(draw: st.DrawFn, fixed: dict[str, Any], name: str, default: st.SearchStrategy) -> Any:
    if name not in fixed:
        return draw(default)
    value = fixed[name]
    return draw(value) if isinstance(value, st.SearchStrategy) else value


@st.composite
def temporal_scopes(draw: st.DrawFn) -> TemporalScope:
    bounds = draw(st.lists(ISO_DATES, min_size=0, max_size=2).map(sorted))
    valid_from = bounds[0] if len(bounds) == 2 or (bounds and draw(st.booleans())) else None
    valid_to = bounds[-1] if len(bounds) == 2 or (bounds and valid_from is None) else None
    return TemporalScope(
        expression=draw(st.none() | st.sampled_from(["since March", "in 2019", "yesterday"])),
        kind=draw(st.sampled_from(list(TemporalKind))),
        valid_from=valid_from,
        valid_to=valid_to,
    )


ENTITIES = st.lists(
    st.builds(
        Entity,
        name=st.sampled_from(["Alice", "Bob", "Carol", "User", "Globex", "Utrecht"]),
        type=st.sampled_from(["PERSON", "ORGANIZATION", "PLACE", "OTHER"]),
    ),
    max_size=3,
)


@st.composite
def memory_candidates(draw: st.DrawFn, **fixed: Any) -> MemoryCandidate:
    """A valid memory candidate; pin any field with ``name=value`` or ``name=strategy``."""
    content = _value(draw, fixed, "content", st.sampled_from(PHRASES) | st.text(min_size=1))
    quote = content if content.strip() else "x"
    observed = _value(draw, fixed, "observed_at", st.none() | MOMENTS)
    recorded = _value(
        draw,
        fixed,
        "recorded_at",
        st.just(observed + timedelta(minutes=5)) if observed else MOMENTS,
    )
    fields: dict[str, Any] = {
        "memory_id": _value(
            draw, fixed, "memory_id", st.integers(0, 2**32 - 1).map("mem_{:08x}".format)
        ),
        "conversation_id": _value(draw, fixed, "conversation_id", st.just("conv-1")),
        "candidate_id": _value(draw, fixed, "candidate_id", st.integers(0, 99).map("c{}".format)),
        "content": content,
        "memory_type": _value(draw, fixed, "memory_type", st.sampled_from(list(MemoryType))),
        "kind": _value(draw, fixed, "kind", st.sampled_from(list(CandidateKind))),
        "origin_kind": _value(draw, fixed, "origin_kind", ORIGINS),
        "verification_state": _value(draw, fixed, "verification_state", VERIFICATIONS),
        "parent_memory_ids": _value(draw, fixed, "parent_memory_ids", st.just([])),
        "evidence_ids": ["m1"],
        "source_span": SourceSpan(message_id="m1", quote=quote, start=0, end=len(quote)),
        "requested_uses": _value(
            draw, fixed, "requested_uses", st.lists(st.sampled_from(list(Capability)), unique=True)
        ),
        "temporal": _value(draw, fixed, "temporal", temporal_scopes()),
        "uncertainty": Uncertainty(
            hedges=draw(st.lists(st.sampled_from(["I think", "about"]), max_size=1))
        ),
        "entities": _value(draw, fixed, "entities", ENTITIES),
        "response_commitment": _value(
            draw, fixed, "response_commitment", st.none() | st.sampled_from(list(Commitment))
        ),
        "speaker": _value(draw, fixed, "speaker", st.none() | st.just("Priya")),
        "observed_at": observed,
        "recorded_at": recorded,
        "provenance": PROVENANCE,
    }
    return MemoryCandidate(**fields)


@st.composite
def candidate_batches(draw: st.DrawFn, max_size: int = 8, **fixed: Any) -> list[MemoryCandidate]:
    """A batch with unique memory ids whose parent links point only to earlier candidates (a
    DAG in batch order), as :func:`extractor.candidates.build_candidates` produces."""
    size = draw(st.integers(min_value=1, max_value=max_size))
    batch: list[MemoryCandidate] = []
    for i in range(size):
        parents = draw(st.lists(st.integers(0, i - 1), max_size=2, unique=True)) if i else []
        batch.append(
            draw(
                memory_candidates(
                    memory_id=f"mem_{i:04d}",
                    candidate_id=f"c{i}",
                    parent_memory_ids=[f"mem_{p:04d}" for p in parents],
                    **fixed,
                )
            )
        )
    return batch


def make_candidate(memory_id: str = "mem_1", **overrides: Any) -> MemoryCandidate:
    """One deterministic candidate (a held model claim by default); override any field."""
    content = overrides.pop("content", "Q3 revenue was approximately $46 million.")
    fields: dict[str, Any] = {
        "memory_id": memory_id,
        "conversation_id": "conv-1",
        "candidate_id": memory_id.removeprefix("mem_"),
        "content": content,
        "memory_type": MemoryType.MODEL_INFERENCE,
        "kind": CandidateKind.PROPOSITION,
        "origin_kind": Origin.MODEL_OUTPUT,
        "verification_state": VerificationState.UNVERIFIED,
        "evidence_ids": ["m1"],
        "source_span": SourceSpan(message_id="m1", quote=content, start=0, end=len(content)),
        "temporal": TemporalScope(),
        "uncertainty": Uncertainty(),
        "observed_at": datetime(2026, 8, 30, 18, 39),
        "recorded_at": datetime(2026, 8, 30, 18, 40),
        "provenance": PROVENANCE,
    }
    fields.update(overrides)
    return MemoryCandidate(**fields)
