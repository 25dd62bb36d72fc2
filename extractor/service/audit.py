"""The audit routes: a memory's stored record, why it is in the state it is, and its lineage.

::

    GET /v1/memories/{memory_id}           the stored record (its claims)
    GET /v1/memories/{memory_id}:why       per claim: the rules behind each capability, its
                                           support paths, source families, lineage, versions
    GET /v1/memories/{memory_id}:lineage   per claim: ancestors and descendants along the
                                           derivation graph, the roots and the sources

These hand a memory to no purpose: they are for inspecting the store (an auditor, a support
engineer, a data-subject access request), so they need the ``audit`` scope, which no key has
unless it is granted (``extractor keys create --scopes ...,audit``). A memory is used for a
purpose only through ``POST /v1/memories:read``, which judges the purpose.

A memory of another tenant is not found by the one lookup every route starts with
(:func:`~.memories.owned`), exactly as a memory that does not exist.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict

from ..store import Lineage, MemoryStore, StoredClaim
from ..store.models import Why
from ..vocab import Scope
from .auth import Caller, Gate
from .errors import error_responses
from .memories import memory_path, owned
from .views import tenant_json, tenant_model


class MemoryRecord(BaseModel):
    """``GET /v1/memories/{memory_id}``: the memory's claims as the store holds them."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    claims: list[StoredClaim]


class MemoryWhy(BaseModel):
    """``GET /v1/memories/{memory_id}:why``: everything that explains each claim's state."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    claims: list[Why]


class MemoryLineage(BaseModel):
    """``GET /v1/memories/{memory_id}:lineage``: each claim's derivation graph."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str
    claims: list[Lineage]


AUDIT_ERRORS = error_responses(401, 403, 404, 422, 429, 500)


def install_audit_routes(app: FastAPI, *, store: MemoryStore, gate: Gate) -> None:
    """Add the audit routes to ``app``."""
    audit: Any = Depends(gate.require(Scope.AUDIT))

    def route(
        suffix: str,
        operation_id: str,
        summary: str,
        answer: type[MemoryRecord | MemoryWhy | MemoryLineage],
        each: Callable[[StoredClaim], Any],
    ) -> None:
        """``GET /v1/memories/{memory_id}<suffix>``: ``each`` of the memory's claims."""

        @app.get(
            f"/v1/memories/{{memory_id:memory_id}}{suffix}",
            operation_id=operation_id,
            summary=summary,
            response_model=tenant_model(answer),
            responses=AUDIT_ERRORS,
        )
        async def endpoint(memory_id: str = memory_path(), caller: Caller = audit) -> JSONResponse:
            claims = [each(c) for c in owned(store, caller, memory_id)]
            return JSONResponse(tenant_json(answer(memory_id=memory_id, claims=claims)))

    route("", "getMemory", "The stored record of one memory of the key's tenant (audit)",
          MemoryRecord, lambda claim: claim)  # fmt: skip
    route(":why", "explainMemory",
          "Why each claim of a memory of the key's tenant is in its state (audit)",
          MemoryWhy, lambda claim: store.why(claim.claim_id))  # fmt: skip
    route(":lineage", "getMemoryLineage",
          "The derivation lineage of each claim of a memory of the key's tenant (audit)",
          MemoryLineage, lambda claim: store.lineage(claim.claim_id))  # fmt: skip


__all__ = ["MemoryLineage", "MemoryRecord", "MemoryWhy", "install_audit_routes"]
