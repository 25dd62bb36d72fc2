"""Failing fast and retrying: an unusable model endpoint stops the run before any conversation
(exit 2); transient model failures are retried by the next run; Ctrl-C reports what was done and
how to resume; a killed run is marked in the ledger; an empty input says so."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import cli_run_script, conv, read_lines

from extractor import Extractor
from extractor.batch import BatchConfig, run_batch
from extractor.cli import cli
from extractor.cli.run import run as run_command
from extractor.clients.base import ClientResult
from extractor.conversation import Conversation
from extractor.errors import ModelClientError
from extractor.ledger import Ledger
from extractor.prompts import Prompt
from extractor.summary import RunSummary
from extractor.validation import ValidationOptions

NO_KEY_ENV = ("EXTRACTOR_API_KEY", "OPENAI_API_KEY", "EXTRACTOR_BASE_URL", "OPENAI_BASE_URL")


def chats(path: Path, n: int = 3) -> Path:
    path.write_text("\n".join(conv(f"c{i}") for i in range(n)) + "\n", encoding="utf-8")
    return path


def closed_port() -> int:
    import socket

    with socket.socket() as s:  # bound, never listening: connections are refused at once
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("case", ["unreachable", "no-key"])
def test_an_unusable_endpoint_stops_before_any_conversation(
    case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in NO_KEY_ENV:
        monkeypatch.delenv(name, raising=False)
    src, out = chats(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    args = ["run", str(src), "--out", str(out), "--model", "gpt-4o-mini", "--no-cache", "-q"]
    if case == "unreachable":
        args += ["--base-url", f"http://127.0.0.1:{closed_port()}/v1", "--api-key", "k"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert "failed a first check, nothing was processed" in result.output
    assert "--api-key" in result.output and "--base-url" in result.output
    assert read_lines(out) == [] and read_lines(tmp_path / "out.jsonl.failures.jsonl") == []


class Flaky:
    """Fails every conversation with a transient model error while ``down``."""

    def __init__(self) -> None:
        self.down = True
        self.inner = Extractor().client

    @property
    def model_name(self) -> str:
        return "flaky-1"

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        if self.down:
            raise ModelClientError("cannot reach the model server: Connection error.")
        return await self.inner.extract(conversation, prompt, options)


def test_a_rerun_after_a_run_wide_outage_retries_those_conversations(tmp_path: Path) -> None:
    src, out = chats(tmp_path / "in.jsonl"), tmp_path / "out.jsonl"
    client = Flaky()
    first = run_batch([src], Extractor(client), BatchConfig(out=out))
    assert (first.processed, first.failed) == (0, 3)
    client.down = False
    second = run_batch([src], Extractor(client), BatchConfig(out=out))
    assert (second.processed, second.failed, second.skipped) == (3, 0, 0)
    assert [r["conversation_id"] for r in read_lines(out)] == ["c0", "c1", "c2"]
    assert read_lines(tmp_path / "out.jsonl.failures.jsonl") == []


def test_a_deterministic_failure_is_not_retried_without_retry_failed(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(conv("ok") + "\n" + '{"id": "empty", "messages": []}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    run_batch([src], Extractor(), BatchConfig(out=out))
    again = run_batch([src], Extractor(), BatchConfig(out=out))
    assert (again.skipped, again.failed) == (2, 0)


def test_an_empty_input_says_so_with_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n", encoding="utf-8")
    (tmp_path / "dir").mkdir()
    for target in (empty, tmp_path / "dir"):
        result = CliRunner().invoke(cli, ["run", str(target), "-q"])
        assert result.exit_code == 2
        assert "no conversations in" in result.output and "the input is empty" in result.output


# A client that answers the first three conversations and waits forever on the fourth: the run
# is interrupted at a known point, without any timing.
STUCK = cli_run_script(
    """
    import asyncio
    from extractor.offline import OfflineClient

    class Stuck(OfflineClient):
        async def extract(self, conversation, *args):
            if conversation.id not in ("c0", "c1", "c2"):
                await asyncio.Event().wait()
            return await super().extract(conversation, *args)
    """,
    "Stuck()",
)


def test_ctrl_c_prints_a_summary_and_how_to_resume(tmp_path: Path) -> None:
    src, out = chats(tmp_path / "in.jsonl", 6), tmp_path / "out.jsonl"
    ledger = tmp_path / "l.db"
    args = [sys.executable, "-c", STUCK, str(src), "--out", str(out), "--ledger", str(ledger)]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120  # generous: only a ceiling, never the expected time
    while time.monotonic() < deadline and len(read_lines(out)) < 3:
        time.sleep(0.05)
    assert len(read_lines(out)) == 3
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "Aborted!" not in stderr and "Traceback" not in stderr
    assert "interrupted after 3 processed" in stderr
    assert "to resume, run the same command again" in stderr
    with Ledger(ledger, create=False) as opened:
        assert [r.status for r in opened.runs()] == ["interrupted"]
    resumed = CliRunner().invoke(cli, ["run", str(src), "--out", str(out), "--json"])
    summary = RunSummary.model_validate_json(resumed.stdout)
    assert (summary.skipped, summary.processed) == (3, 3)


def test_a_killed_run_is_marked_interrupted_when_the_next_run_starts(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    prov = Extractor().provenance()
    with Ledger(path) as ledger:
        killed = ledger.start_run(prov)
        live = ledger.start_run(prov)  # this process: still alive
    import sqlite3

    with sqlite3.connect(path) as db:
        db.execute("UPDATE runs SET pid = ? WHERE run_id = ?", (gone.pid, killed))
    with Ledger(path) as ledger:
        ledger.start_run(prov)
        status = {r.run_id: r.status for r in ledger.runs()}
    assert status[killed] == "interrupted"
    assert status[live] == "running"
    assert os.getpid() != gone.pid


def test_every_option_a_hint_names_exists() -> None:
    """Hints in the messages a user gets from a run name real options of `extractor run`."""
    options = {opt for p in run_command.params for opt in getattr(p, "opts", [])}
    summary = RunSummary(candidate_limit=3)
    summary.rejections_by_code = {"CANDIDATE_LIMIT_EXCEEDED": 2}
    summary.limited_conversations = 1
    summary._warn()
    texts: list[Any] = [*summary.warnings]
    from extractor import formats

    texts.append(formats._expected({"x": 1}, "chatgpt"))
    texts.append(formats._expected({"x": 1}, "auto"))
    try:
        conv_data = {"id": "a", "messages": [{"role": "user", "content": "x"}]}
        Extractor().process({**conv_data, "metadata": {"user_id": [1]}})
    except Exception as exc:
        texts.append(str(exc))
    named = {m for t in texts for m in re.findall(r"--[a-z][a-z-]+", json.dumps(t))}
    assert named and named <= options, named - options
