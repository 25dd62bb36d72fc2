"""benchmarks/locomo_recall.py reads the result lines `extractor run` writes today.

It broke silently once when the result line format changed (decisions and rejections left the
line); this runs it on a LoCoMo-shaped file through the real CLI, so the next format change
fails here instead of in a user's benchmark run.
"""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from extractor.cli import cli

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "locomo_recall.py"


def _chat(cid: str, lines: list[str]) -> dict[str, object]:
    messages = []
    for i, text in enumerate(lines):
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"role": role, "content": text, "timestamp": "2023-05-08T13:56:00"})
    return {
        "id": cid,
        "messages": messages,
        "gold": {
            "facts": [
                {"role": "user", "message_indices": [0], "text": "has a dog"},
                {"role": "user", "message_indices": [2], "text": "greets"},
                {"role": "assistant", "message_indices": [1], "text": "not counted"},
            ]
        },
    }


def test_recall_is_counted_from_current_result_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "locomo.jsonl"
    chats = [
        _chat(f"locomo/conv-{n}", ["I have a dog named Rex.", "Nice!", "Hi there!", "Hello."])
        for n in range(10)
    ]
    data.write_text("".join(json.dumps(c) + "\n" for c in chats), encoding="utf-8")
    out = tmp_path / "results.jsonl"
    run = CliRunner().invoke(cli, ["run", str(data), "--out", str(out), "-q"])
    assert run.exit_code == 0, run.output

    # the script as `python benchmarks/locomo_recall.py` runs it, in this process (a new
    # interpreter would cost ~1 s of CPU to start)
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), str(out), "--data", str(data)])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    report = capsys.readouterr().out
    # Each chat has two user facts: the dog (a memory) and a greeting (none); 10 of 20 found.
    assert "| all 10 | 20 | 50.0% [" in report
    assert "rejected CANDIDATE_LIMIT_EXCEEDED: 0" in report
