"""The asyncio network backend under the OpenAI client's connection pool.

What the LLM path relies on: requests go out and replies are read without an event-loop turn
when nothing has to wait; everything else an HTTP client needs still works the way ``httpx2``
users expect (keep-alive reuse, a server closing idle connections, early replies, back-pressure
on large bodies, timeouts and refused connections as httpx2's own exceptions, TLS).
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
import subprocess
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpcore2
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extractor.clients import netstream
from extractor.clients.openai_client import POOL_LIMITS

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def serving(
    handler: Handler, ssl_context: ssl.SSLContext | None = None
) -> AsyncIterator[tuple[str, list[int]]]:
    """A one-off asyncio server on 127.0.0.1; yields its address and a list of accepted ports."""
    peers: list[int] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peers.append(writer.get_extra_info("peername")[1])
        try:
            await handler(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(accept, "127.0.0.1", 0, ssl=ssl_context)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"127.0.0.1:{port}", peers
    finally:
        server.close()
        await server.wait_closed()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return await reader.readexactly(length)


def reply(body: bytes, *, close: bool = False) -> bytes:
    extra = b"connection: close\r\n" if close else b""
    return b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n%s\r\n%s" % (len(body), extra, body)


async def keep_alive_echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        try:
            body = await read_request(reader)
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        writer.write(reply(b"echo:" + body))
        await writer.drain()


def client(**kwargs: object) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=netstream.transport(limits=POOL_LIMITS), **kwargs)  # type: ignore[arg-type]


def test_the_openai_clients_pool_runs_on_the_asyncio_backend() -> None:
    """Pins the one private detail we rely on: if httpx2 moves its pool, this fails."""
    made = netstream.transport(limits=POOL_LIMITS)
    assert isinstance(made._pool, httpcore2.AsyncConnectionPool)
    assert isinstance(made._pool._network_backend, netstream.AsyncioBackend)


def test_requests_and_replies_round_trip_over_one_kept_alive_connection() -> None:
    async def main() -> tuple[list[str], list[int]]:
        async with serving(keep_alive_echo) as (address, peers), client() as http:
            texts = []
            for i in range(3):
                response = await http.post(f"http://{address}/x", content=b"n%d" % i)
                texts.append(response.text)
            return texts, peers

    texts, peers = asyncio.run(main())
    assert texts == ["echo:n0", "echo:n1", "echo:n2"]
    assert len(peers) == 1  # one connection, reused


def test_write_and_buffered_read_finish_without_yielding_to_the_loop() -> None:
    """The point of the backend: no loop turn unless the network makes us wait."""

    async def main() -> None:
        async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readexactly(5)
            writer.write(b"world")
            await writer.drain()
            await asyncio.sleep(0.5)

        async with serving(answer) as (address, _):
            host, port = address.split(":")
            stream = await netstream.AsyncioBackend().connect_tcp(host, int(port), timeout=5)
            write = stream.write(b"hello", timeout=5)
            with pytest.raises(StopIteration):
                write.send(None)  # completed on its first step: never suspended
            first = await stream.read(2, timeout=5)  # waits for the network
            read = stream.read(100, timeout=5)
            with pytest.raises(StopIteration) as done:
                read.send(None)  # the rest was already buffered
            assert first + done.value.value == b"world"
            await stream.aclose()

    asyncio.run(main())


def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    async def one_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(reply(b"ok"))  # no "connection: close": the client keeps it for reuse
        await writer.drain()

    async def main() -> tuple[list[str], int]:
        async with serving(one_then_close) as (address, peers), client() as http:
            first = await http.get(f"http://{address}/")
            await asyncio.sleep(0.1)  # the server's close reaches the idle connection
            second = await http.get(f"http://{address}/")
            return [first.text, second.text], len(peers)

    texts, connections = asyncio.run(main())
    assert texts == ["ok", "ok"]
    assert connections == 2


def test_an_early_reply_before_the_body_is_read_reaches_the_caller() -> None:
    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(
            b"HTTP/1.1 413 Too Large\r\ncontent-length: 4\r\nconnection: close\r\n\r\nnope"
        )
        await writer.drain()

    async def main() -> httpx2.Response:
        async with serving(refuse) as (address, _), client() as http:
            return await http.post(f"http://{address}/", content=b"x" * 200_000)

    response = asyncio.run(main())
    assert response.status_code == 413
    assert response.text == "nope"


def test_a_body_larger_than_the_socket_buffers_is_sent_whole() -> None:
    """Back-pressure: the transport pauses writing, write() waits, the body still arrives whole."""
    body = bytes(range(256)) * 40_000  # ~10 MB

    async def slow_reader(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(0.2)  # let the client fill every buffer first
        received = await read_request(reader)
        writer.write(reply(str(len(received)).encode() + (b" same" if received == body else b"")))
        await writer.drain()

    async def main() -> str:
        async with serving(slow_reader) as (address, _), client() as http:
            return (await http.post(f"http://{address}/", content=body)).text

    assert asyncio.run(main()) == f"{len(body)} same"


def test_a_large_reply_is_read_whole() -> None:
    payload = b"y" * 3_000_000  # above the read high-water mark: reading pauses and resumes

    async def big(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(reply(payload))
        await writer.drain()

    async def main() -> bytes:
        async with serving(big) as (address, _), client() as http:
            return (await http.get(f"http://{address}/")).content

    assert asyncio.run(main()) == payload


def test_a_silent_server_is_a_read_timeout_and_a_closed_port_a_connect_error() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.sleep(5)

    async def main() -> None:
        async with serving(silent) as (address, _), client(timeout=0.2) as http:
            with pytest.raises(httpx2.ReadTimeout):
                await http.get(f"http://{address}/")
        async with serving(silent) as (address, _):
            pass  # closed again: nothing listens on that port now
        async with client(timeout=1) as http:
            with pytest.raises(httpx2.ConnectError):
                await http.get(f"http://{address}/")

    asyncio.run(main())


def test_a_connection_reset_mid_reply_is_a_read_error_not_a_hang() -> None:
    async def cut(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial")
        await writer.drain()
        writer.transport.abort()

    async def main() -> None:
        async with serving(cut) as (address, _), client(timeout=5) as http:
            with pytest.raises((httpx2.ReadError, httpx2.RemoteProtocolError)):
                await http.get(f"http://{address}/")

    asyncio.run(main())


def test_unix_socket_connections(tmp_path: Path) -> None:
    path = str(tmp_path / "s.sock")

    async def main() -> bytes:
        server = await asyncio.start_unix_server(keep_alive_echo, path)
        try:
            async with httpcore2.AsyncConnectionPool(
                uds=path, network_backend=netstream.AsyncioBackend()
            ) as pool:
                response = await pool.request("POST", "http://local/", content=b"over unix")
                return response.content
        finally:
            server.close()
            await server.wait_closed()

    assert asyncio.run(main()) == b"echo:over unix"


needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl")


def self_signed(tmp_path: Path) -> tuple[ssl.SSLContext, Path]:
    """A server TLS context for ``localhost`` with a fresh self-signed certificate, and its path."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    server_side = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_side.load_cert_chain(cert, key)
    return server_side, cert


