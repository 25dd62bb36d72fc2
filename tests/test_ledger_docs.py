"""docs/ledger.md stays true: every column is documented, and every example runs."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from extractor.ledger import EXPORTABLE, Ledger

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "ledger.md").read_text(encoding="utf-8")


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, re.DOTALL)


def section(table: str) -> str:
    match = re.search(rf"^#### `{table}`.*?(?=^#### |\Z)", DOC, re.DOTALL | re.MULTILINE)
    assert match, f"docs/ledger.md has no section for {table}"
    return match.group(0)


def test_every_column_of_every_table_is_documented(tmp_path: Path):
    with Ledger(tmp_path / "l.db") as ledger:
        for table in EXPORTABLE:
            documented = re.findall(r"^\| `(\w+)` \|", section(table), re.MULTILINE)
            assert documented == ledger.columns(table), table
        for name in ledger.migrations:
            assert f"`{name}`" in DOC


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Run the walk-through exactly as documented, in a scratch directory."""
    work = tmp_path_factory.mktemp("walk")
    (work / "examples").mkdir()
    shutil.copy(ROOT / "examples" / "conversations.jsonl", work / "examples")
    (script,) = blocks("bash")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env,
                          capture_output=True, text=True, timeout=240)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "rules fired:" in done.stdout
    assert "0 changed" in done.stdout
    return work


@pytest.mark.slow  # runs documented shell commands: each `extractor` process starts afresh
def test_walk_through_runs(walked: Path):
    assert (walked / "decisions.csv").read_text().startswith("result_key,memory_id,run_id,")
    assert (walked / "recorded.jsonl").read_text().count("\n") == 3


@pytest.mark.slow  # runs documented shell commands: each `extractor` process starts afresh
def test_sql_example_runs_on_the_walk_through_ledger(walked: Path):
    (query,) = blocks("sql")
    with sqlite3.connect(walked / "ledger.db") as db:
        rows = db.execute(query).fetchall()
    assert rows and all(rule for _, _, rule in rows)


def test_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    (code,) = blocks("python")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/ledger.md", "exec"), {})
    assert "[" in capsys.readouterr().out
    with Ledger(tmp_path / "ledger.db") as ledger:
        assert [run.conversations for run in ledger.runs()] == [1]
