"""Choosing a model client by name: ``offline`` (the default) or any OpenAI-compatible model.

This is the one place that maps a ``--model`` string to a client, so the CLI, the server and a
user's script resolve names the same way. Configuration arrives as keyword arguments; reading
the environment (``OPENAI_API_KEY`` ...) is the CLI's job, not this module's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .clients.base import ExtractionClient

#: The model that needs no key and no server: deterministic, rule-based, shipped in the package.
OFFLINE_MODEL = "offline"
DEFAULT_MODEL = OFFLINE_MODEL


def get_client(
    model: str = DEFAULT_MODEL,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    mode: str | None = None,
    timeout: float | None = None,
    max_attempts: int | None = None,
    max_tokens: int | None = None,
    timeout_retries: int | None = None,
    system_as_user: bool | None = None,
    cache: bool = True,
    cache_dir: Path | None = None,
) -> ExtractionClient:
    """The client for ``model``.

    ``offline`` gives :class:`~extractor.offline.OfflineClient` (never cached: it is
    deterministic and faster than a cache lookup). Any other name gives an
    :class:`~extractor.clients.openai_client.OpenAIClient` for that model at ``base_url``,
    wrapped in a :class:`~extractor.cache.CachingClient` (in ``cache_dir``) unless
    ``cache=False``. ``mode``, ``timeout`` (per request), ``max_attempts``, ``max_tokens``,
    ``timeout_retries`` and ``system_as_user`` are passed on when given, so the client's own
    defaults apply otherwise.
    """
    if model == OFFLINE_MODEL:
        from .offline import OfflineClient

        return OfflineClient()
    from .clients.openai_client import OpenAIClient

    given = {
        "mode": mode,
        "timeout": timeout,
        "max_attempts": max_attempts,
        "max_tokens": max_tokens,
        "timeout_retries": timeout_retries,
        "system_as_user": system_as_user,
    }
    options: dict[str, Any] = {"base_url": base_url, "api_key": api_key}
    options.update({name: value for name, value in given.items() if value is not None})
    client: ExtractionClient = OpenAIClient(model=model, **options)
    if cache:
        from .cache import CachingClient

        client = CachingClient(client, directory=cache_dir)
    return client


__all__ = ["DEFAULT_MODEL", "OFFLINE_MODEL", "get_client"]
