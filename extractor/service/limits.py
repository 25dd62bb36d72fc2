"""Abuse limits of the HTTP service: per-key request rate, failed authentications per client
address, body size, concurrent work, time.

=======================  ===================================  ==================================
limit                    default                              past it
=======================  ===================================  ==================================
``rate_per_s``,          2 requests/s per key, bursts of 20   429 ``RATE_LIMITED``, Retry-After
``burst``                                                     in whole seconds
``auth_failure_rate``    10 invalid keys per client address,  429 ``TOO_MANY_AUTH_FAILURES``,
``_per_s``, ``_burst``   then one per 10 s                    Retry-After (see :mod:`.auth`)
``max_body_bytes``       2 MiB                                413 ``BODY_TOO_LARGE``
``max_concurrency``      8 requests doing work at once        503 ``SERVER_BUSY``, Retry-After 1
``request_timeout_s``    120 s to receive the body, answer    504 ``REQUEST_TIMEOUT``
=======================  ===================================  ==================================

Message size, message count and candidate count are the extractor's
:class:`~extractor.conversation.Limits` (422 ``LIMIT_EXCEEDED``). The rate limiter is a token
bucket per key; its clock is injected, so tests never depend on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from .errors import DEFAULT_RETRY_AFTER_S, ApiError, retry_after

DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024
DEFAULT_RATE_PER_S = 2.0
DEFAULT_BURST = 20
DEFAULT_MAX_CONCURRENCY = 8
DEFAULT_REQUEST_TIMEOUT_S = 120.0
DEFAULT_AUTH_FAILURE_RATE_PER_S = 0.1
DEFAULT_AUTH_FAILURE_BURST = 10
#: Buckets a rate limiter keeps at most (keys, or client addresses for failed authentication).
DEFAULT_MAX_TRACKED = 100_000


@dataclass(frozen=True, kw_only=True)
class ServiceLimits:
    """The service's limits; ``rate_per_s=None`` turns per-key rate limiting off,
    ``auth_failure_rate_per_s=None`` the limit on failed authentications per client address."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    rate_per_s: float | None = DEFAULT_RATE_PER_S
    burst: int = DEFAULT_BURST
    auth_failure_rate_per_s: float | None = DEFAULT_AUTH_FAILURE_RATE_PER_S
    auth_failure_burst: int = DEFAULT_AUTH_FAILURE_BURST
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "burst", "max_concurrency", "auth_failure_burst"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        for name in ("rate_per_s", "auth_failure_rate_per_s"):
            rate = getattr(self, name)
            if rate is not None and not rate > 0:
                raise ValueError(f"{name} must be positive, not {rate}")
        if not self.request_timeout_s > 0:
            raise ValueError(f"request_timeout_s must be positive, not {self.request_timeout_s}")


_EPSILON = 1e-9


class RateLimiter:
    """A token bucket per key: ``burst`` tokens at once, refilled at ``rate_per_s``.

    At most ``max_keys`` buckets are kept: past that, buckets that have refilled (which are
    the same as no bucket) are dropped first, then the least recently used ones, so a flood of
    distinct keys (client addresses) cannot grow memory without bound.
    """

    def __init__(
        self,
        rate_per_s: float,
        burst: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_keys: int = DEFAULT_MAX_TRACKED,
    ) -> None:
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.max_keys = max_keys
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # (tokens, at)
        self._lock = threading.Lock()

    def acquire(self, key: str) -> int | None:
        """Take one token for ``key``: ``None`` if there was one, else whole seconds to wait."""
        with self._lock:
            now = self._clock()
            tokens = self._tokens(key, now)
            if tokens >= 1.0 - _EPSILON:  # clock arithmetic in floats loses a few ulps
                self._store(key, tokens - 1.0, now)
                return None
            self._store(key, tokens, now)
            return self._wait(tokens)

    def peek(self, key: str) -> int | None:
        """Like :meth:`acquire` without taking the token: ``None`` if ``key`` has one left."""
        with self._lock:
            tokens = self._tokens(key, self._clock())
            return None if tokens >= 1.0 - _EPSILON else self._wait(tokens)

    def _tokens(self, key: str, now: float) -> float:
        tokens, at = self._buckets.get(key, (float(self.burst), now))
        return min(float(self.burst), tokens + (now - at) * self.rate_per_s)

    def _wait(self, tokens: float) -> int:
        return max(1, math.ceil((1.0 - tokens) / self.rate_per_s))

    def _store(self, key: str, tokens: float, now: float) -> None:
        self._buckets[key] = (tokens, now)
        self._buckets.move_to_end(key)
        if len(self._buckets) > self.max_keys:
            full = [k for k in self._buckets if self._tokens(k, now) >= self.burst - _EPSILON]
            for k in full:
                del self._buckets[k]
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)


class WorkSlots:
    """At most ``limits.max_concurrency`` requests doing work at once, each within
    ``limits.request_timeout_s``. A request that finds every slot taken is refused at once
    (503 ``SERVER_BUSY``) rather than queued, so a flood cannot pile up unbounded waiters."""

    def __init__(self, limits: ServiceLimits) -> None:
        self.limits = limits
        self._slots = asyncio.Semaphore(limits.max_concurrency)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self._slots.locked():
            raise ApiError(503, "SERVER_BUSY", f"{self.limits.max_concurrency} requests are "
                           f"already being processed; retry after {DEFAULT_RETRY_AFTER_S} s",
                           headers=retry_after(DEFAULT_RETRY_AFTER_S))  # fmt: skip
        async with self._slots:
            deadline = asyncio.timeout(self.limits.request_timeout_s)
            try:
                async with deadline:
                    yield
            except TimeoutError:
                if not deadline.expired():
                    raise
                raise ApiError(504, "REQUEST_TIMEOUT", "the request took longer than "
                               f"{self.limits.request_timeout_s:g} s") from None  # fmt: skip


__all__ = [
    "DEFAULT_AUTH_FAILURE_BURST",
    "DEFAULT_AUTH_FAILURE_RATE_PER_S",
    "DEFAULT_BURST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_RATE_PER_S",
    "DEFAULT_REQUEST_TIMEOUT_S",
    "RateLimiter",
    "ServiceLimits",
    "WorkSlots",
]
