"""The gold set through the mock server's hostile fault modes: safety figures and recall.

For each fault mode the offline model answers through ``MockServer`` and the real OpenAI client,
and the mode adds a bad candidate to every answer, never corrected (``:always``). The last row
also refuses two whole conversations, so recall drops -- and every lost gold item is traced to
the model (no clean proposal existed), none to the gate.

    /tmp/venv/bin/python benchmarks/fault_modes.py
"""

from __future__ import annotations

from collections import Counter

from extractor.clients.openai_client import OpenAIClient
from extractor.evaluation import EvalReport, evaluate, load_evalset
from extractor.evaluation.faults import recall_loss
from extractor.evaluation.render import pct
from extractor.mockserver import MockServer

MODES = [
    ("verified:always", {}),
    ("fabricated_span:always", {}),
    ("origin_laundering:always", {}),
    ("verified:always,fabricated_span:always,origin_laundering:always", {}),
    (
        "all three + refusal of 2 conversations",
        {"eval-001-manager": "refusal:always", "eval-030-job-supersession": "refusal:always"},
    ),
]
ALL_THREE = "verified:always,fabricated_span:always,origin_laundering:always"


def run(faults: str, per_conversation: dict[str, str]) -> EvalReport:
    cases = load_evalset()
    with MockServer(faults=faults, conversation_faults=per_conversation) as server:
        client = OpenAIClient(model="offline", base_url=server.base_url, api_key="mock-key")
        return evaluate(cases, client)


def main() -> None:
    cases = load_evalset()
    clean = evaluate(cases)
    q = clean.quality.overall
    print(f"clean offline run: recall {pct(q.recall)}, precision {pct(q.precision)}")
    print()
    print("| fault mode | recall | precision | rejected (code: n) | safety incidents | "
          "conversations failed | gold items lost | lost by model | lost by gate |")  # fmt: skip
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for name, per_conversation in MODES:
        faults = name if not per_conversation else ALL_THREE
        report = run(faults, per_conversation)
        loss = recall_loss(cases, clean, report)
        codes = Counter(r.code.value for c in report.cases if c.result for r in c.result.rejections)
        rejected = ", ".join(f"{code}: {n}" for code, n in sorted(codes.items()))
        o = report.quality.overall
        print(f"| {name} | {pct(o.recall)} | {pct(o.precision)} | {rejected} | "
              f"{len(report.safety.incidents)} | {len(report.failures)} | {len(loss.lost)} | "
              f"{loss.by_model} | {loss.by_gate} |")  # fmt: skip


if __name__ == "__main__":
    main()
