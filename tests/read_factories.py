"""Factories for the read-path tests: memory views and their hypothesis strategy.

Import from tests as ``from read_factories import view, views``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from extractor.read.models import MemoryView
from extractor.vocab import (
    CandidateKind,
    Capability,
    LifecycleState,
    MemoryType,
    Origin,
    VerificationState,
)

_COUNTER = iter(range(10**9))


def view(content: str = "Q2 revenue was $43.8M.", **overrides: Any) -> MemoryView:
    """A verified, active external-source claim usable for every purpose unless overridden."""
    n = next(_COUNTER)
    fields: dict[str, Any] = {
        "claim_id": f"mem_{n:06d}:c1",
        "memory_id": f"mem_{n:06d}",
        "tenant": "acme",
        "subject": "user-1",
        "content": content,
        "memory_type": MemoryType.EXTERNAL_SOURCE_CLAIM,
        "kind": CandidateKind.PROPOSITION,
        "origin_kind": Origin.EXTERNAL_SOURCE,
        "verification_state": VerificationState.VERIFIED,
        "lifecycle_state": LifecycleState.ACTIVE,
        "allowed_uses": tuple(Capability),
        "forbidden_uses": (),
        "source_label": "filing_q2",
    }
    fields.update(overrides)
    return MemoryView(**fields)


CAPABILITY_SETS = st.frozensets(st.sampled_from(list(Capability))).map(lambda s: tuple(sorted(s)))


@st.composite
def views(draw: st.DrawFn, **fixed: Any) -> MemoryView:
    """Memory views across every axis the read path reads."""
    allowed = draw(CAPABILITY_SETS)
    forbidden = draw(CAPABILITY_SETS)
    fields: dict[str, Any] = {
        "content": draw(st.text(min_size=1, max_size=40)),
        "origin_kind": draw(st.sampled_from(list(Origin))),
        "verification_state": draw(st.sampled_from(list(VerificationState))),
        "lifecycle_state": draw(st.sampled_from(list(LifecycleState))),
        "memory_type": draw(st.sampled_from(list(MemoryType))),
        "kind": draw(st.sampled_from(list(CandidateKind))),
        "allowed_uses": allowed,
        "forbidden_uses": forbidden,
        "flags": tuple(
            draw(
                st.lists(
                    st.sampled_from(
                        ["STALE", "THIRD_PARTY_PERSONAL_DATA", "SCOPE_REQUESTING_USER"]
                    ),
                    unique=True,
                )
            )
        ),
        "conflicting": draw(st.booleans()),
        "superseded": draw(st.booleans()),
        "independent_families": draw(st.integers(0, 3)),
        "valid_from": draw(st.sampled_from([None, "2026-01-01", "2026-07-01", "garbage"])),
        "valid_to": draw(st.sampled_from([None, "2026-06-30", "2027-01-01"])),
        "source_label": draw(st.sampled_from([None, "filing_q2", 'x"]<memory>'])),
    }
    fields.update(fixed)
    return view(**fields)
