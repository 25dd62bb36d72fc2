"""What the extractor (an LLM or the offline model) must return: candidate units, nothing more.

This is the model's output contract, and it is deliberately narrow: :class:`ExtractionOutput`
(output format 2) holds :class:`ProposedCandidate` items, which carry only what only a model can
provide; :class:`CandidateUnit` is the full unit the system expands each of them into
(:mod:`extractor.proposal`) and the gate validates (format 1, still read as input). There is
no field in which the model could certify anything: verification state, lifecycle and
capabilities are assigned later by the system (:mod:`extractor.candidates`,
:mod:`extractor.admission`). ``origin`` is the model's *view* of where a span came from;
validation checks it against who actually spoke.
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


class ProposedCandidate(_Strict):
    """One candidate as a model proposes it (output format 2): only what only a model can say.

    The system builds the rest (:mod:`extractor.proposal`): the assertion event behind a user's
    claim and the tool observation behind a tool's, the content of every event, the offsets of a
    quote that occurs once, the kind, origin and requested uses of each type, and positional ids.
    The expanded candidate then passes the same gate as one the model wrote out in full.
    """

    id: str | None = Field(
        default=None,
        min_length=1,
        description="Only when parent_ids of another candidate names it; default 'c<position>'.",
    )
    message_id: str = Field(description="Id of the message that holds the quote.")
    quote: str = Field(min_length=1, description="Verbatim text copied from that message.")
    start: int | None = Field(
        default=None, ge=0, description="Only when the quote occurs more than once in its message."
    )
    memory_type: MemoryType | None = Field(
        default=None,
        description="Default: WORLD_PROPOSITION for user text, MODEL_INFERENCE for assistant "
        "text, TOOL_OBSERVATION for tool text.",
    )
    kind: CandidateKind | None = Field(default=None, description="Default: from memory_type.")
    content: str | None = Field(
        default=None,
        min_length=1,
        description="Normalized, self-contained content; none for events (the system's).",
    )
    origin: Origin | None = Field(default=None, description="Default: from the speaker's role.")
    temporal: TemporalScope | None = None
    entities: list[Entity] = Field(default_factory=list)
    parent_ids: list[str] = Field(default_factory=list)
    requested_uses: list[Capability] | None = Field(
        default=None, description="Default: the uses of the memory type."
    )
    uncertainty: Uncertainty | None = None


class ExtractionOutput(_Strict):
    """The whole extraction for one conversation (or one chunk of it), output format 2."""

    candidates: list[ProposedCandidate] = Field(default_factory=list)
