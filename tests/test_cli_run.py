"""``extractor run`` end to end: inputs of every shape, resume, kill -9, exit codes, summaries."""

from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from helpers import conv, read_lines, stalling_run_script

from extractor.batch import key_of_line
from extractor.cli import cli
from extractor.resultline import decode
from extractor.results import ConversationResult, FailureRecord
from extractor.summary import RunSummary, show_progress

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
DATA = REPO.parent / "shared" / "data"
EXAMPLE_CONVERSATIONS = 6


def invoke(*args: Any, input: bytes | str | None = None) -> Result:
    return CliRunner().invoke(cli, ["run", *map(str, args)], input=input, catch_exceptions=False)


def test_readme_quickstart_on_examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    out = tmp_path / "results.jsonl"
    result = invoke("examples/", "--out", out)
    assert result.exit_code == 0, result.output
    rows = [ConversationResult.model_validate(decode(r)) for r in read_lines(out)]
    assert len(rows) == EXAMPLE_CONVERSATIONS
    assert {r.conversation_id for r in rows} >= {"weather-tool-1", "photo-question-9"}
    assert sum(len(r.candidates) for r in rows) > 0
    for row in rows:
        p = row.provenance
        assert p.model and p.prompt_hash.startswith("sha256:") and p.policy_version
        assert {d.memory_id for d in row.decisions} == {c.memory_id for c in row.candidates}
    assert read_lines(tmp_path / "results.jsonl.failures.jsonl") == []
    assert "conversations" in result.stderr and "wall time" in result.stderr
    assert result.stdout == ""


def test_stdin_to_stdout() -> None:
    data = "\n".join([conv("s1"), conv("s2")]) + "\n"
    result = invoke("-", "--quiet", input=data)
    assert result.exit_code == 0
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["conversation_id"] for r in rows] == ["s1", "s2"]
    assert rows[0]["input"]["source"] == "<stdin>"
    assert result.stderr == ""


def test_gzip_and_directories(tmp_path: Path) -> None:
    nested = tmp_path / "archive" / "2024"
    nested.mkdir(parents=True)
    with gzip.open(nested / "a.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write(conv("gz1") + "\n" + conv("gz2") + "\n")
    (tmp_path / "archive" / "b.json").write_text(conv("plain"), encoding="utf-8")
    (tmp_path / "archive" / "notes.txt").write_text("not an input", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    result = invoke(tmp_path / "archive", "--out", out)
    assert result.exit_code == 0, result.output
    assert [r["conversation_id"] for r in read_lines(out)] == ["gz1", "gz2", "plain"]


def test_a_bad_line_in_the_middle(tmp_path: Path) -> None:
    src = tmp_path / "chats.jsonl"
    src.write_text("\n".join([conv("a"), '{"id": "b", "messages": "oops"}', conv("c")]) + "\n")
    out = tmp_path / "out.jsonl"
    result = invoke(src, "--out", out)
    assert result.exit_code == 1
    assert [r["conversation_id"] for r in read_lines(out)] == ["a", "c"]
    (failure,) = [
        FailureRecord.model_validate(f) for f in read_lines(Path(f"{out}.failures.jsonl"))
    ]
    assert (failure.stage, failure.conversation_id, failure.input.line) == ("load", "b", 2)
    assert f"{src}:2" in failure.error and "messages" in failure.error
    assert "failures file" in result.stderr


def test_resume_never_duplicates(tmp_path: Path) -> None:
    src = tmp_path / "chats.jsonl"
    src.write_text("\n".join(conv(f"c{i}") for i in range(5)) + "\n")
    out = tmp_path / "out.jsonl"
    assert invoke(src, "--out", out, "--quiet").exit_code == 0
    with src.open("a") as f:
        f.write(conv("c5") + "\n")
    second = invoke(src, "--out", out, "--json")
    summary = RunSummary.model_validate_json(second.stdout)
    assert (summary.skipped, summary.processed) == (5, 1)
    assert [r["conversation_id"] for r in read_lines(out)] == [f"c{i}" for i in range(6)]


def test_json_summary_for_machines(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = invoke(EXAMPLES / "conversations.jsonl", "--out", out, "--json")
    summary = RunSummary.model_validate_json(result.stdout)
    assert summary.conversations == summary.processed == 3
    assert summary.candidates == sum(len(r["candidates"]) for r in read_lines(out))
    assert sum(summary.candidates_by_state.values()) == summary.candidates
    assert summary.usage.total_tokens > 0
    assert (summary.out, summary.failures_file) == (str(out), f"{out}.failures.jsonl")
    assert "conversations" not in result.stderr  # no table with --json


def test_json_summary_goes_to_stderr_when_results_use_stdout() -> None:
    result = invoke(EXAMPLES / "support-chat.json", "--json")
    assert json.loads(result.stdout.strip())["conversation_id"] == "support-42"
    assert RunSummary.model_validate_json(result.stderr).processed == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jsonl"], "no such file or directory"),
        ([EXAMPLES, "--concurrency", "0"], "--concurrency"),
        ([EXAMPLES, "--as-of", "yesterday"], "not an ISO 8601"),
        ([EXAMPLES, "--out", "same.jsonl", "--failures", "same.jsonl"], "must differ"),
    ],
)
def test_usage_errors_exit_2(args: list[Any], message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["run", *map(str, args)])
    assert result.exit_code == 2
    assert message in result.stderr


def test_an_invalid_policy_exits_2_naming_the_file(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('id = "p"\nversion = 3\n[[rules]]\nid = 7\n', encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES), "--policy", str(policy)])
    assert result.exit_code == 2
    assert "policy.toml" in result.stderr


