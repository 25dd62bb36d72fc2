"""The ledger's compact storage (m007, issue 14): a ledger written before is upgraded in place and
answers exactly as it did, the views give back every row as written, and what repeats is stored
once."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_ledger import RUN_PROV, make_conversation, make_failure, make_result

from extractor.cli import cli
from extractor.errors import LedgerError
from extractor.ledger import Ledger, migration_names, packing, rows
from extractor.results import ConversationResult

SAMPLES = Path(__file__).with_name("samples") / "ledger-m006"
sys.path.insert(0, str(SAMPLES))
from answers import answers  # noqa: E402  (tests/samples/ledger-m006/answers.py)


@pytest.fixture
def old_ledger(tmp_path: Path) -> Path:
    """A copy of the ledger written by main at 2e4516e (migrations m001-m006)."""
    copy = tmp_path / "ledger.db"
    shutil.copy(SAMPLES / "ledger.db", copy)
    with sqlite3.connect(copy) as db:
        assert [r[0] for r in db.execute("SELECT name FROM migrations")] == migration_names()[:6]
    return copy


def test_an_old_ledger_is_upgraded_in_place_and_answers_exactly_as_before(
    old_ledger: Path,
) -> None:
    """Readers, exports and the `extractor ledger` commands over the upgraded file give what
    the code before gave over the same file (answers.json.gz, made with that code)."""
    with Ledger(old_ledger) as ledger:
        assert ledger.applied_now == ["m007_compact_storage"]
        assert ledger.integrity_check() == "ok"
    expected = json.loads(gzip.decompress((SAMPLES / "answers.json.gz").read_bytes()))
    found = json.loads(json.dumps(answers(old_ledger)))
    assert found.keys() == expected.keys()
    for name in expected:
        assert found[name] == expected[name], name


def test_replaying_the_upgraded_ledger_decides_as_the_results_file_does(
    old_ledger: Path, tmp_path: Path
) -> None:
    exported = CliRunner().invoke(cli, ["ledger", "export", str(old_ledger), "--results"])
    assert exported.exit_code == 0, exported.output
    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text(exported.output, encoding="utf-8")
    reports = []
    for path in (recorded, SAMPLES / "results.jsonl"):
        done = CliRunner().invoke(cli, ["admit", "--json", str(path)])
        assert done.exit_code == 0, done.output
        reports.append(json.loads(done.output))
    assert reports[0] == reports[1]
    assert reports[0]["decisions"] == 30


def test_an_upgraded_ledger_takes_new_rows_beside_the_old(old_ledger: Path) -> None:
    with Ledger(old_ledger) as ledger:
        before = [r.result for r in ledger.results()]
        run_id = ledger.start_run(RUN_PROV)
        result = make_result()
        assert ledger.record_result(run_id, result, conversation=make_conversation("conv-1"))
        assert ledger.record_failure(run_id, make_failure())
        after = [r.result for r in ledger.results()]
        assert after == [*before, result]
        [record] = ledger.memory(result.candidates[0].memory_id)
        assert (record.candidate, record.decision) == (result.candidates[0], result.decisions[0])
        assert ledger.run(run_id) is not None and ledger.run(run_id).candidates == 2  # type: ignore[union-attr]


def logical_rows(run_id: str, result: ConversationResult) -> dict[str, list[dict[str, Any]]]:
    """What rows.py builds for ``result``: the rows the views must give back."""
    key = rows.result_key(run_id, result)
    prov = RUN_PROV
    by_id = {c.memory_id: c for c in result.candidates}
    return {
        "conversations": [rows.conversation_row(run_id, key, result, prov)],
        "candidates": [rows.candidate_row(run_id, key, result, c) for c in by_id.values()],
        "decisions": [rows.decision_row(run_id, key, d) for d in result.decisions],
        "rejections": [
            rows.rejection_row(run_id, key, result.conversation_id, i, r)
            for i, r in enumerate(result.rejections)
        ],
    }


def test_the_views_give_back_every_row_as_it_was_built(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        run_id = ledger.start_run(RUN_PROV, run_id="run-1")
        written: dict[str, list[dict[str, Any]]] = {}
        for conv_id, n in (("a", 2), ("b", 3), ("a", 1)):
            result = make_result(conv_id, n)
            assert ledger.record_result(run_id, result)
            for table, built in logical_rows(run_id, result).items():
                written.setdefault(table, []).extend(built)
        for table, built in written.items():
            stored = list(ledger.export(table))
            assert stored == [{k: row[k] for k in stored[0]} for row in built], table
            assert list(stored[0]) == ledger.columns(table)


def test_hashes_are_blobs_and_repeated_values_are_stored_once(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    with Ledger(path) as ledger:
        run_id = ledger.start_run(RUN_PROV)
        for i in range(20):
            ledger.record_result(run_id, make_result(f"conv-{i}", 3))
    with sqlite3.connect(path) as db:
        kinds = db.execute(
            "SELECT DISTINCT typeof(candidate_hash), typeof(evidence_hash), typeof(input_hash) "
            "FROM memories"
        ).fetchall()
        assert kinds == [("blob", "blob", "blob")]
        assert db.execute("SELECT DISTINCT length(input_hash) FROM memories").fetchall() == [(32,)]
        n_memories = db.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        n_texts = db.execute("SELECT COUNT(*) FROM texts").fetchone()[0]
        refs = {r[0][:1] for r in db.execute("SELECT evidence_ref FROM memories")}
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert n_memories == 60 and n_texts < 40  # run, model, enums, uses, times: once each
    assert refs == {"#"}  # the conversation hash is the result's, stored there once
    assert not tables & {"conversations", "candidates", "decisions", "rejections"}


def test_a_failed_write_leaves_no_text_key_behind(tmp_path: Path, monkeypatch) -> None:
    """A key of `texts` made in a transaction that rolls back is not cached: the next write
    makes it again instead of referring to a row that does not exist."""
    with Ledger(tmp_path / "l.db") as ledger:
        run_id = ledger.start_run(RUN_PROV)
        result = make_result()

        def broken(*args: Any, **kwargs: Any) -> dict[str, Any]:
            raise RuntimeError("crash while writing candidates")

        with monkeypatch.context() as patch:
            patch.setattr(packing, "pack_rejection", broken)
            with pytest.raises(RuntimeError, match="crash"):
                ledger.record_result(run_id, result)
        assert list(ledger.results()) == []
        assert ledger.record_result(run_id, result)
        assert [r.result for r in ledger.results()] == [result]
        assert ledger.integrity_check() == "ok"


def test_a_row_that_is_not_its_results_is_refused(tmp_path: Path) -> None:
    result = make_result()
    key = rows.result_key("run-1", result)
    line = rows.conversation_row("run-1", key, result)
    candidate = rows.candidate_row("run-2", key, result, result.candidates[0])
    with Ledger(tmp_path / "l.db") as ledger:
        intern = packing.Interner(ledger._db, {})
        with pytest.raises(ValueError, match="run_id is not its result's"):
            packing.pack_memory(candidate, None, line, result_id=1, seq=0, decided=None,
                                intern=intern)  # fmt: skip


def test_reading_a_newer_file_is_still_refused(old_ledger: Path) -> None:
    Ledger(old_ledger).close()
    with sqlite3.connect(old_ledger) as db:
        db.execute("INSERT INTO migrations VALUES ('m999_future', '2030-01-01')")
    with pytest.raises(LedgerError, match="newer"):
        Ledger(old_ledger)
