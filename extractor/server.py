"""A tiny HTTP service for apps not written in Python (optional extra: ``pip install
'memory-candidate-extractor[server]'``).

::

    POST /v1/extract                  a conversation (schemas/conversation.schema.json)
                                      -> 200 the result line (schemas/result.schema.json)
    GET  /v1/schemas/{name}           a published JSON Schema (conversation, result, ...)
    GET  /healthz                     {"status": "ok", model, policy, versions}

Every error is JSON, ``{"error": {"code", "message", "field"}}``, with a status that says whose
fault it is:

=====  ==================================  ==================================================
413    ``BODY_TOO_LARGE``                  body over ``max_body_bytes`` (Content-Length or
                                           bytes actually received)
415    ``UNSUPPORTED_MEDIA_TYPE``          a Content-Type that is not JSON
400    ``INVALID_JSON``                    not UTF-8 JSON
422    ``SCHEMA_INVALID`` and the loader's the body does not match the published conversation
       codes (``INPUT_INVALID``,           schema, or the loader refuses it (duplicate message
       ``LIMIT_EXCEEDED``)                 ids, too many messages ...); ``field`` names where
503    ``MODEL_RATE_LIMITED``              the model is rate limited; ``Retry-After`` is set
504    ``MODEL_TIMEOUT``                   the model did not answer in time
502    other ``MODEL_*``, ``OUTPUT_*``     the model failed or answered with nothing usable
500    anything else                       a bug or a broken policy: the message says which
=====  ==================================  ==================================================

The service holds one :class:`~extractor.pipeline.Extractor` (stateless per call), so requests
run concurrently on the event loop.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

try:
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the HTTP service needs the 'server' extra: "
        "pip install 'memory-candidate-extractor[server]'"
    ) from exc

from ._version import SCHEMA_VERSION, __version__
from .conversation import Limits, conversation_from_data
from .errors import (
    ExtractionOutputError,
    ExtractorError,
    InputError,
    InputLocation,
    ModelClientError,
    ModelTimeout,
    RateLimited,
)
from .pipeline import Extractor
from .schemas import SCHEMAS, schema_for

#: Largest request body accepted, in bytes (413 beyond it).
DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024
#: ``Retry-After`` sent with a 503 when the model server did not say how long to wait.
DEFAULT_RETRY_AFTER_S = 1

JSON_TYPES = ("application/json", "application/*+json", "text/json")


class ApiError(Exception):
    """An error response: HTTP status, our error code, a message and the offending field."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        field: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = headers or {}

    def response(self) -> JSONResponse:
        body = {"error": {"code": self.code, "message": self.message, "field": self.field}}
        return JSONResponse(body, status_code=self.status, headers=self.headers)


def create_app(
    extractor: Extractor | None = None,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    limits: Limits | None = None,
) -> FastAPI:
    """The FastAPI application. ``extractor`` defaults to the offline model; ``limits``
    (message size and count) default to the extractor's own."""
    extractor = extractor or Extractor()
    limits = limits or extractor.limits
    app = FastAPI(
        title="memory-candidate-extractor",
        version=__version__,
        description="Extract candidate memories from a conversation; validate and admit them.",
    )

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return exc.response()

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        prov = extractor.provenance()
        return {"status": "ok", "model": prov.model, "policy": f"{prov.policy_id}@"
                f"{prov.policy_version}", "prompt_hash": prov.prompt_hash,
                "schema_version": SCHEMA_VERSION, "version": __version__}  # fmt: skip

    @app.get("/v1/schemas/{name}")
    async def schema(name: str) -> JSONResponse:
        if name not in SCHEMAS:
            raise ApiError(404, "NOT_FOUND", f"no schema {name!r} (expected one of "
                           f"{', '.join(sorted(SCHEMAS))})", field="name")  # fmt: skip
        return JSONResponse(schema_for(name))

    @app.post("/v1/extract")
    async def extract(request: Request) -> JSONResponse:
        data = await read_json(request, max_body_bytes)
        check_schema(data)
        try:
            conversation = conversation_from_data(data, limits=limits)
        except InputError as exc:
            raise ApiError(422, exc.code, str(exc), field=exc.location.field) from None
        try:
            result = await extractor.aprocess(conversation)
        except ExtractorError as exc:
            raise model_error(exc) from None
        return JSONResponse(result.model_dump(mode="json"))

    return app


async def read_json(request: Request, max_body_bytes: int) -> Any:
    """The request body as JSON, refusing oversized bodies before reading them when it can."""
    media = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if not (media in JSON_TYPES or media.endswith("+json")):
        raise ApiError(415, "UNSUPPORTED_MEDIA_TYPE",
                       f"send the conversation as application/json, not {media!r}")  # fmt: skip
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_body_bytes:
        raise _too_large(int(declared), max_body_bytes)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body_bytes:
            raise _too_large(None, max_body_bytes)
    try:
        return json.loads(bytes(body).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ApiError(400, "INVALID_JSON", f"body is not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ApiError(400, "INVALID_JSON", f"body is not JSON: {exc.msg} at line "
                       f"{exc.lineno} column {exc.colno}") from None  # fmt: skip
    except RecursionError:
        raise ApiError(400, "INVALID_JSON", "body is nested too deeply") from None


def _too_large(size: int | None, limit: int) -> ApiError:
    amount = "" if size is None else f" of {size} bytes"
    return ApiError(413, "BODY_TOO_LARGE",
                    f"request body{amount} exceeds the limit of {limit} bytes")  # fmt: skip


@cache
def _conversation_validator() -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema_for("conversation"))


def check_schema(data: Any) -> None:
    """Validate against the published conversation schema; 422 naming the first bad field."""
    from jsonschema.exceptions import best_match

    error = best_match(_conversation_validator().iter_errors(data))
    if error is not None:
        field = json_path(error.absolute_path)
        where = f"field {field}: " if field else ""
        raise ApiError(422, "SCHEMA_INVALID", f"{where}{error.message}", field=field or None)


def json_path(parts: Any) -> str:
    """``messages[0].role`` from a jsonschema path deque."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def model_error(exc: ExtractorError) -> ApiError:
    """The response for an error raised while extracting, validating or admitting."""
    if isinstance(exc, RateLimited):
        wait = exc.retry_after if exc.retry_after is not None else DEFAULT_RETRY_AFTER_S
        headers = {"Retry-After": str(max(1, math.ceil(wait)))}
        return ApiError(503, exc.code, str(exc), headers=headers)
    if isinstance(exc, ModelTimeout):
        return ApiError(504, exc.code, str(exc))
    if isinstance(exc, ModelClientError | ExtractionOutputError):
        return ApiError(502, exc.code, str(exc))
    if isinstance(exc, InputError):
        location: InputLocation = exc.location
        return ApiError(422, exc.code, str(exc), field=location.field)
    return ApiError(500, exc.code, str(exc))


@contextmanager
def serve_in_thread(app: FastAPI, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run ``app`` with uvicorn in a background thread; yield its base URL; stop it after.

    ``port=0`` picks a free ephemeral port. For tests and embedding; ``extractor serve`` runs
    uvicorn in the foreground instead.
    """
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                           lifespan="off"))  # fmt: skip
    thread = threading.Thread(target=server.run, name="extractor-http", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the HTTP service did not start on {host}:{port}")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "ApiError",
    "create_app",
    "serve_in_thread",
]
