"""The batch runner loses nothing: every input ends exactly once in the results or failures file,
in input order, with bounded memory and concurrency, across crashes and resumes."""

from __future__ import annotations

import asyncio
import errno
import io
import json
import os
import tempfile
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers import examples, read_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import extractor.batch as batch_module
from extractor.batch import BatchConfig, BatchObserver, read_done, reorder_window, run_batch
from extractor.clients.base import ClientResult, Usage
from extractor.conversation import Conversation
from extractor.errors import ModelTimeout, OutputWriteError
from extractor.pipeline import Extractor
from extractor.prompts import Prompt
from extractor.results import ConversationResult, FailureRecord
from extractor.summary import RunSummary
from extractor.validation import ValidationOptions

FIXED = datetime(2025, 1, 2, tzinfo=UTC)


class Client:
    """Answers with one grounded candidate; fails conversations whose id starts with 'fail';
    sleeps ``delays[id]`` seconds; tracks how many calls are in flight."""

    def __init__(self, delays: dict[str, float] | None = None, *, fail: bool = True) -> None:
        self.delays = delays or {}
        self.fail = fail
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def model_name(self) -> str:
        return "test-client"

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        self.calls += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delays.get(conversation.id, 0))
            if self.fail and conversation.id.startswith("fail"):
                raise ModelTimeout(f"conversation {conversation.id!r}: timed out")
            text = conversation.messages[0].text
            unit = {
                "id": "c1",
                "span": {"message_id": "m0", "quote": text, "start": 0, "end": len(text)},
                "kind": "OBSERVATION",
                "memory_type": "ASSERTION_EVENT",
                "content": f'User stated: "{text}"',
                "origin": "USER",
            }
            return ClientResult(
                output={"candidates": [unit]},
                model="test-client",
                usage=Usage(prompt_tokens=3, completion_tokens=2, total_tokens=5),
            )
        finally:
            self.in_flight -= 1


def conv_line(cid: str, text: str | None = None) -> str:
    text = text or f"I like item {cid}."
    return json.dumps({"id": cid, "messages": [{"role": "user", "content": text}]})


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def extractor_with(client: Client) -> Extractor:
    return Extractor(client, clock=lambda: FIXED)


class LatestFirst(Client):
    """Holds every call until ``width`` calls are waiting (or all ``total`` have arrived), then
    lets the newest one finish, one at a time: conversations finish in an order unlike their
    input order, and ``width`` are in flight at once, whatever the machine's speed."""

    def __init__(self, width: int, total: int) -> None:
        super().__init__()
        self.width, self.total = width, total
        self.arrived = 0
        self.waiting: list[asyncio.Event] = []
        self.running = False
        self.finished: list[str] = []

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        self.arrived += 1
        self.max_in_flight = max(self.max_in_flight, len(self.waiting) + 1 + self.running)
        turn = asyncio.Event()
        self.waiting.append(turn)
        self._next()
        # a generous ceiling: fails the conversation instead of hanging the test on a bug
        await asyncio.wait_for(turn.wait(), timeout=120)
        try:
            return await super().extract(conversation, prompt, options)
        finally:
            self.finished.append(conversation.id)
            self.running = False
            self._next()

    def _next(self) -> None:
        if self.running or not self.waiting:
            return
        if len(self.waiting) == self.width or self.arrived == self.total:
            self.running = True
            self.waiting.pop().set()


def test_results_are_written_in_input_order_whatever_the_concurrency(tmp_path: Path) -> None:
    ids = [f"c{i}" for i in range(12)]
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line(i) for i in ids])
    client = LatestFirst(width=4, total=12)
    out = tmp_path / "out.jsonl"
    summary = run_batch([src], extractor_with(client), BatchConfig(out=out, concurrency=4))
    assert client.finished[:2] == ["c3", "c4"] and client.finished[-1] == "c0"  # out of order
    assert [r["conversation_id"] for r in read_lines(out)] == ids
    assert client.max_in_flight == 4
    serial = tmp_path / "serial.jsonl"
    run_batch([src], extractor_with(Client()), BatchConfig(out=serial, concurrency=1))
    drop = ("timings",)
    assert [{k: v for k, v in r.items() if k not in drop} for r in read_lines(out)] == [
        {k: v for k, v in r.items() if k not in drop} for r in read_lines(serial)
    ]
    assert summary.processed == 12 and summary.exit_code == 0
    assert summary.usage.total_tokens == 60


