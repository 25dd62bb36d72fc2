"""A network backend for ``httpcore2`` on plain asyncio protocols: no loop turn per write or read.

Why this exists: ``httpcore2``'s default backend goes through ``anyio``, whose socket stream
yields to the event loop after *every* write (``cancel_shielded_checkpoint``) and before every
read of data already received, and pauses reading between reads. One HTTP/1.1 request is two
writes (headers, then body) and its reply a few reads, so with C calls in flight each of them
waits behind every other ready task several times per call. Measured against the mock server
(L = 200 ms, C = 32, ``benchmarks/llm_efficiency.py``) the request body left 7.9 ms (mean; 22 ms
p90) after its headers and replies waited 35 ms for the loop; worse, those waits line calls up
into bursts that arrive together 200 ms later and keep the loop idle in between. aiohttp (the
SDK's ``DefaultAioHttpClient``) was measured too and did no better (67% against 73%) at more CPU.

Here a connection is an :class:`asyncio.Protocol` that reads whenever data arrives (bounded by a
high-water mark) and buffers it: :meth:`AsyncioStream.read` returns buffered bytes without
yielding, :meth:`AsyncioStream.write` hands bytes to the transport and only waits when the
transport asks for back-pressure. So a call runs from request to reply-parsed in one slice of the
loop unless it really has to wait for the network. A connection's liveness check
(``is_readable``, asked of every idle connection of a pool on each request) reads our own state
instead of polling the socket.

Only what ``httpcore2`` asks of a backend is implemented (TCP and Unix sockets, TLS upgrade,
timeouts mapped to its exceptions); :func:`transport` builds an ``httpx2`` transport on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Iterable, Iterator
from typing import Any, cast

import httpcore2
import httpx2
from httpcore2 import AsyncNetworkBackend, AsyncNetworkStream

#: Stop reading from the socket while this many received bytes wait to be consumed.
READ_HIGH_WATER = 256 * 1024

SocketOption = Any  # httpcore2's SOCKET_OPTION: a (level, option, value[, length]) tuple


class _Connection(asyncio.Protocol):
    """The receiving side and flow-control state of one connection."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = bytearray()
        self.eof = False
        self.error: BaseException | None = None
        self.closed = False
        self._reader: asyncio.Future[None] | None = None
        self._drain: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Not an isinstance check: uvloop's transports do not subclass asyncio's.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) >= READ_HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
        self._wake_reader()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False  # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.eof = True
        self.error = self.error or exc
        self._wake_reader()
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    def pause_writing(self) -> None:
        if self._drain is None or self._drain.done():
            self._drain = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._drain is not None and not self._drain.done():
            self._drain.set_result(None)

    def _wake_reader(self) -> None:
        if self._reader is not None and not self._reader.done():
            self._reader.set_result(None)

    async def wait_readable(self) -> None:
        self._reader = asyncio.get_running_loop().create_future()
        try:
            await self._reader
        finally:
            self._reader = None

    async def wait_writable(self) -> None:
        if self._drain is not None and not self._drain.done():
            await self._drain


@contextlib.contextmanager
def _mapped(timeout_error: type[Exception], other: type[Exception]) -> Iterator[None]:
    """``TimeoutError`` -> ``timeout_error``, ``OSError`` -> ``other`` (httpcore2's types)."""
    try:
        yield
    except TimeoutError as exc:
        raise timeout_error(str(exc) or "timed out") from exc
    except OSError as exc:
        raise other(str(exc) or type(exc).__name__) from exc


