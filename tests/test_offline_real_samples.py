"""The labelled real-chat samples (evalsets/offline-real) are complete, and the evaluation page
reports what their labels give: a relabelled line or a new round changes the page or fails here."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "evalsets" / "offline-real"
_spec = importlib.util.spec_from_file_location("offline_real_sample", SAMPLES / "sample.py")
assert _spec is not None and _spec.loader is not None
_sample = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_sample)
RUBRIC = set(_sample.LABELS)  # the labels sample.py rates by, not a second copy
ROUNDS = sorted(SAMPLES.glob("round*.jsonl"))


@pytest.mark.parametrize("path", ROUNDS, ids=lambda p: p.stem)
def test_every_candidate_of_a_round_has_one_rubric_label(path: Path) -> None:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 300
    assert len({r["key"] for r in rows}) == 300
    assert {r["label"] for r in rows} <= RUBRIC
    per_set: dict[str, int] = {}
    for r in rows:
        per_set[r["dataset"]] = per_set.get(r["dataset"], 0) + 1
    assert per_set == {"locomo": 75, "memorybank": 75, "persona-chat": 75, "hh-rlhf": 75}
    assert len({r["model"] for r in rows}) == 1


@pytest.mark.parametrize("name", ["round3", "round4", "round5", "round6"])
def test_the_evaluation_page_reports_the_rate_the_labels_give(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `python3 sample.py rate <round>`, in this process (a new interpreter costs ~1 s of CPU)
    argv = [str(SAMPLES / "sample.py"), "rate", str(SAMPLES / f"{name}.jsonl")]
    monkeypatch.setattr(sys, "argv", argv)
    _sample.main()
    shown = capsys.readouterr().out
    overall = re.search(r"^all\s+(\d+)/(\d+)\s+([\d.]+)%\s+\(95% ([\d.]+)-([\d.]+)\)", shown, re.M)
    assert overall, shown
    k, n, rate, low, high = overall.groups()
    page = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    assert f"{k}/{n} = {rate}% [{low}, {high}]" in page
