"""The FastAPI application: routes, their declared contract, and the error handlers."""

from __future__ import annotations

import logging
import pathlib
import time
from collections.abc import Callable
from typing import Any, Literal

from fastapi import Depends, FastAPI, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from .._version import SCHEMA_VERSION, __version__
from ..conversation import Limits, conversation_from_data
from ..errors import ExtractorError, InputError
from ..pipeline import Extractor
from ..results import ConversationResult
from ..schemas import SCHEMAS, schema_for
from ..store import MemoryStore
from ..vocab import Scope
from .audit import install_audit_routes
from .auth import Caller, Gate
from .body import check_schema, json_path, read_json
from .erasure import install_erase_route
from .errors import ApiError, error_responses, model_error
from .keys import KeyStore
from .limits import RateLimiter, ServiceLimits, WorkSlots
from .memories import body_of, install_memory_routes
from .openapi import install_openapi

LOG = logging.getLogger("extractor.service")


class Health(BaseModel):
    """``GET /healthz``: the model, policy and versions this service runs."""

    status: Literal["ok"]
    model: str
    policy: str
    prompt_hash: str
    schema_version: str
    version: str


def create_app(
    extractor: Extractor | None = None,
    *,
    keys: KeyStore | None = None,
    no_auth: bool = False,
    limits: Limits | None = None,
    service_limits: ServiceLimits | None = None,
    store: MemoryStore | None = None,
    cache_dir: pathlib.Path | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> FastAPI:
    """The FastAPI application.

    ``keys`` authenticates callers (required unless ``no_auth=True``, which serves one local
    tenant with every grant: for development only). ``extractor`` defaults to the offline model;
    ``limits`` (message size and count) default to the extractor's own; ``service_limits`` are
    the abuse limits; ``store`` adds the memory routes (:mod:`.memories`, :mod:`.audit`,
    :mod:`.erasure`), every one inside the key's tenant; ``cache_dir`` is the extractor's
    response cache, which an erasure scrubs; ``clock`` (monotonic seconds) drives the rate
    limiters.
    """
    if (keys is None) == (not no_auth):
        raise ValueError("create_app needs keys=KeyStore(...) to authenticate callers, or "
                         "no_auth=True for local development (not both)")  # fmt: skip
    extractor = extractor or Extractor()
    limits = limits or extractor.limits
    caps = service_limits or ServiceLimits()
    limiter = RateLimiter(caps.rate_per_s, caps.burst, clock=clock) if caps.rate_per_s else None
    failures = (
        RateLimiter(caps.auth_failure_rate_per_s, caps.auth_failure_burst, clock=clock)
        if caps.auth_failure_rate_per_s
        else None
    )
    gate = Gate(keys, limiter, failures)
    work = WorkSlots(caps)
    app = FastAPI(
        title="memory-candidate-extractor",
        version=__version__,
        description="Extract candidate memories from a conversation; validate and admit them. "
        'Every error is `{"error": {"code", "message", "field"}}`.',
    )
    install_handlers(app)

    @app.get(
        "/healthz", operation_id="health", response_model=Health, responses=error_responses(500)
    )
    async def healthz() -> Health:
        prov = extractor.provenance()
        return Health(status="ok", model=prov.model, policy=f"{prov.policy_id}@"
                      f"{prov.policy_version}", prompt_hash=prov.prompt_hash,
                      schema_version=SCHEMA_VERSION, version=__version__)  # fmt: skip

    @app.get(
        "/v1/schemas/{name}",
        operation_id="getSchema",
        summary="A published JSON Schema",
        response_model=dict[str, Any],
        responses=error_responses(404, 500),
    )
    async def schema(
        name: str = Path(description="A schema name.", json_schema_extra={"enum": sorted(SCHEMAS)}),
    ) -> JSONResponse:
        if name not in SCHEMAS:
            raise ApiError(404, "NOT_FOUND", f"no schema {name!r} (expected one of "
                           f"{', '.join(sorted(SCHEMAS))})", field="name")  # fmt: skip
        return JSONResponse(schema_for(name))

    async def extract_from(
        request: Request, caller: Caller, *, stored: bool = False
    ) -> ConversationResult:
        """The result for the request's conversation, in the key's tenant. A conversation to
        be ``stored`` gets the id ``<tenant>/<id>`` (see :mod:`.memories`)."""
        data = check_tenant(await read_json(request, caps.max_body_bytes), caller)
        try:
            conversation = conversation_from_data(data, limits=limits)
        except InputError as exc:
            raise ApiError(422, exc.code, str(exc), field=exc.location.field) from None
        if stored:
            conversation = conversation.model_copy(
                update={"id": f"{caller.tenant}/{conversation.id}"}
            )
        try:
            return await extractor.aprocess(conversation, tenant=caller.tenant)
        except ExtractorError as exc:
            raise model_error(exc) from None

    @app.post(
        "/v1/extract",
        operation_id="extract",
        summary="Extract, validate and admit the candidate memories of one conversation",
        response_model=ConversationResult,
        responses=error_responses(400, 401, 403, 413, 415, 422, 429, 500, 502, 503, 504),
        openapi_extra=body_of("ConversationInput"),
    )
    async def extract(
        request: Request,
        caller: Caller = Depends(gate.require(Scope.EXTRACT)),  # noqa: B008
    ) -> JSONResponse:
        async with work.slot():
            result = await extract_from(request, caller)
        return JSONResponse(result.model_dump(mode="json"))

    if store is not None:
        install_memory_routes(app, store=store, caps=caps, gate=gate, work=work,
                              extract_from=extract_from)  # fmt: skip
        install_audit_routes(app, store=store, gate=gate)
        install_erase_route(app, store=store, caps=caps, gate=gate, work=work,
                            cache_dir=cache_dir)  # fmt: skip

    install_openapi(app, auth=not no_auth)
    return app


def check_tenant(data: Any, caller: Caller) -> Any:
    """``data``, schema-checked; 403 if its ``metadata.tenant`` names a tenant other than the
    key's (the tenant of the result is always the key's)."""
    check_schema(data)
    metadata = data.get("metadata") if isinstance(data, dict) else None
    named = metadata.get("tenant") if isinstance(metadata, dict) else None
    if named is not None and str(named) != caller.tenant:
        message = f"this key is bound to tenant {caller.tenant!r}; metadata.tenant must be absent"
        raise ApiError(403, "TENANT_MISMATCH", f"{message} or the same", field="metadata.tenant")
    return data


def install_handlers(app: FastAPI) -> None:
    """Every error, ours or the framework's, in the one JSON error shape."""

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(HTTPException)
    async def _http_error(request: Request, exc: HTTPException) -> JSONResponse:
        if exc.status_code == 405:
            code, message = "METHOD_NOT_ALLOWED", f"{request.method} is not allowed here"
        elif exc.status_code == 404:
            code, message = "NOT_FOUND", f"no route {request.url.path}"
        else:
            code, message = "HTTP_ERROR", str(exc.detail)
        error = ApiError(exc.status_code, code, message, headers=dict(exc.headers or {}))
        return error.response()

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0]
        field = json_path(part for part in first["loc"][1:])
        return ApiError(422, "SCHEMA_INVALID", str(first["msg"]), field=field or None).response()

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        LOG.exception("unexpected error on %s %s", request.method, request.url.path)
        return ApiError(500, "INTERNAL_ERROR", "internal error (see the service log)").response()


__all__ = ["Health", "create_app"]
