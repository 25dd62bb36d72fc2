"""`extractor validate`: check an extraction made elsewhere against its conversation."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from extractor.cli import cli

CONVERSATION = {"id": "demo", "messages": [{"role": "user", "content": "My manager is Alice."}]}
EVENT = {
    "id": "c1",
    "span": {"message_id": "m0", "quote": "My manager is Alice.", "start": 0, "end": 20},
    "kind": "OBSERVATION",
    "memory_type": "ASSERTION_EVENT",
    "content": "User stated that their manager is Alice.",
    "origin": "USER",
}


def write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_clean_extraction_exits_0(tmp_path: Path):
    conv = write(tmp_path, "conv.json", CONVERSATION)
    ext = write(tmp_path, "ext.json", {"candidates": [EVENT]})
    result = CliRunner().invoke(cli, ["validate", str(conv), str(ext)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("1 accepted, 0 rejected")


def test_rejections_exit_1_and_are_listed_with_codes(tmp_path: Path):
    conv = write(tmp_path, "conv.json", CONVERSATION)
    verified = {**EVENT, "id": "c2", "verification_state": "VERIFIED"}
    ext = write(tmp_path, "ext.json", {"candidates": [EVENT, verified]})
    result = CliRunner().invoke(cli, ["validate", str(conv), str(ext)])
    assert result.exit_code == 1
    assert "rejected c2: EXTRACTOR_CLAIMED_VERIFIED (verification_state)" in result.output
    as_json = CliRunner().invoke(cli, ["validate", "--json", str(conv), str(ext)])
    report = json.loads(as_json.output)
    assert [r["code"] for r in report["rejections"]] == ["EXTRACTOR_CLAIMED_VERIFIED"]


def test_unreadable_inputs_exit_2_naming_the_file(tmp_path: Path):
    conv = write(tmp_path, "conv.json", CONVERSATION)
    bad = tmp_path / "ext.json"
    bad.write_text("Sure! Here you go")
    result = CliRunner().invoke(cli, ["validate", str(conv), str(bad)])
    assert result.exit_code == 2 and "ext.json" in result.output and "not JSON" in result.output
    broken = tmp_path / "broken.json"
    broken.write_text('{"id": "x", "messages": [{"role": "narrator", "content": "x"}]}')
    result = CliRunner().invoke(cli, ["validate", str(broken), str(bad)])
    assert result.exit_code == 2 and "unknown role 'narrator'" in result.output
