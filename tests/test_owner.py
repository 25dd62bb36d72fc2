"""Tenant and subject: whose memory a conversation is, on every result line, failure line and
ledger row. The caller's value (``--tenant`` / ``--subject``) wins over the conversation's
``metadata.tenant`` / ``metadata.user_id``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result
from helpers import examples, read_lines
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor import Extractor
from extractor.cli import cli
from extractor.conversation import Owner, conversation_from_data
from extractor.ledger import Ledger
from extractor.ledger.migrations import MIGRATIONS, MIGRATIONS_TABLE

FACT = "I live in Lisbon and I prefer tea."


def chat(cid: str, **metadata: Any) -> str:
    return json.dumps(
        {"id": cid, "messages": [{"role": "user", "content": FACT}], "metadata": metadata}
    )


def run(tmp_path: Path, lines: list[str], *options: str) -> tuple[Result, Path]:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["run", str(src), "--out", str(out), "--ledger", str(tmp_path / "l.db"), "-q"]
    return CliRunner().invoke(cli, [*args, *options], catch_exceptions=False), out


def owners(db: Path, table: str) -> set[tuple[str | None, str | None]]:
    with sqlite3.connect(db) as con:
        return set(con.execute(f"SELECT tenant, subject FROM {table}").fetchall())


def test_metadata_reaches_every_result_line_and_ledger_row(tmp_path: Path) -> None:
    lines = [chat("a", tenant="acme", user_id="u-1"), chat("b", user_id=42), chat("c")]
    result, out = run(tmp_path, lines)
    assert result.exit_code == 0, result.output
    found = {r["conversation_id"]: (r["tenant"], r["subject"]) for r in read_lines(out)}
    assert found == {"a": ("acme", "u-1"), "b": (None, "42"), "c": (None, None)}
    db = tmp_path / "l.db"
    assert owners(db, "conversations") == set(found.values())
    assert owners(db, "candidates") == set(found.values())  # every conversation has candidates
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT conversation_id, tenant, subject FROM memory_ledger").fetchall()
    assert {(cid, t, s) for cid, t, s in rows} == {(k, *v) for k, v in found.items()}


def test_options_win_over_metadata_and_reach_failures(tmp_path: Path) -> None:
    lines = [chat("a", tenant="acme", user_id="u-1"), "{not json"]
    result, out = run(tmp_path, lines, "--tenant", "globex", "--subject", "u-9")
    assert result.exit_code == 1, result.output
    [line] = read_lines(out)
    assert (line["tenant"], line["subject"]) == ("globex", "u-9")
    [failure] = read_lines(tmp_path / "out.jsonl.failures.jsonl")
    assert (failure["tenant"], failure["subject"], failure["stage"]) == ("globex", "u-9", "load")
    db = tmp_path / "l.db"
    assert owners(db, "failures") == {("globex", "u-9")}
    assert owners(db, "candidates") == {("globex", "u-9")}
    with Ledger(db, create=False) as ledger:
        [run_record] = ledger.runs()
    assert (run_record.settings["tenant"], run_record.settings["subject"]) == ("globex", "u-9")


def test_a_conversation_failing_before_its_metadata_is_read_has_only_the_options(
    tmp_path: Path,
) -> None:
    long_chat = json.dumps(
        {"id": "x", "metadata": {"tenant": "acme", "user_id": "u-1"},
         "messages": [{"role": "user", "content": FACT}] * 3}
    )  # fmt: skip
    result, _ = run(tmp_path, [long_chat], "--limit-messages", "2")
    assert result.exit_code == 1
    [failure] = read_lines(tmp_path / "out.jsonl.failures.jsonl")
    # Over the limit, the conversation fails before its metadata is read: only options remain.
    assert (failure["tenant"], failure["subject"]) == (None, None)


def test_a_non_string_user_id_fails_at_load_naming_the_field_and_the_option(
    tmp_path: Path,
) -> None:
    result, _ = run(tmp_path, [chat("a", user_id=["u-1"]), chat("b", tenant={"x": 1})])
    assert result.exit_code == 1
    failures = read_lines(tmp_path / "out.jsonl.failures.jsonl")
    assert [f["stage"] for f in failures] == ["load", "load"]
    assert "metadata.user_id must be a string" in failures[0]["error"]
    assert "--subject" in failures[0]["error"]
    assert "metadata.tenant must be a string" in failures[1]["error"]
    assert "--tenant" in failures[1]["error"]


names = st.none() | st.text(alphabet="abcxyz-19", min_size=1, max_size=6)


@settings(max_examples=examples(40), deadline=None)
@given(meta_tenant=names, meta_subject=names, opt_tenant=names, opt_subject=names)
def test_the_option_wins_else_the_metadata_else_none(
    meta_tenant: str | None,
    meta_subject: str | None,
    opt_tenant: str | None,
    opt_subject: str | None,
) -> None:
    metadata = {k: v for k, v in [("tenant", meta_tenant), ("user_id", meta_subject)] if v}
    data = {"id": "p", "messages": [{"role": "user", "content": FACT}], "metadata": metadata}
    conv = conversation_from_data(data)
    owner = Owner(opt_tenant, opt_subject).of(conv)
    assert owner.tenant == (opt_tenant if opt_tenant is not None else meta_tenant)
    assert owner.subject == (opt_subject if opt_subject is not None else meta_subject)


def test_python_hook_takes_tenant_and_subject() -> None:
    data = {"id": "h", "messages": [{"role": "user", "content": FACT}],
            "metadata": {"tenant": "acme", "user_id": "u-1"}}  # fmt: skip
    extractor = Extractor()
    assert (extractor.process(data).tenant, extractor.process(data).subject) == ("acme", "u-1")
    overridden = extractor.process(data, subject="u-2")
    assert (overridden.tenant, overridden.subject) == ("acme", "u-2")


def test_a_ledger_from_before_the_migration_upgrades_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute(MIGRATIONS_TABLE)
        for migration in MIGRATIONS[:2]:
            migration(db)
            db.execute("INSERT INTO migrations VALUES (?, '2026-01-01')", (migration.__name__,))
        db.execute(
            "INSERT INTO failures (failure_key, run_id, stage, error_code, error, recorded_at, "
            "failure_json) VALUES ('k', 'r', 'load', 'INPUT_INVALID', 'e', 't', '{}')"
        )
    with Ledger(path) as ledger:
        assert ledger.applied_now[:2] == ["m003_tenant_subject", "m004_run_process"]
        assert "subject" in ledger.columns("memory_ledger")
    assert owners(path, "failures") == {(None, None)}
