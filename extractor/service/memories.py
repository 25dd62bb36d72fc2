"""Routes over the memory store, every one inside the key's tenant.

::

    POST /v1/memories:ingest          a conversation -> extracted, admitted and stored
    POST /v1/memories:read            {query, subject, purpose, ...} -> the read path's result
    POST /v1/memories/{memory_id}:revoke   {"reason"} -> the revocation's impact report

(the audit routes are in :mod:`.audit`, erasure in :mod:`.erasure`, the OpenAPI links that
chain them in :mod:`.links`.)

The tenant is the key's. Every route that names a memory starts with one lookup,
:func:`owned`: ``store.claims(tenant=<key's tenant>, memory_id=...)``. A memory of another
tenant is not found by it, with the same query, the same store calls and the same answer as a
memory that does not exist, so there is nothing to tell apart, in the body, the headers or the
work done (``tests/test_service_tenants.py`` counts the calls;
``benchmarks/not_found_timing.py`` measures the time).

An ingested conversation is stored under the id ``<tenant>/<conversation id>`` (``/`` cannot
occur in a tenant name), so that two tenants sending the same conversation get distinct memory
ids and neither can learn, from a collision, what the other stored.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema
from starlette.convertors import Convertor, register_url_convertor

from ..conversation import ISO_TIMESTAMP_PATTERN
from ..errors import ReadDenied, StoreError
from ..read import Caller as ReadCaller
from ..read import MemoryReader, ReadPolicy, ReadResult
from ..read.policy import load_read_policy
from ..store import IngestReport, MemoryStore, RevocationReport, StoredClaim
from ..vocab import Capability, Scope
from .auth import Caller, Gate
from .body import check_body, read_json
from .errors import ApiError, error_responses, model_error
from .limits import ServiceLimits, WorkSlots
from .views import tenant_json, tenant_model

MEMORY_ID_PATTERN = r"^[A-Za-z0-9_]{1,64}$"
#: At least one character that is whitespace neither to JSON Schema's regexes (ECMA-262) nor
#: to Python's (``str.strip``), so the schema and the store agree on what is blank.
NOT_BLANK = r"[^\s\x1c-\x1f\x85\ufeff]"


class MemoryIdConvertor(Convertor[str]):
    """Path segments that can be memory ids: routing never reads ``mem_x:revoke`` as an id."""

    regex = MEMORY_ID_PATTERN.strip("^$")

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("memory_id", MemoryIdConvertor())


class RevokeRequest(BaseModel):
    """``POST /v1/memories/{memory_id}:revoke``: why the memory is revoked."""

    model_config = ConfigDict(extra="forbid", title="RevokeRequest")

    reason: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK,
                        description="Why, for the audit trail.")  # fmt: skip


_MOMENT_SCHEMA = {"anyOf": [{"type": "string", "pattern": ISO_TIMESTAMP_PATTERN}, {"type": "null"}]}
_Moment = Annotated[datetime | None, WithJsonSchema(_MOMENT_SCHEMA)]


class ReadBody(BaseModel):
    """``POST /v1/memories:read``: what to read for whom and why (the tenant and the caller are
    the key's)."""

    model_config = ConfigDict(extra="forbid", title="ReadBody")

    query: str = Field(min_length=1, max_length=2000, pattern=NOT_BLANK)
    subject: str = Field(min_length=1, max_length=256, description="The user read about.")
    purpose: Capability = Field(description="Must be one of the key's purposes.")
    as_of: _Moment = Field(default=None, description="Valid time (naive = UTC).")
    known_at: _Moment = Field(default=None, description="System time: what was known then.")
    k: int = Field(default=8, ge=1, le=50)
    token_budget: int | None = Field(default=None, ge=1, le=100_000)


def memory_path() -> Any:
    return Path(description="A memory id (`mem_...`).", pattern=MEMORY_ID_PATTERN)


def install_memory_routes(
    app: FastAPI,
    *,
    store: MemoryStore,
    caps: ServiceLimits,
    gate: Gate,
    work: WorkSlots,
    extract_from: Any,
) -> None:
    """Add the store routes to ``app``; ``await extract_from(request, caller, stored=True)`` is
    the result for the request's conversation, as ``POST /v1/extract`` makes it."""

    @app.post(
        "/v1/memories:ingest",
        operation_id="ingestMemories",
        summary="Extract, admit and store the memories of one conversation in the key's tenant",
        response_model=tenant_model(IngestReport),
        responses=error_responses(400, 401, 403, 413, 415, 422, 429, 500, 502, 503, 504),
        openapi_extra=body_of("ConversationInput"),
    )
    async def ingest(
        request: Request,
        caller: Caller = Depends(gate.require(Scope.INGEST)),  # noqa: B008
    ) -> JSONResponse:
        async with work.slot():
            result = await extract_from(request, caller, stored=True)
            try:
                report = store.ingest(result, tenant=caller.tenant)
            except StoreError as exc:
                raise model_error(exc) from None
        return JSONResponse(tenant_json(report))

    policy = load_read_policy()

    @app.post(
        "/v1/memories:read",
        operation_id="readMemories",
        summary="Read the memories usable for a purpose, in the key's tenant, for its caller",
        response_model=ReadResult,
        responses=error_responses(400, 401, 403, 413, 415, 422, 429, 500, 503, 504),
        openapi_extra=body_of("ReadBody"),
    )
    async def read_memories(
        request: Request,
        caller: Caller = Depends(gate.require(Scope.READ)),  # noqa: B008
    ) -> JSONResponse:
        async with work.slot():
            data = await read_json(request, caps.max_body_bytes)
            check_body(data, ReadBody)
            body = ReadBody.model_validate(data)
            caller.check_purpose(body.purpose)
            result = read_for(store, policy, caller, body)
        return JSONResponse(result.model_dump(mode="json"))

    @app.post(
        "/v1/memories/{memory_id:memory_id}:revoke",
        operation_id="revokeMemory",
        summary="Revoke a memory of the key's tenant; its dependents are revalidated",
        response_model=tenant_model(RevocationReport),
        responses=error_responses(400, 401, 403, 404, 413, 415, 422, 429, 500, 503, 504),
        openapi_extra=body_of("RevokeRequest"),
    )
    async def revoke(
        request: Request,
        memory_id: str = memory_path(),
        caller: Caller = Depends(gate.require(Scope.REVOKE)),  # noqa: B008
    ) -> JSONResponse:
        async with work.slot():
            data = await read_json(request, caps.max_body_bytes)
            check_body(data, RevokeRequest)
            owned(store, caller, memory_id)
            try:
                report = store.revoke(memory_id, reason=data["reason"], actor=caller.caller)
            except StoreError as exc:
                raise ApiError(422, exc.code, str(exc)) from None
        return JSONResponse(tenant_json(report))


def read_for(store: MemoryStore, policy: ReadPolicy, caller: Caller, body: ReadBody) -> ReadResult:
    """One read through the read path, as the key's caller (recorded in the read audit)."""
    reader_caller = ReadCaller(id=caller.caller, purposes=caller.purposes, acting_for=body.subject)
    as_of = body.as_of
    if as_of is not None and as_of.tzinfo is not None:
        as_of = as_of.astimezone(UTC).replace(tzinfo=None)
    try:
        with MemoryReader(store, policy=policy) as reader:
            return reader.read(body.query, tenant=caller.tenant, subject=body.subject,
                               caller=reader_caller, purpose=body.purpose, as_of=as_of,
                               known_at=body.known_at, k=body.k,
                               token_budget=body.token_budget)  # fmt: skip
    except ReadDenied as exc:
        raise ApiError(403, "FORBIDDEN", str(exc), field="purpose") from None
    except StoreError as exc:
        raise ApiError(422, exc.code, str(exc)) from None


def owned(store: MemoryStore, caller: Caller, memory_id: str) -> list[StoredClaim]:
    """The claims of ``memory_id`` in the caller's tenant; 404 when there are none.

    One tenant-first lookup decides, ``memories WHERE tenant = ? AND memory_id = ?``: a memory
    of another tenant and a memory that does not exist both get nothing from that same query,
    and nothing else runs for either. The index ``memories (tenant, memory_id)`` (store
    migration ``s010_memory_lookup``) answers it from both columns, so another tenant's memory
    is not even found by the index search. (Before ``s010``, ``store.claims`` alone would not
    have done: its view query found another tenant's memory by id and then visited every
    current version of the store, 22 ms against 0.07 ms for a missing id at 4,490 memories;
    ``benchmarks/not_found_timing.py``.)
    """
    if not store.backend.select("memories", {"tenant": caller.tenant, "memory_id": memory_id}):
        raise ApiError(404, "NOT_FOUND", f"no memory {memory_id!r}", field="memory_id")
    return store.claims(tenant=caller.tenant, memory_id=memory_id)


def body_of(component: str) -> dict[str, Any]:
    """The ``requestBody`` of a route that reads its JSON body itself."""
    from .openapi import REQUEST_EXAMPLES

    media = {"schema": {"$ref": f"#/components/schemas/{component}"},
             "example": REQUEST_EXAMPLES[component]}  # fmt: skip
    return {"requestBody": {"required": True, "content": {"application/json": media}}}


__all__ = ["ReadBody", "RevokeRequest", "install_memory_routes", "owned"]
