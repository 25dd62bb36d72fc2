"""The memory candidate record: what the *system* builds from an accepted extraction.

Compared with a :class:`~extractor.extraction.CandidateUnit`, the record adds what only the
system can know or decide: the origin derived from who spoke, a verification state assigned by
rule (never taken from the model), the initial lifecycle ``EPHEMERAL``, evidence ids, the time the
event was observed and recorded, and the provenance of the extraction itself.

Verification is assigned as the seed chapter prescribes:

* a grounded observation of an event the system witnessed in the transcript (a user's
  assertion event, a tool's output -- also the output of a tool that relays external text,
  origin ``EXTERNAL_SOURCE``) is ``VERIFIED_OBSERVATION_OF_EVENT`` -- evidence that it was
  *said* or *returned*, not that it is true;
* the proposition a user or tool asserted stays ``UNVERIFIED``;
* model output is at most ``UNVERIFIED``, and ``INSUFFICIENT_EVIDENCE`` when its message was held
  (response commitment ``HOLD``).
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from .conversation import Conversation, Message
from .extraction import CandidateUnit, Entity, SourceSpan, TemporalScope, Uncertainty
from .hashing import content_hash
from .vocab import (
    OBSERVATION_TYPES,
    CandidateKind,
    Capability,
    Commitment,
    LifecycleState,
    MemoryType,
    Origin,
    Role,
    VerificationState,
)


class Provenance(BaseModel):
    """How a candidate was produced: enough to reproduce or audit the extraction."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    prompt_id: str
    prompt_version: str
    prompt_hash: str
    schema_version: str
    extractor_version: str


class MemoryCandidate(BaseModel):
    """A validated candidate, ready for the admission policy. Not yet persisted."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str = Field(description="Deterministic: derived from conversation, span, content.")
    conversation_id: str
    candidate_id: str = Field(description="The extractor's id for this unit.")
    content: str
    memory_type: MemoryType
    kind: CandidateKind
    origin_kind: Origin = Field(description="Derived from the role of the quoted message.")
    verification_state: VerificationState = Field(description="Assigned by the system.")
    lifecycle_state: LifecycleState = LifecycleState.EPHEMERAL
    parent_memory_ids: list[str] = Field(default_factory=list)
    evidence_ids: list[str] = Field(description="Ids of the messages that hold the evidence.")
    source_span: SourceSpan
    repeated_spans: list[SourceSpan] = Field(
        default_factory=list,
        description="Other spans of the conversation saying the same thing (see "
        "extractor.repetition); evidence of repetition, never of more authority.",
    )
    span_corrected: bool = Field(
        default=False, description="True when the system corrected the extractor's offsets."
    )
    requested_uses: list[Capability] = Field(default_factory=list)
    temporal: TemporalScope
    uncertainty: Uncertainty
    entities: list[Entity] = Field(default_factory=list)
    response_commitment: Commitment | None = Field(
        default=None, description="Commitment of the assistant message the span came from."
    )
    speaker: str | None = Field(default=None, description="The message's 'name', if any.")
    observed_at: datetime | None = Field(description="Timestamp of the source message.")
    recorded_at: datetime
    provenance: Provenance


ROLE_ORIGIN: dict[Role, Origin] = {
    Role.USER: Origin.USER,
    Role.TOOL: Origin.TOOL,
    Role.ASSISTANT: Origin.MODEL_OUTPUT,
    Role.SYSTEM: Origin.SYSTEM,
}


def derived_origin(message: Message, claimed: Origin) -> Origin:
    """The origin the transcript supports for text in ``message``.

    A tool message may carry content the tool retrieved from an external source: the gate has
    set the origin of tool text to the one the caller declared for its tool
    (:mod:`extractor.toolorigin`), or ``EXTERNAL_SOURCE`` where the model said so; every other
    role has exactly one origin.
    """
    origin = ROLE_ORIGIN[message.role]
    if origin is Origin.TOOL and claimed is Origin.EXTERNAL_SOURCE:
        return Origin.EXTERNAL_SOURCE
    return origin


def assign_verification(unit: CandidateUnit, origin: Origin, message: Message) -> VerificationState:
    if origin is Origin.MODEL_OUTPUT:
        if message.commitment is Commitment.HOLD:
            return VerificationState.INSUFFICIENT_EVIDENCE
        return VerificationState.UNVERIFIED
    if (
        unit.kind is CandidateKind.OBSERVATION
        and unit.memory_type in OBSERVATION_TYPES
        and origin in (Origin.USER, Origin.TOOL, Origin.EXTERNAL_SOURCE)
    ):
        return VerificationState.VERIFIED_OBSERVATION_OF_EVENT
    return VerificationState.UNVERIFIED


def memory_id_for(conversation_id: str, unit: CandidateUnit) -> str:
    key: list[object] = [conversation_id, unit.span.message_id, unit.span.start, unit.span.end]
    key += [str(unit.memory_type), unit.content]
    digest: str = content_hash(key)
    return "mem_" + digest.removeprefix("sha256:")[:20]


def build_candidates(
    accepted: list[CandidateUnit],
    conversation: Conversation,
    *,
    provenance: Provenance,
    recorded_at: datetime,
    corrected_ids: frozenset[str] = frozenset(),
) -> list[MemoryCandidate]:
    """Turn accepted (already validated) units into memory candidate records.

    ``accepted`` must come from :func:`extractor.validation.validate_extraction`, which
    guarantees that every span is grounded and every parent id names another accepted unit.
    """
    ids = {unit.id: memory_id_for(conversation.id, unit) for unit in accepted}
    records = []
    for unit in accepted:
        message = conversation.message(unit.span.message_id)
        assert message is not None, "validated units always cite an existing message"
        origin = derived_origin(message, unit.origin)
        records.append(
            MemoryCandidate(
                memory_id=ids[unit.id],
                conversation_id=conversation.id,
                candidate_id=unit.id,
                content=unit.content,
                memory_type=unit.memory_type,
                kind=unit.kind,
                origin_kind=origin,
                verification_state=assign_verification(unit, origin, message),
                parent_memory_ids=[ids[p] for p in unit.parent_ids],
                evidence_ids=[unit.span.message_id],
                source_span=unit.span,
                span_corrected=unit.id in corrected_ids,
                requested_uses=list(dict.fromkeys(unit.requested_uses)),
                temporal=unit.temporal,
                uncertainty=unit.uncertainty,
                entities=unit.entities,
                response_commitment=message.commitment,
                speaker=message.name,
                observed_at=message.timestamp,
                recorded_at=recorded_at,
                provenance=provenance,
            )
        )
    return records
