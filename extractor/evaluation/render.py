"""Plain-text tables and JSON summaries of evaluation reports (what ``extractor eval`` prints)."""

from __future__ import annotations

from typing import Any

from ..vocab import MemoryType
from .metrics import PRF, Ratio
from .msc import MscReport, TurnScore
from .runner import EvalReport
from .safety import SAFETY_FIGURES


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        return "  ".join([first, *(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))])

    return [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def _prf_row(name: str, prf: PRF) -> list[str]:
    return [
        name,
        str(prf.gold),
        str(prf.found),
        pct(prf.recall),
        str(prf.predictions),
        str(prf.correct_predictions),
        pct(prf.precision),
        pct(prf.f1),
    ]


def _ratio(r: Ratio) -> str:
    return f"{pct(r.value)} ({r.numerator}/{r.denominator})"


def render_report(report: EvalReport) -> str:
    """Per-type precision/recall/F1, the other quality figures, and the safety table."""
    q = report.quality
    rows = [_prf_row(t.value, q.per_type[t]) for t in MemoryType if t in q.per_type]
    rows.append(_prf_row("overall", q.overall))
    header = ["memory type", "gold", "found", "recall", "predicted", "correct", "precision", "F1"]
    lines = [f"model {report.model} on {report.evalset} ({len(report.cases)} conversations)", ""]
    lines += _table(header, rows)
    spans = q.spans
    lines += [
        "",
        f"span exactness (mean IoU)   {pct(spans.mean_iou)} over {spans.matched} matches",
        f"span exact (trimmed)        {pct(spans.exact_rate)}",
        f"hedge preservation          {_ratio(q.hedge_preserved)}",
        f"negation preservation       {_ratio(q.negation_preserved)}",
        f"temporal accuracy           {_ratio(q.temporal_correct)}",
        f"third-party data flagged    {_ratio(q.third_party_flagged)}",
        f"forbidden text extracted    {len(q.forbidden)}",
        f"conversations failed        {len(report.failures)}",
        "",
    ]
    counts = report.safety.counts()
    lines += _table(["safety figure (must be 0)", "count"], [[f, str(counts[f])] for f in counts])
    for incident in report.safety.incidents:
        lines.append(f"  ! {incident.figure}: {incident.conversation_id}: {incident.detail}")
    return "\n".join(lines)


def report_json(report: EvalReport) -> dict[str, Any]:
    """A JSON summary: figures, incidents, failures and what each conversation missed."""
    q = report.quality
    return {
        "model": report.model,
        "evalset": report.evalset,
        "conversations": len(report.cases),
        "per_type": {t.value: p.model_dump() for t, p in q.per_type.items()},
        "overall": q.overall.model_dump(),
        "span_mean_iou": q.spans.mean_iou,
        "span_exact_rate": q.spans.exact_rate,
        "hedge_preservation": q.hedge_preserved.model_dump(),
        "negation_preservation": q.negation_preserved.model_dump(),
        "temporal_accuracy": q.temporal_correct.model_dump(),
        "third_party_flagged": q.third_party_flagged.model_dump(),
        "forbidden_extracted": [f.model_dump(mode="json") for f in q.forbidden],
        "safety": report.safety.counts(),
        "incidents": [i.model_dump() for i in report.safety.incidents],
        "failures": {c.conversation_id: c.error for c in report.failures},
        "missed": {c.conversation_id: c.quality.missed for c in report.cases if c.quality.missed},
    }


def _turn_row(row: TurnScore) -> list[str]:
    return [
        row.name,
        pct(row.precision),
        pct(row.recall),
        pct(row.f1),
        str(row.tp),
        str(row.fp),
        str(row.fn),
        str(row.tn),
        "-" if row.overlap is None else f"{row.overlap:.3f}",
    ]


def render_msc(report: MscReport) -> str:
    header = ["MSC turn level", "precision", "recall", "F1", "TP", "FP", "FN", "TN", "overlap"]
    lines = [
        f"MSC: {report.conversations} conversations, {report.annotated_turns} annotated user "
        f"turns, {report.positive_turns} with a gold fact, {len(report.failures)} failed",
        "",
    ]
    lines += _table(header, [_turn_row(r) for r in report.rows])
    if report.margins:
        lines += ["", f"Margin of the model, points (95% interval: paired bootstrap over "
                      f"conversations, {report.margins[0].resamples} resamples):"]  # fmt: skip
        for m in report.margins:
            lines.append(
                f"  over {m.baseline.removeprefix('baseline: ')}: precision {m.precision:+.1f} "
                f"({m.precision_low:+.1f} to {m.precision_high:+.1f}), F1 {m.f1:+.1f} "
                f"({m.f1_low:+.1f} to {m.f1_high:+.1f})"
            )
    return "\n".join(lines)


def msc_json(report: MscReport) -> dict[str, Any]:
    return {
        **report.model_dump(exclude={"rows"}),
        "rows": [
            {
                **r.model_dump(),
                "precision": r.precision,
                "recall": r.recall,
                "f1": r.f1,
                "overlap": r.overlap,
            }
            for r in report.rows
        ],
    }


__all__ = ["SAFETY_FIGURES", "msc_json", "pct", "render_msc", "render_report", "report_json"]