def test_reading_stays_a_bounded_window_ahead_of_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line(f"c{i}") for i in range(200)])
    state = {"read": 0, "written": 0, "max_ahead": 0}
    real_iter = batch_module.iter_inputs

    def counting(*args: Any, **kwargs: Any) -> Iterator[Any]:
        for item in real_iter(*args, **kwargs):
            state["read"] += 1
            state["max_ahead"] = max(state["max_ahead"], state["read"] - state["written"])
            yield item

    class Count(BatchObserver):
        def on_result(self, result: ConversationResult, conversation: Conversation) -> None:
            state["written"] += 1

    monkeypatch.setattr(batch_module, "iter_inputs", counting)
    config = BatchConfig(out=tmp_path / "out.jsonl", concurrency=3)
    run_batch([src], extractor_with(Client({"c5": 0.01})), config, observers=[Count()])
    assert state["written"] == 200
    assert state["max_ahead"] <= reorder_window(3) < 200


def test_a_stalled_conversation_does_not_idle_the_other_slots(tmp_path: Path) -> None:
    """The head of the batch waits until 40 later conversations are done: they must all get
    to run (and be written after it, in input order) instead of the batch stalling."""
    ids = [f"c{i}" for i in range(60)]
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line(i) for i in ids])

    class Stalling(Client):
        def __init__(self) -> None:
            super().__init__()
            self.others_done = 0
            self.released = asyncio.Event()

        async def extract(self, conversation: Conversation, *args: Any) -> ClientResult:
            if conversation.id == "c0":
                # fails the conversation instead of hanging the test if the others cannot run
                await asyncio.wait_for(self.released.wait(), timeout=120)
            result = await super().extract(conversation, *args)
            if conversation.id != "c0":
                self.others_done += 1
                if self.others_done == 40:
                    self.released.set()
            return result

    client = Stalling()
    out = tmp_path / "out.jsonl"
    summary = run_batch([src], extractor_with(client), BatchConfig(out=out, concurrency=8))
    assert summary.failed == 0
    assert [r["conversation_id"] for r in read_lines(out)] == ids
    assert client.max_in_flight == 8


def test_a_failing_conversation_is_recorded_and_the_rest_go_on(tmp_path: Path) -> None:
    src = write_jsonl(
        tmp_path / "in.jsonl",
        [conv_line("a"), conv_line("fail-1"), "{not json", conv_line("b")],
    )
    out = tmp_path / "out.jsonl"
    summary = run_batch([src], extractor_with(Client()), BatchConfig(out=out))
    assert [r["conversation_id"] for r in read_lines(out)] == ["a", "b"]
    failures = read_lines(tmp_path / "out.jsonl.failures.jsonl")
    assert [(f["conversation_id"], f["stage"], f["error_code"]) for f in failures] == [
        ("fail-1", "extract", "MODEL_TIMEOUT"),
        (None, "load", "INPUT_INVALID"),
    ]
    assert failures[0]["input"] == {"source": str(src), "line": 2, "field": None}
    assert failures[1]["input"]["line"] == 3
    assert f"{src}:3" in failures[1]["error"]
    assert summary.failed == 2 and summary.exit_code == 1
    assert summary.failures_by_stage == {"extract": 1, "load": 1}


def test_rerun_with_the_same_out_skips_everything_already_recorded(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line("a"), conv_line("fail-x"), "[]"])
    out = tmp_path / "out.jsonl"
    run_batch([src], extractor_with(Client()), BatchConfig(out=out))
    failures = tmp_path / "out.jsonl.failures.jsonl"
    before = (out.read_bytes(), [batch_module.key_of_line(r) for r in read_lines(failures)])
    client = Client()
    again = run_batch([src], extractor_with(client), BatchConfig(out=out))
    after = (out.read_bytes(), [batch_module.key_of_line(r) for r in read_lines(failures)])
    assert sorted(map(str, after[1])) == sorted(map(str, before[1])) and after[0] == before[0]
    # Only the transient failure (a model time-out) is attempted again; the rest is skipped.
    assert client.calls == 1
    assert (again.skipped, again.processed, again.failed, again.exit_code) == (2, 0, 1, 1)


def test_a_changed_conversation_is_processed_again(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line("a", "I like tea.")])
    out = tmp_path / "out.jsonl"
    run_batch([src], extractor_with(Client()), BatchConfig(out=out))
    write_jsonl(src, [conv_line("a", "I like coffee.")])
    run_batch([src], extractor_with(Client()), BatchConfig(out=out))
    assert [r["candidates"][0]["content"] for r in read_lines(out)] == [
        'User stated: "I like tea."',
        'User stated: "I like coffee."',
    ]


