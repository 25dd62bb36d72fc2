"""The code in docs/pipeline.md really runs: every Python block, and the CLI examples."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOC = REPO / "docs" / "pipeline.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)


PYTHON = blocks("python")


@pytest.mark.parametrize("code", PYTHON, ids=[f"python-{i}" for i in range(len(PYTHON))])
def test_python_examples_run(
    code: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(REPO)
    exec(compile(code, str(DOC), "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out.strip(), "each example prints what it did"


@pytest.mark.slow  # runs documented shell commands: each `extractor` process starts afresh
def test_cli_examples_run(tmp_path: Path) -> None:
    (cli_block, *_) = blocks("bash")
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for line in cli_block.strip().splitlines():
        command = line.split("  #")[0].strip()
        done = subprocess.run(
            command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, check=False
        )
        assert done.returncode == 0, f"{command}\n{done.stderr}"
    assert (tmp_path / "results.jsonl").stat().st_size > 0
    assert (tmp_path / "r.jsonl").stat().st_size > 0
