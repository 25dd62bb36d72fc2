"""Replay: re-admit stored candidates under another policy and report exactly what changes."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from strategies import make_candidate

from extractor.admission import ReplayReport, admit, iter_results, load_policy, parse_policy, replay
from extractor.admission.policy import DEFAULT_POLICY_PATH
from extractor.candidates import MemoryCandidate
from extractor.cli import cli
from extractor.errors import InputError
from extractor.extraction import Entity
from extractor.results import ConversationResult, RunProvenance
from extractor.vocab import (
    CandidateKind,
    Capability,
    Commitment,
    MemoryType,
    Origin,
    VerificationState,
)

DEFAULT_TEXT = DEFAULT_POLICY_PATH.read_text(encoding="utf-8")
C = Capability


def edited(old: str, new: str, version: str = "2026.12.01.5") -> str:
    assert old in DEFAULT_TEXT
    text = DEFAULT_TEXT.replace(old, new).replace(
        'version = "2026.12.01.4"', f'version = "{version}"'
    )
    return text


def result(conversation_id: str, candidates: list[MemoryCandidate]) -> ConversationResult:
    policy = load_policy()
    return ConversationResult(
        conversation_id=conversation_id,
        conversation_hash="sha256:" + conversation_id,
        candidates=candidates,
        decisions=admit(candidates, policy),
        provenance=RunProvenance(
            model="offline", prompt_id="p", prompt_version="1", prompt_hash="h",
            policy_id=policy.id, policy_version=policy.version, extractor_version="0",
        ),
        recorded_at=datetime(2026, 9, 1),
    )  # fmt: skip


def user_event(mid: str, **kw) -> MemoryCandidate:
    return make_candidate(mid, origin_kind=Origin.USER, memory_type=MemoryType.ASSERTION_EVENT,
                          kind=CandidateKind.OBSERVATION, content="User stated that their manager is Alice.",
                          verification_state=VerificationState.VERIFIED_OBSERVATION_OF_EVENT, **kw)  # fmt: skip


def user_prop(mid: str, **kw) -> MemoryCandidate:
    kw.setdefault("content", "User's manager is Alice.")
    return make_candidate(
        mid, origin_kind=Origin.USER, memory_type=MemoryType.WORLD_PROPOSITION, **kw
    )


@pytest.fixture
def stored() -> list[ConversationResult]:
    return [
        result("conv-a", [user_event("mem_a1"), user_prop("mem_a2", parent_memory_ids=["mem_a1"]),
                          make_candidate("mem_a3")]),
        result("conv-b", [user_prop("mem_b1", content="Bob's phone is 555-123-4567.",
                                    entities=[Entity(name="Bob", type="PERSON")]),
                          make_candidate("mem_b2", response_commitment=Commitment.HOLD),
                          make_candidate("mem_b3", origin_kind=Origin.MEMORY_DERIVED,
                                         memory_type=MemoryType.DERIVED_SUMMARY,
                                         parent_memory_ids=["mem_b2"])]),
    ]  # fmt: skip


def changed_ids(report: ReplayReport) -> list[str]:
    return [c.memory_id for c in report.changed]


def test_replay_under_the_same_policy_changes_nothing(stored):
    report = replay(stored, load_policy())
    assert (report.conversations, report.decisions, report.unchanged) == (2, 6, 6)
    assert report.changed == [] and report.previous_policies == ["memory-admission 2026.12.01.4"]


def test_a_stored_denial_without_its_reason_is_no_change_under_a_new_version(stored):
    # result line format 2 stores no reasons; under the same version they are filled in from the
    # policy, under another they cannot be: the denial itself (use, rule) is what is compared
    asked = result("conv-c", [make_candidate("mem_c1", requested_uses=[C.CONVERSATIONAL_CONTEXT])])
    bare = [
        r.model_copy(update={"decisions": [d.model_copy(update={
            "denied_requested_uses": [u.model_copy(update={"reason": None})
                                      for u in d.denied_requested_uses],
            "rules_fired": [f.model_copy(update={"reason": None}) for f in d.rules_fired]})
            for d in r.decisions]})
        for r in [*stored, asked]
    ]  # fmt: skip
    assert any(d.denied_requested_uses for r in bare for d in r.decisions)
    report = replay(bare, parse_policy(edited("", "")))
    assert report.changed == [] and report.unchanged == 7


def test_editing_one_rule_changes_exactly_the_decisions_it_shapes(stored):
    new = parse_policy(edited(
        'effect = { lifecycle = "PROVISIONAL", max_lifecycle = "PROVISIONAL", allow = ["PERSONALIZATION", "CONVERSATIONAL_CONTEXT"] }',
        'effect = { lifecycle = "PROVISIONAL", max_lifecycle = "PROVISIONAL", allow = ["PERSONALIZATION"] }',
    ))  # fmt: skip
    report = replay(stored, new)
    assert changed_ids(report) == ["mem_a2"]  # mem_b1's context use was already forbidden
    (change,) = report.changed
    assert change.conversation_id == "conv-a" and change.content == "User's manager is Alice."
    assert [(f.field, f.before, f.after) for f in change.fields] == [
        ("allowed_uses", ["PERSONALIZATION", "CONVERSATIONAL_CONTEXT"], ["PERSONALIZATION"])
    ]
    assert [(r.rule_id, r.change) for r in change.rules] == [
        ("user-proposition-provisional", "DEFINITION_CHANGED")
    ]
    assert (report.policy_version, report.unchanged) == ("2026.12.01.5", 5)


def test_removing_a_rule_reports_that_it_no_longer_fires(stored):
    start = DEFAULT_TEXT.index('[[rules]]\nid = "third-party-personal-data-scoped"')
    end = DEFAULT_TEXT.index("[[rules]]", start + 1)
    new = parse_policy(DEFAULT_TEXT[:start] + DEFAULT_TEXT[end:])
    report = replay(stored, new)
    assert changed_ids(report) == ["mem_b1"]
    (change,) = report.changed
    fields = {f.field: (f.before, f.after) for f in change.fields}
    assert fields["flags"] == (["THIRD_PARTY_PERSONAL_DATA", "SCOPE_REQUESTING_USER"], [])
    assert fields["allowed_uses"] == (
        ["PERSONALIZATION"],
        ["PERSONALIZATION", "CONVERSATIONAL_CONTEXT"],
    )
    assert [(r.rule_id, r.change) for r in change.rules] == [
        ("third-party-personal-data-scoped", "NO_LONGER_FIRES")
    ]


def test_a_change_that_flows_through_lineage_is_reported_on_the_child_with_a_note(stored):
    new = parse_policy(edited(
        'effect = { max_lifecycle = "QUARANTINED", eligible = false, forbid',
        'effect = { max_lifecycle = "QUARANTINED", forbid',
    ))  # fmt: skip
    report = replay(stored, new)
    assert changed_ids(report) == ["mem_b2", "mem_b3"]
    parent, child = report.changed
    assert [(f.field, f.before, f.after) for f in child.fields] == [
        ("eligible_for_admission", False, True)
    ]
    assert child.notes == ["parent mem_b2's decision changed"]
    assert [(r.rule_id, r.change) for r in parent.rules] == [
        ("held-response-never-active", "DEFINITION_CHANGED")
    ]


def test_replay_as_of_override_is_noted(stored):
    report = replay(stored, load_policy(), as_of=datetime(2030, 1, 1))
    assert report.changed == []  # nothing in these candidates is time-bounded
    bounded = make_candidate("mem_t", origin_kind=Origin.EXTERNAL_SOURCE, verification_state=VerificationState.VERIFIED,
                             memory_type=MemoryType.EXTERNAL_SOURCE_CLAIM,
                             temporal={"kind": "CURRENT", "valid_to": "2027-06"})  # fmt: skip
    report = replay([result("conv-t", [bounded])], load_policy(), as_of=datetime(2030, 1, 1))
    (change,) = report.changed
    assert change.notes == ["judged as of 2030-01-01 00:00:00 instead of 2026-08-30 18:39:00"]
    assert [r.rule_id for r in change.rules if r.change == "NOW_FIRES"] == [
        "expired-loses-current-authority", "expired-proposition-is-stale"
    ]  # fmt: skip


def test_candidates_without_a_stored_decision_are_reported(stored):
    stored[0].decisions.pop()
    report = replay(stored, load_policy())
    (change,) = report.changed
    assert change.memory_id == "mem_a3" and change.notes == [
        "no stored decision for this candidate"
    ]
    assert all(f.before is None for f in change.fields)


# --- reading result files and the CLI -----------------------------------------------------------


def write_results(path: Path, results: list[ConversationResult], bad: list[str] = ()) -> Path:
    lines = [r.model_dump_json() for r in results]
    lines[1:1] = bad
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_iter_results_reports_bad_lines_by_file_and_line_and_keeps_going(tmp_path, stored):
    path = write_results(tmp_path / "r.jsonl", stored, ["{not json", '{"conversation_id": "x"}'])
    items = list(iter_results(path))
    assert [type(i).__name__ for i in items] == [
        "ConversationResult", "InputError", "InputError", "ConversationResult"
    ]  # fmt: skip
    bad = [i for i in items if isinstance(i, InputError)]
    assert [(e.location.source, e.location.line) for e in bad] == [(str(path), 2), (str(path), 3)]
    assert bad[1].location.conversation_id == "x" and "provenance" in str(bad[1])


def invoke(*args: str, stdin: str | None = None):
    return CliRunner().invoke(cli, ["admit", *args], input=stdin)


def test_cli_same_policy_exit_0_and_summary(tmp_path, stored):
    path = write_results(tmp_path / "r.jsonl", stored)
    res = invoke("--fail-on-change", str(path))
    assert res.exit_code == 0, res.output
    assert "2 conversations, 6 decisions: 0 changed, 6 unchanged" in res.stdout


def test_cli_new_policy_prints_diff_and_fails_on_change_when_asked(tmp_path, stored):
    path = write_results(tmp_path / "r.jsonl", stored)
    new = tmp_path / "new.toml"
    new.write_text(edited('allow = ["PERSONALIZATION", "CONVERSATIONAL_CONTEXT"] }\n\n[[rules]]\nid = "source-claim',
                          'allow = ["PERSONALIZATION"] }\n\n[[rules]]\nid = "source-claim'))  # fmt: skip
    res = invoke("--policy", str(new), str(path))
    assert res.exit_code == 0
    assert (
        "policy memory-admission 2026.12.01.5 (stored decisions: memory-admission 2026.12.01.4)"
        in res.stdout
    )
    assert 'conv-a  mem_a2  a2  "User\'s manager is Alice."' in res.stdout
    assert (
        "  allowed_uses: [PERSONALIZATION, CONVERSATIONAL_CONTEXT] -> [PERSONALIZATION]"
        in res.stdout
    )
    assert "    rule user-proposition-provisional: definition changed:" in res.stdout
    assert invoke("--policy", str(new), "--fail-on-change", str(path)).exit_code == 1
    as_json = invoke("--policy", str(new), "--json", str(path))
    report = ReplayReport.model_validate_json(as_json.stdout)
    assert [c.memory_id for c in report.changed] == ["mem_a2"]


def test_cli_bad_lines_exit_2_naming_file_and_line_but_replay_the_rest(tmp_path, stored):
    path = write_results(tmp_path / "r.jsonl", stored, ["garbage"])
    res = invoke(str(path))
    assert res.exit_code == 2
    assert f"error: {path}:2: not a result line" in res.stderr
    assert "2 conversations, 6 decisions" in res.stdout


def test_cli_reads_stdin(stored):
    text = "\n".join(r.model_dump_json() for r in stored)
    res = invoke("-", stdin=text)
    assert res.exit_code == 0 and "2 conversations" in res.stdout


def test_cli_invalid_policy_and_options_exit_2(tmp_path, stored):
    path = write_results(tmp_path / "r.jsonl", stored)
    bad = tmp_path / "bad.toml"
    bad.write_text(
        edited('id = "held-response-never-active"', 'id = "model-output-never-evidence"')
    )
    res = invoke("--policy", str(bad), str(path))
    assert res.exit_code == 2
    assert f"{bad}, rule 'model-output-never-evidence': duplicate rule id" in res.stderr
    res = invoke("--as-of", "next tuesday", str(path))
    assert res.exit_code == 2 and "not an ISO 8601 time" in res.stderr
    res = invoke(str(tmp_path / "missing.jsonl"))
    assert res.exit_code == 2 and "missing.jsonl" in res.stderr


def test_cli_help_documents_the_command():
    res = CliRunner().invoke(cli, ["admit", "--help"])
    assert res.exit_code == 0 and "--fail-on-change" in res.output and "Examples:" in res.output
