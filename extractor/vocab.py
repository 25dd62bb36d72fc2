"""Closed vocabularies. Origin, verification, time, lifecycle and capabilities are separate axes.

The seed chapter's point is that one "trust" enum cannot answer five different questions, so each
question gets its own enum: where did this come from (:class:`Origin`), what is established about
it (:class:`VerificationState`), what persistence state it is in (:class:`LifecycleState`), and
for which purposes it may be consumed (:class:`Capability`).
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class Commitment(StrEnum):
    """The response-commitment decision an assistant message was released under."""

    PERMIT = "PERMIT"
    HOLD = "HOLD"


class CandidateKind(StrEnum):
    """Observation (something that happened: a statement, a tool result) vs proposition (a
    claim about the world that may or may not be true)."""

    OBSERVATION = "OBSERVATION"
    PROPOSITION = "PROPOSITION"


class MemoryType(StrEnum):
    ASSERTION_EVENT = "ASSERTION_EVENT"
    WORLD_PROPOSITION = "WORLD_PROPOSITION"
    PREFERENCE = "PREFERENCE"
    TOOL_OBSERVATION = "TOOL_OBSERVATION"
    EXTERNAL_SOURCE_CLAIM = "EXTERNAL_SOURCE_CLAIM"
    MODEL_INFERENCE = "MODEL_INFERENCE"
    PROCEDURE = "PROCEDURE"
    FAILURE_EXPERIENCE = "FAILURE_EXPERIENCE"
    INTERACTION_EVENT = "INTERACTION_EVENT"
    DERIVED_SUMMARY = "DERIVED_SUMMARY"


#: Memory types that describe an event the system itself witnessed.
OBSERVATION_TYPES = frozenset(
    {MemoryType.ASSERTION_EVENT, MemoryType.TOOL_OBSERVATION, MemoryType.INTERACTION_EVENT}
)


class Origin(StrEnum):
    USER = "USER"
    TOOL = "TOOL"
    EXTERNAL_SOURCE = "EXTERNAL_SOURCE"
    MODEL_OUTPUT = "MODEL_OUTPUT"
    MEMORY_DERIVED = "MEMORY_DERIVED"
    SYSTEM = "SYSTEM"


class VerificationState(StrEnum):
    """Assigned by the system, never by the extractor."""

    VERIFIED = "VERIFIED"
    VERIFIED_OBSERVATION_OF_EVENT = "VERIFIED_OBSERVATION_OF_EVENT"
    UNVERIFIED = "UNVERIFIED"
    INSUFFICIENT_EVIDENCE = "INSUFFICIENT_EVIDENCE"
    REFUTED = "REFUTED"
    CONFLICTING = "CONFLICTING"
    UNRESOLVED = "UNRESOLVED"
    NOT_VERIFIABLE = "NOT_VERIFIABLE"


class LifecycleState(StrEnum):
    EPHEMERAL = "EPHEMERAL"
    QUARANTINED = "QUARANTINED"
    PROVISIONAL = "PROVISIONAL"
    ACTIVE = "ACTIVE"
    ARCHIVED = "ARCHIVED"
    SUPERSEDED = "SUPERSEDED"
    REVOKED = "REVOKED"
    NEEDS_REVALIDATION = "NEEDS_REVALIDATION"


class Capability(StrEnum):
    PERSONALIZATION = "PERSONALIZATION"
    CONVERSATIONAL_CONTEXT = "CONVERSATIONAL_CONTEXT"
    FACTUAL_EVIDENCE = "FACTUAL_EVIDENCE"
    AUTONOMOUS_ACTION_JUSTIFICATION = "AUTONOMOUS_ACTION_JUSTIFICATION"
    REPAIR_PLANNING = "REPAIR_PLANNING"
    REGRESSION_TEST = "REGRESSION_TEST"
    PROCEDURE_IMITATION = "PROCEDURE_IMITATION"


class Scope(StrEnum):
    """The operations an API key of the HTTP service may perform."""

    EXTRACT = "extract"
    INGEST = "ingest"
    READ = "read"
    REVOKE = "revoke"
    ERASE = "erase"
    #: The stored record, ``why`` and lineage of a memory: for inspection, never for a purpose.
    AUDIT = "audit"


#: What a new API key may do unless told otherwise: no revocation, no erasure, no audit.
DEFAULT_SCOPES = (Scope.EXTRACT, Scope.INGEST, Scope.READ)


class TemporalKind(StrEnum):
    TIMELESS = "TIMELESS"
    CURRENT = "CURRENT"
    PAST = "PAST"
    FUTURE = "FUTURE"
    POINT_IN_TIME = "POINT_IN_TIME"
    UNKNOWN = "UNKNOWN"
