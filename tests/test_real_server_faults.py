"""The seven failures a real llama-cpp-python server showed, each through ``extractor run``
against the mock server with the fault that reproduces it, in every instructor mode.

1. output and time are bounded (``max_tokens`` always sent; ``--max-tokens``,
   ``--model-timeout``, ``--max-attempts`` exist and take effect; hints name real options);
2. a timeout is not re-sent to a single-slot local server that is still generating it;
3. an unsupported mode is permanent and names the mode to use;
4. a cut-off answer is recognized whatever ``finish_reason`` says, and the chunk split;
5. the best answer of all attempts is kept; failures carry attempts and usage;
6. an answer that repeats stops the re-asks;
7. a dropped system prompt is detected.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from helpers import read_lines

from extractor.cli import cli
from extractor.clients.offline import offline_extract
from extractor.clients.openai_client import max_tokens_for
from extractor.conversation import conversation_from_data
from extractor.mockserver import MockServer, prompt_tokens
from extractor.offline import offline_proposal

MODES = ["tools", "json_schema", "json", "md_json"]
MESSAGES = [
    ("user", "My manager is Alice and I live in Lisbon."),
    ("assistant", "Noted. How long have you lived there?"),
    ("user", "I moved to Lisbon in 2019 and I work at a bakery."),
    ("assistant", "That sounds lovely."),
    ("user", "I think I prefer tea over coffee, and my sister Ana lives in Porto."),
    ("assistant", "Tea it is."),
]
CONVERSATION = {
    "id": "real-1",
    "messages": [{"role": r, "content": t} for r, t in MESSAGES],
}
RUN_OPTIONS = {p.opts[0] for p in cli.commands["run"].params if isinstance(p, click.Option)}


@pytest.fixture(autouse=True)
def _no_endpoint_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests count every request of a conversation and its failure record; the check
    before the batch (tests/test_fail_fast.py) would add a request and stop the run first."""

    async def skip(extractor: Any) -> None:
        return None

    monkeypatch.setattr("extractor.batch.check_endpoint", skip)


def write_input(tmp_path: Path, *conversations: dict[str, Any]) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in conversations or [CONVERSATION]))
    return path


def run(tmp_path: Path, server: MockServer, model: str, *args: Any) -> Result:
    out = tmp_path / "out.jsonl"
    argv = [
        "run", str(write_input(tmp_path)), "--model", model, "--base-url", server.base_url,
        "--api-key", "k", "--no-cache", "--quiet", "--json", "--out", str(out), *map(str, args),
    ]  # fmt: skip
    return CliRunner().invoke(cli, argv, catch_exceptions=False)


