"""Shared test configuration: cassettes live in the top-level ``cassettes/`` directory, and
live tests (a real provider) run only when explicitly enabled."""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from extractor.heap import tune_collector

# Hypothesis profiles (docs/testing.md). Property tests assert invariants, never speed: on a
# loaded 2-core CI machine a per-example deadline or the "too slow" health check would fail a
# correct run, so both are off. Examples are drawn at random in every profile (never
# derandomized), and a failure prints the blob that replays it (`@reproduce_failure`).
# - `default`: bounded. A test with no count of its own runs DEFAULT_EXAMPLES examples; a test
#   whose examples are dear asks for fewer (or a cheap one for more) with `helpers.examples(n)`,
#   which is n here. The example database (.hypothesis/, replays last failures first) is on
#   locally and off in CI (the `CI` variable is set: CI services and .ci/run set it).
# - `thorough` (HYPOTHESIS_PROFILE=thorough): ten times the examples of every test.
DEFAULT_EXAMPLES = 50
_database: dict[str, Any] = {"database": None} if os.environ.get("CI") else {}
settings.register_profile(
    "default",
    max_examples=DEFAULT_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
    **_database,
)
settings.register_profile(
    "thorough", settings.get_profile("default"), max_examples=10 * DEFAULT_EXAMPLES
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

CASSETTES = Path(__file__).resolve().parents[1] / "cassettes"
_PYDANTIC_DOCS = re.compile(rb"errors\.pydantic\.dev/[0-9][0-9.]*/")


@pytest.fixture(autouse=True, scope="session")
def _collector_tuned_once() -> Iterator[None]:
    """``extractor run``, ``serve`` and ``mock-server`` tune the collector of their process
    (extractor/heap.py: collect, freeze what is alive, raise the young threshold), once per
    process. Through ``CliRunner`` they run in the test process, ~300 times a run, and each call
    collects and counts a frozen heap that grows with every test (~35 ms of CPU). The test
    process is tuned once, here, and the commands' calls do nothing; that each command calls it
    is tested in tests/test_cli_run.py (in order, and in a real process)."""
    tune_collector()
    with pytest.MonkeyPatch.context() as patch:
        for command in ("run", "serve", "mock_server"):
            module = importlib.import_module(f"extractor.cli.{command}")
            patch.setattr(module, "tune_collector", lambda: 0)
        yield


def live_tests_enabled() -> bool:
    return os.environ.get("EXTRACTOR_LIVE_TESTS") == "1" and bool(os.environ.get("OPENAI_API_KEY"))


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("live") and not live_tests_enabled():
        pytest.skip("live test: set EXTRACTOR_LIVE_TESTS=1 and OPENAI_API_KEY to run it")


def _normalize_request(request: Any) -> Any:
    """Re-ask messages quote pydantic's docs URL, which names pydantic's version; drop the
    version so a pydantic upgrade does not turn every re-ask cassette into a miss."""
    if isinstance(request.body, bytes):
        request.body = _PYDANTIC_DOCS.sub(b"errors.pydantic.dev/X/", request.body)
    return request


@pytest.fixture(scope="module")
def vcr_config(extractor_vcr_config: dict[str, Any]) -> dict[str, Any]:
    return {**extractor_vcr_config, "before_record_request": _normalize_request}


@pytest.fixture(scope="module")
def vcr_cassette_dir(request: pytest.FixtureRequest) -> str:
    return str(CASSETTES / request.module.__name__.rsplit(".", 1)[-1])


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """A default run leaves out the slow tests: say so, and how to run them, so none is
    silently never run."""
    if config.option.markexpr == "not slow":
        left_out = terminalreporter.stats.get("deselected", [])
        deselected = sum(1 for item in left_out if item.get_closest_marker("slow"))
        if deselected:
            terminalreporter.write_line(
                f"{deselected} slow tests left out of this run: run them with `pytest -m slow`"
            )
