"""``extractor store read``: thin over the read path; JSON output matches the read-result schema."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from read_store_helpers import Clock, pipeline

from extractor import Ledger, MemoryStore
from extractor.cli import cli
from extractor.conversation import conversation_from_data

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.db"
    with MemoryStore(path, clock=Clock()) as store:
        store.ingest(pipeline("c1", "My manager is Alice."))
        store.ingest(pipeline("c2", "My sister's phone number is +44 20 7946 0958."))
    return path


def _read(db: Path, *args: str):
    return CliRunner().invoke(
        cli,
        [
            "store",
            "read",
            "manager Alice sister phone",
            "--db",
            str(db),
            "--tenant",
            "acme",
            "--subject",
            "u1",
            *args,
        ],
    )


def test_prints_the_context_and_the_exclusions(db: Path):
    result = _read(db, "--purpose", "PERSONALIZATION")
    assert result.exit_code == 0, result.output
    assert 'use="PERSONALIZATION">User stated: "My manager is Alice."</memory>' in result.stdout
    assert (
        '<memory origin="USER" verification="UNVERIFIED" use="PERSONALIZATION">User\'s manager is Alice.</memory>'
        in result.stdout
    )
    assert "excluded " in result.stderr and "third-party-personal-data" in result.stderr


def test_acting_for_the_subject_makes_their_own_shared_data_eligible(db: Path):
    result = _read(db, "--purpose", "PERSONALIZATION", "--acting-for-subject")
    assert result.exit_code == 0, result.output
    assert "+44 20 7946 0958" in result.stdout


def test_json_output_validates_against_the_published_schema(db: Path):
    result = _read(db, "--purpose", "CONVERSATIONAL_CONTEXT", "--json", "-k", "3")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    schema = json.loads((ROOT / "schemas" / "read-result.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert data["request"]["purpose"] == "CONVERSATIONAL_CONTEXT" and len(data["items"]) <= 3


def test_factual_reads_dereference_through_the_ledger(tmp_path: Path):
    path, ledger = tmp_path / "memory.db", tmp_path / "ledger.db"
    data = {
        "id": "c1",
        "messages": [
            {"role": "user", "content": "My manager is Alice.", "timestamp": "2026-06-01T10:00:00"}
        ],
        "metadata": {"tenant": "acme", "user_id": "u1"},
    }
    result = pipeline("c1", "My manager is Alice.")
    with MemoryStore(path, clock=Clock()) as store:
        store.ingest(result)
    with Ledger(ledger) as opened:
        run = opened.start_run(result.provenance)
        opened.record_result(run, result, conversation=conversation_from_data(data))
    without = _read(path, "--purpose", "FACTUAL_EVIDENCE", "--json")
    assert json.loads(without.stdout)["items"] == []
    with_ledger = _read(path, "--purpose", "FACTUAL_EVIDENCE", "--json", "--ledger", str(ledger))
    (item,) = json.loads(with_ledger.stdout)["items"]
    assert (
        item["decision"]["evidence"] == "VERIFIED"
        and item["content"] == 'User stated: "My manager is Alice."'
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--purpose", "PERSONALIZATION", "--db", "missing.db"], "no memory store file here"),
        (["--purpose", "NOPE"], "Invalid value for '--purpose'"),
        (["--purpose", "PERSONALIZATION", "--as-of", "yesterday"], "not an ISO 8601"),
    ],
)
def test_unusable_input_is_a_usage_error_naming_it(
    db: Path, args, message, tmp_path: Path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    result = _read(db, *args)
    assert result.exit_code == 2 and message in result.output


def test_an_invalid_read_policy_names_the_file(db: Path, tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text('id = "x"\n', encoding="utf-8")
    result = _read(db, "--purpose", "PERSONALIZATION", "--read-policy", str(bad))
    assert result.exit_code == 2 and "bad.toml" in result.output
