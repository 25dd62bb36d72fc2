"""Canonical JSON and content hashes: the basis of idempotent records, caching and replay.

Canonical JSON is ``json.dumps`` with sorted keys, no insignificant whitespace and UTF-8 text
(``ensure_ascii=False``). Two values that are equal as JSON always serialize to the same bytes,
so their SHA-256 is a stable identity. This is a documented contract: changing it changes every
stored hash.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def canonical_json(value: Any) -> str:
    """Serialize ``value`` (JSON data or a Pydantic model) to canonical JSON text."""
    return json.dumps(
        _plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def content_hash(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``."""
    return "sha256:" + hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def text_hash(text: str) -> str:
    """``sha256:<hex>`` of UTF-8 text, used for prompt templates."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
