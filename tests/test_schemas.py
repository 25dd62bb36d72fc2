"""The published JSON Schema files: generated from the models, checked in, usable on their own."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import examples, schema_validator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

from extractor.conversation import conversation_from_data
from extractor.errors import InputError
from extractor.schemas import DEFAULT_SCHEMAS_DIR, SCHEMAS, drifted, render

ROOT = Path(__file__).resolve().parents[1]


def test_checked_in_schemas_match_the_models():
    stale = drifted(ROOT / "schemas")
    assert not stale, f"schemas drifted from the models: {stale}; run 'extractor schema --write'"


def test_every_schema_is_a_valid_2020_12_schema_with_a_versioned_id():
    for name in SCHEMAS:
        doc = json.loads((DEFAULT_SCHEMAS_DIR / f"{name}.schema.json").read_text())
        Draft202012Validator.check_schema(doc)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert doc["$id"].startswith(f"urn:memory-candidate-extractor:schema:{name}:")


def test_drift_is_detected(tmp_path: Path):
    for name in SCHEMAS:
        (tmp_path / f"{name}.schema.json").write_text(render(name))
    assert drifted(tmp_path) == []
    target = tmp_path / "memory-candidate.schema.json"
    doc = json.loads(target.read_text())
    doc["properties"]["content"]["minLength"] = 5
    target.write_text(json.dumps(doc))
    assert drifted(tmp_path) == ["memory-candidate"]


VALID_CANDIDATE: dict[str, Any] = {
    "id": "c1",
    "span": {"message_id": "m0", "quote": "My manager is Alice.", "start": 0, "end": 20},
    "kind": "OBSERVATION",
    "memory_type": "ASSERTION_EVENT",
    "content": "User stated that their manager is Alice.",
    "origin": "USER",
    "temporal": {"expression": None, "kind": "CURRENT", "valid_from": None, "valid_to": None},
    "entities": [{"name": "Alice", "type": "PERSON"}],
    "parent_ids": [],
    "requested_uses": ["CONVERSATIONAL_CONTEXT"],
    "uncertainty": {"hedges": [], "reported_by": None},
}

JUNK = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=8), st.just(""),
    st.just("VERIFIED"), st.builds(list), st.builds(dict),
    st.builds(lambda: ["PERSONALIZATION", "NOPE"]),
)  # fmt: skip


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(0, 3))):
        paths = _paths(doc)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent: Any = doc
        for key in path[:-1]:
            parent = parent[key]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(JUNK)
        elif action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "verified", "x"]))] = draw(JUNK)
    return doc


def _agree(model: type[BaseModel], schema: str, doc: Any) -> None:
    by_schema = schema_validator(schema).is_valid(doc)
    try:
        model.model_validate_json(json.dumps(doc), strict=True)
        by_model = True
    except ValidationError:
        by_model = False
    assert by_schema == by_model, (by_schema, by_model, doc)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated({"candidates": [VALID_CANDIDATE]}))
def test_jsonschema_and_pydantic_agree_on_extraction_output(doc):
    _agree(SCHEMAS["extraction-output"](), "extraction-output", doc)


CONVERSATION: dict[str, Any] = {
    "id": "c",
    "messages": [
        {"role": "user", "content": "hi", "timestamp": "2024-05-10T09:00:00"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "commitment": "PERMIT"},
        {"role": "tool", "content": "x", "tool_call_id": "t1"},
    ],
    "metadata": {},
}


@settings(max_examples=examples(75), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(CONVERSATION))
def test_conversation_schema_accepts_exactly_what_the_loader_accepts(doc):
    by_schema = schema_validator("conversation").is_valid(doc)
    try:
        conversation_from_data(json.loads(json.dumps(doc)), input_format="openai")
        by_loader = True
    except InputError:
        by_loader = False
    assert by_schema == by_loader, (by_schema, by_loader, doc)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_command_prints_the_checked_in_file(name):
    from click.testing import CliRunner

    from extractor.cli import cli

    result = CliRunner().invoke(cli, ["schema", name])
    assert result.exit_code == 0
    assert result.output == (ROOT / "schemas" / f"{name}.schema.json").read_text()


def test_schema_check_command_exit_codes(tmp_path: Path):
    from click.testing import CliRunner

    from extractor.cli import cli

    runner = CliRunner()
    assert runner.invoke(cli, ["schema", "--write", "--dir", str(tmp_path)]).exit_code == 0
    assert runner.invoke(cli, ["schema", "--check", "--dir", str(tmp_path)]).exit_code == 0
    (tmp_path / "result.schema.json").write_text("{}")
    result = runner.invoke(cli, ["schema", "--check", "--dir", str(tmp_path)])
    assert result.exit_code == 1 and "drifted: result.schema.json" in result.output
