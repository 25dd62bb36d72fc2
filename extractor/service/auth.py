"""Who is calling: a Bearer API key resolved to its tenant, caller and grant.

Every route that does work depends on :meth:`Gate.require` with the scope it needs. The order
of refusals is fixed, and none of them says anything about a tenant other than the key's own:

1. a key sent from a client address that has had too many failed authentications -> 429
   ``TOO_MANY_AUTH_FAILURES`` with ``Retry-After``, before the key is looked up;
2. no key, a malformed or unknown key -> 401 ``UNAUTHENTICATED``; a revoked key -> 401
   ``KEY_REVOKED`` (only to whoever holds that very key); each of these but the first (no key
   at all) is a failed authentication of the client's address;
3. the key's grant lacks the scope -> 403 ``FORBIDDEN`` (naming the key's own grant);
4. the key is over its rate limit -> 429 ``RATE_LIMITED`` with ``Retry-After``.

Failed authentications are counted per client address (an IPv6 address by its /64, which one
host usually holds whole), never per key: an attacker guessing keys from one address is slowed
down there, and a key holder calling from any other address is not affected, whatever the
attacker sends. Only a caller sharing the attacker's address (a NAT, a proxy) waits with it;
behind a reverse proxy, ``extractor serve --forwarded-allow-ips`` makes the address the one the
proxy reports.

``--no-auth`` (:data:`LOCAL_CALLER`) is for local development only: it grants everything to one
local tenant, and :func:`check_bind` refuses it on any interface but loopback.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ..vocab import Capability, Scope
from .errors import ApiError, retry_after
from .keys import ApiKey, KeyStore
from .limits import RateLimiter


@dataclass(frozen=True)
class Caller:
    """An authenticated caller: the tenant every store and read route works in, and its grant."""

    tenant: str
    caller: str
    key_id: str | None
    scopes: frozenset[Scope]
    purposes: frozenset[Capability]

    @classmethod
    def of(cls, key: ApiKey) -> Caller:
        return cls(key.tenant, key.caller, key.key_id, frozenset(key.scopes),
                   frozenset(key.purposes))  # fmt: skip

    def check_purpose(self, purpose: Capability) -> None:
        """403 unless the key may request ``purpose``."""
        if purpose not in self.purposes:
            granted = ", ".join(sorted(self.purposes)) or "none"
            raise ApiError(403, "FORBIDDEN", f"this key may not request purpose {purpose.value!r}"
                           f" (its purposes: {granted})", field="purpose")  # fmt: skip


#: The caller of a service started with ``--no-auth``: tenant ``local``, every scope and purpose.
LOCAL_CALLER = Caller("local", "local", None, frozenset(Scope), frozenset(Capability))

BEARER = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    bearerFormat="mce_<key_id>_<secret>",
    description="An API key made by `extractor keys create`, bound to one tenant and caller.",
)
UNAUTHENTICATED = (
    "send an API key as 'Authorization: Bearer <key>' (create one with 'extractor keys create')"
)


class Gate:
    """Resolves the caller of each request (or the local caller without auth) and limits it."""

    def __init__(
        self,
        keys: KeyStore | None,
        limiter: RateLimiter | None,
        failures: RateLimiter | None = None,
    ) -> None:
        self.keys = keys
        self.limiter = limiter
        self.failures = failures

    def require(self, scope: Scope) -> Any:
        """A FastAPI dependency: the :class:`Caller`, if it may use ``scope`` right now."""
        if self.keys is None:

            async def local() -> Caller:
                return self._admit(LOCAL_CALLER, scope)

            return local

        async def keyed(
            request: Request,
            credentials: HTTPAuthorizationCredentials | None = Security(BEARER),  # noqa: B008
        ) -> Caller:
            return self._admit(self._authenticate(credentials, client_address(request)), scope)

        return keyed

    def _authenticate(
        self, credentials: HTTPAuthorizationCredentials | None, address: str
    ) -> Caller:
        assert self.keys is not None
        if credentials is None:
            raise ApiError(401, "UNAUTHENTICATED", UNAUTHENTICATED, headers=CHALLENGE)
        self._check_failures(address)
        key = self.keys.authenticate(credentials.credentials)
        if (key is None or key.revoked) and self.failures is not None:
            self.failures.acquire(address)
        if key is None:
            raise ApiError(401, "UNAUTHENTICATED", UNAUTHENTICATED, headers=CHALLENGE)
        if key.revoked:
            raise ApiError(401, "KEY_REVOKED", f"API key {key.key_id} was revoked at "
                           f"{key.revoked_at:%Y-%m-%dT%H:%M:%SZ}", headers=CHALLENGE)  # fmt: skip
        return Caller.of(key)

    def _check_failures(self, address: str) -> None:
        """429 while ``address`` has no failed authentication left in its budget."""
        if self.failures is None:
            return
        wait = self.failures.peek(address)
        if wait is not None:
            raise ApiError(429, "TOO_MANY_AUTH_FAILURES", "too many failed authentications "
                           f"from this address ({self.failures.burst}, then one per "
                           f"{1 / self.failures.rate_per_s:g} s); retry after {wait} s",
                           headers=retry_after(wait))  # fmt: skip

    def _admit(self, caller: Caller, scope: Scope) -> Caller:
        if scope not in caller.scopes:
            granted = ", ".join(sorted(caller.scopes)) or "none"
            raise ApiError(403, "FORBIDDEN", f"this key's grant does not include scope "
                           f"{scope.value!r} (its scopes: {granted})")  # fmt: skip
        if self.limiter is not None:
            wait = self.limiter.acquire(caller.key_id or caller.caller)
            if wait is not None:
                raise ApiError(429, "RATE_LIMITED", f"this key is over its rate limit of "
                               f"{self.limiter.rate_per_s:g} requests/s (bursts of "
                               f"{self.limiter.burst}); retry after {wait} s",
                               headers=retry_after(wait))  # fmt: skip
        return caller


CHALLENGE = {"WWW-Authenticate": "Bearer"}


def client_address(request: Request) -> str:
    """The address failed authentications are counted against: the client's IP address, an
    IPv6 one by its /64 network (``unknown`` when the server does not know it)."""
    host = request.client.host if request.client is not None else ""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host or "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        mapped = ip.ipv4_mapped
        return str(mapped) if mapped else str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, *, no_auth: bool) -> None:
    """Refuse ``no_auth`` on anything but a loopback interface (ValueError naming both)."""
    if no_auth and not is_loopback(host):
        raise ValueError(
            f"--no-auth is for local development and is refused on --host {host!r}: bind "
            "127.0.0.1 (or ::1), or drop --no-auth and pass --keys FILE"
        )


__all__ = ["LOCAL_CALLER", "Caller", "Gate", "check_bind", "client_address", "is_loopback"]