@needs_openssl
def test_https_upgrades_the_connection_to_tls(tmp_path: Path) -> None:
    server_side, cert = self_signed(tmp_path)
    trusting = ssl.create_default_context(cafile=str(cert))

    async def main() -> tuple[str, str | None]:
        async with serving(keep_alive_echo, server_side) as (address, _):
            port = address.split(":")[1]
            transport = netstream.transport(verify=trusting, limits=POOL_LIMITS)
            async with httpx2.AsyncClient(transport=transport) as http:
                response = await http.post(f"https://localhost:{port}/", content=b"secret")
                return response.text, response.extensions["network_stream"].get_extra_info(
                    "ssl_object"
                ).version()

    text, version = asyncio.run(main())
    assert text == "echo:secret"
    assert version is not None and version.startswith("TLS")


@needs_openssl
def test_tls_to_a_server_with_an_untrusted_certificate_fails_cleanly(tmp_path: Path) -> None:
    server_side, _ = self_signed(tmp_path)  # the client's default trust store lacks it

    async def main() -> None:
        async with serving(keep_alive_echo, server_side) as (address, _), client(timeout=5) as http:
            with pytest.raises(httpx2.ConnectError):
                await http.get(f"https://localhost:{address.split(':')[1]}/")

    asyncio.run(main())


@settings(max_examples=30, deadline=None)
@given(
    payload=st.binary(min_size=0, max_size=300_000),
    cuts=st.lists(st.integers(min_value=1, max_value=70_000), min_size=0, max_size=12),
)
def test_a_reply_arriving_in_any_segmentation_is_read_exactly(
    payload: bytes, cuts: list[int]
) -> None:
    """Headers and body split anywhere, with the server pausing between pieces: the client
    reads exactly the bytes sent (buffering, high-water pausing, EOF handling)."""
    wire = reply(payload)

    async def pieces(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        start = 0
        for size in cuts:
            writer.write(wire[start : start + size])
            await writer.drain()
            await asyncio.sleep(0.001)
            start += size
        writer.write(wire[start:])
        await writer.drain()

    async def main() -> bytes:
        async with serving(pieces) as (address, _), client(timeout=10) as http:
            return (await http.get(f"http://{address}/")).content

    assert asyncio.run(main()) == payload


def test_transports_that_do_not_subclass_asyncios_are_accepted() -> None:
    """uvloop's transports are not ``asyncio.Transport`` subclasses; an isinstance check here
    once failed inside the loop's callback and left every connection hanging."""

    class ForeignTransport:  # the duck-typed surface the backend uses
        def pause_reading(self) -> None: ...
        def resume_reading(self) -> None: ...
        def is_closing(self) -> bool:
            return False

    connection = netstream._Connection()
    connection.connection_made(ForeignTransport())  # type: ignore[arg-type]
    connection.data_received(b"x" * netstream.READ_HIGH_WATER)
    assert connection.transport is not None and bytes(connection.buffer[:1]) == b"x"
