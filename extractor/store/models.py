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
    "READMIT",
]

#: How a child claim was made from a parent claim (the derivation graph, seed §7).
DerivationRelation = Literal[
    "DERIVED_FROM", "SUMMARIZED_FROM", "COPIED_FROM", "QUOTED_FROM", "PARAPHRASED_FROM"
]

#: How two sources relate (seed §6; PROV-O wasQuotedFrom / hadPrimarySource).
SourceRelation = Literal[
    "COPIED_FROM", "SYNDICATED_FROM", "SHARES_PRIMARY_SOURCE_WITH", "SAME_CONTENT"
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
    external_id: str | None = Field(
        default=None,
        description="The memory's id outside the store: the candidate's memory_id in result "
        "files, or the id given to derive (unique within a tenant; memory_id is tenant-scoped).",
    )


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
    readmit: ReadmitReport | None = Field(
        default=None,
        description="The result was decided under another policy version than the store's: "
        "what re-deciding the stored claims under it did, before this ingest.",
    )


class RebuildReport(_Record):
    """Result of replaying every event into a fresh projection."""

    events: int
    state_hash_before: str
    state_hash_after: str
    identical: bool


class DerivationRejectionRecord(_Record):
    """A proposed derived claim the gate refused (``index`` into the proposed claims)."""

    index: int
    code: str
    message: str


class DeriveReport(_Record):
    """What one :meth:`MemoryStore.derive` call stored, and what the gate refused."""

    memory_id: str
    event_seq: int | None = Field(description="The DERIVE event; None when nothing was stored.")
    stored: list[StoredClaim] = Field(default_factory=list)
    rejected: list[DerivationRejectionRecord] = Field(default_factory=list)


class AffectedClaim(_Record):
    """A claim a revocation (or restore) had to revalidate, and how it ended."""

    claim_id: str
    depth: int = Field(description="Propagation distance from the revoked target (1 = direct).")
    lifecycle_before: LifecycleState
    lifecycle_after: LifecycleState
    allowed_before: list[Capability]
    allowed_after: list[Capability]
    support: list[str] = Field(description="Justifications that hold it now (empty when OUT).")


class Exposure(_Record):
    """A recorded read that consumed an affected claim before containment."""

    read_id: str
    at: str
    caller: str
    purpose: str
    claim_id: str
    stage: str


class RevocationReport(_Record):
    """The impact report of :meth:`MemoryStore.revoke` (seed §13, §17)."""

    event_seq: int
    targets: list[str] = Field(description="Claims and sources revoked (or restored).")
    reason: str
    trigger: str
    affected: list[AffectedClaim] = Field(
        description="Every dependent that went through NEEDS_REVALIDATION, by claim id."
    )
    restored: list[str] = Field(description="Dependents that ended IN (alternative support).")
    quarantined: list[str]
    revoked: list[str]
    max_depth: int
    exposures: list[Exposure] = Field(
        description="Reads (stage ADMITTED or SERIALIZED) of a target or dependent recorded "
        "before this event: consumers to correct, notify or compensate."
    )


class Corroboration(_Record):
    """How many independent source families hold a claim up (seed §6, Exercise 3)."""

    claim_ids: list[str]
    chunks: int = Field(description="Evidence records (spans) from ACTIVE sources.")
    sources: int = Field(description="Distinct ACTIVE sources (URLs, messages, documents).")
    urls: int = Field(description="Distinct URIs among those sources.")
    families: int = Field(description="Distinct source families: the corroboration count.")
    family_ids: list[str]


class VerifyReport(_Record):
    """The outcome of :meth:`MemoryStore.verify`."""

    claim_id: str
    source_id: str
    accepted: bool
    reason: str
    event_seq: int | None
    claim: StoredClaim


class LineageEdge(_Record):
    """One edge of the derivation graph reached from a claim."""

    child_claim_id: str
    parent_claim_id: str
    relation: str
    required: bool
    depth: int = Field(description="1 = a direct parent (or child) of the claim asked about.")


class Lineage(_Record):
    """The derivation graph around one claim: where it came from and what was made from it."""

    claim_id: str
    ancestors: list[LineageEdge]
    descendants: list[LineageEdge]
    roots: list[str] = Field(description="Ancestor claims that were extracted, not derived.")
    sources: list[str] = Field(description="Sources its support rests on, transitively.")


class ErasureReport(_Record):
    """What :meth:`MemoryStore.erase` removed, and the residue check that followed."""

    erasure_id: str
    event_seq: int
    selector_kind: str
    erased_claims: list[str] = Field(description="Claims whose content is gone (tombstones).")
    derived_claims: list[str] = Field(description="Of those, derived claims that carried it.")
    revalidated: list[str] = Field(description="Dependents that lost support and were revalidated.")
    events_redacted: int
    ledger_rows_scrubbed: int
    cache_entries_removed: int
    files_scanned: list[str]
    residue: list[str] = Field(description="Where an erased string is still readable: empty.")
    unreachable: list[str] = Field(
        description="Copies outside the store it cannot reach (the result files of the ledger's "
        "runs): the caller must erase there too."
    )
    projection: Literal["incremental", "replayed"] = Field(
        default="replayed",
        description="incremental: only the erased claims' rows, their dependents' and the "
        "tombstone were written; replayed: the projection was rebuilt from the redacted log "
        "(an erased claim shared its structural key with another claim, whose supersession "
        "history changes).",
    )


class ErasureVerification(_Record):
    """Result of :meth:`MemoryStore.verify_erasure`: byte-level scan for erased strings."""

    strings: int = Field(description="How many strings were checked (each at least 6 chars).")
    files_scanned: list[str]
    residue: list[str]
    index_consistent: bool = Field(description="FTS5 integrity-check passed.")
    embeddings_clean: bool = Field(
        default=True, description="No vector of an erased claim is left in claim_embeddings."
    )
    clean: bool


class Antecedent(_Record):
    """One antecedent of a justification, with its current standing."""

    kind: Literal["claim", "source"]
    id: str
    standing: str = Field(description="A claim's support label (IN/OUT), a source's status.")
    family: str | None = Field(description="A source's family.")


class JustificationView(_Record):
    """One way a claim can be held up, and whether it holds now."""

    just_id: str
    kind: str
    informant: str | None
    holds: bool = Field(description="Every antecedent is IN / ACTIVE.")
    current: bool = Field(description="Part of the claim's current (well-founded) support.")
    antecedents: list[Antecedent]


class Why(_Record):
    """``why MEMORY_ID``: the state of a claim and everything that explains it."""

    claim: StoredClaim
    rules: list[str] = Field(description="Admission rules that gave its capabilities.")
    verified_by: list[str] = Field(description="Verifications, with the rules that decided them.")
    support: list[JustificationView]
    families: list[str] = Field(description="Source families its support rests on.")
    lineage: Lineage
    superseded_by: str | None
    supersedes: list[str]
    conflicts_with: list[str]
    history: list[ClaimVersion]


class ReadmitChange(_Record):
    """A claim whose admission decision the new policy changed."""

    claim_id: str
    lifecycle_before: LifecycleState
    lifecycle_after: LifecycleState
    allowed_before: list[Capability]
    allowed_after: list[Capability]
    rules_before: list[str]
    rules_after: list[str]


class ReadmitSkip(_Record):
    """A stored claim the new policy could not re-decide, and why."""

    claim_id: str
    reason: str


class ReadmitReport(_Record):
    """The impact report of :meth:`MemoryStore.readmit`: a policy change re-decides every stored
    claim from its recorded candidate; dependents are revalidated as after a revocation."""

    event_seq: int | None = Field(description="The READMIT event; None when nothing changed.")
    policy_id: str
    policy_version: str
    previous_policies: list[str] = Field(description="'id version' of the decisions replaced.")
    trigger: str
    decided: int = Field(description="Claims re-decided under the policy.")
    changed: list[ReadmitChange] = Field(
        default_factory=list, description="Claims whose decision changed (lifecycle, uses, rules)."
    )
    skipped: list[ReadmitSkip] = Field(default_factory=list)
    revocation: RevocationReport | None = Field(
        default=None,
        description="Claims revalidated because a decision changed (the changed claims at depth "
        "0, their dependents after), with the reads that already consumed them.",
    )


IngestReport.model_rebuild()
