"""Faults in the run itself, and the limits a user can configure.

* ``kill -9`` at several points of a run with ``--ledger``, then a restart: every conversation
  exactly once across the results and failures files, and the ledger consistent with them (intact,
  no orphan rows, every line recorded, at most the one in-flight record of the killed run extra).
* A full disk (``/dev/full``) and a read-only output directory: a clear error and exit code 2,
  no half-written line left behind.
* ``--limit-message-chars``, ``--limit-messages``, ``--limit-candidates``: documented defaults,
  enforced with errors that name the file, line, conversation and field; the other conversations
  are unaffected.
"""

from __future__ import annotations

import io
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import conv, read_lines, stalling_run_script
from hostile import BASE, MESSAGES, assert_ledger_consistent

from extractor.batch import key_of_line, run_batch
from extractor.cli import cli
from extractor.clients.base import ClientResult
from extractor.conversation import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MAX_MESSAGE_CHARS,
    DEFAULT_MAX_MESSAGES,
)
from extractor.mockserver import MockServer
from extractor.offline import offline_extract
from extractor.pipeline import Extractor

STALLING_RUN = stalling_run_script()


def memory_cap() -> None:
    """A subprocess that starts reading without end fails fast instead of eating the machine."""
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))


CLI = [sys.executable, "-c", "from extractor.cli import cli; cli()"]


# --- kill -9 and restart, with the ledger -------------------------------------------------------

ITEMS = [conv(f"k{i}") for i in range(45)]
ITEMS[5] = "{torn"
ITEMS[21] = '{"id": "empty", "messages": []}'
ITEMS[38] = conv("k38", "x" * 2001)  # over --limit-message-chars


def start(src: Path, out: Path, ledger: Path, answered: int = -1) -> subprocess.Popen[bytes]:
    """The run of ``src``; with ``answered`` set, it answers that many conversations and then
    waits forever (it can only end by being killed)."""
    args = [answered, src, "--out", out, "--ledger", ledger, "--concurrency", "3", "-q",
            "--limit-message-chars", "2000"]  # fmt: skip
    return subprocess.Popen(
        [sys.executable, "-c", STALLING_RUN, *map(str, args)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=memory_cap,
    )


def complete_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def ledger_rows(path: Path) -> dict[str, tuple[str, int]]:
    """run id -> (status, conversation + failure rows recorded under it)."""
    db = sqlite3.connect(path)
    try:
        runs = dict(db.execute("SELECT run_id, status FROM runs"))
        counts: Counter[str] = Counter()
        for table in ("conversations", "failures"):
            for run_id, n in db.execute(f"SELECT run_id, count(*) FROM {table} GROUP BY run_id"):
                counts[run_id] += n
    finally:
        db.close()
    return {run_id: (status, counts[run_id]) for run_id, status in runs.items()}


# Each kill point costs two `extractor` processes: the default run kills mid-batch, the slow run
# also right after the first line and near the end.
@pytest.mark.parametrize(
    "kill_after",
    [pytest.param(1, marks=pytest.mark.slow), 14, pytest.param(33, marks=pytest.mark.slow)],
)
def test_kill_9_then_restart_is_exactly_once_in_the_files_and_the_ledger(
    tmp_path: Path, kill_after: int
) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(ITEMS) + "\n")
    out, ledger = tmp_path / "out.jsonl", tmp_path / "ledger.db"
    failures = Path(f"{out}.failures.jsonl")
    # Three more answers than the kill waits for: conversations are still in flight (and being
    # written) when it lands, and the run cannot have finished.
    proc = start(src, out, ledger, answered=kill_after + 3)
    deadline = time.monotonic() + 300  # a ceiling for a loaded machine, not an expected time
    while time.monotonic() < deadline and proc.poll() is None:
        if complete_lines(out) + complete_lines(failures) >= kill_after:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    _, stderr = proc.communicate()
    assert proc.returncode == -signal.SIGKILL, f"the run ended before it was killed: {stderr!r}"
    before = complete_lines(out) + complete_lines(failures)
    assert kill_after <= before < len(ITEMS)

    # the restart needs no process of its own: what matters is what the killed one left
    args = ("--out", out, "--ledger", ledger, "--concurrency", 3, "-q")
    restarted = invoke(src, *args, "--limit-message-chars", 2000)
    assert restarted.exit_code == 1, restarted.output  # three inputs are unusable

    results, failed = read_lines(out), read_lines(failures)
    keys = Counter(key_of_line(r) for r in results + failed)
    assert sum(keys.values()) == len(ITEMS) and set(keys.values()) == {1}
    assert [r["conversation_id"] for r in results] == [
        f"k{i}" for i in range(45) if i not in (5, 21, 38)
    ]
    assert [(f["stage"], f["error_code"]) for f in failed] == [
        ("load", "INPUT_INVALID"),
        ("load", "INPUT_INVALID"),
        ("load", "LIMIT_EXCEEDED"),
    ]

    recorded, _ = assert_ledger_consistent(ledger, results, failed)
    assert set(recorded) == {(r["conversation_id"], r["conversation_hash"]) for r in results}
    runs = ledger_rows(ledger)
    # The killed run is marked interrupted when the restarted one starts.
    assert sorted(status for status, _ in runs.values()) == ["completed", "interrupted"]
    (killed,) = [n for status, n in runs.values() if status == "interrupted"]
    (finished,) = [n for status, n in runs.values() if status == "completed"]
    assert before <= killed <= before + 1, "at most the one in-flight record is extra"
    assert finished == len(ITEMS) - before


