"""Quality scoring of one conversation's accepted candidates against its gold annotations.

A *prediction* is an accepted candidate (a :class:`~extractor.candidates.MemoryCandidate` in the
result) of a scored memory type (every type but ``ASSERTION_EVENT`` and ``INTERACTION_EVENT``,
which every statement produces). A prediction *matches* a gold item when its memory type is the
item's type (or one of its ``accept_types``) and its span covers the gold quote -- the main
location or any ``also`` location -- in the same message.

* precision: predictions that match a required gold item / predictions, where predictions that
  match only optional items are left out of both counts;
* recall: required gold items matched by at least one prediction / required gold items;
* span exactness, hedge, negation and temporal figures are computed on each found gold item's
  best match (the matching prediction with the tightest span).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from ..candidates import MemoryCandidate
from ..decisions import AdmissionDecision
from ..results import ConversationResult
from ..vocab import MemoryType
from .gold import UNSCORED_TYPES, EvalCase, GoldExpected, GoldTemporal, Range
from .metrics import PRF, Ratio

THIRD_PARTY_FLAG = "THIRD_PARTY_PERSONAL_DATA"

NEGATION_CUES = re.compile(
    r"(n't|\b(not|no|never|none|nothing|nobody|without|neither|nor|non|kein\w*|nicht|pas|"
    r"jamais|nunca|ningun\w*|ne)\b|ない|ません)",
    re.IGNORECASE,
)
_EDGE = " \t\n.,;:!?\"'()[]"


class SpanStats(BaseModel):
    """Over found gold items: mean character IoU of the best match, and exact spans."""

    model_config = ConfigDict(extra="forbid")

    matched: int = 0
    iou_sum: float = 0.0
    exact: int = 0

    @property
    def mean_iou(self) -> float | None:
        return self.iou_sum / self.matched if self.matched else None

    @property
    def exact_rate(self) -> float | None:
        return self.exact / self.matched if self.matched else None

    def __add__(self, other: SpanStats) -> SpanStats:
        return SpanStats(
            matched=self.matched + other.matched,
            iou_sum=self.iou_sum + other.iou_sum,
            exact=self.exact + other.exact,
        )


class ForbiddenHit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    memory_id: str
    memory_type: MemoryType
    quote: str
    reason: str


class QualityScore(BaseModel):
    """Everything the quality scorer counts for one conversation (summable)."""

    model_config = ConfigDict(extra="forbid")

    per_type: dict[MemoryType, PRF] = Field(default_factory=dict)
    spans: SpanStats = Field(default_factory=SpanStats)
    hedge_preserved: Ratio = Field(default_factory=Ratio)
    negation_preserved: Ratio = Field(default_factory=Ratio)
    temporal_correct: Ratio = Field(default_factory=Ratio)
    third_party_flagged: Ratio = Field(default_factory=Ratio)
    forbidden: list[ForbiddenHit] = Field(default_factory=list)
    found: list[int] = Field(default_factory=list, description="Indices of found gold items.")
    missed: list[int] = Field(default_factory=list, description="Required items not found.")

    @property
    def overall(self) -> PRF:
        return sum(self.per_type.values(), PRF())


def matches(pred: MemoryCandidate, item: GoldExpected, ranges: tuple[Range, ...]) -> bool:
    if pred.memory_type not in item.types:
        return False
    span = pred.source_span
    return any(r.covered_by(span.message_id, span.start, span.end) for r in ranges)


def predictions(result: ConversationResult | None) -> list[MemoryCandidate]:
    if result is None:
        return []
    return [c for c in result.candidates if c.memory_type not in UNSCORED_TYPES]


def score_quality(case: EvalCase, result: ConversationResult | None) -> QualityScore:
    """Score one conversation; ``result=None`` (the run failed) finds nothing."""
    score = QualityScore()
    preds = predictions(result)
    decisions = {d.memory_id: d for d in result.decisions} if result else {}
    items = list(zip(case.gold.expected, case.expected_ranges, strict=True))
    for pred in preds:
        hits = [item for item, ranges in items if matches(pred, item, ranges)]
        if hits and all(item.optional for item in hits):
            continue
        prf = score.per_type.setdefault(pred.memory_type, PRF())
        prf.predictions += 1
        prf.correct_predictions += bool(hits)
        if not hits:
            score.forbidden.extend(_forbidden_hits(case, pred))
    for index, (item, ranges) in enumerate(items):
        best = _best_match([p for p in preds if matches(p, item, ranges)])
        if not item.optional:
            prf = score.per_type.setdefault(item.memory_type, PRF())
            prf.gold += 1
            prf.found += best is not None
            if best is None:
                score.missed.append(index)
        if best is not None:
            score.found.append(index)
            _score_match(score, item, ranges, best, decisions.get(best.memory_id))
    return score


def _best_match(candidates: list[MemoryCandidate]) -> MemoryCandidate | None:
    def width(c: MemoryCandidate) -> int:
        return int(c.source_span.end - c.source_span.start)

    return min(candidates, key=width, default=None)


def _score_match(
    score: QualityScore,
    item: GoldExpected,
    ranges: tuple[Range, ...],
    pred: MemoryCandidate,
    decision: AdmissionDecision | None,
) -> None:
    span = pred.source_span
    gold = next(r for r in ranges if r.covered_by(span.message_id, span.start, span.end))
    gold_quote = item.quote if gold == ranges[0] else item.also[ranges.index(gold) - 1].quote
    score.spans.matched += 1
    score.spans.iou_sum += (gold.end - gold.start) / max(span.end - span.start, 1)
    score.spans.exact += span.quote.strip(_EDGE) == gold_quote.strip(_EDGE)
    if item.hedged or item.reported_by:
        score.hedge_preserved.add(hedge_kept(item, pred))
    if item.negated:
        score.negation_preserved.add(bool(NEGATION_CUES.search(pred.content)))
    if item.temporal is not None:
        score.temporal_correct.add(temporal_agrees(item.temporal, pred))
    if item.third_party:
        score.third_party_flagged.add(decision is not None and THIRD_PARTY_FLAG in decision.flags)


def hedge_kept(item: GoldExpected, pred: MemoryCandidate) -> bool:
    """A hedged item keeps hedge words; reported speech keeps who reported it."""
    hedged = not item.hedged or bool(pred.uncertainty.hedges)
    reported = not item.reported_by or bool(pred.uncertainty.reported_by)
    return hedged and reported


def temporal_agrees(gold: GoldTemporal, pred: MemoryCandidate) -> bool:
    """Every field the gold gives equals the prediction's (ISO strings compared exactly)."""
    t = pred.temporal
    return (
        (gold.kind is None or t.kind == gold.kind)
        and (gold.valid_from is None or t.valid_from == gold.valid_from)
        and (gold.valid_to is None or t.valid_to == gold.valid_to)
    )


def _forbidden_hits(case: EvalCase, pred: MemoryCandidate) -> list[ForbiddenHit]:
    span = pred.source_span
    return [
        ForbiddenHit(
            memory_id=pred.memory_id,
            memory_type=pred.memory_type,
            quote=span.quote,
            reason=item.reason,
        )
        for item, r in zip(case.gold.forbidden, case.forbidden_ranges, strict=True)
        if pred.memory_type in item.types and r.overlaps(span.message_id, span.start, span.end)
    ]


def add_scores(a: QualityScore, b: QualityScore) -> QualityScore:
    """Sum two scores (the item index lists are per conversation and are not carried over)."""
    per_type = dict(a.per_type)
    for t, prf in b.per_type.items():
        per_type[t] = per_type.get(t, PRF()) + prf
    return QualityScore(
        per_type=per_type,
        spans=a.spans + b.spans,
        hedge_preserved=a.hedge_preserved + b.hedge_preserved,
        negation_preserved=a.negation_preserved + b.negation_preserved,
        temporal_correct=a.temporal_correct + b.temporal_correct,
        third_party_flagged=a.third_party_flagged + b.third_party_flagged,
        forbidden=[*a.forbidden, *b.forbidden],
    )
