"""The lean schema the OpenAI client sends: derived from the contract, never looser, in every mode."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

from extractor.clients.base import extract_sync
from extractor.clients.openai_client import GatedExtraction, OpenAIClient
from extractor.clients.wire import (
    ANNOTATIONS,
    compact_json,
    compact_prompt_schema,
    fixed_parts,
    lean_schema,
)
from extractor.conversation import conversation_from_data
from extractor.extraction import ExtractionOutput
from extractor.mockserver import MockServer
from extractor.prompts import load_prompt

FULL = ExtractionOutput.model_json_schema()
LEAN = GatedExtraction.model_json_schema()
FULL_VALIDATOR = Draft202012Validator(FULL)
LEAN_VALIDATOR = Draft202012Validator(LEAN)
PROMPT = load_prompt()
ALICE = conversation_from_data(
    {"id": "alice", "messages": [{"role": "user", "content": "My manager is Alice."}]}
)


def walk(node: Any, path: str = "$") -> list[tuple[str, dict[str, Any]]]:
    """Every schema node with its path; property *names* are never mistaken for keywords."""
    if not isinstance(node, dict):
        return []
    found = [(path, node)]
    for key, value in node.items():
        if key in ("properties", "$defs"):
            for name, sub in value.items():
                found += walk(sub, f"{path}.{name}")
        elif isinstance(value, dict):
            found += walk(value, f"{path}/{key}")
        elif isinstance(value, list):
            for i, sub in enumerate(value):
                found += walk(sub, f"{path}/{key}[{i}]")
    return found


def resolved(node: Any) -> Any:
    """The full schema with every ``$ref`` replaced by its definition (the test's own copy)."""
    if isinstance(node, list):
        return [resolved(v) for v in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = FULL["$defs"][node["$ref"].rsplit("/", 1)[-1]]
        return resolved({**target, **{k: v for k, v in node.items() if k != "$ref"}})
    return {k: resolved(v) for k, v in node.items() if k != "$defs"}


CONSTRAINTS = ("enum", "required", "additionalProperties", "minLength", "minimum")


def constraints(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """path -> the keywords that restrict what validates, with nullable branches folded."""
    out: dict[str, dict[str, Any]] = {}
    for path, node in walk(schema):
        path = path.replace("/anyOf[0]", "")
        if "/anyOf[1]" in path:  # the {"type": "null"} branch of an optional field
            continue
        found = {k: node[k] for k in CONSTRAINTS if k in node}
        if "properties" in node:
            found["properties"] = list(node["properties"])
        if node.get("type") not in (None, "null"):
            found["type"] = node["type"]
        if "items" in node:
            found["items"] = True
        if found:
            out.setdefault(path, {}).update(found)
    return out


def test_the_lean_schema_carries_no_annotations_and_no_references() -> None:
    for path, node in walk(LEAN):
        annotations = ANNOTATIONS & node.keys()
        assert annotations <= ({"title"} if path == "$" else set()), path
        assert "$ref" not in node and "$defs" not in node, path
    assert LEAN["title"] == "ExtractionOutput"  # instructor names the tool after it


def test_the_lean_schema_keeps_every_field_and_constraint_of_the_contract() -> None:
    full = constraints(resolved(FULL))
    lean = constraints(LEAN)
    for info in full.values():
        if "enum" in info and info.get("type") == "string":
            del info["type"]  # rule 4: the enum's values fix the type
    assert lean == full


def test_the_lean_schema_is_much_smaller_than_the_full_one() -> None:
    assert len(compact_json(LEAN)) < len(compact_json(FULL)) / 2


# --- never looser: whatever the lean schema accepts, the contract accepts ----------------------

VALID = {
    "id": "c1",
    "message_id": "m0",
    "quote": "My manager is Alice.",
    "start": 0,
    "kind": "PROPOSITION",
    "memory_type": "WORLD_PROPOSITION",
    "content": "User's manager is Alice.",
    "origin": "USER",
    "temporal": {"expression": "now", "kind": "CURRENT", "valid_from": "2024-03"},
    "entities": [{"name": "Alice", "type": "PERSON"}],
    "parent_ids": ["c0"],
    "requested_uses": ["PERSONALIZATION"],
    "uncertainty": {"hedges": ["I think"], "reported_by": "sister"},
}
PATHS = [
    ("id",), ("span",), ("span", "message_id"), ("span", "quote"), ("span", "start"),
    ("span", "end"), ("kind",), ("memory_type",), ("content",), ("origin",), ("temporal",),
    ("temporal", "expression"), ("temporal", "kind"), ("temporal", "valid_from"), ("entities",),
    ("parent_ids",), ("requested_uses",), ("uncertainty",), ("uncertainty", "hedges"),
    ("uncertainty", "reported_by"),
]  # fmt: skip
ODD_VALUES = [None, "", "VERIFIED", -1, 3, 2.5, True, [], {}, ["x"], [{"name": ""}], {"x": 1}]


@st.composite
def mutated_outputs(draw: st.DrawFn) -> dict[str, Any]:
    """A valid output with a few fields deleted, replaced by odd values, or extra keys added."""
    candidate = copy.deepcopy(VALID)
    for _ in range(draw(st.integers(0, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = candidate
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent.get(key), dict) else {}
        action = draw(st.sampled_from(["delete", "replace", "extra"]))
        if action == "delete":
            parent.pop(path[-1], None)
        elif action == "replace":
            parent[path[-1]] = copy.deepcopy(draw(st.sampled_from(ODD_VALUES)))
        else:
            parent[draw(st.sampled_from(["verification", "note", "x"]))] = "VERIFIED"
    return {"candidates": [candidate]}


def has_null(value: Any) -> bool:
    if isinstance(value, dict):
        return any(has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(has_null(v) for v in value)
    return value is None


def pydantic_accepts(output: dict[str, Any]) -> bool:
    try:
        ExtractionOutput.model_validate(output)
    except ValidationError:
        return False
    return True


@given(mutated_outputs())
def test_what_the_lean_schema_accepts_the_contract_accepts(output: dict[str, Any]) -> None:
    lean_ok = LEAN_VALIDATOR.is_valid(output)
    full_ok = FULL_VALIDATOR.is_valid(output)
    if lean_ok:
        assert full_ok and pydantic_accepts(output)
    if not has_null(output):  # the only difference: lean says "omit it" where full allows null
        assert lean_ok == full_ok


def test_an_explicit_null_is_the_one_thing_only_the_full_schema_accepts() -> None:
    output = {"candidates": [{**VALID, "temporal": {"kind": "CURRENT", "valid_to": None}}]}
    assert FULL_VALIDATOR.is_valid(output) and not LEAN_VALIDATOR.is_valid(output)
    assert pydantic_accepts(output)  # the client validates with the full model: still accepted


class Node(BaseModel):
    children: list[Node] = []


def test_a_recursive_definition_cannot_be_inlined() -> None:
    with pytest.raises(ValueError, match="recursive schema definition 'Node'"):
        lean_schema(Node.model_json_schema())


def test_a_property_named_like_a_keyword_is_kept() -> None:
    schema = {"title": "T", "type": "object",
              "properties": {"title": {"type": "string", "title": "Title"},
                             "default": {"type": "integer", "default": 3}}}  # fmt: skip
    assert lean_schema(schema) == {
        "title": "T",
        "type": "object",
        "properties": {"title": {"type": "string"}, "default": {"type": "integer"}},
    }


# --- how it is sent ---------------------------------------------------------------------------


def test_only_instructors_indented_schema_in_a_system_message_is_compacted() -> None:
    indented = json.dumps(LEAN, indent=2, ensure_ascii=False)
    messages = [
        {"role": "system", "content": f"Rules.\n\nschema:\n{indented}\n\nthanks"},
        {"role": "user", "content": indented},
    ]
    out = compact_prompt_schema(messages, LEAN)
    assert out[0]["content"] == f"Rules.\n\nschema:\n{compact_json(LEAN)}\n\nthanks"
    assert out[1] == messages[1]
    assert messages[0]["content"].endswith(f"{indented}\n\nthanks")  # the input is not mutated


def sent(mode: str) -> dict[str, Any]:
    with MockServer() as server:
        client = OpenAIClient(model="offline", base_url=server.base_url, api_key="k", mode=mode)
        extract_sync(client, ALICE, PROMPT)
        return server.requests[0]


@pytest.mark.parametrize("mode", ["tools", "json_schema", "json", "md_json"])
def test_every_mode_sends_the_lean_schema(mode: str) -> None:
    body = sent(mode)
    system = body["messages"][0]["content"]
    assert system.startswith(PROMPT.system_template)
    if mode == "tools":
        (tool,) = body["tools"]
        lean = {k: v for k, v in LEAN.items() if k != "title"}
        assert tool["function"]["parameters"] == {**lean, "required": []}  # instructor adds it
        assert tool["function"]["name"] == "ExtractionOutput"
    elif mode == "json_schema":
        assert body["response_format"]["json_schema"]["schema"] == LEAN
    else:
        assert compact_json(LEAN) in system
        assert '\n  "properties"' not in system  # nothing pretty-printed is left
    assert '"$defs"' not in json.dumps(body)


def test_fixed_parts_leave_out_exactly_the_user_turn() -> None:
    body = sent("md_json")
    parts = fixed_parts(body, PROMPT.render(ALICE)[1]["content"])
    assert parts["system"].startswith(PROMPT.system_template)
    assert parts["schema"] == ""
    assert "```json" in parts["extra"] and "My manager is Alice." not in parts["extra"]
    tools = fixed_parts(sent("tools"), PROMPT.render(ALICE)[1]["content"])
    assert json.loads(tools["schema"])["tool_choice"]["function"]["name"] == "ExtractionOutput"
    assert tools["extra"] == ""
