"""What the ledger's readers return: typed records rebuilt from the stored canonical JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..candidates import MemoryCandidate
from ..decisions import AdmissionDecision
from ..results import ConversationResult, FailureRecord, RunProvenance
from ..validation import Rejection


@dataclass(frozen=True)
class RunRecord:
    """One run as ``extractor ledger list`` shows it, with row counts."""

    run_id: str
    started_at: str
    finished_at: str | None
    status: str
    provenance: RunProvenance
    settings: dict[str, Any]
    summary: dict[str, Any] | None
    conversations: int = 0
    candidates: int = 0
    persisted: int = 0
    rejections: int = 0
    failures: int = 0


@dataclass(frozen=True)
class MemoryRecord:
    """A candidate as one run recorded it, with the decision that gave it its capabilities."""

    run_id: str
    result_key: str
    candidate: MemoryCandidate
    decision: AdmissionDecision | None
    evidence_ref: str
    evidence_hash: str


@dataclass(frozen=True)
class RecordedResult:
    run_id: str
    result_key: str
    result: ConversationResult


@dataclass(frozen=True)
class RecordedFailure:
    run_id: str
    failure_key: str
    failure: FailureRecord


@dataclass(frozen=True)
class ConversationHistory:
    """Everything the ledger holds about one conversation id, across runs."""

    conversation_id: str
    results: list[RecordedResult] = field(default_factory=list)
    failures: list[RecordedFailure] = field(default_factory=list)

    @property
    def rejections(self) -> list[Rejection]:
        return [r for rec in self.results for r in rec.result.rejections]

    def __bool__(self) -> bool:
        return bool(self.results or self.failures)
