"""A published schema is generated once per name and model, and every caller gets its own copy
(issue 14: ``extractor schema --check`` and the service regenerated each schema per call)."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import BaseModel

from extractor import schemas
from extractor.schemas import render, schema_for


class Counted(BaseModel):
    """A model that counts how often its schema is built."""

    built: ClassVar[int] = 0
    name: str

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        Counted.built += 1
        return super().model_json_schema(*args, **kwargs)


class Other(BaseModel):
    size: int


def test_a_schema_is_built_once_and_each_caller_gets_a_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(schemas.SCHEMAS, "test-counted", lambda: Counted)
    first = schema_for("test-counted")
    first["properties"]["name"]["type"] = "changed by the caller"
    first.pop("$id")
    second = schema_for("test-counted")
    assert second["$id"].startswith("urn:memory-candidate-extractor:schema:test-counted:")
    assert second["properties"]["name"]["type"] == "string"
    assert second is not schema_for("test-counted")
    assert render("test-counted") == render("test-counted")
    assert Counted.built == 1


def test_a_name_registered_with_another_model_is_generated_anew(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(schemas.SCHEMAS, "test-swapped", lambda: Counted)
    assert set(schema_for("test-swapped")["properties"]) == {"name"}
    monkeypatch.setitem(schemas.SCHEMAS, "test-swapped", lambda: Other)
    assert set(schema_for("test-swapped")["properties"]) == {"size"}
    assert '"size"' in render("test-swapped")
