"""Policy files: the shipped default, user policies, and clear errors for invalid ones."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from strategies import make_candidate

from extractor.admission import admit, load_policy, parse_policy
from extractor.admission.policy import DEFAULT_POLICY_PATH
from extractor.errors import PolicyError
from extractor.schemas import DEFAULT_SCHEMAS_DIR
from extractor.vocab import Capability, LifecycleState, Origin

SCHEMA = json.loads((DEFAULT_SCHEMAS_DIR / "policy.schema.json").read_text())

MINIMAL = """
id = "mine"
version = "1"

[[rules]]
id = "everything-context"
reason = "Keep everything as context."
effect = { lifecycle = "PROVISIONAL", allow = ["CONVERSATIONAL_CONTEXT"] }
"""


def write(tmp_path: Path, text: str, name: str = "policy.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def rule(rule_id: str = "r1", effect: str = 'allow = ["PERSONALIZATION"]', extra: str = "") -> str:
    return f'[[rules]]\nid = "{rule_id}"\nreason = "why"\n{extra}effect = {{ {effect} }}\n'


def policy_text(*rules: str) -> str:
    return 'id = "p"\nversion = "1"\n\n' + "\n".join(rules)


def test_default_policy_loads_with_id_version_and_source():
    policy = load_policy()
    assert (policy.id, policy.version) == ("memory-admission", "2026.12.01.4")
    assert "default.toml" in policy.source
    assert policy.hash.startswith("sha256:") and len(policy.rule_hashes) == len(policy.rules)


def test_default_policy_file_validates_against_the_published_schema():
    raw = tomllib.loads(DEFAULT_POLICY_PATH.read_text(encoding="utf-8"))
    Draft202012Validator(SCHEMA).validate(raw)


def test_schema_rejects_what_the_loader_rejects():
    raw = tomllib.loads(policy_text(rule(effect='allow = ["TELEPATHY"]')))
    assert list(Draft202012Validator(SCHEMA).iter_errors(raw))
    with pytest.raises(PolicyError):
        parse_policy(policy_text(rule(effect='allow = ["TELEPATHY"]')))


def test_a_user_policy_file_replaces_the_default(tmp_path: Path):
    policy = load_policy(write(tmp_path, MINIMAL))
    assert (policy.id, policy.version, policy.source) == (
        "mine",
        "1",
        str(tmp_path / "policy.toml"),
    )
    (d,) = admit([make_candidate(origin_kind=Origin.MODEL_OUTPUT)], policy)
    assert d.lifecycle_state is LifecycleState.PROVISIONAL
    assert d.allowed_uses == [Capability.CONVERSATIONAL_CONTEXT]
    assert (d.policy_id, d.policy_version) == ("mine", "1")


def test_json_policy_files_are_read_as_json(tmp_path: Path):
    data = tomllib.loads(MINIMAL)
    policy = load_policy(write(tmp_path, json.dumps(data), "policy.json"))
    assert policy.hash == load_policy(write(tmp_path, MINIMAL)).hash  # same meaning, same hash


def test_comments_and_formatting_do_not_change_the_policy_hash():
    assert parse_policy(MINIMAL).hash == parse_policy("# a comment\n" + MINIMAL + "\n\n").hash
    assert parse_policy(MINIMAL).hash != parse_policy(MINIMAL.replace('"1"', '"2"')).hash


@pytest.mark.parametrize(
    ("text", "bad_rule", "message"),
    [
        (policy_text(rule("r1"), rule("r1")), "r1", "duplicate rule id"),
        (policy_text(rule("r1"), rule("r2", 'allow = ["TELEPATHY"]')), "r2", "allow.0"),
        (policy_text(rule("r1", 'lifecycle = "SORT_OF_ACTIVE"')), "r1", "lifecycle"),
        (policy_text(rule("r1", 'lifecycle = "REVOKED"')), "r1", "lifecycle"),
        (policy_text(rule("r1", 'allow = ["FACTUAL_EVIDENCE"], forbid = ["FACTUAL_EVIDENCE"]')), "r1",
         "both allows and forbids FACTUAL_EVIDENCE"),
        (policy_text(rule("r1", 'lifecycle = "ACTIVE", max_lifecycle = "QUARANTINED"')), "r1",
         "exceeds max_lifecycle"),
        (policy_text(rule("r1", 'persist = false, lifecycle = "ACTIVE"')), "r1", "contradicts"),
        (policy_text(rule("r1", "eligible = true")), "r1", "eligible"),
        (policy_text(rule("r1", "allow = []")), "r1", "effect does nothing"),
        (policy_text(rule("r1", extra='match = { orgin_kind = ["USER"] }\n')), "r1", "orgin_kind"),
        (policy_text(rule("r1", extra='match = { origin_kind = ["ROBOT"] }\n')), "r1", "origin_kind"),
        (policy_text(rule("r1", extra='match = { flags = ["STALE"] }\n')), "r1",
         "no earlier rule adds"),
        (policy_text(rule("r1", 'flags = ["stale"]')), "r1", "UPPER_SNAKE_CASE"),
        (policy_text(rule("default-deny")), "default-deny", "reserved"),
        (policy_text(rule("Bad Id")), "Bad Id", "pattern"),
        (policy_text('[[rules]]\nreason = "x"\neffect = { allow = ["PERSONALIZATION"] }\n'), "#1", "id"),
    ],
)  # fmt: skip
def test_invalid_policies_fail_with_an_error_naming_file_and_rule(
    tmp_path: Path, text: str, bad_rule: str, message: str
):
    path = write(tmp_path, text)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    err = info.value
    assert err.source == str(path) and err.rule == bad_rule
    assert str(path) in str(err) and f"rule {bad_rule!r}" in str(err)
    assert message in str(err)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('id = "p"\nversion = "1"\nrules = []\n', "rules"),
        ('version = "1"\n' + rule(), "id"),
        ('id = "p"\nversion = "1"\n[[rules]\n', "not valid TOML"),
    ],
)
def test_invalid_policy_structure_names_the_file(tmp_path: Path, text: str, message: str):
    path = write(tmp_path, text)
    with pytest.raises(PolicyError) as info:
        load_policy(path)
    assert str(info.value).startswith(f"{path}: ") and message in str(info.value)


def test_missing_policy_file_is_a_policy_error(tmp_path: Path):
    with pytest.raises(PolicyError, match="cannot read policy file"):
        load_policy(tmp_path / "nope.toml")


def test_invalid_json_policy_names_the_file(tmp_path: Path):
    path = write(tmp_path, "{not json", "p.json")
    with pytest.raises(PolicyError, match="not valid JSON") as info:
        load_policy(path)
    assert info.value.source == str(path)


DOCS = Path(__file__).resolve().parents[1] / "docs" / "admission.md"


def test_docs_table_lists_every_rule_of_the_default_policy_in_order():
    text = DOCS.read_text(encoding="utf-8")
    rows = [
        line.split("|")[2].strip(" `")
        for line in text.splitlines()
        if line.startswith("| ") and "`" in line.split("|")[2]
    ]
    assert [r for r in rows if r in load_policy().rule_hashes] == [
        r.id for r in load_policy().rules
    ]


def test_docs_example_policy_is_valid():
    text = DOCS.read_text(encoding="utf-8")
    start = text.index('```toml\nid = "my-admission"') + len("```toml\n")
    policy = parse_policy(text[start : text.index("```", start)], source="docs")
    assert (policy.id, [r.id for r in policy.rules]) == (
        "my-admission", ["model-output-never-evidence", "user-proposition-context"]
    )  # fmt: skip
