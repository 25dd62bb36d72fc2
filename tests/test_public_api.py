"""The package's public API is exactly ``extractor.__all__``, and every name in it resolves."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import extractor


def test_every_public_name_resolves_to_what_its_module_defines():
    for name in extractor.__all__:
        assert getattr(extractor, name) is not None, name


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="NotAThing"):
        extractor.NotAThing  # noqa: B018


def test_all_lists_exactly_the_lazy_names():
    assert set(extractor.__all__) == {*extractor._LAZY, "SCHEMA_VERSION", "__version__"}


def test_importing_the_package_does_not_load_the_llm_stack():
    code = "import sys, extractor; print('openai' in sys.modules, 'instructor' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_an_offline_run_does_not_load_the_llm_stack(tmp_path):
    """Every `extractor` start pays for what it imports: the openai SDK alone is about a second
    of CPU, which an offline run (and every CLI test of the suite) never needs."""
    code = (
        "import sys\n"
        "from extractor.cli import cli\n"
        "cli(['run', sys.argv[1], '--out', sys.argv[2], '--quiet'], standalone_mode=False)\n"
        "print('openai' in sys.modules, 'instructor' in sys.modules)\n"
    )
    conversations = Path(__file__).resolve().parents[1] / "examples" / "conversations.jsonl"
    out = subprocess.run(
        [sys.executable, "-c", code, str(conversations), str(tmp_path / "out.jsonl")],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert out.stdout.split() == ["False", "False"]
    assert (tmp_path / "out.jsonl").read_text().count("\n") == 3


def test_readme_hook_names_are_public():
    from extractor import Extractor, extract_and_admit
    from extractor.pipeline import Extractor as PipelineExtractor

    assert Extractor is PipelineExtractor and callable(extract_and_admit)
