"""``extractor ledger list/show/export`` over a ledger written through the library API."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_ledger import RUN_PROV, make_conversation, make_failure, make_result

from extractor.cli.ledger import ledger as ledger_cli
from extractor.ledger import Ledger


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        run_id = ledger.start_run(RUN_PROV, {"concurrency": 2}, run_id="run-one")
        ledger.record_result(
            run_id, make_result("conv-1"), conversation=make_conversation("conv-1")
        )
        ledger.record_failure(run_id, make_failure("conv-bad"))
        ledger.finish_run(run_id, {"conversations": 2})
    return path


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(ledger_cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_list_shows_each_run_with_its_counts(filled: Path):
    code, out, _ = invoke("list", str(filled))
    assert code == 0
    header, row = out.strip().splitlines()
    assert header.split() == ["RUN", "STARTED", "STATUS", "MODEL", "POLICY", "CONV", "CAND",
                              "PERSIST", "REJ", "FAIL"]  # fmt: skip
    assert row.split()[2:] == ["completed", "offline", "default@1.0.0", "1", "2", "1", "1", "1"]
    code, out, _ = invoke("list", str(filled), "--json")
    (run,) = json.loads(out)
    assert run["settings"] == {"concurrency": 2} and run["summary"] == {"conversations": 2}


def test_show_memory_explains_its_capabilities(filled: Path):
    memory_id = make_result("conv-1").candidates[0].memory_id
    code, out, _ = invoke("show", str(filled), memory_id)
    assert code == 0
    assert f"memory {memory_id}  (run run-one, conversation conv-1)" in out
    assert "verification:  VERIFIED_OBSERVATION_OF_EVENT" in out
    assert "allowed uses:  PERSONALIZATION" in out
    assert "denied:        FACTUAL_EVIDENCE by R-unverified: unverified" in out
    assert "    R-user-event: user assertion event" in out
    code, out, _ = invoke("show", str(filled), memory_id, "--json")
    (record,) = json.loads(out)
    assert record["decision"]["rules_fired"][0]["rule_id"] == "R-user-event"
    assert record["candidate"]["memory_id"] == memory_id


def test_show_conversation_lists_candidates_rejections_and_failures(filled: Path):
    code, out, _ = invoke("show", str(filled), "conv-1")
    assert code == 0
    assert "run run-one: 2 candidates, 1 rejected" in out
    assert "rejected bad: SPAN_NOT_FOUND" in out
    code, out, _ = invoke("show", str(filled), "conv-bad")
    assert "FAILED at extract: MODEL_RATE_LIMITED" in out


def test_show_unknown_id_exits_1_naming_it(filled: Path):
    code, _, err = invoke("show", str(filled), "mem_nope")
    assert code == 1
    assert f"{filled}: no memory or conversation 'mem_nope'" in err


def test_export_jsonl_decodes_json_columns(filled: Path):
    code, out, _ = invoke("export", str(filled), "--table", "decisions")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 2
    assert rows[0]["allowed_uses"] == ["PERSONALIZATION"]
    fired = rows[0]["rules_fired"][1]
    assert (fired["rule_id"], fired["reason"]) == ("R-unverified", "proposition not verified")


def test_export_csv_keeps_stored_values_and_every_column(filled: Path, tmp_path: Path):
    out_path = tmp_path / "cands.csv"
    code, _, _ = invoke("export", str(filled), "--table", "candidates", "--format", "csv",
                        "--run", "run-one", "-o", str(out_path))  # fmt: skip
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out_path.read_text(encoding="utf-8"))))
    with Ledger(filled) as ledger:
        assert list(rows[0]) == ledger.columns("candidates")
    assert [json.loads(r["requested_uses"]) for r in rows] == [
        ["PERSONALIZATION", "FACTUAL_EVIDENCE"]
    ] * 2


def test_export_default_is_the_memory_ledger_view(filled: Path):
    code, out, _ = invoke("export", str(filled))
    assert code == 0
    assert {json.loads(line)["admission_policy_version"] for line in out.splitlines()} == {"1.0.0"}


@pytest.mark.parametrize("command", ["list", "show", "export"])
def test_unusable_ledger_files_exit_2(tmp_path: Path, command: str):
    args = [command, str(tmp_path / "missing.db")] + (["x"] if command == "show" else [])
    code, _, err = invoke(*args)
    assert code == 2 and "missing.db" in err
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"definitely not sqlite" * 50)
    args[1] = str(junk)
    code, _, err = invoke(*args)
    assert code == 2 and f"{junk}: cannot open the ledger" in err


def test_batch_runs_record_results_failures_and_transcripts(tmp_path: Path):
    from extractor.batch import BatchConfig, run_batch
    from extractor.pipeline import Extractor

    inputs = tmp_path / "in.jsonl"
    good = {"id": "ok-1", "messages": [{"role": "user", "content": "My manager is Alice."}]}
    bad = {"id": "bad-1", "messages": []}
    inputs.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    config = BatchConfig(out=tmp_path / "out.jsonl")
    with Ledger(tmp_path / "ledger.db") as ledger:
        first = run_batch([inputs], Extractor(), config, ledger=ledger)
        again = run_batch([inputs], Extractor(), config, ledger=ledger)  # resumes: skips both
        runs = ledger.runs()
        history = ledger.conversation("ok-1")
        (recorded,) = history.results
        assert ledger.transcript(recorded.result.conversation_hash) is not None
        assert [f.failure.stage for f in ledger.conversation("bad-1").failures] == ["load"]
    assert (first.processed, again.skipped) == (1, 2)
    assert [(r.status, r.conversations, r.failures) for r in runs] == [
        ("completed", 1, 1),
        ("completed", 0, 0),
    ]
    assert runs[0].summary is not None and runs[0].settings["out"] == str(config.out)
