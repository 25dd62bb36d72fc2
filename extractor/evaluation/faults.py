"""Where recall went: compare a run under a faulty model with a clean run of the same gold set.

A gold item found in the clean run but not in the faulty one is *lost*. It is lost **by the
model** when the faulty run's raw output holds no clean proposal for it -- none whose span is
grounded, whose origin fits the speaker, which claims no verification, and whose parents are
clean too. It is lost **by the gate** when such a clean proposal existed and was still not
accepted. A gate that is strict only where it must be loses nothing by itself: ``by_gate`` is
zero, and every drop in recall is information the model really did not deliver.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..conversation import Conversation
from ..vocab import MemoryType
from .gold import EvalCase, GoldExpected, Range
from .runner import EvalReport
from .safety import ROLE_ORIGINS, claims_verification, raw_candidates


class LostItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    gold_index: int
    memory_type: MemoryType
    quote: str
    by_gate: bool


class RecallLoss(BaseModel):
    model_config = ConfigDict(extra="forbid")

    found_clean: int
    found_faulty: int
    lost: list[LostItem] = Field(default_factory=list)

    @property
    def by_gate(self) -> int:
        return sum(item.by_gate for item in self.lost)

    @property
    def by_model(self) -> int:
        return len(self.lost) - self.by_gate


def recall_loss(cases: list[EvalCase], clean: EvalReport, faulty: EvalReport) -> RecallLoss:
    """Classify every gold item the faulty run lost relative to the clean run."""
    clean_found = {c.conversation_id: set(c.quality.found) for c in clean.cases}
    faulty_by_id = {c.conversation_id: c for c in faulty.cases}
    loss = RecallLoss(
        found_clean=sum(len(s) for s in clean_found.values()),
        found_faulty=sum(len(c.quality.found) for c in faulty.cases),
    )
    for case in cases:
        outcome = faulty_by_id[case.id]
        raws = raw_candidates(outcome.raw_outputs)
        for index in sorted(clean_found.get(case.id, set()) - set(outcome.quality.found)):
            item = case.gold.expected[index]
            loss.lost.append(
                LostItem(
                    conversation_id=case.id,
                    gold_index=index,
                    memory_type=item.memory_type,
                    quote=item.quote,
                    by_gate=_clean_proposal_exists(
                        raws, item, case.expected_ranges[index], case.conversation
                    ),
                )
            )
    return loss


def _clean_proposal_exists(
    raws: list[Mapping[str, Any]],
    item: GoldExpected,
    ranges: tuple[Range, ...],
    conversation: Conversation,
) -> bool:
    by_id = {r.get("id"): r for r in raws if isinstance(r.get("id"), str)}
    return any(
        _covers(raw, item, ranges, conversation) and _clean(raw, conversation, by_id, set())
        for raw in raws
    )


def _located(raw: Mapping[str, Any], conversation: Conversation) -> tuple[str, int, int] | None:
    span = raw.get("span")
    if not isinstance(span, Mapping):
        return None
    mid, quote = span.get("message_id"), span.get("quote")
    message = conversation.message(mid) if isinstance(mid, str) else None
    if message is None or not isinstance(quote, str) or not quote:
        return None
    start = message.text.find(quote)
    return None if start < 0 else (message.id or "", start, start + len(quote))


def _covers(
    raw: Mapping[str, Any], item: GoldExpected, ranges: tuple[Range, ...], conv: Conversation
) -> bool:
    where = _located(raw, conv)
    if where is None or raw.get("memory_type") not in {t.value for t in item.types}:
        return False
    return any(r.covered_by(*where) for r in ranges)


def _clean(
    raw: Mapping[str, Any],
    conversation: Conversation,
    by_id: Mapping[Any, Mapping[str, Any]],
    seen: set[int],
) -> bool:
    if id(raw) in seen:
        return False
    seen.add(id(raw))
    where = _located(raw, conversation)
    if where is None or claims_verification(raw):
        return False
    message = conversation.message(where[0])
    if message is None or raw.get("origin") not in {o.value for o in ROLE_ORIGINS[message.role]}:
        return False
    parents = raw.get("parent_ids") or []
    return all(
        p in by_id and _clean(by_id[p], conversation, by_id, seen)
        for p in parents
        if isinstance(p, str)
    )