# --- a full disk, a read-only directory ----------------------------------------------------------


@pytest.fixture
def src(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([conv("a"), "{torn", conv("b")]) + "\n")
    return path


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_results_to_a_full_disk_are_a_clear_error(src: Path, tmp_path: Path) -> None:
    failures = tmp_path / "failures.jsonl"
    proc = invoke(src, "--out", "/dev/full", "--failures", failures, "-q")
    assert proc.exit_code == 2
    assert "Error: /dev/full: cannot write: No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert read_lines(failures) == []  # the run stopped at the first result, before the failure


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_failures_to_a_full_disk_stop_the_run_with_whole_lines_only(
    src: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out.jsonl"
    proc = invoke(src, "--out", out, "--failures", "/dev/full", "-q")
    assert proc.exit_code == 2
    assert "/dev/full: cannot write: No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert [r["conversation_id"] for r in read_lines(out)] == ["a"]
    resumed = invoke(src, "--out", out, "-q")
    assert resumed.exit_code == 1
    assert [r["conversation_id"] for r in read_lines(out)] == ["a", "b"]
    assert len(read_lines(Path(f"{out}.failures.jsonl"))) == 1


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    """A directory holding the input, and a command prefix under which it is read-only: its
    mode for an ordinary user; for root (who ignores modes) a read-only bind mount in a private
    mount namespace."""
    base = tmp_path / "ro"
    base.mkdir()
    (base / "in.jsonl").write_text(conv("a") + "\n")
    if os.geteuid() != 0:
        base.chmod(0o555)
        yield base, []
        base.chmod(0o755)
        return
    remount = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    prefix = ["unshare", "-r", "-m", "sh", "-c", remount, "sh", str(base)]
    probe = subprocess.run([*prefix, "touch", str(base / "probe")], capture_output=True)
    if shutil.which("unshare") is None or b"Read-only file system" not in probe.stderr:
        pytest.skip("running as root without user namespaces: cannot make a read-only directory")
    yield base, prefix


def test_a_read_only_output_directory_is_a_clear_error(
    read_only_dir: tuple[Path, list[str]],
) -> None:
    base, prefix = read_only_dir
    out = base / "out.jsonl"
    proc = subprocess.run(
        [*prefix, *CLI, "run", str(base / "in.jsonl"), "--out", str(out), "-q"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert f"Error: {out}: cannot open for writing: " in proc.stderr
    assert "Read-only file system" in proc.stderr or "Permission denied" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in base.iterdir()) == ["in.jsonl"]


# --- limits --------------------------------------------------------------------------------------


def invoke(*args: Any) -> Any:
    return CliRunner().invoke(cli, ["run", *map(str, args)], catch_exceptions=False)


def test_the_limits_are_run_options_with_their_defaults_shown() -> None:
    help_text = " ".join(invoke("--help").output.split())
    for option, default in (
        ("--limit-message-chars", DEFAULT_MAX_MESSAGE_CHARS),
        ("--limit-messages", DEFAULT_MAX_MESSAGES),
        ("--limit-candidates", DEFAULT_MAX_CANDIDATES),
    ):
        assert option in help_text
        assert f"[default: {default}; x>=1]" in help_text or f"[default: {default}]" in help_text
    assert (DEFAULT_MAX_MESSAGE_CHARS, DEFAULT_MAX_MESSAGES, DEFAULT_MAX_CANDIDATES) == (
        100_000,
        5_000,
        200,
    )


def test_limits_fail_only_the_conversation_that_exceeds_them_naming_it(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    lines = [
        json.dumps({"id": "ok", "messages": MESSAGES}),
        json.dumps({"id": "long", "messages": [{"role": "user", "content": "x" * 81}]}),
        json.dumps({"id": "many", "messages": MESSAGES + MESSAGES}),
        json.dumps({"id": "ok-too", "messages": MESSAGES}),
    ]
    src.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.jsonl"
    # The mock server answers with the offline model's full output, ignoring the client's limit:
    # a model that proposes too much.
    proposed = len(offline_extract(BASE)["candidates"])
    assert proposed > 3
    with MockServer() as server:
        result = invoke(
            src, "--out", out, "--limit-message-chars", 80, "--limit-messages", 4,
            "--limit-candidates", 3, "--model", "mock", "--base-url", server.base_url,
            "--api-key", "k", "--no-cache", "-q",
        )  # fmt: skip
    assert result.exit_code == 1
    results = read_lines(out)
    assert [r["conversation_id"] for r in results] == ["ok", "ok-too"]
    for r in results:
        assert len(r["candidates"]) == 3
        # Past the limit a sample of 3 is kept, the rest counted (bounded storage).
        sample = min(3, proposed - 3)
        assert [x["code"] for x in r["rejections"]] == ["CANDIDATE_LIMIT_EXCEEDED"] * sample
        assert r["rejections_omitted"] == (
            {"CANDIDATE_LIMIT_EXCEEDED": proposed - 3 - sample} if proposed - 3 > sample else {}
        )
        assert all(x["message"] == "more than 3 candidates" for x in r["rejections"])
    long, many = read_lines(Path(f"{out}.failures.jsonl"))
    assert (long["stage"], long["error_code"]) == ("load", "LIMIT_EXCEEDED")
    assert long["error"] == (
        f"{src}:2, conversation 'long', field messages[0]: message has 81 characters, "
        "over the limit of 80"
    )
    assert many["error"] == (
        f"{src}:3, conversation 'many', field messages: 8 messages exceed the limit of 4"
    )


@pytest.mark.parametrize(
    "option", ["--limit-message-chars", "--limit-messages", "--limit-candidates"]
)
@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_a_nonsensical_limit_is_a_usage_error(option: str, value: str) -> None:
    result = CliRunner().invoke(cli, ["run", "examples/", option, value])
    assert result.exit_code == 2
    assert option in result.stderr


# --- failures reported on stderr name their conversation ------------------------------------


class Prose:
    model_name = "prose"

    async def extract(self, conversation: Any, prompt: Any, options: Any) -> ClientResult:
        return ClientResult(output="Sure! Here are the memories.", model=self.model_name)


def test_without_a_failures_file_each_failure_on_stderr_names_its_conversation(
    tmp_path: Path,
) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(conv("conv-7") + "\n{torn\n")
    stdout, stderr = io.BytesIO(), io.StringIO()
    summary = run_batch([src], Extractor(Prose()), stdout=stdout, stderr=stderr)
    assert summary.failed == 2 and stdout.getvalue() == b""
    unreadable, torn = stderr.getvalue().splitlines()
    assert unreadable.startswith("extractor: failed [validate] conversation 'conv-7': ")
    assert "extraction output is not JSON" in unreadable
    assert torn.startswith(f"extractor: failed [load] {src}:2: not valid JSON")
