"""The HTTP service (optional extra: ``pip install 'memory-candidate-extractor[server]'``).

::

    POST /v1/extract                  a conversation (schemas/conversation.schema.json)
                                      -> 200 the result line (schemas/result.schema.json)
    GET  /v1/schemas/{name}           a published JSON Schema (conversation, result, ...)
    GET  /healthz                     {"status": "ok", model, policy, versions}
    GET  /openapi.json                the contract (also published as schemas/openapi.json)

    with a memory store (:mod:`.memories`), each inside the key's tenant:
    POST /v1/memories:ingest          a conversation -> extracted, admitted, stored
    POST /v1/memories:read            {query, subject, purpose, ...} -> the read path's result
    GET  /v1/memories/{memory_id}     the stored record of one memory
    POST /v1/memories/{memory_id}:revoke   {"reason"} -> the impact report

Callers authenticate with a Bearer API key (:mod:`.keys`, ``extractor keys create``) bound to a
tenant, a caller and a grant (:mod:`.auth`); abuse limits are in :mod:`.limits`; every error is
``{"error": {"code", "message", "field"}}`` with the statuses and codes of :mod:`.errors`.

Modules: ``app`` (routes), ``memories`` (the store routes), ``auth`` (who is calling),
``keys`` (the key store), ``limits`` (rate, size, concurrency, time), ``body`` (reading a JSON
body), ``errors`` (the error shape), ``openapi`` (the published contract), ``runner`` (uvicorn
in a thread).
"""

from __future__ import annotations

try:
    import fastapi  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "the HTTP service needs the 'server' extra: "
        "pip install 'memory-candidate-extractor[server]'"
    ) from exc

from ..vocab import DEFAULT_SCOPES, Scope
from .app import Health, create_app
from .auth import LOCAL_CALLER, Caller, check_bind
from .errors import ApiError
from .keys import ApiKey, KeyStore
from .limits import DEFAULT_MAX_BODY_BYTES, RateLimiter, ServiceLimits
from .runner import serve_in_thread

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_SCOPES",
    "LOCAL_CALLER",
    "ApiError",
    "ApiKey",
    "Caller",
    "Health",
    "KeyStore",
    "RateLimiter",
    "Scope",
    "ServiceLimits",
    "check_bind",
    "create_app",
    "serve_in_thread",
]
