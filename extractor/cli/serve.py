"""``extractor serve``: run the HTTP service (:mod:`extractor.service`) with uvicorn."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

import click

from ..cache import default_cache_dir
from ..heap import tune_collector
from ._base import UnusableInput
from ._common import build_extractor, extractor_options
from .keys import open_keys

NO_KEYS = (
    "extractor serve needs --keys FILE to authenticate callers (create a key with "
    "'extractor keys create --keys FILE --tenant T --caller C'), or --no-auth for local "
    "development on 127.0.0.1"
)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option(
    "--keys", type=click.Path(path_type=Path, dir_okay=False), envvar="EXTRACTOR_KEYS",
    help="The API key store ('extractor keys create'). Env: EXTRACTOR_KEYS.",
)  # fmt: skip
@click.option(
    "--no-auth", is_flag=True,
    help="No API keys: one local tenant with every grant. Only on a loopback --host.",
)  # fmt: skip
@click.option(
    "--store", "store_path", type=click.Path(path_type=Path, dir_okay=False),
    help="A memory store (SQLite file, created when missing): adds the /v1/memories routes.",
)  # fmt: skip
@extractor_options
@click.option(
    "--max-body-bytes", type=click.IntRange(min=1), default=2 * 1024 * 1024, show_default=True,
    help="Largest request body accepted (413 beyond).",
)  # fmt: skip
@click.option(
    "--rate-limit", type=click.FloatRange(min=0), default=2.0, show_default=True,
    help="Requests per second per key, after a burst (429 beyond); 0 turns it off.",
)  # fmt: skip
@click.option("--burst", type=click.IntRange(min=1), default=20, show_default=True,
              help="Requests a key may make at once before --rate-limit applies.")  # fmt: skip
@click.option(
    "--auth-failure-burst", type=click.IntRange(min=1), default=10, show_default=True,
    help="Invalid keys one client address may send before it must wait (429).",
)  # fmt: skip
@click.option(
    "--auth-failure-rate", type=click.FloatRange(min=0), default=0.1, show_default=True,
    help="Invalid keys per second an address may send after its burst; 0 turns the limit off.",
)  # fmt: skip
@click.option(
    "--forwarded-allow-ips", default=None, metavar="IPS",
    help="Proxies (comma-separated IPs, or '*') whose X-Forwarded-For names the client "
    "address; without it the address is the connecting peer's.",
)  # fmt: skip
@click.option(
    "--max-concurrency", type=click.IntRange(min=1), default=8, show_default=True,
    help="Requests doing work at once (503 SERVER_BUSY beyond).",
)  # fmt: skip
@click.option(
    "--request-timeout", type=click.FloatRange(min=0, min_open=True), default=120.0,
    show_default=True, help="Seconds to receive a body and answer (504 REQUEST_TIMEOUT beyond).",
)  # fmt: skip
def serve(
    host: str, port: int, keys: Path | None, no_auth: bool, store_path: Path | None,
    **options: Any,
) -> None:  # fmt: skip
    """Serve the extractor over HTTP: POST /v1/extract (a conversation in, the result line
    out), with the contract at /openapi.json.

    Callers send 'Authorization: Bearer <key>', a key from 'extractor keys create' bound to a
    tenant. Takes the model and pipeline options of 'extractor run'. Needs the 'server' extra:
    pip install 'memory-candidate-extractor[server]'.

    \b
    Examples:
        extractor keys create --keys keys.sqlite --tenant acme --caller app > key.txt
        extractor serve --keys keys.sqlite --port 8000
        curl -s localhost:8000/v1/extract -H "authorization: Bearer $(cat key.txt)" \\
            -H 'content-type: application/json' \\
            -d '{"messages": [{"role": "user", "content": "My manager is Alice."}]}'
        extractor serve --keys keys.sqlite --store memory.db   # adds /v1/memories
        extractor serve --no-auth       # local development only
    """
    try:
        import uvicorn

        from ..service import ServiceLimits, check_bind, create_app
    except ImportError as exc:
        raise UnusableInput(str(exc)) from None
    if (keys is None) == (not no_auth):
        raise click.UsageError(NO_KEYS if keys is None else "give --keys or --no-auth, not both")
    try:
        check_bind(host, no_auth=no_auth)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    limits = ServiceLimits(
        max_body_bytes=options.pop("max_body_bytes"),
        rate_per_s=options.pop("rate_limit") or None,
        burst=options.pop("burst"),
        auth_failure_rate_per_s=options.pop("auth_failure_rate") or None,
        auth_failure_burst=options.pop("auth_failure_burst"),
        max_concurrency=options.pop("max_concurrency"),
        request_timeout_s=options.pop("request_timeout"),
    )
    forwarded = options.pop("forwarded_allow_ips")
    cache_dir = None if options["no_cache"] else options["cache_dir"] or default_cache_dir()
    extractor = build_extractor(options)
    with (
        open_keys(keys, create=False) if keys is not None else nullcontext() as key_store,
        open_store(store_path) if store_path is not None else nullcontext() as store,
    ):
        app = create_app(extractor, keys=key_store, no_auth=no_auth, service_limits=limits,
                         store=store, cache_dir=cache_dir)  # fmt: skip
        tune_collector()
        uvicorn.run(app, host=host, port=port, log_level="info", proxy_headers=bool(forwarded),
                    forwarded_allow_ips=forwarded)  # fmt: skip


@contextmanager
def open_store(path: Path) -> Iterator[Any]:
    """The memory store at ``path``; a store that cannot be opened exits 2."""
    from ..errors import StoreError
    from ..store import MemoryStore

    try:
        store = MemoryStore(path)
    except StoreError as exc:
        raise UnusableInput(str(exc)) from None
    with store:
        yield store
