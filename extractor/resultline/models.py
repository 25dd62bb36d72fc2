"""The JSON Schema of result line format 3 (``schemas/result.schema.json``), as Pydantic models.

The line's candidate and decision models are derived from :class:`MemoryCandidate` and
:class:`AdmissionDecision` (same fields, types and descriptions) less what the line holds once,
so the two cannot drift apart. :mod:`extractor.resultline.codec` writes and reads the lines;
these models only describe them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from ..candidates import MemoryCandidate
from ..decisions import AdmissionDecision, DeniedUse
from ..results import ConversationResult
from ..vocab import Capability, LifecycleState
from .codec import HOISTED_CANDIDATE_FIELDS, HOISTED_DECISION_FIELDS, OUTCOME_FIELDS


def _optional(field: FieldInfo, description: str) -> FieldInfo:
    """``field`` made optional, its default described (the reader fills it in)."""
    return FieldInfo.merge_field_infos(field, FieldInfo(default=None, description=description))


class LineOutcome(BaseModel):
    """A decision outcome, shared by every decision of the line that has it."""

    model_config = ConfigDict(extra="forbid")

    persist: bool
    lifecycle_state: LifecycleState
    allowed_uses: list[Capability] = Field(default_factory=list)
    forbidden_uses: list[Capability] = Field(default_factory=list)
    eligible_for_admission: bool = True
    flags: list[str] = Field(default_factory=list)
    rules_fired: list[str] = Field(
        default_factory=list,
        description="Ids of the rules that fired, in evaluation order; their definition hashes "
        "are the line's 'rules', their reasons in the policy (provenance.policy_id/version).",
    )
    parent_details: list[str] = Field(
        default_factory=list,
        description="Ids of fired rules whose detail, for every decision with this outcome, is "
        "'inherits from ' followed by the candidate's parent_memory_ids joined by ', ' (the "
        "rule carried every parent's obligations); not in the decision's 'rule_details'.",
    )


assert set(LineOutcome.model_fields) == {*OUTCOME_FIELDS, "parent_details"}

_DECISION_KEPT: dict[str, Any] = {
    name: (info.annotation, info)
    for name, info in AdmissionDecision.model_fields.items()
    if name not in HOISTED_DECISION_FIELDS and name not in OUTCOME_FIELDS
}
_DECISION_KEPT["as_of"] = (
    AdmissionDecision.model_fields["as_of"].annotation,
    _optional(AdmissionDecision.model_fields["as_of"],
              "The time current-state authority is judged at; when absent, the candidate's "
              "observed_at, else the line's recorded_at (the engine's default)."),
)  # fmt: skip
_DECISION_KEPT["inherited_from"] = (
    list[str] | None,
    Field(default=None, description="Ancestor memory ids whose unresolved obligations this "
          "decision carries; when absent, the candidate's parent_memory_ids, sorted."),
)  # fmt: skip


class _WholeDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    whole: AdmissionDecision = Field(
        description="A decision the line's shared tables cannot express (another policy, a "
        "rule id fired twice), written whole as in format 1."
    )


LineDecision: type[BaseModel] = create_model(
    "LineDecision",
    __config__=ConfigDict(extra="forbid"),
    __doc__="The candidate's admission decision: its own fields, and its outcome by index.",
    outcome=(int, Field(ge=0, description="Index of this decision's outcome in 'outcomes'.")),
    rule_details=(
        dict[str, str],
        Field(
            default_factory=dict,
            description="Rule id -> what about this candidate made it "
            "fire (e.g. which parents), for the fired rules that say.",
        ),
    ),
    **_DECISION_KEPT,
)

_CANDIDATE_KEPT: dict[str, Any] = {
    name: (info.annotation, info)
    for name, info in MemoryCandidate.model_fields.items()
    if name not in HOISTED_CANDIDATE_FIELDS
}
#: Candidate fields a line may leave out, and what they are then.
_ABSENT = {
    "evidence_ids": "the span's message.",
    "observed_at": "its first parent's observed_at (when that parent is earlier in the line), "
    "else null.",
    "content": "the event's own words, built from its span as the system builds them: "
    "'User stated: \"<quote>\"' (Assistant / System message for the other origins; a tool's "
    "events are written out).",
    "source_span": "the span of its first parent (earlier in the line).",
    "temporal": "a point in time at observed_at ({'kind': 'POINT_IN_TIME', 'valid_from': "
    "observed_at, 'valid_to': observed_at}) when observed_at is set, else every field at its "
    "default.",
    "uncertainty": "every field at its default.",
}
for _name, _meaning in _ABSENT.items():
    _info = MemoryCandidate.model_fields[_name]
    _annotation: Any = _info.annotation
    _CANDIDATE_KEPT[_name] = (
        _annotation | None,
        _optional(_info, f"{_info.description or ''} Absent: {_meaning}".strip()),
    )
for _name in HOISTED_CANDIDATE_FIELDS:  # present only when not the line's (not written here)
    _info = MemoryCandidate.model_fields[_name]
    _annotation = _info.annotation
    _CANDIDATE_KEPT[_name] = (
        _annotation | None,
        _optional(_info, f"Absent: the line's {_name} (provenance less the policy fields)."),
    )

LineCandidate: type[BaseModel] = create_model(
    "LineCandidate",
    __config__=ConfigDict(extra="forbid"),
    __doc__="A memory candidate without what the line holds once, with its decision.",
    decision=(LineDecision | _WholeDecision | None, Field(default=None)),
    **_CANDIDATE_KEPT,
)

_LINE_KEPT: dict[str, Any] = {
    name: (info.annotation, info)
    for name, info in ConversationResult.model_fields.items()
    if name not in ("candidates", "decisions")
}

ResultLine: type[BaseModel] = create_model(
    "ResultLine",
    __config__=ConfigDict(extra="forbid", title="ResultLine"),
    __doc__="One line of a results file (format 3): everything decided about one conversation.",
    candidates=(list[LineCandidate], Field(default_factory=list)),
    rules=(
        dict[str, str | None],
        Field(
            default_factory=dict,
            description="Rule id -> short hash of the rule's "
            "definition, for every rule that fired on this line (replay sees edits).",
        ),
    ),
    outcomes=(list[LineOutcome], Field(default_factory=list)),
    orphan_decisions=(
        list[AdmissionDecision],
        Field(default_factory=list, description="Decisions of no candidate of the line."),
    ),
    **_LINE_KEPT,
)

__all__ = ["DeniedUse", "LineCandidate", "LineDecision", "LineOutcome", "ResultLine"]
