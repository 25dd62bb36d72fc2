"""The shipped policy is parsed once per process (issue 14: the store parsed it again on every
derivation); a policy file given by path is read anew each time."""

from __future__ import annotations

from pathlib import Path

from extractor.admission import load_policy
from extractor.admission.policy import DEFAULT_POLICY_PATH, parse_policy


def test_the_shipped_policy_is_parsed_once_and_is_what_the_file_says() -> None:
    first, again = load_policy(), load_policy(None)
    assert first is again
    text = DEFAULT_POLICY_PATH.read_text(encoding="utf-8")
    fresh = parse_policy(text, source=f"<default policy {DEFAULT_POLICY_PATH.name}>")
    assert (first.hash, first.source, first.document) == (fresh.hash, fresh.source, fresh.document)


def test_a_policy_file_is_read_each_time(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    text = DEFAULT_POLICY_PATH.read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    before = load_policy(path)
    path.write_text(text.replace(before.version, before.version + ".1", 1), encoding="utf-8")
    assert load_policy(path).version == before.version + ".1"
