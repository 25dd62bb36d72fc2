"""``extractor store ...`` and ``extractor run --store``: thin commands over MemoryStore."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from extractor import MemoryStore
from extractor.cli import cli

ROOT = Path(__file__).resolve().parents[1]
SECRET = "42 Wallaby Way"


def invoke(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result.output


def conversations(path: Path) -> Path:
    lines = [
        {
            "id": "home",
            "metadata": {"tenant": "acme", "user_id": "u1"},
            "messages": [
                {
                    "role": "user",
                    "content": f"I live in Sydney at {SECRET}.",
                    "timestamp": "2026-03-01T10:00:00",
                }
            ],
        },
        {
            "id": "move",
            "metadata": {"tenant": "acme", "user_id": "u1"},
            "messages": [
                {
                    "role": "user",
                    "content": "I moved to Berlin.",
                    "timestamp": "2026-09-01T10:00:00",
                }
            ],
        },
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_run_with_store_ingests_and_store_ingest_is_idempotent(tmp_path: Path):
    inputs = conversations(tmp_path / "in.jsonl")
    out, db = tmp_path / "results.jsonl", tmp_path / "m.db"
    invoke("run", inputs, "--out", out, "--store", db, "-q")
    with MemoryStore(db, create=False) as store:
        run_claims = {c.claim_id for c in store.claims(tenant="acme", subject="u1")}
        home = next(c for c in store.claims() if c.content == f"User lives in Sydney at {SECRET}.")
        assert home.superseded_by is not None  # the move, from the metadata's user_id
    other = tmp_path / "other.db"
    summary = json.loads(invoke("store", "ingest", out, "--db", other, "--json"))
    assert summary["stored"] == len(run_claims) and summary["unreadable"] == 0
    again = json.loads(invoke("store", "ingest", out, "--db", other, "--json"))
    assert again["stored"] == 0 and again["already_stored"] == len(run_claims)


def test_store_ingest_reports_a_bad_line_and_goes_on(tmp_path: Path):
    inputs = conversations(tmp_path / "in.jsonl")
    out = tmp_path / "results.jsonl"
    invoke("run", inputs, "--out", out, "-q")
    with out.open("a") as f:
        f.write("{not json\n")
    result = CliRunner().invoke(cli, ["store", "ingest", str(out), "--db", str(tmp_path / "m.db")])
    assert result.exit_code == 1 and "results.jsonl:3" in result.output


def test_why_revoke_lineage_derive_rebuild_export(tmp_path: Path):
    inputs = conversations(tmp_path / "in.jsonl")
    db = tmp_path / "m.db"
    invoke("run", inputs, "--out", tmp_path / "r.jsonl", "--store", db, "-q")
    with MemoryStore(db, create=False) as store:
        prop = next(c for c in store.claims() if c.content == "User moved to Berlin.").claim_id
    claims = tmp_path / "summary.json"
    claims.write_text(
        json.dumps(
            [
                {"content": "User moved to Berlin.", "requires": [prop]},
                {"content": "User moved to Paris.", "requires": [prop]},
            ]
        )
    )
    derived = invoke("store", "derive", db, "--claims", claims, "--produced-by", "s1", code=1)
    assert "UNSUPPORTED_BY_PARENTS" in derived and "paris" in derived.lower()
    child = derived.split()[0]
    assert "<- " + prop in invoke("store", "lineage", db, child)
    why = invoke("store", "why", db, prop)
    assert "rules:" in why and "families:" in why and "* EVIDENCE" in why
    report = json.loads(invoke("store", "revoke", db, prop, "--reason", "joke", "--json"))
    assert child in report["quarantined"] and report["max_depth"] == 1
    assert "identical" in invoke("store", "rebuild", db)
    rows = [json.loads(line) for line in invoke("store", "export", db).splitlines()]
    assert {r["claim_id"] for r in rows} >= {prop, child}


def test_erase_and_verify_erasure_on_the_command_line(tmp_path: Path):
    inputs = conversations(tmp_path / "in.jsonl")
    db, ledger = tmp_path / "m.db", tmp_path / "ledger.db"
    invoke("run", inputs, "--out", tmp_path / "r.jsonl", "--store", db, "--ledger", ledger, "-q")
    invoke("store", "verify-erasure", db, "--string", SECRET, "--ledger", ledger, code=1)
    out = invoke("store", "erase", db, "--conversation", "home", "--ledger", ledger)
    assert "residue: 0" in out and "r.jsonl" in out  # the results file is named as unreachable
    assert "clean" in invoke("store", "verify-erasure", db, "--string", SECRET, "--ledger", ledger)
    assert SECRET.encode() not in b"".join(p.read_bytes() for p in tmp_path.glob("*.db*"))
    invoke("store", "erase", db, code=2)  # no selector: a usage error naming the options