def outcome(tmp_path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return read_lines(tmp_path / "out.jsonl"), read_lines(tmp_path / "out.jsonl.failures.jsonl")


def options_named(text: str) -> set[str]:
    return set(re.findall(r"--[a-z][a-z-]+", text))


def assert_names_real_options(text: str) -> None:
    named = options_named(text)
    assert named, text
    assert named <= RUN_OPTIONS, f"{named - RUN_OPTIONS} are not options of extractor run"


def chat_requests(server: MockServer) -> list[dict[str, Any]]:
    return server.requests


# --- 1. bounds ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_every_request_carries_max_tokens_chosen_from_the_chunk(tmp_path: Path, mode: str) -> None:
    with MockServer() as server:
        assert run(tmp_path, server, "mock", "--mode", mode).exit_code == 0
        sent = [r["max_tokens"] for r in chat_requests(server)]
    assert sent == [max_tokens_for(conversation_from_data(CONVERSATION))]


@pytest.mark.parametrize("mode", MODES)
def test_max_tokens_and_max_attempts_are_cli_options(tmp_path: Path, mode: str) -> None:
    with MockServer() as server:
        args = ("--mode", mode, "--max-tokens", 4000, "--max-attempts", 1)
        result = run(tmp_path, server, "mock+verified:always", *args)
        assert result.exit_code == 0, result.output
        assert [r["max_tokens"] for r in chat_requests(server)] == [4000]
    (row,), _ = outcome(tmp_path)
    assert row["attempts"] == 1
    assert [r["code"] for r in row["rejections"]] == ["EXTRACTOR_CLAIMED_VERIFIED"]


# --- 2. timeouts on a single-slot local server -----------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_timeout_is_not_resent_to_a_busy_local_server(tmp_path: Path, mode: str) -> None:
    with MockServer(slots=1, latency=30) as server:
        result = run(tmp_path, server, "mock", "--mode", mode, "--model-timeout", 0.3)
        assert result.exit_code == 1
        assert len(chat_requests(server)) == 1  # not queued a second time behind the first
    _, (failure,) = outcome(tmp_path)
    assert failure["error_code"] == "MODEL_TIMEOUT"
    assert {"--model-timeout", "--timeout-retries"} <= options_named(failure["error"])
    assert_names_real_options(failure["error"])


def test_timeout_retries_resends_when_asked(tmp_path: Path) -> None:
    with MockServer(latency=30) as server:
        args = ("--model-timeout", 0.3, "--timeout-retries", 1)
        assert run(tmp_path, server, "mock", *args).exit_code == 1
        assert len(chat_requests(server)) == 2


# --- 3. unsupported modes --------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_an_unsupported_mode_is_permanent_and_names_the_mode_to_use(
    tmp_path: Path, mode: str
) -> None:
    with MockServer() as server:
        result = run(tmp_path, server, "mock+no_json_schema+no_tools", "--mode", mode)
        requests = len(chat_requests(server))
    rows, failures = outcome(tmp_path)
    if mode in ("json", "md_json"):
        assert result.exit_code == 0 and len(rows) == 1
        return
    (failure,) = failures
    assert failure["error_code"] == "MODEL_MODE_UNSUPPORTED"
    assert requests == 1  # not retried as a transient 5xx
    assert "--mode json instead" in failure["error"]
    assert_names_real_options(failure["error"])


# --- 4. truncation whatever finish_reason says -----------------------------------------------


def answer_of(conversation: Any) -> str:
    """The text the mock server answers for ``conversation`` (the offline model's output)."""
    return json.dumps(offline_proposal(conversation), ensure_ascii=False, separators=(",", ":"))


def single_message_budget() -> int:
    """A max_tokens every single message's answer fits in, but not the whole conversation's."""
    conv = conversation_from_data(CONVERSATION)
    singles = [
        conversation_from_data({"id": conv.id, "messages": [CONVERSATION["messages"][i]]})
        for i in range(len(MESSAGES))
    ]
    longest = max(len(answer_of(c)) for c in singles)
    whole = len(answer_of(conv))
    budget = longest // 4 + 8
    assert whole // 4 > budget
    return budget


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fault", ["mock", "mock+finish_lies"])
def test_a_cut_off_answer_is_split_and_retried(tmp_path: Path, mode: str, fault: str) -> None:
    budget = single_message_budget()
    with MockServer() as server:
        result = run(tmp_path, server, fault, "--mode", mode, "--max-tokens", budget)
        assert result.exit_code == 0, result.output
        assert len(chat_requests(server)) > 1
    (row,), _ = outcome(tmp_path)
    assert row["chunks"] > 1 and row["candidates"]
    assert any("split in two" in a["error"] for a in row["failed_attempts"])
    assert not any("OUTPUT_UNREADABLE" in a["error"] for a in row["failed_attempts"])
    summary = json.loads(result.stdout)
    assert summary["usage"]["completion_tokens"] >= budget  # the cut-off answer is counted


@pytest.mark.parametrize("mode", MODES)
def test_a_single_message_cut_off_keeps_its_complete_candidates(tmp_path: Path, mode: str) -> None:
    one = {"id": "one", "messages": [CONVERSATION["messages"][4]]}
    path = write_input(tmp_path, one)
    answer = answer_of(conversation_from_data(one))
    first_closed = answer.index("}},") + 2  # after the first candidate's span and the candidate
    budget = (first_closed + 40) // 4
    with MockServer() as server:
        argv = [
            "run", str(path), "--model", "mock+finish_lies", "--base-url", server.base_url,
            "--api-key", "k", "--no-cache", "--quiet", "--mode", mode, "--max-tokens", str(budget),
            "--out", str(tmp_path / "out.jsonl"),
        ]  # fmt: skip
        result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (row,), _ = outcome(tmp_path)
    assert len(row["candidates"]) >= 1
    (note,) = row["failed_attempts"]
    assert "unfinished last candidate was dropped" in note["error"]
    assert_names_real_options(note["error"])


