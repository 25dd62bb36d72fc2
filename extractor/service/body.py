"""Reading a request body: JSON only, within the size limit, valid against a published schema."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from fastapi import Request
from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from pydantic import BaseModel

from ..schemas import datetimes_as_written, schema_for
from .errors import ApiError

JSON_TYPES = ("application/json", "application/*+json", "text/json")


async def read_json(request: Request, max_body_bytes: int) -> Any:
    """The request body as JSON, refusing oversized bodies before reading them when it can."""
    media = request.headers.get("content-type", "application/json").split(";")[0].strip().lower()
    if not (media in JSON_TYPES or media.endswith("+json")):
        raise ApiError(415, "UNSUPPORTED_MEDIA_TYPE",
                       f"send the body as application/json, not {media!r}")  # fmt: skip
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
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(schema_for(name))


@cache
def _model_validator(model: type[BaseModel]) -> Draft202012Validator:
    return Draft202012Validator(datetimes_as_written(model.model_json_schema(mode="validation")))


def check_schema(data: Any, name: str = "conversation") -> None:
    """Validate against the published schema ``name``; 422 naming the first bad field."""
    _check(_validator(name), data)


def check_body(data: Any, model: type[BaseModel]) -> None:
    """Validate against ``model``'s JSON Schema (the one the OpenAPI document shows)."""
    _check(_model_validator(model), data)


def _check(validator: Draft202012Validator, data: Any) -> None:
    error = best_match(validator.iter_errors(data))
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


__all__ = ["check_body", "check_schema", "json_path", "read_json"]
