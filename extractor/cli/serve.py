"""``extractor serve``: run the HTTP service (:mod:`extractor.server`) with uvicorn."""

from __future__ import annotations

from typing import Any

import click

from ..heap import tune_collector
from ._common import UnusableInput, build_extractor, extractor_options


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@extractor_options
@click.option(
    "--max-body-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="Largest request body accepted (413 beyond). Default: 2 MiB.",
)
def serve(host: str, port: int, max_body_bytes: int | None, **options: Any) -> None:
    """Serve POST /v1/extract (a conversation in, the result line out) over HTTP.

    Takes the model and pipeline options of 'extractor run'. Needs the 'server' extra:
    pip install 'memory-candidate-extractor[server]'.

    \b
    Examples:
        extractor serve --port 8000
        curl -s localhost:8000/v1/extract -H 'content-type: application/json' \\
            -d '{"messages": [{"role": "user", "content": "My manager is Alice."}]}'
    """
    try:
        import uvicorn

        from ..server import DEFAULT_MAX_BODY_BYTES, create_app
    except ImportError as exc:
        raise UnusableInput(str(exc)) from None
    extractor = build_extractor(options)
    app = create_app(extractor, max_body_bytes=max_body_bytes or DEFAULT_MAX_BODY_BYTES)
    tune_collector()
    uvicorn.run(app, host=host, port=port, log_level="info")
