"""JSON Schema (draft 2020-12) files generated from the Pydantic models.

The files in ``schemas/`` are a public contract: users validate their own data with them using
any JSON Schema validator. ``extractor schema --write`` regenerates them; a test fails when the
checked-in files drift from the models.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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
from .results import ConversationResult, FailureRecord
from .validation import ValidationReport

DIALECT = "https://json-schema.org/draft/2020-12/schema"
DEFAULT_SCHEMAS_DIR = shipped_dir("schemas")


class ConversationObject(BaseModel):
    """A conversation object as users send it; ``id`` is derived from content when missing."""

    model_config = ConfigDict(extra="allow", title="ConversationObject")

    id: Annotated[str, Field(strict=True)] | Annotated[int, Field(strict=True)] | None = None
    messages: list[Message] = Field(min_length=1)
    metadata: dict[str, Any] = Field(
        default_factory=dict,
        description="Free-form. 'tenant' and 'user_id' (strings) say whose memory the "
        "conversation is; the run's --tenant / --subject win over them.",
    )


class ConversationInput(RootModel[ConversationObject | list[Message]]):
    """One conversation: an object with ``messages``, or a bare list of messages."""


#: name -> model, for every published schema. Others register here (e.g. the result line).
SCHEMAS: dict[str, Callable[[], type[BaseModel]]] = {
    "conversation": lambda: ConversationInput,
    "extraction-output": lambda: ExtractionOutput,
    "memory-candidate": lambda: MemoryCandidate,
    "validation-report": lambda: ValidationReport,
    "admission-decision": lambda: AdmissionDecision,
    "result": lambda: ConversationResult,
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
    "store-corroboration": lambda: _store_models().Corroboration,
    "store-verify-report": lambda: _store_models().VerifyReport,
    "store-lineage": lambda: _store_models().Lineage,
}


def _store_models() -> Any:
    from .store import models

    return models


def _store_derivation() -> Any:
    from .store import derivation

    return derivation


def schema_for(name: str) -> dict[str, Any]:
    model = SCHEMAS[name]()
    body = model.model_json_schema(mode="validation")
    return {
        "$schema": DIALECT,
        "$id": f"urn:memory-candidate-extractor:schema:{name}:{SCHEMA_VERSION}",
        **body,
    }


def render(name: str) -> str:
    return json.dumps(schema_for(name), indent=2, ensure_ascii=False, sort_keys=True) + "\n"


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