def test_an_unwritable_output_exits_2_with_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = blocker / "out.jsonl"  # a path under a regular file can never be created
    result = CliRunner().invoke(cli, ["run", str(EXAMPLES), "--out", str(out)])
    assert result.exit_code == 2
    assert f"{out}" in result.stderr and "cannot open for writing" in result.stderr


def test_the_llm_path_through_a_mock_openai_server(tmp_path: Path) -> None:
    from extractor.mockserver import MockServer

    src = tmp_path / "chats.jsonl"
    src.write_text("\n".join(conv(f"c{i}") for i in range(6)) + "\n")
    out = tmp_path / "out.jsonl"
    with MockServer(conversation_faults={"c2": "refusal"}) as server:
        result = invoke(
            src, "--out", out, "--model", "mock-model", "--base-url", server.base_url,
            "--api-key", "test-key", "--no-cache", "--concurrency", "3", "--json",
        )  # fmt: skip
    assert result.exit_code == 1, result.output
    rows = read_lines(out)
    assert [r["conversation_id"] for r in rows] == ["c0", "c1", "c3", "c4", "c5"]
    assert all(r["provenance"]["model"] == "mock-model" for r in rows)
    assert all(r["usage"]["total_tokens"] > 0 for r in rows)
    (failure,) = read_lines(Path(f"{out}.failures.jsonl"))
    assert (failure["conversation_id"], failure["stage"]) == ("c2", "extract")
    assert failure["error_code"] == "MODEL_REFUSED"
    summary = RunSummary.model_validate_json(result.stdout)
    spent = sum(r["usage"]["total_tokens"] for r in [*rows, failure])
    assert failure["usage"]["total_tokens"] > 0  # the refusal's tokens are billed and counted
    assert summary.usage.total_tokens == spent


def test_an_unknown_mode_is_a_usage_error() -> None:
    result = CliRunner().invoke(
        cli, ["run", str(EXAMPLES), "--model", "m", "--base-url", "http://127.0.0.1:9",
              "--api-key", "k", "--mode", "telepathy"],
    )  # fmt: skip
    assert result.exit_code == 2
    assert "telepathy" in result.stderr


def test_progress_only_on_a_terminal_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    assert show_progress(Tty())
    assert not show_progress(Tty(), quiet=True)
    assert not show_progress(io.StringIO())
    monkeypatch.setenv("CI", "true")
    assert not show_progress(Tty())


def test_every_run_option_says_what_it_does() -> None:
    command = cli.get_command(click.Context(cli), "run")
    assert command is not None
    undocumented = [p.name for p in command.params if isinstance(p, click.Option) and not p.help]
    assert undocumented == []


KILLABLE = stalling_run_script()


def _start(src: Path, out: Path, answered: int) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-c", KILLABLE, str(answered), str(src), "--out", str(out),
            "--concurrency", "3"]  # fmt: skip
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def test_kill_9_mid_run_then_restart_records_everything_exactly_once(tmp_path: Path) -> None:
    items = [conv(f"k{i}") for i in range(40)]
    items[7] = "{torn"
    items[23] = '{"id": "bad", "messages": []}'
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(items) + "\n")
    out = tmp_path / "out.jsonl"
    failures = Path(f"{out}.failures.jsonl")
    # The run answers 13 conversations, then waits: it is killed with 10 or more written and
    # up to three more in flight, and it cannot have finished.
    proc = _start(src, out, answered=13)
    deadline = time.monotonic() + 300  # a ceiling for a loaded machine, not an expected time
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_bytes().count(b"\n") >= 10:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the run finished before it could be killed"
    written = out.read_bytes().count(b"\n")
    assert 10 <= written <= 13
    # the restart needs no process of its own: what matters is what the killed one left
    restarted = CliRunner().invoke(cli, ["run", str(src), "--out", str(out), "--concurrency", "3"])
    assert restarted.exit_code == 1, restarted.output  # two inputs are unusable
    keys = Counter(key_of_line(r) for r in read_lines(out) + read_lines(failures))
    assert sum(keys.values()) == len(items)
    assert all(n == 1 for n in keys.values())
    assert [r["conversation_id"] for r in read_lines(out)] == [
        f"k{i}" for i in range(40) if i not in (7, 23)
    ]


