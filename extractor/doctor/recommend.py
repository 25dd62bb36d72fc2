"""From measurements to ``extractor run`` options: pure functions, no I/O."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..clients.compat import CHARS_PER_TOKEN
from ..clients.openai_client import (
    DEFAULT_LOCAL_TIMEOUT,
    DEFAULT_TIMEOUT,
    MAX_MAX_TOKENS,
    MIN_MAX_TOKENS,
    OUTPUT_TOKENS_PER_TRANSCRIPT_TOKEN,
)
from .models import ModeCheck, Recommendation, Speeds

#: The order modes are preferred in: the server enforces the schema in the first two.
PREFERENCE = ("tools", "json_schema", "json", "md_json")
#: Prompt tokens every request carries besides the transcript (prompt 1.2.0, the largest mode).
FIXED_PROMPT_TOKENS = 1_300
#: Headroom over the worst case a full chunk takes (prompt read + the whole max_tokens).
TIMEOUT_MARGIN = 1.5
MIN_TIMEOUT = 30.0
#: A chunk whose worst case takes longer than this is made smaller instead.
MAX_RECOMMENDED_TIMEOUT = 900.0
MIN_CHUNK_CHARS = 2_000
DEFAULT_REMOTE_CONCURRENCY = 4


def best_mode(checks: Sequence[ModeCheck]) -> str | None:
    """The first mode of :data:`PREFERENCE` that answered with a readable extraction."""
    ok = {c.mode for c in checks if c.outcome == "supported"}
    return next((m for m in PREFERENCE if m in ok), None)


def max_tokens_for_chars(chunk_chars: int) -> int:
    """The ``max_tokens`` the client chooses for a chunk of ``chunk_chars`` characters."""
    tokens = math.ceil(chunk_chars / CHARS_PER_TOKEN)
    return min(MAX_MAX_TOKENS, MIN_MAX_TOKENS + OUTPUT_TOKENS_PER_TRANSCRIPT_TOKEN * tokens)


def worst_case_seconds(chunk_chars: int, speeds: Speeds) -> float | None:
    """How long one full chunk can take: its prompt read, then ``max_tokens`` generated."""
    if not speeds.prompt_tokens_per_s or not speeds.generation_tokens_per_s:
        return None
    prompt = FIXED_PROMPT_TOKENS + math.ceil(chunk_chars / CHARS_PER_TOKEN)
    return (
        (speeds.round_trip_s or 0.0)
        + prompt / speeds.prompt_tokens_per_s
        + max_tokens_for_chars(chunk_chars) / speeds.generation_tokens_per_s
    )


def recommend(
    checks: Sequence[ModeCheck],
    speeds: Speeds,
    *,
    local: bool,
    chunk_chars: int,
    system_dropped: bool,
) -> Recommendation:
    """Mode, ``max_tokens``, timeout, concurrency and chunk size for this server.

    The chunk is halved until a full chunk's worst case fits :data:`MAX_RECOMMENDED_TIMEOUT`;
    the timeout is that worst case with :data:`TIMEOUT_MARGIN` (the client's default when the
    speeds could not be measured). One request at a time for a single-slot server, and for a
    local one whose slots could not be told (a queued request's wait counts against its
    timeout).
    """
    worst = worst_case_seconds(chunk_chars, speeds)
    while worst is not None and worst > MAX_RECOMMENDED_TIMEOUT and chunk_chars > MIN_CHUNK_CHARS:
        chunk_chars = max(MIN_CHUNK_CHARS, chunk_chars // 2)
        worst = worst_case_seconds(chunk_chars, speeds)
    default = DEFAULT_LOCAL_TIMEOUT if local else DEFAULT_TIMEOUT
    timeout = default if worst is None else max(MIN_TIMEOUT, math.ceil(worst * TIMEOUT_MARGIN))
    one_slot = speeds.single_slot or (speeds.single_slot is None and local)
    concurrency = 1 if one_slot else DEFAULT_REMOTE_CONCURRENCY
    return Recommendation(
        mode=best_mode(checks),
        max_tokens=max_tokens_for_chars(chunk_chars),
        model_timeout=float(timeout),
        concurrency=concurrency,
        max_chunk_chars=chunk_chars,
        system_as_user=system_dropped,
    )


__all__ = ["best_mode", "max_tokens_for_chars", "recommend", "worst_case_seconds"]
