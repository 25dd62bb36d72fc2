"""What the extractor (an LLM or the offline model) must return: candidate units, nothing more.

This is the model's output contract, and it is deliberately narrow. There is no field in which
the model could certify anything: verification state, lifecycle and capabilities are assigned
later by the system (:mod:`extractor.candidates`, :mod:`extractor.admission`). ``origin`` is the
model's *view* of where a span came from; validation checks it against who actually spoke.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from .vocab import CandidateKind, Capability, MemoryType, Origin, TemporalKind


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceSpan(_Strict):
    """Exact source span: ``quote == message.text[start:end]`` (code-point offsets)."""

    message_id: str = Field(description="Id of the message that holds the quote.")
    quote: str = Field(min_length=1, description="Verbatim text copied from that message.")
    start: int = Field(ge=0, description="Code-point offset where the quote starts.")
    end: int = Field(ge=0, description="Code-point offset just past the quote.")


class TemporalScope(_Strict):
    """When the proposition holds, as stated and, where possible, resolved to ISO 8601."""

    expression: str | None = Field(
        default=None, description="The time expression as stated, e.g. 'since March'."
    )
    kind: TemporalKind = Field(default=TemporalKind.UNKNOWN)
    valid_from: str | None = Field(
        default=None, description="ISO 8601 date or datetime; partial dates allowed ('2024-03')."
    )
    valid_to: str | None = Field(default=None, description="ISO 8601, as valid_from.")


class Uncertainty(_Strict):
    """The speaker's uncertainty, kept explicit instead of being smoothed away."""

    hedges: list[str] = Field(
        default_factory=list,
        description="Hedge words as they appear in the quote ('I think', 'approximately').",
    )
    reported_by: str | None = Field(
        default=None, description="For reported speech: who the speaker says said it."
    )


class Entity(_Strict):
    name: str = Field(min_length=1)
    type: str = Field(default="OTHER", description="PERSON, ORGANIZATION, PLACE, DATE, ...")


class CandidateUnit(_Strict):
    """One candidate memory unit proposed by the extractor."""

    id: str = Field(min_length=1, description="Unique within this output, e.g. 'c1'.")
    span: SourceSpan
    kind: CandidateKind
    memory_type: MemoryType
    content: str = Field(min_length=1, description="Normalized, self-contained content.")
    origin: Origin = Field(description="Who produced the quoted text, as the extractor sees it.")
    temporal: TemporalScope = Field(default_factory=TemporalScope)
    entities: list[Entity] = Field(default_factory=list)
    parent_ids: list[str] = Field(
        default_factory=list,
        description="Ids of other candidates in this output this one derives from.",
    )
    requested_uses: list[Capability] = Field(default_factory=list)
    uncertainty: Uncertainty = Field(default_factory=Uncertainty)


class ExtractionOutput(_Strict):
    """The whole extraction for one conversation (or one chunk of it)."""

    candidates: list[CandidateUnit] = Field(default_factory=list)
