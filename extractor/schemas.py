"""JSON Schema (draft 2020-12) files generated from the Pydantic models.

The files in ``schemas/`` are a public contract: users validate their own data with them using
any JSON Schema validator. ``extractor schema --write`` regenerates them; a test fails when the
checked-in files drift from the models.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, RootModel

from ._paths import shipped_dir
from ._version import SCHEMA_VERSION
from .admission import PolicyDocument
from .candidates import MemoryCandidate
from .conversation import Message
from .decisions import AdmissionDecision
from .extraction import ExtractionOutput
from .read.policy import ReadPolicyDocument
from .results import ConversationResult, FailureRecord
from .validation import ValidationReport

DIALECT = "https://json-schema.org/draft/2020-12/schema"
DEFAULT_SCHEMAS_DIR = shipped_dir("schemas")


_OwnerId = Annotated[str, Field(strict=True)] | Annotated[int, Field(strict=True)] | None


class ConversationMetadata(BaseModel):
    """Free-form metadata; ``tenant`` and ``user_id``, when present, are strings (or integers)."""

    model_config = ConfigDict(extra="allow", title="ConversationMetadata")

    tenant: _OwnerId = None
    user_id: _OwnerId = None


class ConversationObject(BaseModel):
    """A conversation object as users send it; ``id`` is derived from content when missing."""

    model_config = ConfigDict(extra="allow", title="ConversationObject")

    id: Annotated[str, Field(strict=True)] | Annotated[int, Field(strict=True)] | None = None
    messages: list[Message] = Field(min_length=1)
    metadata: ConversationMetadata = Field(
        default_factory=lambda: ConversationMetadata(),
        description="Free-form. 'tenant' and 'user_id' (strings) say whose memory the "
        "conversation is; the run's --tenant / --subject win over them.",
    )


class ConversationInput(
    RootModel[ConversationObject | Annotated[list[Message], Field(min_length=1)]]
):
    """One conversation: an object with ``messages``, or a bare list of messages."""


#: name -> model, for every published schema. Others register here (e.g. the result line).
SCHEMAS: dict[str, Callable[[], type[BaseModel]]] = {
    "conversation": lambda: ConversationInput,
    "extraction-output": lambda: ExtractionOutput,
    "memory-candidate": lambda: MemoryCandidate,
    "validation-report": lambda: ValidationReport,
    "admission-decision": lambda: AdmissionDecision,
    "result": lambda: _result_line(),
    "result-expanded": lambda: ConversationResult,
    "failure": lambda: FailureRecord,
    "policy": lambda: PolicyDocument,
    "store-claim": lambda: _store_models().StoredClaim,
    "store-claim-version": lambda: _store_models().ClaimVersion,
    "store-event": lambda: _store_models().MemoryEvent,
    "store-ingest-report": lambda: _store_models().IngestReport,
    "store-rebuild-report": lambda: _store_models().RebuildReport,
    "store-derived-claim": lambda: _store_derivation().DerivedClaim,
    "store-derive-report": lambda: _store_models().DeriveReport,
    "store-revocation-report": lambda: _store_models().RevocationReport,
    "store-readmit-report": lambda: _store_models().ReadmitReport,
    "store-corroboration": lambda: _store_models().Corroboration,
    "store-verify-report": lambda: _store_models().VerifyReport,
    "store-lineage": lambda: _store_models().Lineage,
    "read-policy": lambda: ReadPolicyDocument,
    "read-result": lambda: _read_result(),
    "read-replay": lambda: _read_replay(),
    "store-erasure-report": lambda: _store_models().ErasureReport,
    "store-erasure-verification": lambda: _store_models().ErasureVerification,
    "store-why": lambda: _store_models().Why,
    "lifecycle-report": lambda: _lifecycle_models().LifecycleFigures,
}


def _result_line() -> type[BaseModel]:
    from .resultline.models import ResultLine

    return ResultLine


def _read_result() -> type[BaseModel]:
    from .read.models import ReadResult

    return ReadResult


def _read_replay() -> type[BaseModel]:
    from .read.replay import ReplayReport

    return ReplayReport


def _store_models() -> Any:
    from .store import models

    return models


def _lifecycle_models() -> Any:
    from .evaluation import lifecycle

    return lifecycle


def _store_derivation() -> Any:
    from .store import derivation

    return derivation


#: How this package writes a date-time: ISO 8601, with the UTC offset only when the source had
#: one (a message timestamp without an offset stays without one). JSON Schema's ``date-time``
#: format (RFC 3339) requires the offset, so the published schemas say this instead.
DATETIME_SCHEMA: dict[str, Any] = {
    "type": "string",
    "pattern": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?$",
}


def datetimes_as_written(node: Any) -> Any:
    """``node`` with each string ``format: date-time`` as :data:`DATETIME_SCHEMA` instead."""
    if isinstance(node, list):
        return [datetimes_as_written(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: datetimes_as_written(value) for key, value in node.items()}
    if out.get("format") == "date-time" and out.get("type") == "string":
        del out["format"]
        out.update(DATETIME_SCHEMA)
    return out


def schema_for(name: str) -> dict[str, Any]:
    """The published JSON Schema ``name``: a new dict on every call (the caller may change it).

    Generated once per name and model (Pydantic builds a schema anew on every
    ``model_json_schema`` call, ~10-100 ms each), then copied."""
    schema: dict[str, Any] = json.loads(_generated(name, SCHEMAS[name]()))
    return schema


def render(name: str) -> str:
    """The schema file's text: :func:`schema_for` as indented JSON with sorted keys."""
    return _rendered(name, SCHEMAS[name]())


@cache
def _generated(name: str, model: type[BaseModel]) -> str:
    """``name``'s schema as compact JSON (a string: what the cache holds cannot be changed).
    Keyed by the model too, so a name registered again with another model is generated anew."""
    body = datetimes_as_written(model.model_json_schema(mode="validation"))
    schema = {
        "$schema": DIALECT,
        "$id": f"urn:memory-candidate-extractor:schema:{name}:{SCHEMA_VERSION}",
        **body,
    }
    return json.dumps(schema, ensure_ascii=False)


@cache
def _rendered(name: str, model: type[BaseModel]) -> str:
    schema = json.loads(_generated(name, model))
    return json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def write_schemas(directory: Path = DEFAULT_SCHEMAS_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name in SCHEMAS:
        path = directory / f"{name}.schema.json"
        path.write_text(render(name), encoding="utf-8")
        written.append(path)
    return written


def drifted(directory: Path = DEFAULT_SCHEMAS_DIR) -> list[str]:
    """Names whose checked-in file differs from what the models generate now."""
    out = []
    for name in SCHEMAS:
        path = directory / f"{name}.schema.json"
        if not path.exists() or path.read_text(encoding="utf-8") != render(name):
            out.append(name)
    return out
