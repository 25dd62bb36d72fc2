"""pytest plugin: fixtures for testing code that uses memory-candidate-extractor offline.

Registered through the ``pytest11`` entry point, so it loads in every pytest session of an
environment where the package is installed; it must import cheaply and never fail to import.
That is why this module imports nothing but pytest at the top: every fixture imports what it
needs when it runs (the mock server and the OpenAI client only when a test asks for them).

Fixtures (all prefixed, so they do not clash with a project's own):

``offline_extractor``
    An :class:`~extractor.pipeline.Extractor` on the offline model, with a fixed clock
    (:data:`FIXED_NOW`), so its results are byte-for-byte reproducible.
``mock_llm_server``
    A started :class:`~extractor.mockserver.MockServer` on an ephemeral loopback port, stopped
    after the test. Choose fault modes with ``@pytest.mark.mock_llm_faults("rate_limit:1", ...)``
    (keyword arguments ``latency=`` and ``retry_after=`` are passed on too).
``mock_llm_server_factory``
    ``factory(faults=..., latency=..., retry_after=...)`` starts another mock server; every
    server it started is stopped after the test.
``mock_llm_extractor``
    An ``Extractor`` whose :class:`~extractor.clients.openai_client.OpenAIClient` talks to
    ``mock_llm_server`` over a real socket (fixed clock, fast retries).
``extractor_vcr_config``
    :func:`vcr_config` as a session fixture, for a project's ``vcr_config`` fixture
    (pytest-recording) when recording and replaying cassettes of the OpenAI client.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .mockserver import MockServer
    from .pipeline import Extractor

#: The clock of every extractor these fixtures build: results do not change between runs.
FIXED_NOW = datetime(2025, 1, 1, tzinfo=UTC)

#: The API key the mock-server client sends (the mock ignores it; cassettes never keep it).
MOCK_API_KEY = "mock-key"

#: Request headers that carry credentials; removed before a cassette is written.
SECRET_REQUEST_HEADERS = (
    "authorization",
    "api-key",
    "x-api-key",
    "openai-organization",
    "openai-project",
    "cookie",
)
#: Response headers that identify an account; removed from recorded responses.
SECRET_RESPONSE_HEADERS = ("set-cookie", "openai-organization", "openai-project")

MARKER = "mock_llm_faults"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(*faults, latency=0.0, retry_after=0.0): fault modes for the mock_llm_server "
        "fixture, e.g. 'rate_limit:1', 'verified', 'server_error:always'",
    )


def fixed_clock() -> datetime:
    return FIXED_NOW


def vcr_config(**overrides: Any) -> dict[str, Any]:
    """vcrpy settings for cassettes of :class:`~extractor.clients.openai_client.OpenAIClient`.

    Credentials are stripped from requests and responses before anything is written. Requests
    match on method, path, query and the JSON body -- not on scheme, host or port -- so a
    cassette recorded against one server replays whatever base URL the test uses, and a changed
    prompt or conversation is a cassette miss instead of a stale answer.
    """
    config: dict[str, Any] = {
        "filter_headers": list(SECRET_REQUEST_HEADERS),
        "before_record_response": _scrub_response,
        "match_on": ("method", "path", "query", "body"),
        "decode_compressed_response": True,
    }
    config.update(overrides)
    return config


def _scrub_response(response: dict[str, Any]) -> dict[str, Any]:
    headers = response.get("headers", {})
    for name in list(headers):
        if name.lower() in SECRET_RESPONSE_HEADERS:
            del headers[name]
    return response


def _start_server(
    faults: str | Sequence[str] = (), latency: float = 0.0, retry_after: float = 0.0
) -> MockServer:
    from .mockserver import MockServer

    server = MockServer(host="127.0.0.1", port=0, faults=faults, latency=latency,
                        retry_after=retry_after)  # fmt: skip
    server.start()
    return server


def mock_llm_extractor_for(server: MockServer, **client_options: Any) -> Extractor:
    """An ``Extractor`` whose OpenAI client talks to ``server``; ``client_options`` go to
    :class:`~extractor.clients.openai_client.OpenAIClient` (``mode``, ``max_attempts`` ...)."""
    from .clients.openai_client import OpenAIClient
    from .pipeline import Extractor

    options: dict[str, Any] = {"model": "offline", "api_key": MOCK_API_KEY, "retry_backoff": 0.01}
    options.update(client_options)
    return Extractor(OpenAIClient(base_url=server.base_url, **options), clock=fixed_clock)


@pytest.fixture
def offline_extractor() -> Extractor:
    """An ``Extractor`` on the offline model with a fixed clock."""
    from .offline import OfflineClient
    from .pipeline import Extractor

    return Extractor(OfflineClient(), clock=fixed_clock)


@pytest.fixture
def mock_llm_server_factory() -> Iterator[Callable[..., MockServer]]:
    """Start mock LLM servers on demand; all are stopped after the test."""
    started: list[MockServer] = []

    def factory(
        faults: str | Sequence[str] = (), latency: float = 0.0, retry_after: float = 0.0
    ) -> MockServer:
        server = _start_server(faults, latency, retry_after)
        started.append(server)
        return server

    yield factory
    for server in started:
        server.stop()


@pytest.fixture
def mock_llm_server(
    request: pytest.FixtureRequest, mock_llm_server_factory: Callable[..., MockServer]
) -> MockServer:
    """A mock LLM server on an ephemeral port, with the faults of the test's marker."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        return mock_llm_server_factory()
    return mock_llm_server_factory(tuple(marker.args), **marker.kwargs)


@pytest.fixture
def mock_llm_extractor(mock_llm_server: MockServer) -> Extractor:
    """An ``Extractor`` with an OpenAI client pointed at ``mock_llm_server``."""
    return mock_llm_extractor_for(mock_llm_server)


@pytest.fixture(scope="session")
def extractor_vcr_config() -> dict[str, Any]:
    """:func:`vcr_config`, for a project's own ``vcr_config`` fixture."""
    return vcr_config()


__all__ = [
    "FIXED_NOW",
    "MOCK_API_KEY",
    "SECRET_REQUEST_HEADERS",
    "SECRET_RESPONSE_HEADERS",
    "extractor_vcr_config",
    "fixed_clock",
    "mock_llm_extractor",
    "mock_llm_extractor_for",
    "mock_llm_server",
    "mock_llm_server_factory",
    "offline_extractor",
    "vcr_config",
]
