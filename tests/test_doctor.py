"""``extractor doctor`` against the mock server: what it finds, and that ``extractor run`` with
what it recommends works where the defaults fail. Plus the opt-in test against a real
``llama_cpp.server`` (``EXTRACTOR_LLAMA_CPP_URL``; see docs/llm-path.md)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result
from helpers import read_lines
from hypothesis import given
from hypothesis import strategies as st

from extractor.cli import cli
from extractor.clients.openai_client import OpenAIClient
from extractor.doctor import DoctorReport, ModeCheck, Speeds, check_server, preflight, recommend
from extractor.doctor.probe import GENERATION_PROMPT
from extractor.doctor.recommend import (
    MAX_RECOMMENDED_TIMEOUT,
    MIN_CHUNK_CHARS,
    worst_case_seconds,
)
from extractor.errors import ModeUnsupported, PromptNotDelivered
from extractor.mockserver import MockServer, Reply

RUN = cli.commands["run"]
RUN_OPTIONS = {p.opts[0] for p in RUN.params if isinstance(p, click.Option)}
CONVERSATION = {
    "id": "d-1",
    "messages": [
        {"role": "user", "content": "I live in Lisbon and I work at a bakery."},
        {"role": "assistant", "content": "Nice."},
    ],
}
REAL_SERVER_CODES = {"MODEL_OUTPUT_TRUNCATED", "MODEL_TIMEOUT", "OUTPUT_UNREADABLE", "MODEL_ERROR"}


def doctor(server_url: str, model: str = "mock") -> tuple[Result, DoctorReport]:
    argv = ["doctor", "--base-url", server_url, "--model", model, "--api-key", "k", "--json"]
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    return result, DoctorReport.model_validate_json(result.stdout)


def run_with(tmp_path: Path, url: str, model: str, options: list[str]) -> Result:
    tmp_path.mkdir(parents=True, exist_ok=True)
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(CONVERSATION) + "\n")
    argv = ["run", str(src), "--model", model, "--base-url", url, "--api-key", "k",
            "--no-cache", "--quiet", "--out", str(tmp_path / "out.jsonl"), *options]  # fmt: skip
    return CliRunner().invoke(cli, argv, catch_exceptions=False)


def test_a_healthy_server_supports_every_mode(tmp_path: Path) -> None:
    with MockServer() as server:
        result, report = doctor(server.base_url)
        assert result.exit_code == 0
        assert report.reachable and report.authenticated and report.system_prompt_delivered
        assert {c.mode: c.outcome for c in report.modes} == dict.fromkeys(
            ["tools", "json_schema", "json", "md_json"], "supported"
        )
        assert report.recommendation is not None and report.recommendation.mode == "tools"
        assert (
            run_with(tmp_path, server.base_url, "mock", report.recommendation.options()).exit_code
            == 0
        )


def test_a_llama_cpp_like_server_gets_options_that_work(tmp_path: Path) -> None:
    """No json_schema (a 500), no tools, a chat template without a system role: the defaults
    fail; the recommended options work."""
    model = "mock+no_json_schema+no_tools+drop_system"
    with MockServer() as server:
        result, report = doctor(server.base_url, model)
        assert result.exit_code == 0
        assert report.system_prompt_delivered is False
        outcomes = {c.mode: c.outcome for c in report.modes}
        assert outcomes["tools"] == outcomes["json_schema"] == "unsupported"
        rec = report.recommendation
        assert rec is not None and rec.mode == "json" and rec.system_as_user
        failed = run_with(tmp_path / "a", server.base_url, model, [])
        assert failed.exit_code == 2 and "--mode json" in failed.output  # stopped before the batch
        assert run_with(tmp_path / "b", server.base_url, model, rec.options()).exit_code == 0


def test_recommended_options_all_exist_on_extractor_run() -> None:
    with MockServer() as server:
        _, report = doctor(server.base_url, "mock+drop_system")
    assert report.recommendation is not None
    options = report.recommendation.options()
    named = {o for o in options if o.startswith("--")}
    assert named <= RUN_OPTIONS
    ctx = RUN.make_context("run", ["in.jsonl", *options])  # parses: types and ranges hold
    assert ctx.params["system_as_user"] is True


class VirtualClock:
    """Seconds that pass only when a server says so: the doctor's clock (``check_server``'s
    ``clock``), moved by :class:`PacedServer`."""

    def __init__(self) -> None:
        self._now = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def reach(self, moment: float) -> None:
        with self._lock:
            self._now = max(self._now, moment)


class PacedServer(MockServer):
    """The mock server, taking what a server that reads ``prompt_rate`` prompt tokens a second
    and generates a token every ``token_latency`` seconds, after a ``latency``, would take --
    on ``clock``, not in real time, so no measurement depends on the machine's speed.

    An answer starts when its request arrives (``slots=1``: when the one before it ended) and
    moves the clock to its end. The doctor sends the same counting request alone and then two
    at once: on a server with parallel slots the pair is held until both requests have arrived
    (an event; the ceiling only keeps a broken doctor from hanging the test), so both start at
    the same moment, as they would on a real server.
    """

    def __init__(
        self,
        clock: VirtualClock,
        *,
        latency: float,
        prompt_rate: float,
        token_latency: float = 0.0,
        slots: int | None = None,
    ) -> None:
        super().__init__()
        self.clock = clock
        self.pace = (latency, prompt_rate, token_latency)
        self.single_slot = slots == 1
        self.one_at_a_time = threading.Lock()
        self.pair = threading.Barrier(2)
        self.counting = itertools.count()

    def handle(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Reply:
        if method != "POST":
            return super().handle(method, path, headers, body)
        if self.single_slot:
            with self.one_at_a_time:
                return self._paced(self.clock(), method, path, headers, body)
        started = self.clock()
        if self._held(body):
            self.pair.wait(timeout=120)
        return self._paced(started, method, path, headers, body)

    def _held(self, body: bytes) -> bool:
        """The second and third counting requests: the pair the doctor sends at once."""
        if json.loads(body)["messages"][-1]["content"] != GENERATION_PROMPT:
            return False
        return next(self.counting) >= 1

    def _paced(
        self, started: float, method: str, path: str, headers: Mapping[str, str], body: bytes
    ) -> Reply:
        reply = super().handle(method, path, headers, body)
        latency, prompt_rate, token_latency = self.pace
        usage = reply.body["usage"]
        took = latency + usage["prompt_tokens"] / prompt_rate
        self.clock.reach(started + took + token_latency * usage["completion_tokens"])
        return reply


def paced_check(**pace: Any) -> DoctorReport:
    clock = VirtualClock()
    with PacedServer(clock, **pace) as server:
        return asyncio.run(check_server(base_url=server.base_url, model="mock", clock=clock))


def test_prompt_and_generation_speed_and_a_single_slot_are_measured() -> None:
    report = paced_check(latency=1.0, prompt_rate=1_000, token_latency=0.01, slots=1)
    # the long probe has ~1,040 more prompt tokens than the short one, read at 1,000 a second;
    # the counting probe generates its 64 tokens at 100 a second (its few more prompt tokens
    # than the short probe's count as generation: 99.4)
    assert report.speeds.prompt_tokens_per_s == pytest.approx(1_000, abs=0.1)
    assert report.speeds.generation_tokens_per_s == pytest.approx(100, rel=0.01)
    assert report.speeds.round_trip_s is not None and 1.0 < report.speeds.round_trip_s < 1.1
    assert report.speeds.single_slot is True
    assert report.recommendation is not None and report.recommendation.concurrency == 1
    assert all(c.seconds is not None and c.seconds > 1.0 for c in report.modes)


def test_parallel_slots_are_told_apart() -> None:
    report = paced_check(latency=1.0, prompt_rate=1_000, token_latency=0.01)
    assert report.speeds.single_slot is False
    assert report.recommendation is not None and report.recommendation.concurrency > 1


def test_an_unreachable_server_is_a_problem_not_a_crash() -> None:
    with MockServer() as server:
        url = server.base_url
    result, report = doctor(url)
    assert result.exit_code == 1
    assert not report.reachable and "cannot reach" in report.problems[0]


def test_the_text_report_ends_with_a_runnable_command() -> None:
    with MockServer() as server:
        argv = ["doctor", "--base-url", server.base_url, "--model", "mock+no_tools"]
        result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 0
    assert "--mode tools: unsupported" in result.output
    last = result.output.strip().splitlines()[-1].split()
    assert last[:2] == ["extractor", "run"] and "--mode" in last
    assert last[last.index("--mode") + 1] == "json_schema"


@given(
    prompt=st.floats(1, 1e5),
    generation=st.floats(0.5, 1e4),
    chunk=st.integers(1_000, 200_000),
    local=st.booleans(),
)
def test_the_recommended_timeout_covers_a_full_chunk(
    prompt: float, generation: float, chunk: int, local: bool
) -> None:
    speeds = Speeds(prompt_tokens_per_s=prompt, generation_tokens_per_s=generation)
    checks = [ModeCheck(mode="json", outcome="supported")]
    rec = recommend(checks, speeds, local=local, chunk_chars=chunk, system_dropped=False)
    worst = worst_case_seconds(rec.max_chunk_chars, speeds)
    assert worst is not None and rec.model_timeout >= worst
    assert rec.max_chunk_chars <= chunk
    if rec.max_chunk_chars < chunk:  # made smaller only to bring the worst case within bounds
        assert worst <= MAX_RECOMMENDED_TIMEOUT or rec.max_chunk_chars == MIN_CHUNK_CHARS
    RUN.make_context("run", ["in.jsonl", *rec.options()])


def test_preflight_raises_what_the_batch_would_fail_with() -> None:
    with MockServer() as server:

        def check(model: str, **options: Any) -> None:
            client = OpenAIClient(model=model, base_url=server.base_url, api_key="k", **options)
            asyncio.run(preflight(client))

        check("mock")
        with pytest.raises(ModeUnsupported, match="--mode json instead"):
            check("mock+no_json_schema", mode="json_schema")
        with pytest.raises(PromptNotDelivered, match="--system-as-user"):
            check("mock+drop_system")
        check("mock+drop_system", system_as_user=True)


# --- opt-in: a real llama_cpp.server ---------------------------------------------------------

LLAMA_URL = os.environ.get("EXTRACTOR_LLAMA_CPP_URL")


@pytest.mark.skipif(not LLAMA_URL, reason="set EXTRACTOR_LLAMA_CPP_URL to a llama_cpp.server")
def test_a_real_llama_cpp_server(tmp_path: Path) -> None:
    """The doctor's recommendation runs end to end on a real server: every conversation ends in
    the results or the failures file with a typed code, and the run's token counts are true."""
    assert LLAMA_URL is not None
    model = os.environ.get("EXTRACTOR_LLAMA_CPP_MODEL", "local")
    _, report = doctor(LLAMA_URL, model)
    assert report.reachable, report.problems
    assert report.recommendation is not None
    run = run_with(tmp_path, LLAMA_URL, model, [*report.recommendation.options(), "--json"])
    assert run.exit_code in (0, 1), run.output
    rows = read_lines(tmp_path / "out.jsonl")
    failures = read_lines(tmp_path / "out.jsonl.failures.jsonl")
    assert len(rows) + len(failures) == 1
    assert {f["error_code"] for f in failures} <= REAL_SERVER_CODES
    spent = sum(r["usage"]["total_tokens"] for r in rows + failures)
    assert spent > 0 and json.loads(run.stdout)["usage"]["total_tokens"] == spent