class AsyncioStream(AsyncNetworkStream):
    """One connection as ``httpcore2`` sees it."""

    def __init__(self, transport: asyncio.Transport, connection: _Connection) -> None:
        self._transport = transport
        self._connection = connection

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        connection = self._connection
        if not connection.buffer and not connection.eof:
            with _mapped(httpcore2.ReadTimeout, httpcore2.ReadError):
                async with asyncio.timeout(timeout):
                    while not connection.buffer and not connection.eof:
                        await connection.wait_readable()
        if connection.buffer:
            chunk = bytes(connection.buffer[:max_bytes])
            del connection.buffer[:max_bytes]
            if len(connection.buffer) < READ_HIGH_WATER and not connection.closed:
                self._transport.resume_reading()
            return chunk
        if connection.error is not None:
            raise httpcore2.ReadError(str(connection.error)) from connection.error
        return b""

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        connection = self._connection
        if connection.closed or self._transport.is_closing():
            raise httpcore2.WriteError("connection closed")
        with _mapped(httpcore2.WriteTimeout, httpcore2.WriteError):
            self._transport.write(buffer)
            async with asyncio.timeout(timeout):
                await connection.wait_writable()
        if connection.error is not None:
            raise httpcore2.WriteError(str(connection.error)) from connection.error

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            with _mapped(httpcore2.ConnectTimeout, httpcore2.ConnectError):
                async with asyncio.timeout(timeout):
                    upgraded = await loop.start_tls(
                        self._transport,
                        self._connection,
                        ssl_context,
                        server_hostname=server_hostname,
                    )
        except BaseException:
            self._transport.abort()
            raise
        if upgraded is None:  # pragma: no cover - only for a transport already closing
            raise httpcore2.ConnectError("connection closed during the TLS handshake")
        self._connection.transport = upgraded
        return AsyncioStream(upgraded, self._connection)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # Idle connection with something to read = the server closed it (or misbehaved).
            connection = self._connection
            return bool(connection.buffer) or connection.eof or self._transport.is_closing()
        if info == "client_addr":
            return self._transport.get_extra_info("sockname")
        if info == "server_addr":
            return self._transport.get_extra_info("peername")
        if info in ("ssl_object", "socket"):
            return self._transport.get_extra_info(info)
        return None


class AsyncioBackend(AsyncNetworkBackend):
    """Opens :class:`AsyncioStream` connections on the running asyncio loop."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        with _mapped(httpcore2.ConnectTimeout, httpcore2.ConnectError):
            async with asyncio.timeout(timeout):
                transport, connection = await loop.create_connection(
                    _Connection, host, port, local_addr=local
                )
        return _opened(transport, connection, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SocketOption] | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        with _mapped(httpcore2.ConnectTimeout, httpcore2.ConnectError):
            async with asyncio.timeout(timeout):
                transport, connection = await loop.create_unix_connection(_Connection, path)
        return _opened(transport, connection, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def _opened(
    transport: asyncio.Transport,
    connection: _Connection,
    socket_options: Iterable[SocketOption] | None,
) -> AsyncioStream:
    # asyncio already sets TCP_NODELAY on TCP sockets, as anyio does.
    sock: socket.socket | None = transport.get_extra_info("socket")
    try:
        for option in socket_options or ():
            if sock is not None:
                sock.setsockopt(*option)
    except OSError as exc:
        transport.abort()
        raise httpcore2.ConnectError(str(exc)) from exc
    return AsyncioStream(transport, connection)


def transport(
    *, verify: ssl.SSLContext | bool = True, limits: httpx2.Limits
) -> httpx2.AsyncHTTPTransport:
    """An ``httpx2`` transport whose connection pool runs on :class:`AsyncioBackend`.

    ``httpx2.AsyncHTTPTransport`` takes no network backend, so its pool is rebuilt here with the
    same settings and ours. If a future ``httpx2`` stops keeping its pool where we look, the
    transport is returned unchanged (correct, only slower); ``tests/test_netstream.py`` fails
    then, so we notice.
    """
    made = httpx2.AsyncHTTPTransport(verify=verify, limits=limits)
    if type(getattr(made, "_pool", None)) is not httpcore2.AsyncConnectionPool:  # pragma: no cover
        return made  # see the docstring
    made._pool = httpcore2.AsyncConnectionPool(
        ssl_context=httpx2.create_ssl_context(verify=verify),  # a context passed in is kept
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=AsyncioBackend(),
    )
    return made
