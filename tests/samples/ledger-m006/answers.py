"""Everything a ledger answers -- its readers, its exports, the ``extractor ledger`` commands and
a replay of its recorded results -- as JSON data, to compare two codes' answers over one file.

    PYTHONPATH=/tmp/oldmain python tests/samples/ledger-m006/answers.py LEDGER | gzip -9 > answers.json.gz

``answers.json.gz`` here was made so with the code of main at 2e4516e (schema m001-m006), over a
copy of ``ledger.db``; tests/test_ledger_compact.py computes the same with this tree over a copy
migrated to m007 and requires every answer to be the same. (Replaying the recorded results
under the shipped policy is compared there too, but between this tree's answers only: the
policy may change.)
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from extractor.cli import cli
from extractor.ledger import EXPORTABLE, Ledger


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _cli(*args: str) -> dict[str, Any]:
    done = CliRunner().invoke(cli, list(args))
    return {"exit_code": done.exit_code, "output": done.output}


def answers(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with Ledger(path, create=False) as ledger:
        out["runs"] = _plain(ledger.runs())
        out["results"] = _plain(list(ledger.results()))
        memory_ids = sorted({r["memory_id"] for r in ledger.export("candidates")})
        conversation_ids = sorted({r["conversation_id"] for r in ledger.export("conversations")}
                                  | {"broken"})  # fmt: skip
        hashes = sorted({r["conversation_hash"] for r in ledger.export("conversations")})
        out["memory"] = {m: _plain(ledger.memory(m)) for m in memory_ids}
        out["conversation"] = {c: _plain(ledger.conversation(c)) for c in conversation_ids}
        out["conversation_by_hash"] = {h: len(ledger.conversation(h).results) for h in hashes}
        out["transcripts"] = {
            h: [_plain(ledger.transcript(h)), ledger.stored_transcript_hash(h)] for h in hashes
        }
        tables = [t for t in EXPORTABLE if t != "migrations"]
        out["export"] = {t: list(ledger.export(t, decode_json=True)) for t in tables}
        out["export_run"] = {
            t: list(ledger.export(t, run_id="run-scripted", decode_json=True))
            for t in tables if "run_id" in ledger.columns(t)
        }  # fmt: skip
        out["columns"] = {t: ledger.columns(t) for t in tables}
    db = str(path)
    out["cli"] = {
        "list": _cli("ledger", "list", db),
        "list --json": _cli("ledger", "list", db, "--json"),
        "show": {i: _cli("ledger", "show", db, i) for i in [*memory_ids[::3], *conversation_ids]},
        "show --json": {i: _cli("ledger", "show", db, i, "--json") for i in memory_ids[:5]},
        "export --results": _cli("ledger", "export", db, "--results"),
        "export decisions csv": _cli("ledger", "export", db, "--table", "decisions",
                                     "--format", "csv"),
        "export memory_ledger": _cli("ledger", "export", db),
    }  # fmt: skip
    return out


if __name__ == "__main__":
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "ledger.db"
        shutil.copy(sys.argv[1], copy)
        json.dump(answers(copy), sys.stdout, indent=0, sort_keys=True, ensure_ascii=False)