# --- 5. best answer kept; failures carry attempts and usage ----------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_good_first_answer_survives_unreadable_reasks(tmp_path: Path, mode: str) -> None:
    with MockServer() as server:
        result = run(tmp_path, server, "mock+verified:always+malformed:>1", "--mode", mode)
        requests = len(chat_requests(server))
    assert result.exit_code == 0, result.output
    (row,), failures = outcome(tmp_path)
    assert failures == []
    assert row["attempts"] == requests >= 2  # md_json: instructor does not re-ask unreadable
    expected = offline_extract(conversation_from_data(CONVERSATION))["candidates"]
    assert len(row["candidates"]) == len(expected)
    assert [r["code"] for r in row["rejections"]] == ["EXTRACTOR_CLAIMED_VERIFIED"]


@pytest.mark.parametrize("mode", MODES)
def test_a_failure_record_carries_attempts_usage_and_raw_output(tmp_path: Path, mode: str) -> None:
    with MockServer() as server:
        result = run(tmp_path, server, "mock+malformed:always", "--mode", mode)
        requests = len(chat_requests(server))
    assert result.exit_code == 1
    _, (failure,) = outcome(tmp_path)
    assert failure["error_code"] == "OUTPUT_UNREADABLE"
    assert failure["attempts"] == requests
    assert requests == 3 or mode == "md_json"  # md_json: instructor may give up unreadable text
    assert failure["usage"]["completion_tokens"] > 0 and failure["raw_output"]
    assert json.loads(result.stdout)["usage"] == failure["usage"]  # the summary counts them


# --- 6. repeated answers ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_an_answer_that_repeats_stops_the_reasks(tmp_path: Path, mode: str) -> None:
    with MockServer() as server:
        args = ("--mode", mode, "--max-attempts", 5)
        result = run(tmp_path, server, "mock+verified:always+repeat", *args)
        assert result.exit_code == 0, result.output
        assert len(chat_requests(server)) == 2
    (row,), _ = outcome(tmp_path)
    assert row["attempts"] == 2
    assert "same answer as attempt 1" in row["failed_attempts"][-1]["error"]
    assert [r["code"] for r in row["rejections"]] == ["EXTRACTOR_CLAIMED_VERIFIED"]


# --- 7. a dropped system prompt --------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_dropped_system_prompt_is_detected(tmp_path: Path, mode: str) -> None:
    with MockServer() as server:
        result = run(tmp_path, server, "mock+drop_system", "--mode", mode)
        assert result.exit_code == 1
        assert len(chat_requests(server)) == 1
    _, (failure,) = outcome(tmp_path)
    assert failure["error_code"] == "MODEL_PROMPT_DROPPED"
    assert "--system-as-user" in failure["error"]
    assert_names_real_options(failure["error"])


@pytest.mark.parametrize("mode", MODES)
def test_system_as_user_reaches_a_template_without_a_system_role(tmp_path: Path, mode: str) -> None:
    with MockServer() as server:
        result = run(tmp_path, server, "mock+drop_system", "--mode", mode, "--system-as-user")
        assert result.exit_code == 0, result.output
        (request,) = chat_requests(server)
    assert [m["role"] for m in request["messages"]] == ["user"]
    assert prompt_tokens(request) > 0


# --- slow prompt processing ------------------------------------------------------------------


def test_slow_prompt_processing_times_out_naming_the_option(tmp_path: Path) -> None:
    with MockServer(prompt_rate=50) as server:  # ~1,000 prompt tokens: ~20 s to read
        result = run(tmp_path, server, "mock", "--model-timeout", 0.5)
    assert result.exit_code == 1
    _, (failure,) = outcome(tmp_path)
    assert failure["error_code"] == "MODEL_TIMEOUT"
    assert_names_real_options(failure["error"])
