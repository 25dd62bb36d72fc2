"""What the OpenAI-compatible client puts on the wire besides the transcript, and how small it is.

Every request carries the output schema: as the forced tool's ``parameters`` (``tools``), as
``response_format.json_schema`` (``json_schema``), or pretty-printed into the system prompt by
instructor (``json``, ``md_json``). That schema is paid for on every call, so the client sends a
*lean* copy of the published contract instead of Pydantic's full one.

The lean schema
---------------
:func:`lean_schema` derives it from ``ExtractionOutput.model_json_schema()`` -- there is no second,
hand-written schema to drift -- by five rules:

1. every ``$ref`` is replaced by its ``$defs`` entry (the referencing node's own keys win), and
   ``$defs`` disappears: each definition is used once, so naming it only costs tokens;
2. annotations go: ``title`` (except the root's, which instructor names the tool after),
   ``description``, ``default``, ``examples``. What the fields *mean* is said once, in the system
   prompt; an omitted field takes its default when the answer is validated;
3. an optional field that may be null (``anyOf: [X, {"type": "null"}]``) becomes ``X``: the model
   omits it instead of sending ``null``;
4. ``type`` beside an ``enum`` of strings goes: the values already fix it;
5. every other constraint stays as it is: ``type``, ``enum``, ``properties`` (in model order),
   ``required``, ``items``, ``additionalProperties: false``, ``minLength``, ``minimum``.

So the lean schema is never looser than the full one: whatever validates against it validates
against ``ExtractionOutput``, which still checks every answer (``tests/test_openai_wire.py``
holds this as a property). The published ``schemas/extraction-output.schema.json`` stays the
full contract.

In ``json`` and ``md_json`` modes instructor writes the schema into the system prompt with
``indent=2``, which nearly doubles its tokens; :func:`compact_prompt_schema` swaps that block for
the same schema on one line before the request is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

#: Keywords that describe rather than constrain; the lean schema drops them.
ANNOTATIONS = frozenset({"title", "description", "default", "examples"})
#: Request fields that carry the schema in ``tools`` and ``json_schema`` modes.
SCHEMA_FIELDS = ("tools", "tool_choice", "response_format")
_NULL = {"type": "null"}


def lean_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The lean copy of a Pydantic JSON schema (see the module docstring for the five rules).

    Raises :class:`ValueError` for a recursive definition, which cannot be inlined.
    """
    defs: Mapping[str, Any] = schema.get("$defs", {})
    root = {key: value for key, value in schema.items() if key != "$defs"}
    lean = _lean(root, defs, ())
    if "title" in schema:
        lean = {"title": schema["title"], **lean}
    return lean


def _lean(
    node: Mapping[str, Any], defs: Mapping[str, Any], seen: tuple[str, ...]
) -> dict[str, Any]:
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name in seen:
            raise ValueError(f"recursive schema definition {name!r} cannot be inlined")
        merged = {**defs[name], **{k: v for k, v in node.items() if k != "$ref"}}
        return _lean(merged, defs, (*seen, name))
    branches = node.get("anyOf")
    if isinstance(branches, list) and _NULL in branches and len(branches) == 2:
        (kept,) = (b for b in branches if b != _NULL)
        merged = {**kept, **{k: v for k, v in node.items() if k != "anyOf"}}
        return _lean(merged, defs, seen)
    lean: dict[str, Any] = {}
    for key, value in node.items():
        if key in ANNOTATIONS or (key == "type" and value == "string" and _string_enum(node)):
            continue
        if key == "properties":
            lean[key] = {name: _lean(sub, defs, seen) for name, sub in value.items()}
        elif isinstance(value, Mapping):
            lean[key] = _lean(value, defs, seen)
        elif isinstance(value, list):
            lean[key] = [_lean(v, defs, seen) if isinstance(v, Mapping) else v for v in value]
        else:
            lean[key] = value
    return lean


def _string_enum(node: Mapping[str, Any]) -> bool:
    values = node.get("enum")
    return isinstance(values, list) and all(isinstance(v, str) for v in values)


def compact_json(value: Any) -> str:
    """JSON on one line with no spaces: how schemas are counted and sent in the prompt."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def compact_prompt_schema(
    messages: Sequence[Mapping[str, Any]], schema: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """``messages`` with instructor's ``indent=2`` copy of ``schema`` in a system message put on
    one line. Other messages, and a system prompt without that exact block, are left alone."""
    indented = json.dumps(schema, indent=2, ensure_ascii=False)
    compact = compact_json(schema)
    out: list[dict[str, Any]] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "system" and isinstance(content, str) and indented in content:
            message = {**message, "content": content.replace(indented, compact)}
        out.append(dict(message))
    return out


def fixed_parts(body: Mapping[str, Any], user_turn: str) -> dict[str, str]:
    """The parts of a chat-completions request ``body`` that every request carries.

    ``user_turn`` is the rendered user message (the prompt's ``user.md`` with the transcript):
    it is the variable part and is left out. Returns ``system`` (every system message, with any
    schema instructor wrote into it), ``schema`` (the tool or response-format fields as compact
    JSON; empty in ``json``/``md_json`` modes) and ``extra`` (what instructor adds to the user
    turn, e.g. ``md_json``'s request for a fenced answer).
    """
    messages = body.get("messages", [])
    system = "\n\n".join(str(m["content"]) for m in messages if m.get("role") == "system")
    users = "\n\n".join(str(m["content"]) for m in messages if m.get("role") == "user")
    carried = {key: body[key] for key in SCHEMA_FIELDS if key in body}
    return {
        "system": system,
        "schema": compact_json(carried) if carried else "",
        "extra": users.replace(user_turn, "", 1).strip(),
    }
