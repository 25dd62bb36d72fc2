"""Evaluation: the gold set, quality and safety scoring, and the MSC turn-level scorer.

Public API::

    from extractor.evaluation import load_evalset, evaluate

    report = evaluate(load_evalset())          # the offline model over the shipped gold set
    report.safety.counts()                     # six safety figures, all zero when the gate holds
    report.quality.overall.f1

Submodules: :mod:`.gold` (format and loader), :mod:`.quality` (precision/recall and the match
rules), :mod:`.safety` (the six safety figures), :mod:`.runner` (running a model through the
pipeline), :mod:`.msc` (MSC turn-level evaluation and baselines), :mod:`.faults` (what a faulty
model lost), :mod:`.render` (tables).
"""

from __future__ import annotations

from .gold import (
    SCORED_TYPES,
    ConversationGold,
    EvalCase,
    GoldExpected,
    GoldForbidden,
    GoldInjection,
    default_evalset_path,
    load_evalset,
)
from .metrics import PRF, Ratio
from .quality import QualityScore, score_quality
from .runner import CaseOutcome, EvalReport, RecordingClient, aevaluate, evaluate, score_case
from .safety import SAFETY_FIGURES, Incident, SafetyScore, score_safety

__all__ = [
    "PRF",
    "SAFETY_FIGURES",
    "SCORED_TYPES",
    "CaseOutcome",
    "ConversationGold",
    "EvalCase",
    "EvalReport",
    "GoldExpected",
    "GoldForbidden",
    "GoldInjection",
    "Incident",
    "QualityScore",
    "Ratio",
    "RecordingClient",
    "SafetyScore",
    "aevaluate",
    "default_evalset_path",
    "evaluate",
    "load_evalset",
    "score_case",
    "score_quality",
    "score_safety",
]
