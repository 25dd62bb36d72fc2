"""The ledger stores each record once: a result row refers to its candidate, decision and
rejection rows, and reading it back rebuilds exactly the result line that was written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import read_lines
from test_candidate_limit import Flood

import extractor.cli._common as cli_common
from extractor.admission import load_policy, with_reasons
from extractor.cli import cli
from extractor.ledger import Ledger
from extractor.resultline import decode
from extractor.results import ConversationResult

REPO = Path(__file__).resolve().parents[1]


def test_the_ledger_rebuilds_every_result_line_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_common, "get_client", lambda *a, **k: Flood(extra=12))
    src = tmp_path / "in.jsonl"
    lines = (REPO / "examples" / "conversations.jsonl").read_text(encoding="utf-8").splitlines()
    long = {"id": "rep", "messages": [{"role": "user", "content": "I live in Denver."}] * 30}
    src.write_text("\n".join([*lines, json.dumps(long)]) + "\n", encoding="utf-8")
    out, db = tmp_path / "out.jsonl", tmp_path / "l.db"
    args = [
        "run",
        str(src),
        "--out",
        str(out),
        "--ledger",
        str(db),
        "-q",
        "--limit-candidates",
        "5",
    ]
    assert CliRunner().invoke(cli, args, catch_exceptions=False).exit_code == 0
    policy = load_policy()  # the file's lines hold rule ids; the ledger joins their reasons
    written = [
        r.model_copy(update={"decisions": with_reasons(r.decisions, policy)})
        for r in (ConversationResult.model_validate(decode(r)) for r in read_lines(out))
    ]
    assert any(r.rejections for r in written) and any(r.candidates for r in written)
    with Ledger(db, create=False) as ledger:
        assert [r.result for r in ledger.results()] == written
        for result in written:
            for candidate, decision in zip(result.candidates, result.decisions, strict=True):
                [record] = ledger.memory(candidate.memory_id)
                assert (record.candidate, record.decision) == (candidate, decision)
        history = ledger.conversation("rep")
        assert [r.result for r in history.results] == [
            w for w in written if w.conversation_id == "rep"
        ]
    with sqlite3.connect(db) as con:
        stored = sum(len(r[0]) for r in con.execute("SELECT result_json FROM conversations"))
        decisions = sum(len(r[0]) for r in con.execute("SELECT decision_json FROM decisions"))
        full = sum(len(d.model_dump_json()) for r in written for d in r.decisions)
    assert stored < out.stat().st_size / 2, "result rows do not repeat candidates and decisions"
    assert decisions < full / 4, "decision_json does not repeat what its columns hold"
