"""A local, on-disk cache of model answers, so re-running a batch does not pay twice.

:class:`CachingClient` wraps any :class:`~extractor.clients.base.ExtractionClient`. The key is
the content hash of::

    conversation content hash + prompt hash + client type + model + client settings
    (mode, temperature, base URL, attempts, ...) + validation options

so a change to the conversation, the prompt files, the model or any setting that changes the
answer is a miss. Only answers are cached, never errors: a rate-limited or refused conversation
is asked again next time. Wrap the client *before* chunking and each chunk is cached on its own.

Entries are JSON files (one :class:`~extractor.clients.base.ClientResult` each) under
``<directory>/<2 hex>/<hash>.json``, written atomically. An unreadable entry is a miss and is
overwritten. The default directory is ``$EXTRACTOR_CACHE_DIR``, else
``$XDG_CACHE_HOME/memory-candidate-extractor``, else ``~/.cache/memory-candidate-extractor``.
The cache is opt-out: the CLI wraps clients in it unless told ``--no-cache``.

Secrets are never written to it: an answer any text of which holds a secret
(:func:`~extractor.content.find_secrets` -- the model quoted a password, a key, a card number) is
not cached, so that conversation is asked again next time. A masked copy would not do: the gate
must see the model's own words to reject such a candidate as ``SECRET_IN_CANDIDATE``, exactly
as on the first run.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .clients.base import ClientResult, ExtractionClient
from .content import find_secrets
from .conversation import Conversation
from .hashing import content_hash
from .prompts import Prompt
from .validation import ValidationOptions

CACHE_FORMAT = 1
APP_DIR = "memory-candidate-extractor"

log = logging.getLogger(__name__)


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$EXTRACTOR_CACHE_DIR``, else ``$XDG_CACHE_HOME/<app>``, else ``~/.cache/<app>``."""
    env = os.environ if environ is None else environ
    if env.get("EXTRACTOR_CACHE_DIR"):
        return Path(env["EXTRACTOR_CACHE_DIR"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path("~/.cache").expanduser())
    return Path(base) / APP_DIR


class CachingClient:
    """An :class:`ExtractionClient` that answers identical requests from disk.

    Results served from the cache have ``cached=True``.
    """

    def __init__(self, inner: ExtractionClient, directory: Path | None = None) -> None:
        self.inner = inner
        self.directory = Path(directory) if directory is not None else default_cache_dir()

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def settings(self) -> dict[str, Any]:
        return dict(getattr(self.inner, "settings", {}) or {})

    def key(self, conversation: Conversation, prompt: Prompt, options: ValidationOptions) -> str:
        """The cache key (a ``sha256:`` content hash) of one request."""
        return content_hash(
            {
                "format": CACHE_FORMAT,
                "conversation": conversation.content_hash(),
                "prompt": prompt.hash,
                "client": type(self.inner).__qualname__,
                "model": self.inner.model_name,
                "settings": self.settings,
                "options": dataclasses.asdict(options),
            }
        )

    def path_for(self, key: str) -> Path:
        digest = key.removeprefix("sha256:")
        return self.directory / digest[:2] / f"{digest}.json"

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        path = self.path_for(self.key(conversation, prompt, options))
        hit = _load(path)
        if hit is not None:
            return hit.model_copy(update={"cached": True})
        result = await self.inner.extract(conversation, prompt, options)
        if holds_secret(result.model_dump(mode="json")):
            log.info("not caching the answer for %s: it holds a secret", conversation.id)
        else:
            _store(path, result)
        return result


def holds_secret(value: Any) -> bool:
    """Whether any string in ``value`` (JSON data, keys included) holds a secret."""
    if isinstance(value, str):
        return bool(value) and bool(find_secrets(value))
    if isinstance(value, dict):
        return any(holds_secret(k) or holds_secret(v) for k, v in value.items())
    if isinstance(value, list):
        return any(holds_secret(v) for v in value)
    return False


def _load(path: Path) -> ClientResult | None:
    try:
        return ClientResult.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValidationError, ValueError) as exc:
        log.warning("ignoring unreadable cache entry %s: %s", path, exc)
        return None


def _store(path: Path, result: ClientResult) -> None:
    """Write atomically; a cache that cannot be written costs money later, not data now."""
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(result.model_dump_json())
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        log.warning("could not write cache entry %s: %s", path, exc)
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