@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is not present")
def test_first_200_conversations_of_every_data_file_run_without_a_crash(tmp_path: Path) -> None:
    # The first 200 conversations of each file, stopping early at ~300 kB per file so the test
    # stays fast on the long multi-session chats (it proves robustness, not throughput).
    sample = tmp_path / "sample"
    sample.mkdir()
    expected = 0
    for source in sorted(DATA.glob("*.jsonl")):
        head: list[bytes] = []
        with source.open("rb") as f:
            for line in f:
                head.append(line)
                if len(head) == 200 or sum(map(len, head)) > 300_000:
                    break
        (sample / source.name).write_bytes(b"".join(head))
        expected += len(head)
    out = tmp_path / "out.jsonl"
    result = invoke(sample, "--out", out, "--json")
    summary = RunSummary.model_validate_json(result.stdout)
    failures = read_lines(Path(f"{out}.failures.jsonl"))
    assert failures == [], failures[:3]
    assert result.exit_code == 0
    assert summary.processed == len(read_lines(out)) == expected
    assert os.path.getsize(out) > 0


def test_run_tunes_the_collector_once_set_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The LLM path's throughput depends on it (extractor/heap.py): once, before any work."""
    run_command = sys.modules["extractor.cli.run"]  # the package re-exports the command as `run`
    events: list[str] = []
    built = run_command.build_extractor
    monkeypatch.setattr(run_command, "tune_collector", lambda: events.append("tune"))
    monkeypatch.setattr(
        run_command, "build_extractor", lambda o: events.append("built") or built(o)
    )
    batch = run_command.run_batch
    monkeypatch.setattr(
        run_command, "run_batch", lambda *a, **k: events.append("batch") or batch(*a, **k)
    )
    src = tmp_path / "in.jsonl"
    src.write_text(conv("c1", "My manager is Alice.") + "\n")
    assert invoke(src, "--out", tmp_path / "out.jsonl", "-q").exit_code == 0
    assert events == ["built", "tune", "batch"]


def test_tune_collector_freezes_the_start_up_heap_and_raises_the_young_threshold() -> None:
    code = (
        "import gc, json, extractor.pipeline; from extractor.heap import tune_collector; "
        "alive = len(gc.get_objects()); n = tune_collector(); "
        "print(json.dumps([alive, n, gc.get_freeze_count(), len(gc.get_objects(2)), "
        "gc.get_threshold()]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    alive, frozen, count, oldest, threshold = json.loads(out.stdout)
    assert frozen == count >= 0.9 * alive  # everything alive at start-up ...
    assert oldest < 100  # ... is gone from the generation a full collection walks
    assert threshold == [10_000, 10, 10]  # young collections rarer; the others as CPython's


def test_shards_split_a_batch_between_processes_exactly_once(tmp_path: Path) -> None:
    lines = [conv(f"c{i}", f"I live in city number {i}.") for i in range(10)] + ["{broken"]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n")
    seen: list[str] = []
    for k in (1, 2, 3):
        out = tmp_path / f"part{k}.jsonl"
        invoke(src, "--shard", f"{k}/3", "--out", out, "-q")
        ids = [r["conversation_id"] for r in read_lines(out)]
        assert ids == sorted(ids, key=lambda c: int(c[1:]))  # input order within a shard
        seen += ids
        failures = tmp_path / f"part{k}.jsonl.failures.jsonl"
        if failures.exists():
            seen += [f"line {f['input']['line']}" for f in read_lines(failures)]
    assert sorted(seen) == sorted([f"c{i}" for i in range(10)] + ["line 11"])
    # a re-run of one shard resumes: its 4 inputs (c1, c4, c7, the broken line 11) are done
    result = invoke(src, "--shard", "2/3", "--out", tmp_path / "part2.jsonl", "--json")
    summary = json.loads(result.output)
    assert (summary["skipped"], summary["processed"], summary["failed"]) == (4, 0, 0)


@pytest.mark.parametrize("value", ["0/2", "3/2", "x", "1/0", "1-2", "/2"])
def test_a_bad_shard_is_a_usage_error(value: str, tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(conv("c1") + "\n")
    result = CliRunner().invoke(cli, ["run", str(src), "--shard", value])
    assert result.exit_code == 2
    assert "--shard" in result.output and "K/N" in result.output