def test_a_partial_trailing_line_is_truncated_and_redone(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line(f"c{i}") for i in range(5)])
    out = tmp_path / "out.jsonl"
    run_batch([src], extractor_with(Client()), BatchConfig(out=out))
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:2]) + lines[2][:40])  # killed in the middle of line 3
    summary = run_batch([src], extractor_with(Client()), BatchConfig(out=out))
    assert [r["conversation_id"] for r in read_lines(out)] == [f"c{i}" for i in range(5)]
    assert (summary.skipped, summary.processed) == (2, 3)


def test_a_duplicate_input_is_processed_once_and_reported(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line("a"), conv_line("a"), conv_line("b")])
    other = write_jsonl(tmp_path / "other.jsonl", [conv_line("b"), conv_line("c")])
    out = tmp_path / "out.jsonl"
    first = run_batch([src, other], extractor_with(Client()), BatchConfig(out=out))
    assert (first.processed, first.duplicates) == (3, 2)
    assert first.duplicate_examples == [f"{src}:2 = {src}:1", f"{other}:1 = {src}:3"]
    again = run_batch([src, other], extractor_with(Client()), BatchConfig(out=out))
    assert (again.processed, again.skipped, again.duplicates) == (0, 3, 2)
    lines = read_lines(out)
    assert [r["conversation_id"] for r in lines] == ["a", "b", "c"]
    ids = [c["memory_id"] for r in lines for c in r["candidates"]]
    assert len(ids) == len(set(ids)), "no memory id written twice"


def test_retry_failed_attempts_earlier_failures_again(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line("ok"), conv_line("fail-soon-ok")])
    out = tmp_path / "out.jsonl"
    first = run_batch([src], extractor_with(Client()), BatchConfig(out=out))
    assert first.failed == 1

    config = BatchConfig(out=out, retry_failed=True)
    second = run_batch([src], extractor_with(Client(fail=False)), config)
    assert (second.skipped, second.processed, second.failed) == (1, 1, 0)
    assert [r["conversation_id"] for r in read_lines(out)] == ["ok", "fail-soon-ok"]
    assert read_lines(tmp_path / "out.jsonl.failures.jsonl") == []


