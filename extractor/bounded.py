"""Bounded records of what a model returned: counts plus a bounded sample, never all of it.

A hostile (or broken) model can answer with megabytes: thousands of candidates past the
candidate limit, or a huge unparseable text on every re-ask. The result line and the ledger keep
what an audit needs -- every rejection code with its count, the first few rejected candidates as
a sample, the length and hash of every raw output with its beginning -- and drop the rest, so a
2.8 MB answer costs kilobytes, not tens of megabytes.

Nothing a model returned is kept with a secret in it: a raw output goes through
:func:`~extractor.content.redact` (passwords, keys, tokens, card and account numbers become
``[REDACTED <kind>]``) before it is measured and cut, so neither the kept beginning nor a
secret straddling the cut survives (a raw candidate holding a secret is rejected
``SECRET_IN_CANDIDATE`` and kept redacted by the gate).

Pure functions; the pipeline applies them when it builds a result, the batch when it writes a
failure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from .clients.base import AttemptRecord
from .content import redact
from .hashing import canonical_json, text_hash
from .validation import Code, Rejection

#: Rejections of these codes are counted, and only the first ones kept as a sample: past the
#: candidate limit, their number is whatever the model chose to send.
SAMPLED_CODES = frozenset({Code.CANDIDATE_LIMIT_EXCEEDED})
DEFAULT_SAMPLE = 3
#: A raw candidate (or raw output) longer than this, as JSON, is kept as its beginning plus its
#: length and hash.
DEFAULT_RAW_CHARS = 2_000


def bounded_rejections(
    rejections: Sequence[Rejection],
    *,
    sample: int = DEFAULT_SAMPLE,
    raw_chars: int = DEFAULT_RAW_CHARS,
) -> tuple[list[Rejection], dict[str, int]]:
    """The rejections to record, and how many of each code were left out (none when empty).

    Every rejection of a code outside :data:`SAMPLED_CODES` is kept; of a sampled code only the
    first ``sample``. Every kept rejection's ``raw`` is bounded by :func:`bounded_raw`.
    """
    kept: list[Rejection] = []
    seen: Counter[str] = Counter()
    omitted: Counter[str] = Counter()
    for rejection in rejections:
        code = rejection.code.value
        seen[code] += 1
        if rejection.code in SAMPLED_CODES and seen[code] > sample:
            omitted[code] += 1
            continue
        raw = bounded_raw(rejection.raw, raw_chars=raw_chars)
        kept.append(
            rejection if raw is rejection.raw else rejection.model_copy(update={"raw": raw})
        )
    return kept, dict(sorted(omitted.items()))


def bounded_raw(raw: Any, *, raw_chars: int = DEFAULT_RAW_CHARS) -> Any:
    """``raw`` itself when its JSON is at most ``raw_chars`` long, else a sample of it:
    ``{"truncated": true, "chars": <length>, "hash": <sha256 of the JSON>, "head": <start>}``."""
    text = _json_text(raw)
    if len(text) <= raw_chars:
        return raw
    return {
        "truncated": True,
        "chars": len(text),
        "hash": text_hash(text),
        "head": text[:raw_chars],
    }


def bounded_attempt(
    attempt: AttemptRecord,
    *,
    sample: int = DEFAULT_SAMPLE,
    raw_chars: int = DEFAULT_RAW_CHARS,
) -> AttemptRecord:
    """A failed attempt with its raw output cut to ``raw_chars`` (its full length and hash kept
    in ``raw_output_chars`` / ``raw_output_hash``) and its rejections bounded."""
    rejections, omitted = bounded_rejections(attempt.rejections, sample=sample, raw_chars=raw_chars)
    update: dict[str, Any] = {"rejections": rejections, "rejections_omitted": omitted}
    if attempt.raw_output_chars is None and attempt.raw_output is not None:  # not cut yet
        update |= _cut(attempt.raw_output, raw_chars)  # redacted when the record was made
    return attempt.model_copy(update=update)


def bounded_output(text: str | None, *, raw_chars: int = DEFAULT_RAW_CHARS) -> dict[str, Any]:
    """A model's raw output as a record keeps it: ``{"raw_output": <text>}`` with its secrets
    redacted, and when that is longer than ``raw_chars``, its first ``raw_chars`` characters
    with ``raw_output_chars`` (the redacted text's length) and ``raw_output_hash`` (its
    sha256)."""
    return {"raw_output": None} if text is None else _cut(redact(text), raw_chars)


def _cut(text: str, raw_chars: int) -> dict[str, Any]:
    if len(text) <= raw_chars:
        return {"raw_output": text}
    return {
        "raw_output": text[:raw_chars],
        "raw_output_chars": len(text),
        "raw_output_hash": text_hash(text),
    }


def _json_text(value: Any) -> str:
    try:
        return str(canonical_json(value))
    except (TypeError, ValueError):
        return repr(value)


__all__ = [
    "DEFAULT_RAW_CHARS",
    "DEFAULT_SAMPLE",
    "SAMPLED_CODES",
    "bounded_attempt",
    "bounded_output",
    "bounded_raw",
    "bounded_rejections",
]
