"""The HTTP clients the package builds share one TLS context per trust store (extractor.clients.tls):
building one loads the whole CA bundle, and a batch builds a client per event loop."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from extractor.clients import tls
from extractor.mockserver import MockServer
from extractor.testing import mock_llm_extractor_for

CHAT = {"id": "tls-1", "messages": [{"role": "user", "content": "My manager is Alice."}]}


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ssl.SSLContext]]:
    """Every TLS context httpx2 builds for us while the test runs."""
    made: list[ssl.SSLContext] = []
    real = httpx2.create_ssl_context

    def counting(*args: object, **kwargs: object) -> ssl.SSLContext:
        context = real(*args, **kwargs)  # type: ignore[arg-type]
        made.append(context)
        return context

    monkeypatch.setattr(httpx2, "create_ssl_context", counting)
    tls._context.cache_clear()
    yield made
    tls._context.cache_clear()


def test_one_context_per_trust_store(
    built: list[ssl.SSLContext], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    first = tls.tls_context()
    assert tls.tls_context() is first and len(built) == 1
    bundle = tmp_path / "ca.pem"
    bundle.write_bytes(Path(ssl.get_default_verify_paths().openssl_cafile or "").read_bytes())
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    other = tls.tls_context()
    assert other is not first and len(built) == 2  # a changed trust store is read anew
    assert tls.tls_context() is other
    assert other.verify_mode == ssl.CERT_REQUIRED and other.check_hostname


def test_clients_on_several_event_loops_share_the_context(built: list[ssl.SSLContext]) -> None:
    with MockServer() as server:
        extractor = mock_llm_extractor_for(server)
        for _ in range(3):  # each process() call runs its own event loop, so its own SDK client
            result = extractor.process(CHAT)
            assert result.candidates
    assert len(built) == 1
