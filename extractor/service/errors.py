"""The service's one error shape, ``{"error": {"code", "message", "field"}}``, and its codes.

Every status a route can answer is declared in the OpenAPI document with the codes it carries
(:data:`CODES`), so a client generated from the spec knows every error it can get.
"""

from __future__ import annotations

import math
from typing import Any

from fastapi.responses import JSONResponse

from ..errors import (
    ExtractionOutputError,
    ExtractorError,
    InputError,
    ModelClientError,
    ModelTimeout,
    RateLimited,
)

#: ``Retry-After`` when the model server named no wait, and of a 503 ``SERVER_BUSY``.
DEFAULT_RETRY_AFTER_S = 1

#: status -> (what it means, the codes it carries). 500 may carry any other error code.
CODES: dict[int, tuple[str, tuple[str, ...]]] = {
    400: ("The body is not UTF-8 JSON.", ("INVALID_JSON",)),
    401: ("No valid API key: send `Authorization: Bearer <key>`.",
          ("UNAUTHENTICATED", "KEY_REVOKED")),
    403: ("The key is valid but its grant does not cover this request (scope, purpose or "
          "tenant).", ("FORBIDDEN", "TENANT_MISMATCH")),
    404: ("No such resource (for a tenant's resources: none of this key's tenant).",
          ("NOT_FOUND",)),
    413: ("The body is over the service's `max_body_bytes`.", ("BODY_TOO_LARGE",)),
    415: ("The Content-Type is not JSON.", ("UNSUPPORTED_MEDIA_TYPE",)),
    422: ("The body does not match the published schema, or the loader refuses it; `field` "
           "names where.", ("SCHEMA_INVALID", "INPUT_INVALID", "LIMIT_EXCEEDED")),
    429: ("This key is over its rate limit, or this client address has sent too many invalid "
          "keys; `Retry-After` says when to try again.",
          ("RATE_LIMITED", "TOO_MANY_AUTH_FAILURES")),
    500: ("A bug or a broken policy; the message says which.", ()),
    502: ("The model failed, refused, or answered with nothing usable.",
          ("MODEL_ERROR", "MODEL_REFUSED", "MODEL_OUTPUT_TRUNCATED", "OUTPUT_UNREADABLE")),
    503: ("The model server is rate limiting, or this service is at its concurrency limit; "
          "`Retry-After` says when to try again.", ("MODEL_RATE_LIMITED", "SERVER_BUSY")),
    504: ("The model did not answer within its timeout, or the request took longer than the "
          "service's `request_timeout_s`.", ("MODEL_TIMEOUT", "REQUEST_TIMEOUT")),
}  # fmt: skip

#: Statuses that always carry a ``Retry-After`` header.
RETRY_AFTER_STATUSES = frozenset({429, 503})


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

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message, "field": self.field}}

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def retry_after(seconds: float) -> dict[str, str]:
    return {"Retry-After": str(max(1, math.ceil(seconds)))}


def model_error(exc: ExtractorError) -> ApiError:
    """The response for an error raised while extracting, validating or admitting."""
    if isinstance(exc, RateLimited):
        wait = exc.retry_after if exc.retry_after is not None else DEFAULT_RETRY_AFTER_S
        return ApiError(503, exc.code, str(exc), headers=retry_after(wait))
    if isinstance(exc, ModelTimeout):
        return ApiError(504, exc.code, str(exc))
    if isinstance(exc, ModelClientError | ExtractionOutputError):
        return ApiError(502, exc.code, str(exc))
    if isinstance(exc, InputError):
        return ApiError(422, exc.code, str(exc), field=exc.location.field)
    return ApiError(500, exc.code, str(exc))


def error_schema(status: int) -> dict[str, Any]:
    """The JSON Schema of an error body with ``status``: the shape, and its codes."""
    codes = CODES[status][1]
    code: dict[str, Any] = (
        {"type": "string", "enum": list(codes)}
        if codes
        else {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"}
    )
    detail = {
        "type": "object",
        "required": ["code", "message", "field"],
        "additionalProperties": False,
        "properties": {
            "code": code,
            "message": {"type": "string", "description": "What went wrong, for a human."},
            "field": {
                "type": ["string", "null"],
                "description": "Where in the request, as `messages[0].role`, when one field is.",
            },
        },
    }
    return {
        "type": "object",
        "required": ["error"],
        "additionalProperties": False,
        "properties": {"error": detail},
    }


def error_responses(*statuses: int) -> dict[int | str, Any]:
    """The OpenAPI ``responses`` entries for ``statuses``, each with its schema (the examples
    of :data:`EXAMPLES` are added to the finished document by :mod:`.openapi`)."""
    out: dict[int | str, Any] = {}
    for status in statuses:
        entry: dict[str, Any] = {
            "description": CODES[status][0],
            "content": {"application/json": {"schema": error_schema(status)}},
        }
        if status in RETRY_AFTER_STATUSES:
            entry["headers"] = {
                "Retry-After": {
                    "description": "Whole seconds to wait before trying again.",
                    "required": True,
                    "schema": {"type": "string", "pattern": "^[0-9]+$"},
                }
            }
        out[status] = entry
    return out


#: One example per status, shown in the OpenAPI document.
EXAMPLES: dict[int, ApiError] = {
    400: ApiError(400, "INVALID_JSON", "body is not JSON: Expecting value at line 1 column 15"),
    401: ApiError(401, "UNAUTHENTICATED", "send an API key as 'Authorization: Bearer <key>' "
                  "(create one with 'extractor keys create')"),
    403: ApiError(403, "FORBIDDEN", "this key's grant does not include scope 'extract' "
                  "(its scopes: read)"),
    404: ApiError(404, "NOT_FOUND", "no schema 'nope' (expected one of conversation, result)",
                  field="name"),
    413: ApiError(413, "BODY_TOO_LARGE", "request body of 4000000 bytes exceeds the limit of "
                  "2097152 bytes"),
    415: ApiError(415, "UNSUPPORTED_MEDIA_TYPE",
                  "send the body as application/json, not 'text/plain'"),
    422: ApiError(422, "SCHEMA_INVALID", "field messages[0].role: 'wizard' is not one of "
                  "['system', 'developer', 'user', 'assistant', 'tool']",
                  field="messages[0].role"),
    429: ApiError(429, "RATE_LIMITED", "this key is over its rate limit of 2 requests/s "
                  "(bursts of 20); retry after 1 s"),
    500: ApiError(500, "INTERNAL_ERROR", "internal error (see the service log)"),
    502: ApiError(502, "MODEL_ERROR", "the model server answered HTTP 500"),
    503: ApiError(503, "SERVER_BUSY", "8 requests are already being processed; retry after 1 s"),
    504: ApiError(504, "REQUEST_TIMEOUT", "the request took longer than 120 s"),
}  # fmt: skip


__all__ = ["CODES", "EXAMPLES", "ApiError", "error_responses", "error_schema", "model_error"]
