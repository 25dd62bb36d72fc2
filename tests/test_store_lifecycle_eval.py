"""``extractor eval --lifecycle``: generated scenarios, every safety figure zero."""

from __future__ import annotations

import json

from click.testing import CliRunner

from extractor.cli import cli
from extractor.evaluation.lifecycle import evaluate_lifecycle, render_lifecycle


def test_lifecycle_scenarios_report_zero_on_every_safety_figure():
    figures = evaluate_lifecycle(6, seed=3)
    assert figures.clean, figures.safety
    assert figures.taint_checked > 0 and figures.labels_checked > 0
    assert figures.restore_correct == figures.restore_expected > 0
    assert figures.exposures_found == figures.exposures_expected
    assert figures.descendants_per_root_max >= 1 and figures.depth_max >= 1
    assert "safety figures: all zero" in render_lifecycle(figures)


def test_eval_lifecycle_command_prints_json_and_exits_zero():
    # one scenario of each family: the command's wiring (the figures are the test above's)
    result = CliRunner().invoke(cli, ["eval", "--lifecycle", "--scenarios", "1", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["clean"] and set(data["safety"].values()) == {0}
    assert data["scenarios"]["revocation"] == data["scenarios"]["erasure"] == 1
