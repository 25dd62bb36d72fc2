"""Canonical JSON and content hashes: the basis of idempotent records, caching and replay.

Canonical JSON is ``json.dumps`` with sorted keys, no insignificant whitespace and UTF-8 text
(``ensure_ascii=False``). Two values that are equal as JSON always serialize to the same bytes,
so their SHA-256 is a stable identity. This is a documented contract: changing it changes every
stored hash.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
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


#: Deeper values are cut by :func:`writable`; no record this tool writes needs a tenth of it.
MAX_WRITABLE_DEPTH = 32
TOO_DEEP = "<nested too deeply; not kept>"


def writable(value: Any, depth: int = MAX_WRITABLE_DEPTH) -> Any:
    """``value`` as a JSON line, a hash and the ledger can hold it.

    Model output is untrusted JSON, and JSON can carry what no UTF-8 file can: a lone surrogate
    (``"\\ud800"``) becomes the six characters ``\\ud800``; ``NaN`` and infinities become
    ``null``; containers nested deeper than ``depth`` become :data:`TOO_DEEP`. Anything else is
    kept as it is, so a rejection still shows what the model said.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping | list | tuple) and depth <= 0:
        return TOO_DEEP
    if isinstance(value, Mapping):
        return {writable(k, depth): writable(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [writable(v, depth - 1) for v in value]
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})


def nested_deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` has containers nested more than ``limit`` levels deep (no recursion).

    Walks level by level (a container deeper than ``limit`` has an ancestor at exactly
    ``limit``), with exact-type checks first: model output is plain JSON data, and the abstract
    ``Mapping`` check is far slower than ``type(...) is dict``.
    """
    level: list[Any] = [value]
    depth = 0
    while level:
        below: list[Any] = []
        for item in level:
            kind = type(item)
            if kind in _SCALARS:
                continue
            if kind is dict or isinstance(item, Mapping):
                children: Any = item.values()
            elif kind is list or isinstance(item, list | tuple):
                children = item
            else:
                continue
            if depth >= limit:
                return True
            below.extend(children)
        level = below
        depth += 1
    return False
