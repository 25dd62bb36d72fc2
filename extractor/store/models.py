"""Record types of the memory store: what its API returns and what its events carry.

Every model here has a generated JSON Schema in ``schemas/`` (``store-*.schema.json``). Times
follow two axes (seed §12): *valid time* (``valid_from``/``valid_to``, when the proposition holds
in the world; naive ISO datetimes, half-open ``[valid_from, valid_to)``) and *system time*
(``recorded_at``/``sys_from``/``sys_to``/``superseded_at``, when the store learned it; UTC ISO
datetimes written by the store's clock only).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..vocab import Capability, LifecycleState

SupportLabel = Literal["IN", "OUT"]

#: What a store event records. Each is appended to ``memory_events`` and replayed by rebuild.
EventKind = Literal[
    "INGEST",
    "DERIVE",
    "SUPPORT",
    "SOURCE",
    "LINK",
    "EVIDENCE",
    "VERIFY",
    "REVOKE",
    "RESTORE",
    "ERASE",
]

#: How a child claim was made from a parent claim (the derivation graph, seed §7).
DerivationRelation = Literal[
    "DERIVED_FROM", "SUMMARIZED_FROM", "COPIED_FROM", "QUOTED_FROM", "PARAPHRASED_FROM"
]

#: What a revocation was triggered by (seed §17, event-driven maintenance).
RevocationTrigger = Literal[
    "SOURCE_REVOKED", "SOURCE_UPDATED", "USER_CORRECTION", "POLICY_CHANGE", "MANUAL"
]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoredClaim(_Record):
    """One row of the ``memory_current`` view: a claim with its current version.

    An extracted memory has exactly one claim, ``<memory_id>:c1``; a derived memory has one claim
    per proposition it states. Lifecycle, capabilities and time live on the claim, because
    lineage, support and revocation are claim-level (seed §5).
    """

    claim_id: str
    memory_id: str
    tenant: str
    subject: str | None = Field(description="The user the memory is about, when known.")
    conversation_id: str | None
    memory_type: str
    kind: str | None
    origin_kind: str
    verification_state: str
    lifecycle_state: LifecycleState
    allowed_uses: list[Capability]
    forbidden_uses: list[Capability]
    flags: list[str]
    support_label: SupportLabel = Field(description="IN: some well-founded support holds it.")
    content: str = Field(description="Empty once erased.")
    valid_from: str | None = Field(description="Valid time start (naive ISO), inclusive.")
    valid_to: str | None = Field(description="Valid time end (naive ISO), exclusive.")
    observed_at: str | None = Field(description="When the source message was written.")
    recorded_at: str = Field(description="System time the claim entered the store.")
    sys_from: str = Field(description="System time this version became current.")
    superseded_at: str | None = Field(description="System time a newer claim superseded it.")
    superseded_by: str | None
    erased: bool
    version: int
    evidence_ref: str | None = Field(description="<conversation_hash>#<message_id>[start:end]")
    policy_id: str
    policy_version: str
    reason: str = Field(description="Why this version has its state (event and rule).")


class ClaimVersion(_Record):
    """One system-time version of a claim (a row of ``claim_versions``)."""

    claim_id: str
    version: int
    sys_from: str
    sys_to: str | None
    lifecycle_state: LifecycleState
    verification_state: str
    allowed_uses: list[Capability]
    forbidden_uses: list[Capability]
    flags: list[str]
    support_label: SupportLabel
    valid_from: str | None
    valid_to: str | None
    superseded_at: str | None
    superseded_by: str | None
    reason: str
    cause_seq: int
    cause_kind: EventKind


class MemoryEvent(_Record):
    """One append-only event of ``memory_events``: current state is their projection."""

    seq: int
    event_id: str
    kind: EventKind
    at: str = Field(description="System time the event was recorded (UTC).")
    tenant: str | None
    actor: str | None
    payload: dict[str, object]
    redacted: bool = Field(description="True once erasure removed content from the payload.")


class IngestReport(_Record):
    """What one :meth:`MemoryStore.ingest` call did."""

    conversation_id: str
    tenant: str
    subject: str | None
    event_seq: int | None = Field(description="The INGEST event, or None when nothing was new.")
    stored: list[str] = Field(default_factory=list, description="Memory ids newly stored.")
    already_stored: list[str] = Field(default_factory=list)
    not_persisted: list[str] = Field(
        default_factory=list, description="Decided persist=false: never stored."
    )
    superseded: list[str] = Field(default_factory=list, description="Claims this ingest retired.")
    conflicts: list[list[str]] = Field(
        default_factory=list, description="New CONFLICTS_WITH pairs."
    )


class RebuildReport(_Record):
    """Result of replaying every event into a fresh projection."""

    events: int
    state_hash_before: str
    state_hash_after: str
    identical: bool
