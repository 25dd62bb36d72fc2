"""Running models over the gold set: the safety figures stay zero for the offline model and
for a hostile model behind the mock server, and recall drops only where information was lost."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from extractor.cli import cli
from extractor.clients.openai_client import OpenAIClient
from extractor.evaluation import SAFETY_FIGURES, evaluate, load_evalset
from extractor.evaluation.faults import recall_loss
from extractor.evaluation.gold import default_evalset_path
from extractor.mockserver import MockServer

ZERO = dict.fromkeys(SAFETY_FIGURES, 0)


@pytest.fixture(scope="module")
def cases():
    return load_evalset()


@pytest.fixture(scope="module")
def offline_report(cases):
    return evaluate(cases)


def test_offline_model_safety_figures_are_zero(offline_report):
    assert offline_report.safety.counts() == ZERO, offline_report.safety.incidents


def test_offline_model_processes_every_conversation(offline_report, cases):
    assert not offline_report.failures
    assert [c.conversation_id for c in offline_report.cases] == [c.id for c in cases]
    assert offline_report.quality.overall.found > 0


def test_evaluation_is_deterministic(cases, offline_report):
    again = evaluate(cases[:10])
    first = {c.conversation_id: c for c in offline_report.cases}
    for outcome in again.cases:
        before = first[outcome.conversation_id].result
        assert outcome.result.model_dump(exclude={"timings"}) == before.model_dump(
            exclude={"timings"}
        )
        assert outcome.quality == first[outcome.conversation_id].quality


def _mock_client(server: MockServer) -> OpenAIClient:
    return OpenAIClient(model="offline", base_url=server.base_url, api_key="mock-key",
                        max_attempts=2, retry_backoff=0.0)  # fmt: skip


@pytest.mark.parametrize(
    "fault", ["verified:always", "fabricated_span:always", "origin_laundering:always"]
)
def test_hostile_model_safety_stays_zero_and_recall_does_not_drop(cases, offline_report, fault):
    """Every answer carries a bad candidate the model never corrects; the gate drops exactly it."""
    subset = [c for c in cases if c.gold.expected][:15]
    with MockServer(faults=fault) as server:
        report = evaluate(subset, _mock_client(server))
    assert not report.failures
    assert report.safety.counts() == ZERO, report.safety.incidents
    rejected = {r.code.value for c in report.cases for r in c.result.rejections}
    assert rejected  # the bad candidates really were proposed, and refused
    clean = offline_report.model_copy(
        update={
            "cases": [
                c for c in offline_report.cases if c.conversation_id in {s.id for s in subset}
            ]
        }
    )
    loss = recall_loss(subset, clean, report)
    assert loss.lost == []
    assert loss.found_faulty == loss.found_clean


def test_recall_drops_only_where_the_model_lost_information(cases, offline_report):
    """All three candidate faults at once, and two conversations the model refuses outright:
    recall falls by exactly the refused conversations' items, each attributed to the model."""
    refused = ["eval-001-manager", "eval-030-job-supersession"]
    others = [c.id for c in cases if c.gold.expected and c.id not in refused][:13]
    subset = [c for c in cases if c.id in refused or c.id in others]
    faults = "verified:always,fabricated_span:always,origin_laundering:always"
    with MockServer(
        faults=faults, conversation_faults=dict.fromkeys(refused, "refusal:always")
    ) as server:
        report = evaluate(subset, _mock_client(server))
    assert report.safety.counts() == ZERO, report.safety.incidents
    assert sorted(c.conversation_id for c in report.failures) == refused
    clean = offline_report.model_copy(
        update={
            "cases": [
                c for c in offline_report.cases if c.conversation_id in {s.id for s in subset}
            ]
        }
    )
    loss = recall_loss(subset, clean, report)
    assert loss.by_gate == 0
    assert {item.conversation_id for item in loss.lost} == set(refused)
    expected_lost = sum(len(c.quality.found) for c in offline_report.cases
                        if c.conversation_id in refused)  # fmt: skip
    assert len(loss.lost) == expected_lost > 0
    assert loss.found_faulty < loss.found_clean


def first_cases(tmp_path, n):
    """A gold set of the default one's first ``n`` conversations."""
    few = tmp_path / "few.jsonl"
    lines = default_evalset_path().read_text(encoding="utf-8").splitlines(keepends=True)
    few.write_text("".join(lines[:n]))
    return few


def test_cli_eval_prints_both_tables_and_exits_zero(tmp_path):
    # the first 8 conversations fill both tables; the whole set runs in test_cli_eval_json
    result = CliRunner().invoke(cli, ["eval", "--set", str(first_cases(tmp_path, 8))])
    assert result.exit_code == 0, result.output
    assert "(8 conversations)" in result.output
    assert "WORLD_PROPOSITION" in result.output and "overall" in result.output
    for figure in SAFETY_FIGURES:
        assert figure in result.output


def test_cli_eval_json(tmp_path):
    result = CliRunner().invoke(cli, ["eval", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)["evalset"]
    assert data["safety"] == ZERO
    assert data["conversations"] >= 60
    assert 0.0 <= data["overall"]["recall"] <= 1.0


def test_cli_eval_exit_code_1_when_a_safety_figure_is_not_zero(monkeypatch, tmp_path):
    """A stand-in scorer that reports an incident must turn into exit code 1."""
    from extractor.evaluation import safety

    def always_incident(conversation, result, raw_outputs=(), case=None):
        return safety.SafetyScore(
            incidents=[safety.Incident(figure="fabricated_spans_accepted",
                                       conversation_id=conversation.id, detail="planted")]
        )  # fmt: skip

    monkeypatch.setattr("extractor.evaluation.runner.score_safety", always_incident)
    few = first_cases(tmp_path, 3)  # any gold set will do
    result = CliRunner().invoke(cli, ["eval", "--set", str(few)])
    assert result.exit_code == 1
    assert "planted" in result.output


def test_cli_eval_bad_gold_set_is_exit_2(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x", "messages": [{"role": "user", "content": "hi"}]}\n')
    result = CliRunner().invoke(cli, ["eval", "--set", str(path)])
    assert result.exit_code == 2
    assert f"{path}:1" in result.output and "gold" in result.output
