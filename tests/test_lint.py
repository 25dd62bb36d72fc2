"""The code is ruff-clean (lint and format): one command for all checks, run by CI with the rest."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (it is in the 'test' extra)")
@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]])
def test_ruff(args: list[str]):
    done = subprocess.run([RUFF, *args], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
