"""What a run writes: one :class:`ConversationResult` line per conversation processed, and one
:class:`FailureRecord` line per conversation that could not be processed.

Both are public contracts (``schemas/result.schema.json``, ``schemas/failure.schema.json``):
every input conversation ends up exactly once in one of the two files.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ._version import SCHEMA_VERSION
from .candidates import MemoryCandidate
from .clients.base import AttemptRecord
from .content import redact
from .decisions import AdmissionDecision
from .hashing import writable
from .proposal.events import ContentCorrection
from .usage import Usage
from .validation import Rejection, SpanCorrection

TENANT_HELP = (
    "Tenant the conversation belongs to: the caller's --tenant, else metadata.tenant, else null."
)
SUBJECT_HELP = (
    "Whose memory the candidates are (the user): the caller's --subject, else "
    "metadata.user_id, else null."
)

Stage = Literal["load", "extract", "validate", "admit", "record"]


class InputRef(BaseModel):
    """Where a conversation came from, so a user can find it again."""

    model_config = ConfigDict(extra="forbid")

    source: str | None = None
    line: int | None = None
    field: str | None = None


class RunProvenance(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str
    prompt_id: str
    prompt_version: str
    prompt_hash: str
    schema_version: str = Field(
        default=SCHEMA_VERSION,
        description="Schema version of the records. A result line (format 2, 3) leaves it out "
        "when it is the line's own schema_version.",
    )
    policy_id: str
    policy_version: str
    extractor_version: str


class Timings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    extract_ms: float = 0.0
    validate_ms: float = 0.0
    admit_ms: float = 0.0
    total_ms: float = 0.0


class ConversationResult(BaseModel):
    """Everything decided about one conversation."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = SCHEMA_VERSION
    conversation_id: str
    conversation_hash: str = Field(description="Content hash of the conversation (resume key).")
    tenant: str | None = Field(default=None, description=TENANT_HELP)
    subject: str | None = Field(default=None, description=SUBJECT_HELP)
    input: InputRef = Field(default_factory=InputRef)
    candidates: list[MemoryCandidate] = Field(default_factory=list)
    decisions: list[AdmissionDecision] = Field(default_factory=list)
    rejections: list[Rejection] = Field(default_factory=list)
    rejections_omitted: dict[str, int] = Field(
        default_factory=dict,
        description="Rejections not listed one by one, by code: past the candidate limit only "
        "the first few are kept as a sample, the rest are counted here.",
    )
    corrections: list[SpanCorrection] = Field(default_factory=list)
    content_corrections: list[ContentCorrection] = Field(
        default_factory=list,
        description="Event contents the model worded otherwise, replaced by the system's.",
    )
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 1
    failed_attempts: list[AttemptRecord] = Field(default_factory=list)
    chunks: int = 1
    dropped_by_model: int = Field(
        default=0,
        description="Candidates the model left out of its answers to stay within the candidate "
        "limit per model call (--limit-candidates); they are in no list of this line.",
    )
    cached: bool = False
    timings: Timings = Field(default_factory=Timings)
    provenance: RunProvenance
    recorded_at: datetime


class FailureRecord(BaseModel):
    """A conversation that could not be processed, with the stage and the reason."""

    model_config = ConfigDict(extra="forbid")

    schema_version: str = SCHEMA_VERSION
    conversation_id: str | None
    conversation_hash: str | None = None
    tenant: str | None = Field(default=None, description=TENANT_HELP)
    subject: str | None = Field(default=None, description=SUBJECT_HELP)
    input: InputRef
    stage: Stage
    error_code: str
    error: str
    attempts: int = Field(default=0, description="Model answers asked for before it failed.")
    usage: Usage = Field(
        default_factory=Usage, description="Tokens the failed attempts spent (they are billed)."
    )
    raw_output: str | None = Field(
        default=None,
        description="The model's last answer, when there was one, with its secrets redacted; "
        "its beginning when raw_output_chars is set.",
    )
    raw_output_chars: int | None = Field(
        default=None, description="Length of the whole (redacted) raw output, when it was cut."
    )
    raw_output_hash: str | None = Field(
        default=None, description="sha256 of the whole (redacted) raw output, when it was cut."
    )
    recorded_at: datetime

    @field_validator("error", "raw_output")
    @classmethod
    def _writable(cls, value: str | None) -> str | None:
        """Error texts can quote the model (a refusal, a server message); keep them writable,
        and never keep a secret they hold verbatim (:func:`~extractor.content.redact`)."""
        result: str | None = writable(value if value is None else redact(value))
        return result
