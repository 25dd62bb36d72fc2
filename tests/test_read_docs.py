"""docs/read.md stays true: every shipped read-policy rule, stage-1 rule and CLI option of
``extractor store read`` and ``extractor store read-replay`` is documented."""

from __future__ import annotations

from pathlib import Path

from extractor.cli.store_read import read, read_replay
from extractor.read import load_read_policy
from extractor.read.eligibility import RULES

DOC = (Path(__file__).resolve().parents[1] / "docs" / "read.md").read_text(encoding="utf-8")


def test_every_shipped_read_policy_rule_is_in_the_table():
    for rule in load_read_policy().rules:
        assert f"`{rule.id}`" in DOC, rule.id


def test_every_stage_one_rule_is_documented():
    for rule in RULES:
        assert f"`{rule}`" in DOC, rule


def test_every_cli_option_is_documented():
    for param in [*read.params, *read_replay.params]:
        for opt in getattr(param, "opts", []):
            if opt.startswith("-"):
                assert opt in DOC, opt
