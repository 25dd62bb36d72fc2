"""docs/store.md stays true: every column of every store table and view is documented, and the
Python example runs."""

from __future__ import annotations

import re
import shlex
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from extractor import MemoryStore
from extractor.cli import cli

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


README = (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_store_commands() -> list[list[str]]:
    start = README.index("\n## The memory store: from hook to governed memory\n")
    end = README.index("\n## ", start + 1)
    (block,) = re.findall(r"```bash\n(.*?)```", README[start:end], re.DOTALL)
    out = []
    for line in block.splitlines():
        command = shlex.split(line.split(">")[0])
        if command[:2] == ["extractor", "store"] or command[:2] == ["extractor", "run"]:
            out.append(command[1:])
    return out


def test_the_readme_hook_to_store_commands_read_back_what_run_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The commands of the README's store section, as written: what ``run --store`` stored
    is read back by ``store read`` for the subject named at run time."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    commands = _readme_store_commands()
    assert [c[:2] for c in commands][:3] == [["run", "examples/"], ["store", "ingest"],
                                             ["store", "read"]]  # fmt: skip
    outputs = {}
    for command in commands[:3]:
        done = CliRunner().invoke(cli, command)
        assert done.exit_code == 0, (command, done.output)
        outputs[command[1] if command[0] == "store" else "run"] = done
    assert "Lisbon" in outputs["read"].stdout
    assert "note:" not in outputs["run"].stderr + outputs["read"].stderr


def test_memories_stored_without_a_subject_are_named_with_the_option_that_fixes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke(cli, ["run", "examples/", "--out", "r.jsonl", "--store", "m.db",
                                   "--quiet"])  # fmt: skip
    assert run.exit_code == 0, run.output
    assert "stored without a subject" in run.stderr and "extractor run --subject S" in run.stderr
    read = CliRunner().invoke(cli, ["store", "read", "Where did I move?", "--db", "m.db",
                                    "--subject", "user-42", "--purpose", "PERSONALIZATION"])  # fmt: skip
    assert read.exit_code == 0 and read.stdout == ""
    assert "stored without a subject" in read.stderr and "--subject S" in read.stderr
    ingest = CliRunner().invoke(cli, ["store", "ingest", "r.jsonl", "--db", "other.db"])
    assert ingest.exit_code == 0, ingest.output
    assert "stored without a subject" in ingest.stderr and "--subject S" in ingest.stderr
