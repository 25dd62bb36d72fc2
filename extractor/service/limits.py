"""Abuse limits of the HTTP service: per-key request rate, body size, concurrent work, time.

=====================  =====================================  ==================================
limit                  default                                past it
=====================  =====================================  ==================================
``rate_per_s``,        2 requests/s per key, bursts of 20     429 ``RATE_LIMITED``, Retry-After
``burst``                                                     in whole seconds
``max_body_bytes``     2 MiB                                  413 ``BODY_TOO_LARGE``
``max_concurrency``    8 requests doing work at once          503 ``SERVER_BUSY``, Retry-After 1
``request_timeout_s``  120 s to receive the body and answer   504 ``REQUEST_TIMEOUT``
=====================  =====================================  ==================================

Message size, message count and candidate count are the extractor's
:class:`~extractor.conversation.Limits` (422 ``LIMIT_EXCEEDED``). The rate limiter is a token
bucket per key; its clock is injected, so tests never depend on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from .errors import DEFAULT_RETRY_AFTER_S, ApiError, retry_after

DEFAULT_MAX_BODY_BYTES = 2 * 1024 * 1024
DEFAULT_RATE_PER_S = 2.0
DEFAULT_BURST = 20
DEFAULT_MAX_CONCURRENCY = 8
DEFAULT_REQUEST_TIMEOUT_S = 120.0


@dataclass(frozen=True, kw_only=True)
class ServiceLimits:
    """The service's limits; ``rate_per_s=None`` turns per-key rate limiting off."""

    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    rate_per_s: float | None = DEFAULT_RATE_PER_S
    burst: int = DEFAULT_BURST
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    request_timeout_s: float = DEFAULT_REQUEST_TIMEOUT_S

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "burst", "max_concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, not {getattr(self, name)}")
        if self.rate_per_s is not None and not self.rate_per_s > 0:
            raise ValueError(f"rate_per_s must be positive, not {self.rate_per_s}")
        if not self.request_timeout_s > 0:
            raise ValueError(f"request_timeout_s must be positive, not {self.request_timeout_s}")


_EPSILON = 1e-9


class RateLimiter:
    """A token bucket per key: ``burst`` requests at once, refilled at ``rate_per_s``."""

    def __init__(
        self, rate_per_s: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate_per_s = rate_per_s
        self.burst = burst
        self._clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, at)
        self._lock = threading.Lock()

    def acquire(self, key: str) -> int | None:
        """Take one token for ``key``: ``None`` if there was one, else whole seconds to wait."""
        with self._lock:
            now = self._clock()
            tokens, at = self._buckets.get(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - at) * self.rate_per_s)
            if tokens >= 1.0 - _EPSILON:  # clock arithmetic in floats loses a few ulps
                self._buckets[key] = (tokens - 1.0, now)
                return None
            self._buckets[key] = (tokens, now)
            return max(1, math.ceil((1.0 - tokens) / self.rate_per_s))


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
    "DEFAULT_BURST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_RATE_PER_S",
    "DEFAULT_REQUEST_TIMEOUT_S",
    "RateLimiter",
    "ServiceLimits",
    "WorkSlots",
]
