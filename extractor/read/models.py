"""What the read path reads and returns: the memory as the read path sees it, the caller, the
decision about one use, and the result of a read.

:class:`MemoryView` is the read path's projection of one current (or as-of) memory record of the
store; stage 1 builds it in SQL from the store's published view, stages 2-4 only ever see
records that passed stage 1. :class:`ReadResult` is a public contract
(``schemas/read-result.schema.json``): the usable items with why each was admitted, the
serialized context, and -- for audit, never for the prompt -- every excluded candidate with the
stage and rule that excluded it.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from ..vocab import CandidateKind, Capability, LifecycleState, MemoryType, Origin, VerificationState

#: The ``use`` a memory is given when policy only lets it inform, not establish (seed §9).
CONTEXT_ONLY = "CONTEXT_ONLY"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Stage(StrEnum):
    """Where a candidate left the read path (or how far it got)."""

    ELIGIBILITY = "ELIGIBILITY"  # stage 1: access, in SQL, before any ranking
    RELEVANCE = "RELEVANCE"  # stage 2: ranked, but below the top k
    ADMISSIBILITY = "ADMISSIBILITY"  # stage 3: the read policy refused the use
    SERIALIZATION = "SERIALIZATION"  # stage 4: did not fit the token budget
    SERIALIZED = "SERIALIZED"  # reached the context


class Risk(StrEnum):
    LOW = "LOW"
    MEDIUM = "MEDIUM"
    HIGH = "HIGH"


class EvidenceStatus(StrEnum):
    """What dereferencing a memory to its original evidence found (seed §10)."""

    NOT_CHECKED = "NOT_CHECKED"  # the purpose does not require it, or no resolver was given
    VERIFIED = "VERIFIED"  # span found in the stored transcript, hash matches, source admissible
    MISSING = "MISSING"  # the memory names no evidence, or the transcript is not stored
    HASH_MISMATCH = "HASH_MISMATCH"  # the stored text at the span is not what was quoted
    SOURCE_INADMISSIBLE = "SOURCE_INADMISSIBLE"  # the source was revoked or erased


class EvidenceRef(_Strict):
    """Where a memory's quote sits in the stored transcript."""

    conversation_id: str
    message_id: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    quote_hash: str = Field(description="text_hash of the quote when the memory was admitted.")


class MemoryView(_Strict):
    """One claim of a memory as the read path sees it (the store's current or as-of state).

    Lineage, support and revocation are claim-level in the store, so the read path ranks, judges
    and records claims; ``memory_id`` names the memory the claim belongs to.
    """

    claim_id: str
    memory_id: str
    tenant: str
    subject: str
    content: str
    memory_type: MemoryType
    kind: CandidateKind
    origin_kind: Origin
    verification_state: VerificationState
    lifecycle_state: LifecycleState
    allowed_uses: tuple[Capability, ...] = ()
    forbidden_uses: tuple[Capability, ...] = ()
    flags: tuple[str, ...] = Field(default=(), description="Admission flags, e.g. STALE.")
    valid_from: str | None = Field(default=None, description="Valid time start, inclusive.")
    valid_to: str | None = Field(default=None, description="Valid time end, exclusive.")
    observed_at: datetime | None = None
    evidence_as_of: str | None = Field(
        default=None, description="FACTUAL_EVIDENCE holds only as of then (from admission)."
    )
    conflicting: bool = Field(default=False, description="In a conflict the store recorded.")
    superseded: bool = Field(default=False, description="Superseded by a newer memory.")
    independent_families: int = Field(
        default=1, ge=0, description="Distinct source families among its support roots."
    )
    source_label: str | None = Field(
        default=None, description="Short source name shown in the context ('filing_q2')."
    )
    evidence: EvidenceRef | None = None


class Caller(_Strict):
    """Who reads: an id, the purposes it is authorized for, and the subject it acts for.

    The application binds this from its own authentication (the HTTP service does it server-side);
    the read path enforces it in stage 1.
    """

    id: str = Field(min_length=1)
    purposes: frozenset[Capability] | None = Field(
        default=None, description="Purposes the caller may read for; None = every purpose."
    )
    acting_for: str | None = Field(
        default=None,
        description="The subject the caller acts for; third-party personal data a user shared "
        "is eligible only when the caller acts for that user.",
    )

    def may_read_for(self, purpose: Capability) -> bool:
        return self.purposes is None or purpose in self.purposes


class FiredReadRule(_Strict):
    rule_id: str
    reason: str


class UseDecision(_Strict):
    """Whether one retrieved memory may be used for the requested purpose, and why."""

    claim_id: str
    memory_id: str
    purpose: Capability
    admissible: bool
    use: str | None = Field(description="The purpose, CONTEXT_ONLY, or None when inadmissible.")
    risk: Risk
    evidence: EvidenceStatus = EvidenceStatus.NOT_CHECKED
    flags: tuple[str, ...] = ()
    rules_fired: tuple[FiredReadRule, ...] = ()
    excluded_by: str | None = Field(default=None, description="The rule that refused the use.")
    policy_version: str


class ReadItem(_Strict):
    """A usable memory: its record id, rank, score, the use it is admitted for, and why."""

    claim_id: str
    memory_id: str
    rank: int = Field(ge=1)
    score: float
    content: str
    use: str
    origin_kind: Origin
    verification_state: VerificationState
    lifecycle_state: LifecycleState
    source_label: str | None = None
    decision: UseDecision


class ExcludedItem(_Strict):
    """A candidate that did not reach the context: the stage and rule that excluded it."""

    claim_id: str
    memory_id: str
    stage: Stage
    rule_id: str
    reason: str
    rank: int | None = None


class ReadRequest(_Strict):
    query: str
    tenant: str = Field(min_length=1)
    subject: str = Field(min_length=1)
    caller: Caller
    purpose: Capability
    as_of: datetime | None = Field(default=None, description="Valid time judged at; None = now.")
    known_at: datetime | None = Field(
        default=None, description="System time: what the store believed then; None = current."
    )
    k: int = Field(default=8, ge=1, le=1000)
    token_budget: int | None = Field(default=None, ge=1)


class ReadResult(BaseModel):
    """What one read returns. ``text`` is for the prompt; ``excluded`` is for audit only."""

    model_config = ConfigDict(extra="forbid", title="ReadResult")

    read_id: str
    request: ReadRequest
    policy_id: str
    policy_version: str
    serializer_version: str
    ranker: str
    text: str
    tokens: int = Field(ge=0)
    items: list[ReadItem] = Field(default_factory=list)
    excluded: list[ExcludedItem] = Field(default_factory=list)
    eligible_count: int | None = Field(
        default=None,
        ge=0,
        description="Claims that passed stage 1, when the ranker needed the whole slice (vector "
        "ranking); None when lexical ranking applied stage 1 inside its own statement.",
    )
