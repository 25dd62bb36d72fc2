"""docs/store.md stays true: every column of every store table and view is documented, and the
Python example runs."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from extractor import MemoryStore

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "store.md").read_text(encoding="utf-8")


def section(table: str) -> str:
    match = re.search(rf"^#### `{table}`.*?(?=^#### |\Z)", DOC, re.DOTALL | re.MULTILINE)
    assert match, f"docs/store.md has no section for {table}"
    return match.group(0)


def test_every_column_of_every_table_and_view_is_documented(tmp_path: Path):
    with MemoryStore(tmp_path / "m.db") as store:
        names = store.migrations
    db = sqlite3.connect(tmp_path / "m.db")
    objects = [
        r[0]
        for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'claims_fts%'"
        )
    ]
    for name in objects:
        columns = [r[1] for r in db.execute(f"PRAGMA table_info({name})")]
        documented = re.findall(r"^\| `(\w+)` \|", section(name), re.MULTILINE)
        assert documented == columns, name
    for name in names:
        assert f"`{name}`" in DOC


def test_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    (code,) = re.findall(r"```python\n(.*?)```", DOC, re.DOTALL)[:1]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/store.md", "exec"), {})
    out = capsys.readouterr().out
    assert ":c1" in out and "ACTIVE" in out