@pytest.fixture
def unwritable_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory no file can be created in: read-only by mode, or -- when the tests run as
    root, who ignores modes -- by a simulated read-only filesystem."""
    locked = tmp_path / "locked"
    locked.mkdir()
    if os.geteuid() == 0:
        real_open = os.open

        def read_only_fs(path: Any, flags: int, *args: Any) -> int:
            if str(path).startswith(str(locked)) and flags & os.O_CREAT:
                raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
            return real_open(path, flags, *args)

        monkeypatch.setattr(batch_module.os, "open", read_only_fs)
        yield locked
        return
    locked.chmod(0o555)
    yield locked
    locked.chmod(0o755)


def test_an_unwritable_output_fails_before_any_work(tmp_path: Path, unwritable_dir: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line("a")])
    client = Client()
    with pytest.raises(OutputWriteError, match=r"locked/out\.jsonl.*cannot open for writing"):
        run_batch([src], extractor_with(client), BatchConfig(out=unwritable_dir / "out.jsonl"))
    assert client.calls == 0
    assert list(unwritable_dir.iterdir()) == []


def test_a_full_disk_leaves_no_half_written_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line(f"c{i}") for i in range(4)])
    out = tmp_path / "out.jsonl"
    real_write = os.write
    writes = {"n": 0}

    def flaky_write(fd: int, data: Any) -> int:
        writes["n"] += 1
        if writes["n"] == 3:  # the third line: half of it lands, then the disk is full
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(batch_module.os, "write", flaky_write)
    with pytest.raises(OutputWriteError, match="No space left"):
        run_batch([src], extractor_with(Client()), BatchConfig(out=out))
    monkeypatch.undo()
    assert [r["conversation_id"] for r in read_lines(out)] == ["c0", "c1"]
    run_batch([src], extractor_with(Client()), BatchConfig(out=out))
    assert [r["conversation_id"] for r in read_lines(out)] == [f"c{i}" for i in range(4)]


def test_refuses_to_append_to_a_file_it_did_not_write(tmp_path: Path) -> None:
    out = write_jsonl(tmp_path / "notes.jsonl", ["hello world"])
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line("a")])
    with pytest.raises(OutputWriteError, match=r"notes\.jsonl:1: not a line written"):
        run_batch([src], extractor_with(Client()), BatchConfig(out=out))
    assert out.read_text() == "hello world\n"


def test_without_out_results_go_to_stdout_and_failures_to_stderr(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line("a"), conv_line("fail-2")])
    stdout, stderr = io.BytesIO(), io.StringIO()
    summary = run_batch([src], extractor_with(Client()), stdout=stdout, stderr=stderr)
    assert [json.loads(line)["conversation_id"] for line in stdout.getvalue().splitlines()] == ["a"]
    assert "failed [extract]" in stderr.getvalue() and "fail-2" in stderr.getvalue()
    assert summary.exit_code == 1


def test_stdin_input(tmp_path: Path) -> None:
    stdin = io.BytesIO((conv_line("s1") + "\n" + conv_line("s2") + "\n").encode())
    out = tmp_path / "out.jsonl"
    run_batch(["-"], extractor_with(Client()), BatchConfig(out=out), stdin=stdin)
    assert [r["input"]["source"] for r in read_lines(out)] == ["<stdin>", "<stdin>"]


def test_observers_see_every_outcome_and_progress(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", [conv_line("a"), conv_line("fail-3")])
    seen: list[str] = []

    class Watch(BatchObserver):
        def on_result(self, result: ConversationResult, conversation: Conversation) -> None:
            assert result.conversation_hash == conversation.content_hash()
            seen.append("result")

        def on_failure(self, failure: FailureRecord) -> None:
            seen.append("failure")

        def on_progress(self, summary: RunSummary) -> None:
            seen.append(f"progress {summary.conversations}")

    run_batch([src], extractor_with(Client()), BatchConfig(out=tmp_path / "o"), observers=[Watch()])
    assert seen == ["result", "progress 1", "failure", "progress 2"]


def test_a_ledger_records_the_run(tmp_path: Path) -> None:
    from extractor.ledger import Ledger

    src = write_jsonl(tmp_path / "in.jsonl", [conv_line("a"), conv_line("fail-4")])
    with Ledger(tmp_path / "ledger.db") as ledger:
        run_batch([src], extractor_with(Client()), BatchConfig(out=tmp_path / "o"), ledger=ledger)
        (run,) = ledger.runs()
        assert run.status == "completed"
        assert (run.conversations, run.failures, run.candidates) == (1, 1, 1)
        assert run.summary is not None and run.summary["conversations"] == 2


# --- the invariant: every input ends exactly once in one of the two files --------------------

ITEM = st.one_of(
    st.sampled_from(["a", "b", "c", "fail-1", "fail-2"]).map(conv_line),
    st.sampled_from(["{broken", '{"id": "x", "messages": []}', "42"]),
)


def _keys(out: Path, failures: Path) -> Counter[Any]:
    keys: Counter[Any] = Counter()
    for line in read_lines(out) + read_lines(failures):
        keys[batch_module.key_of_line(line)] += 1
    return keys


@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    items=st.lists(ITEM, min_size=1, max_size=12),
    kept=st.integers(min_value=0, max_value=12),
    torn=st.integers(min_value=0, max_value=30),
)
def test_every_input_ends_in_exactly_one_of_the_two_files(
    items: list[str], kept: int, torn: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        src = write_jsonl(d / "in.jsonl", items)
        out, failures = d / "out.jsonl", d / "out.jsonl.failures.jsonl"
        run_batch([src], extractor_with(Client()), BatchConfig(out=out))
        expected = _keys(out, failures)
        # Each distinct conversation once (a repeated one is a duplicate), each bad line once.
        distinct = len({i for i in items if i.startswith('{"id"') and '"messages": []' not in i})
        bad = sum(1 for i in items if not i.startswith('{"id"') or '"messages": []' in i)
        assert sum(expected.values()) == distinct + bad
        assert max(expected.values()) == 1
        # Simulate a crash: keep a prefix of each file, plus a torn fragment of the next line.
        for path in (out, failures):
            lines = path.read_bytes().splitlines(keepends=True)
            fragment = lines[kept][:torn] if kept < len(lines) else b""
            path.write_bytes(b"".join(lines[:kept]) + fragment)
        again = run_batch([src], extractor_with(Client()), BatchConfig(out=out))
        assert _keys(out, failures) == expected
        assert read_done(out) + read_done(failures) == expected
        assert again.conversations == len(items)


def test_shard_totals_are_what_each_shard_takes(tmp_path: Path) -> None:
    from extractor.batch import estimate_total

    src = write_jsonl(tmp_path / "in.jsonl", [conv_line(f"c{i}") for i in range(11)])
    shares = [estimate_total([src], (k, 3)) for k in (1, 2, 3)]
    assert shares == [4, 4, 3] and sum(shares) == estimate_total([src]) == 11
