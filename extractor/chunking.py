"""Long conversations: split by message into overlapping chunks, extract each, merge.

A conversation whose rendered transcript is longer than ``max_chars`` is cut into chunks of
whole messages, each at most ``max_chars`` (a single longer message is a chunk of its own),
consecutive chunks sharing ``overlap_messages`` messages so that a statement and its context
land together at least once. Messages are never split, and chunks keep the original message ids
and texts, so every span a model returns is already in whole-message coordinates of the full
conversation.

Merging expands each chunk's answer into full units (:func:`~extractor.proposal.expand.expand`,
against that chunk), renames candidate ids ``k<chunk>-<id>`` (parents follow) and merges a
candidate found again in a later chunk -- same message, quote, kind and memory type -- into the
first one.

The candidate limit (``ValidationOptions.max_candidates``) bounds each model call, not the
conversation: each chunk's first ``max_candidates`` candidates are merged, the rest of a chunk
are placed after every chunk's kept ones, and the merged result's ``candidate_limit`` tells the
gate how many to accept at most (so exactly the overflow is rejected
``CANDIDATE_LIMIT_EXCEEDED``). A long honest conversation is never cut to one call's worth.

A chunk whose answer was cut off at the token limit (:class:`~extractor.errors.OutputTruncated`)
is split in two (overlapping by a message when it can) and each half extracted again, down to
single messages; a single message's cut-off answer keeps the candidates it completed
(:func:`~extractor.clients.truncation.salvage`) and drops only the unfinished one. Only a single
message whose answer completed no candidate at all fails the conversation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from .clients.base import AttemptRecord, ClientResult, ExtractionClient
from .clients.truncation import salvage
from .conversation import Conversation
from .errors import ModelClientError, OutputTruncated
from .prompts import Prompt, render_message
from .proposal.expand import expand
from .toolorigin import DEFAULT_OBSERVING_TOOLS
from .usage import Usage
from .validation import ValidationOptions

#: About 6k tokens of transcript: leaves room for the prompt and the answer in an 8k-32k window.
DEFAULT_MAX_CHUNK_CHARS = 24_000
DEFAULT_OVERLAP_MESSAGES = 2
DEFAULT_CHUNK_CONCURRENCY = 4


def chunk_bounds(sizes: Sequence[int], max_chars: int, overlap_messages: int) -> list[range]:
    """Message index ranges of the chunks for messages of the given rendered sizes."""
    if max_chars < 1 or overlap_messages < 0:
        raise ValueError("max_chars must be positive and overlap_messages not negative")
    bounds: list[range] = []
    start, count = 0, len(sizes)
    while start < count:
        end, total = start, 0
        while end < count and (end == start or total + sizes[end] <= max_chars):
            total += sizes[end]
            end += 1
        bounds.append(range(start, end))
        if end >= count:
            break
        start = max(end - overlap_messages, start + 1)
    return bounds


def split_conversation(
    conversation: Conversation,
    *,
    max_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    overlap_messages: int = DEFAULT_OVERLAP_MESSAGES,
) -> list[Conversation]:
    """The chunks of ``conversation``; the conversation itself when it fits in one."""
    sizes = [len(render_message(m)) + 1 for m in conversation.messages]
    if sum(sizes) <= max_chars:
        return [conversation]
    return [_sub(conversation, b) for b in chunk_bounds(sizes, max_chars, overlap_messages)]


async def extract_chunked(
    client: ExtractionClient,
    conversation: Conversation,
    prompt: Prompt,
    options: ValidationOptions,
    *,
    max_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    overlap_messages: int = DEFAULT_OVERLAP_MESSAGES,
    max_concurrency: int = DEFAULT_CHUNK_CONCURRENCY,
) -> tuple[ClientResult, int]:
    """Extract ``conversation`` chunk by chunk; return the merged result and the chunk count.

    Chunks run concurrently, at most ``max_concurrency`` at a time. If any chunk raises, the
    first error (in chunk order) is raised once every chunk has finished.
    """
    chunks = split_conversation(
        conversation, max_chars=max_chars, overlap_messages=overlap_messages
    )
    if len(chunks) == 1:
        return _merged(
            await extract_splitting(client, conversation, prompt, options), client, options
        )
    gate = asyncio.Semaphore(max_concurrency)

    async def one(chunk: Conversation) -> list[tuple[Conversation, ClientResult]]:
        async with gate:
            return await extract_splitting(client, chunk, prompt, options)

    outcomes = await asyncio.gather(*(one(c) for c in chunks), return_exceptions=True)
    pieces: list[tuple[Conversation, ClientResult]] = []
    for outcome in outcomes:
        if not isinstance(outcome, BaseException):
            pieces += outcome
    for outcome in outcomes:
        if isinstance(outcome, ModelClientError):
            outcome.usage = outcome.usage + sum((r.usage for _, r in pieces), Usage())
        if isinstance(outcome, BaseException):
            raise outcome
    return _merged(pieces, client, options)


def _merged(
    pieces: Sequence[tuple[Conversation, ClientResult]],
    client: ExtractionClient,
    options: ValidationOptions,
) -> tuple[ClientResult, int]:
    if len(pieces) == 1:
        return pieces[0][1], 1
    results, chunks = [r for _, r in pieces], [c for c, _ in pieces]
    merged = merge_results(
        results,
        chunks,
        client.model_name,
        limit=options.max_candidates,
        allow_system_sources=options.allow_system_sources,
        observing_tools=options.observing,
    )
    return merged, len(pieces)


async def extract_splitting(
    client: ExtractionClient, chunk: Conversation, prompt: Prompt, options: ValidationOptions
) -> list[tuple[Conversation, ClientResult]]:
    """Extract ``chunk``; when its answer is cut off, split it and extract the halves (in turn:
    a local server has one slot), down to single messages, whose cut-off answers are salvaged.

    Returns the pieces extracted, in message order, each with its result; the cut-off attempt
    (its usage and a record of it) is carried by the first piece.
    """
    try:
        return [(chunk, await client.extract(chunk, prompt, options))]
    except OutputTruncated as exc:
        halves = halve(chunk)
        if not halves:
            return [(chunk, salvaged(exc, client.model_name))]
        pieces: list[tuple[Conversation, ClientResult]] = []
        for half in halves:
            pieces += await extract_splitting(client, half, prompt, options)
        note = AttemptRecord(
            attempt=exc.attempts,
            error=f"{_span(chunk)}: {exc}; split in two and extracted again",
            raw_output=exc.raw_output,
        )
        first, result = pieces[0]
        pieces[0] = (first, _with_spent(result, exc, note))
        return pieces


def halve(chunk: Conversation) -> list[Conversation]:
    """``chunk`` in two halves sharing a message when both stay smaller; ``[]`` for a single
    message."""
    count = len(chunk.messages)
    if count < 2:
        return []
    middle = (count + 1) // 2
    overlap = 1 if middle > 1 else 0
    bounds = [range(0, middle), range(middle - overlap, count)]
    return [_sub(chunk, b) for b in bounds]


def salvaged(exc: OutputTruncated, model: str) -> ClientResult:
    """The candidates a single message's cut-off answer completed; re-raises ``exc`` when there
    are none."""
    kept = salvage(exc.raw_output)
    if not kept.candidates:
        raise exc
    dropped = "; the unfinished last candidate was dropped" if kept.dropped_tail else ""
    note = AttemptRecord(
        attempt=exc.attempts,
        error=f"{exc}; kept the {len(kept.candidates)} complete candidate(s){dropped}",
        raw_output=exc.raw_output,
    )
    return ClientResult(
        output={"candidates": kept.candidates},
        raw_text=exc.raw_output,
        model=model,
        usage=exc.usage,
        attempts=exc.attempts,
        failed_attempts=[note],
    )


def _with_spent(result: ClientResult, exc: OutputTruncated, note: AttemptRecord) -> ClientResult:
    """``result`` plus the tokens, attempts and record of the cut-off call before it (a copy
    keeps the gate's report on the same output)."""
    return result.model_copy(
        update={
            "usage": result.usage + exc.usage,
            "attempts": result.attempts + exc.attempts,
            "failed_attempts": [note, *result.failed_attempts],
        }
    )


def _sub(chunk: Conversation, bounds: range) -> Conversation:
    part = Conversation(
        id=chunk.id, messages=chunk.messages[bounds.start : bounds.stop], metadata=chunk.metadata
    )
    part._location = chunk.location
    return part


def _span(chunk: Conversation) -> str:
    return f"messages {chunk.messages[0].id}..{chunk.messages[-1].id}"


def merge_results(
    results: Sequence[ClientResult],
    chunks: Sequence[Conversation],
    model: str,
    *,
    limit: int | None = None,
    allow_system_sources: bool = False,
    observing_tools: frozenset[str] = DEFAULT_OBSERVING_TOOLS,
) -> ClientResult:
    """One result from the chunks' results: merged candidates, summed usage and attempts.

    A chunk whose output is not an extraction at all is recorded in ``failed_attempts`` (naming
    its messages) instead of sinking the other chunks; if no chunk is readable, the first raw
    output is returned as the output, for the pipeline to report.
    """
    failed: list[AttemptRecord] = []
    readable: list[tuple[int, list[Any]]] = []
    for number, (result, chunk) in enumerate(zip(results, chunks, strict=True), start=1):
        label = _label(number, len(chunks), chunk)
        failed += [
            a.model_copy(update={"error": f"{label}: {a.error}"}) for a in result.failed_attempts
        ]
        items = _candidates(result.output)
        if items is None:
            failed.append(
                AttemptRecord(
                    attempt=result.attempts,
                    error=f"{label}: output is not an extraction; its candidates are lost",
                    raw_output=result.raw_text
                    if result.raw_text is not None
                    else str(result.output),
                )
            )
        else:  # in full (format 1) units, so ids, spans and parents can be merged
            full = expand(
                items,
                chunk,
                allow_system_sources=allow_system_sources,
                observing_tools=observing_tools,
            ).items
            readable.append((number, full))
    kept, overflow = _within_limit(readable, limit)
    output: Any = results[0].output
    within: int | None = None
    if readable:
        merged = merge_candidates(kept)
        output, within = {"candidates": merged + overflow}, len(merged)
    return ClientResult(
        output=output,
        raw_text=None,
        model=model,
        usage=sum((r.usage for r in results), Usage()),
        attempts=sum(r.attempts for r in results),
        failed_attempts=failed,
        cached=all(r.cached for r in results),
        dropped_candidates=sum(r.dropped_candidates for r in results),
        candidate_limit=within if limit is not None else None,
    )


def _within_limit(
    readable: Sequence[tuple[int, list[Any]]], limit: int | None
) -> tuple[list[tuple[int, list[Any]]], list[Any]]:
    """Each chunk's first ``limit`` candidates, and the rest of every chunk (in chunk order)."""
    if limit is None:
        return list(readable), []
    kept = [(number, items[:limit]) for number, items in readable]
    return kept, [item for _, items in readable for item in items[limit:]]


def merge_candidates(chunk_outputs: Sequence[tuple[int, Sequence[Any]]]) -> list[Any]:
    """Rename ids per chunk, drop candidates already found in an earlier chunk, fix parents."""
    merged: list[Any] = []
    first_seen: dict[tuple[Any, ...], tuple[int, str]] = {}
    for number, items in chunk_outputs:
        renamed: dict[str, str] = {}
        kept: list[dict[str, Any]] = []
        for item in items:
            if not isinstance(item, Mapping) or not isinstance(item.get("id"), str):
                merged.append(item)
                continue
            new_id = f"k{number}-{item['id']}"
            key = _identity(item)
            earlier = first_seen.get(key) if key is not None else None
            if earlier is not None and earlier[0] != number:
                renamed[item["id"]] = earlier[1]
                continue
            if key is not None:
                first_seen.setdefault(key, (number, new_id))
            renamed[item["id"]] = new_id
            kept.append({**item, "id": new_id})
        for item in kept:
            parents = item.get("parent_ids")
            if isinstance(parents, list):
                item["parent_ids"] = [
                    renamed.get(p, p) if isinstance(p, str) else p for p in parents
                ]
            merged.append(item)
    return merged


def _identity(item: Mapping[str, Any]) -> tuple[Any, ...] | None:
    span = item.get("span")
    if not isinstance(span, Mapping):
        return None
    key = (span.get("message_id"), span.get("quote"), item.get("kind"), item.get("memory_type"))
    return key if all(isinstance(v, str) for v in key) else None


def _candidates(output: Any) -> list[Any] | None:
    if isinstance(output, Mapping) and isinstance(output.get("candidates", []), list):
        return list(output.get("candidates", []))
    return None


def _label(number: int, total: int, chunk: Conversation) -> str:
    first, last = chunk.messages[0].id, chunk.messages[-1].id
    return f"chunk {number}/{total} (messages {first}..{last})"
