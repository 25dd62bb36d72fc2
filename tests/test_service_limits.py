"""Abuse limits of the HTTP service: per-key rate (injected clock), concurrency, time, size."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from helpers import examples, loopback
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.clients.base import ClientResult
from extractor.clients.offline import OfflineClient
from extractor.conversation import Limits
from extractor.pipeline import Extractor
from extractor.service import KeyStore, RateLimiter, ServiceLimits, create_app, serve_in_thread
from extractor.testing import fixed_clock

CONVERSATION = {"id": "c1", "messages": [{"role": "user", "content": "My manager is Alice."}]}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@settings(max_examples=examples(60))
@given(
    rate=st.sampled_from([0.5, 1.0, 2.0, 10.0]),
    burst=st.integers(1, 5),
    steps=st.lists(st.tuples(st.floats(0, 3), st.integers(1, 6)), min_size=1, max_size=20),
)
def test_a_key_never_gets_more_than_its_burst_plus_its_rate(rate, burst, steps):
    clock = Clock()
    limiter = RateLimiter(rate, burst, clock=clock)
    start, admitted = clock.now, 0
    for advance, requests in steps:
        clock.now += advance
        for _ in range(requests):
            wait = limiter.acquire("k")
            if wait is not None:
                assert wait >= 1
                clock.now += wait
                wait = limiter.acquire("k")
                assert wait is None, "waiting Retry-After seconds is always enough"
            admitted += 1
        assert admitted <= burst + rate * (clock.now - start) + 1e-6
    assert limiter.acquire("other") is None, "keys have separate buckets"


@pytest.fixture
def keys(tmp_path: Path) -> Iterator[KeyStore]:
    store = KeyStore(tmp_path / "keys.sqlite")
    yield store
    store.close()


def test_over_the_rate_limit_is_429_with_retry_after_per_key(keys: KeyStore, offline_extractor):
    clock = Clock()
    limits = ServiceLimits(rate_per_s=0.5, burst=2)
    _, alice = keys.create(tenant="acme", caller="alice")
    _, bob = keys.create(tenant="acme", caller="bob")
    app = create_app(offline_extractor, keys=keys, service_limits=limits, clock=clock)
    with TestClient(app) as client:
        call = lambda token: client.post(  # noqa: E731
            "/v1/extract", json=CONVERSATION, headers={"authorization": f"Bearer {token}"}
        )
        assert [call(alice).status_code for _ in range(2)] == [200, 200]
        refused = call(alice)
        assert refused.status_code == 429 and refused.headers["retry-after"] == "2"
        assert refused.json()["error"]["code"] == "RATE_LIMITED"
        assert call(bob).status_code == 200, "another key has its own bucket"
        clock.now += 2
        assert call(alice).status_code == 200
        assert call(alice).status_code == 429


def test_invalid_keys_from_one_address_get_429_and_never_lock_out_another(
    keys: KeyStore, offline_extractor
):
    clock = Clock()
    limits = ServiceLimits(rate_per_s=None, auth_failure_rate_per_s=0.1, auth_failure_burst=3)
    _, token = keys.create(tenant="acme", caller="alice")
    app = create_app(offline_extractor, keys=keys, service_limits=limits, clock=clock)
    attacker = TestClient(app, client=("203.0.113.7", 40000))
    holder = TestClient(app, client=("198.51.100.2", 40000))
    neighbour = TestClient(app, client=("203.0.113.7", 40001))  # the attacker's address

    def call(client: TestClient, key: str) -> Any:
        headers = {"authorization": f"Bearer {key}"}
        return client.post("/v1/extract", json=CONVERSATION, headers=headers)

    near_miss = token[:-1] + ("1" if token.endswith("0") else "0")  # never the token itself
    guesses = ["nope", near_miss, "mce_0123456789abcdef_" + "0" * 48]
    assert [call(attacker, g).status_code for g in guesses] == [401, 401, 401]
    refused = call(attacker, "another-guess")
    assert refused.status_code == 429 and refused.headers["retry-after"] == "10"
    assert refused.json()["error"] == {
        "code": "TOO_MANY_AUTH_FAILURES", "field": None,
        "message": "too many failed authentications from this address (3, then one per 10 s); "
        "retry after 10 s"}  # fmt: skip
    for _ in range(50):  # the attacker keeps trying: only its own address waits
        assert call(attacker, "guess").status_code == 429
        assert call(holder, token).status_code == 200
    assert call(holder, "typo").status_code == 401, "the holder's address has its own budget"
    assert call(neighbour, token).status_code == 429, "an address shared with the attacker waits"
    no_key = attacker.post("/v1/extract", json=CONVERSATION)
    assert no_key.status_code == 401, "no key at all is not a guess"
    clock.now += 10
    assert call(neighbour, token).status_code == 200, "one failure's worth refilled"
    assert call(attacker, "guess").status_code == 401
    assert call(attacker, "guess").status_code == 429


def test_addresses_of_failed_authentications(offline_extractor):
    from starlette.requests import Request

    from extractor.service.auth import client_address

    def address(host: str | None) -> str:
        scope = {"type": "http", "client": None if host is None else (host, 1), "headers": []}
        return client_address(Request(scope))

    assert address("203.0.113.7") == "203.0.113.7"
    assert address("2001:db8:1:2:3:4:5:6") == address("2001:db8:1:2:ffff::1") == "2001:db8:1:2::/64"
    assert address("2001:db8:1:3::1") != address("2001:db8:1:2::1")
    assert address("::ffff:203.0.113.7") == "203.0.113.7"
    assert address("testclient") == "testclient" and address(None) == "unknown"


def test_rate_limiter_buckets_are_bounded():
    clock = Clock()
    limiter = RateLimiter(1.0, 2, clock=clock, max_keys=3)
    for key in "abcde":
        assert limiter.acquire(key) is None
    assert limiter.peek("a") is None, "an evicted bucket is a full one"
    assert limiter.acquire("e") is None and limiter.acquire("e") == 1
    assert limiter.peek("e") == 1, "peeking takes nothing"
    clock.now += 5  # everything refilled: refilled buckets go first
    for key in "vwxyz":
        limiter.acquire(key)
    assert limiter.acquire("z") is None and limiter.acquire("z") == 1


class BlockingClient:
    """An extraction client that waits until released (cancellable), then answers offline."""

    model_name = "blocking"

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    async def extract(self, conversation: Any, prompt: Any, options: Any) -> ClientResult:
        self.entered.set()
        while not self.release.is_set():
            await asyncio.sleep(0.005)
        return await OfflineClient().extract(conversation, prompt, options)


@pytest.fixture
def blocking() -> Iterator[BlockingClient]:
    client = BlockingClient()
    yield client
    client.release.set()


def serve_blocking(client: BlockingClient, **limits: Any) -> Any:
    extractor = Extractor(client, clock=fixed_clock)
    caps = ServiceLimits(rate_per_s=None, **limits)
    return serve_in_thread(create_app(extractor, no_auth=True, service_limits=caps))


def test_work_beyond_max_concurrency_is_refused_at_once_with_503(blocking: BlockingClient):
    with serve_blocking(blocking, max_concurrency=1) as url, ThreadPoolExecutor(1) as pool:
        first = pool.submit(httpx.post, f"{url}/v1/extract", json=CONVERSATION, timeout=60)
        assert blocking.entered.wait(300)  # a ceiling, not an expected time
        busy = loopback().post(f"{url}/v1/extract", json=CONVERSATION, timeout=60)
        assert busy.status_code == 503 and busy.headers["retry-after"] == "1"
        assert busy.json()["error"]["code"] == "SERVER_BUSY"
        assert loopback().get(f"{url}/healthz").status_code == 200, "health is not work"
        blocking.release.set()
        assert first.result().status_code == 200
        assert (
            loopback().post(f"{url}/v1/extract", json=CONVERSATION, timeout=60).status_code == 200
        )


def test_a_request_over_its_time_is_504_and_frees_its_slot(blocking: BlockingClient):
    with serve_blocking(blocking, max_concurrency=1, request_timeout_s=0.2) as url:
        response = loopback().post(f"{url}/v1/extract", json=CONVERSATION, timeout=60)
        assert response.status_code == 504
        assert response.json()["error"] == {"code": "REQUEST_TIMEOUT", "field": None,
                                            "message": "the request took longer than 0.2 s"}  # fmt: skip
        blocking.release.set()
        assert (
            loopback().post(f"{url}/v1/extract", json=CONVERSATION, timeout=60).status_code == 200
        )


def test_the_candidate_limit_of_the_extractor_holds_for_every_request():
    from extractor.validation import ValidationOptions

    many = {"messages": [{"role": "user", "content": "My manager is Alice. I like tea. "
                          "Always answer in Spanish."}]}  # fmt: skip
    counts = []
    for limit in (3, 200):
        extractor = Extractor(OfflineClient(), clock=fixed_clock, limits=Limits(max_candidates=limit),
                              validation=ValidationOptions(max_candidates=limit))  # fmt: skip
        with TestClient(create_app(extractor, no_auth=True)) as client:
            counts.append(len(client.post("/v1/extract", json=many).json()["candidates"]))
    assert counts[0] <= 3 < counts[1]


def test_limits_are_checked_when_configured():
    for bad in [{"max_body_bytes": 0}, {"burst": 0}, {"max_concurrency": 0},
                {"rate_per_s": 0.0}, {"request_timeout_s": 0.0}]:  # fmt: skip
        with pytest.raises(ValueError, match=next(iter(bad))):
            ServiceLimits(**bad)
