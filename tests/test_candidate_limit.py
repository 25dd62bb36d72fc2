"""The candidate limit bounds each model call, not a conversation: an honest long chat keeps
all its candidates, a model flooding one call is cut, and what it flooded with is kept as counts
plus a bounded sample (issue 17 item 8). When the limit bites, the summary says which option to
raise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import examples, read_lines
from hypothesis import given, settings
from hypothesis import strategies as st

import extractor.cli._common as cli_common
from extractor import Extractor
from extractor.bounded import DEFAULT_RAW_CHARS, DEFAULT_SAMPLE, bounded_attempt
from extractor.chunking import merge_results
from extractor.cli import cli
from extractor.clients.base import AttemptRecord, ClientResult
from extractor.conversation import Conversation, Limits, conversation_from_data
from extractor.prompts import Prompt
from extractor.validation import Code, ValidationOptions

CITIES = ["Denver", "Lisbon", "Oslo", "Quito", "Hanoi", "Perth", "Cairo", "Lima"]


def long_chat(n: int) -> dict[str, Any]:
    messages = []
    for i in range(n):
        messages.append({"role": "user", "content": f"I moved to {CITIES[i % 8]} in {1990 + i}."})
        messages.append({"role": "assistant", "content": "Noted, thanks for telling me."})
    return {"id": "long", "messages": messages}


def user_event(mid: str, quote: str, cid: str, content: str | None = None) -> dict[str, Any]:
    return {
        "id": cid,
        "span": {"message_id": mid, "quote": quote, "start": 0, "end": len(quote)},
        "kind": "OBSERVATION",
        "memory_type": "ASSERTION_EVENT",
        "content": content or f'User stated: "{quote}"',
        "origin": "USER",
    }


class Flood:
    """Each call: one honest candidate per user message of the chunk, then ``extra`` junk
    candidates (valid in shape, each a distinct claim linked to the first statement; an event's
    content is its template, so junk events would all be one memory) and a failed attempt of
    ``raw`` text."""

    def __init__(self, extra: int = 0, raw: str | None = None) -> None:
        self.extra, self.raw = extra, raw

    @property
    def model_name(self) -> str:
        return "flood-1"

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        users = [m for m in conversation.messages if m.role.value == "user"]
        items = [user_event(m.id or "", m.text, f"u{m.id}") for m in users]
        first = users[0]
        items += [
            {**user_event(first.id or "", first.text, f"x{i}", "User moved" + "." * (i + 1)),
             "kind": "PROPOSITION", "memory_type": "WORLD_PROPOSITION",
             "parent_ids": [f"u{first.id}"]}
            for i in range(self.extra)
        ]  # fmt: skip
        failed = (
            [AttemptRecord(attempt=1, error="not JSON", raw_output=self.raw)] if self.raw else []
        )
        return ClientResult(
            output={"candidates": items},
            model="flood-1",
            attempts=1 + len(failed),
            failed_attempts=failed,
        )


def test_an_honest_long_chat_keeps_every_candidate_across_chunks() -> None:
    chat = long_chat(60)  # 60 user statements; ~10 fit in one chunk of 1000 characters
    ex = Extractor(Flood(), limits=Limits(max_candidates=15), max_chunk_chars=1000)
    result = ex.process(chat)
    assert result.chunks >= 4
    quoted = {c.source_span.message_id for c in result.candidates}
    assert quoted == {f"m{2 * i}" for i in range(60)}, "no statement lost to the limit"
    assert result.rejections == [] and result.rejections_omitted == {}


def test_a_flooding_call_is_cut_at_the_limit_and_kept_as_counts_and_a_sample() -> None:
    huge = "x" * 300_000  # 150 times what is kept (DEFAULT_RAW_CHARS)
    ex = Extractor(Flood(extra=5000, raw=huge), limits=Limits(max_candidates=20))
    result = ex.process(long_chat(3))
    assert len(result.candidates) == 20
    listed = [r for r in result.rejections if r.code is Code.CANDIDATE_LIMIT_EXCEEDED]
    assert len(listed) == DEFAULT_SAMPLE
    assert result.rejections_omitted == {"CANDIDATE_LIMIT_EXCEEDED": 5003 - 20 - DEFAULT_SAMPLE}
    [attempt] = result.failed_attempts
    assert attempt.raw_output == huge[:DEFAULT_RAW_CHARS]
    assert attempt.raw_output_chars == len(huge)
    assert attempt.raw_output_hash is not None and attempt.raw_output_hash.startswith("sha256:")
    assert len(result.model_dump_json()) < 60_000  # was ~16 MB for such an answer


def test_a_huge_rejected_candidate_keeps_its_length_hash_and_beginning() -> None:
    chat = long_chat(1)
    text = chat["messages"][0]["content"]
    bad = {**user_event("m0", text, "big"), "verified": True, "note": "y" * 100_000}
    client = Flood()

    async def extract(*_: Any) -> ClientResult:
        return ClientResult(output={"candidates": [bad]}, model="flood-1")

    client.extract = extract  # type: ignore[method-assign]
    [rejection] = Extractor(client).process(chat).rejections
    assert rejection.raw["truncated"] is True and rejection.raw["chars"] > 100_000
    assert len(rejection.raw["head"]) == DEFAULT_RAW_CHARS
    assert rejection.raw["hash"].startswith("sha256:")


def test_a_failed_attempt_under_the_bound_is_kept_whole() -> None:
    attempt = AttemptRecord(attempt=1, error="e", raw_output="short")
    assert bounded_attempt(attempt) == attempt


@settings(max_examples=examples(30), deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=12), min_size=2, max_size=5), st.integers(1, 8))
def test_each_chunk_gets_at_most_the_limit_and_exactly_its_overflow_is_rejected(
    per_chunk: list[int], limit: int
) -> None:
    """Whatever each call returns, the gate accepts min(n, limit) of every call and rejects the
    rest CANDIDATE_LIMIT_EXCEEDED (candidates here are distinct, so none merge)."""
    texts = [f"I moved to {CITIES[i % 8]} in {1990 + i}." for i in range(sum(per_chunk) + 1)]
    conv = conversation_from_data(
        {"id": "p", "messages": [{"role": "user", "content": t} for t in texts]}
    )
    chunks, results, position = [], [], 0
    for n in per_chunk:
        ids = [f"m{position + k}" for k in range(n)]
        items = [user_event(mid, texts[int(mid[1:])], f"c{k}") for k, mid in enumerate(ids)]
        results.append(ClientResult(output={"candidates": items}, model="m"))
        chunks.append(conv)
        position += n
    merged = merge_results(results, chunks, "m", limit=limit)
    kept = sum(min(n, limit) for n in per_chunk)
    assert merged.candidate_limit == kept
    assert len(merged.output["candidates"]) == sum(per_chunk)


def test_the_summary_warns_naming_the_option_when_the_limit_bites(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli_common, "get_client", lambda *a, **k: Flood(extra=10))
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(long_chat(2)) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    args = ["run", str(src), "--out", str(out), "--limit-candidates", "3"]
    for extra in ([], ["-q"], ["--json"]):
        out.unlink(missing_ok=True)
        result = CliRunner().invoke(cli, [*args, *extra], catch_exceptions=False)
        assert result.exit_code == 0
        assert "WARNING" in result.stderr and "raise --limit-candidates" in result.stderr
        assert "(3 per model call)" in result.stderr
    summary = json.loads(result.stdout)
    assert summary["limited_conversations"] == 1 and summary["warnings"]
    [line] = read_lines(out)
    lost = line["rejections_omitted"].get("CANDIDATE_LIMIT_EXCEEDED", 0) + len(line["rejections"])
    assert summary["rejections_by_code"]["CANDIDATE_LIMIT_EXCEEDED"] == lost


def test_no_warning_when_nothing_was_cut(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(long_chat(2)) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["run", str(src), "--out", str(tmp_path / "o.jsonl")], catch_exceptions=False
    )
    assert result.exit_code == 0 and "WARNING" not in result.stderr
