"""``extractor serve``: run the HTTP service (:mod:`extractor.server`) with uvicorn."""

from __future__ import annotations

from pathlib import Path

import click

from ..conversation import DEFAULT_MAX_MESSAGE_CHARS, DEFAULT_MAX_MESSAGES, Limits
from ..errors import ExtractorError
from ..models import DEFAULT_MODEL, get_client
from ._common import UnusableInput


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option(
    "--model",
    default=DEFAULT_MODEL,
    show_default=True,
    envvar="EXTRACTOR_MODEL",
    help="'offline' (no key, no server) or a model name at --base-url.",
)
@click.option(
    "--base-url",
    envvar=["EXTRACTOR_BASE_URL", "OPENAI_BASE_URL"],
    help="OpenAI-compatible endpoint. Env: EXTRACTOR_BASE_URL, OPENAI_BASE_URL.",
)
@click.option(
    "--api-key",
    envvar=["EXTRACTOR_API_KEY", "OPENAI_API_KEY"],
    help="API key. Env: EXTRACTOR_API_KEY, OPENAI_API_KEY.",
)
@click.option("--mode", help="How the model is asked for structured output (LLM models only).")
@click.option(
    "--policy",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Admission policy file. Default: the shipped policy.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds allowed per conversation (all chunks and retries).",
)
@click.option(
    "--max-body-bytes",
    type=click.IntRange(min=1),
    default=None,
    help="Largest request body accepted (413 beyond). Default: 2 MiB.",
)
@click.option(
    "--limit-message-chars",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_MESSAGE_CHARS,
    show_default=True,
)
@click.option(
    "--limit-messages", type=click.IntRange(min=1), default=DEFAULT_MAX_MESSAGES, show_default=True
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
def serve(
    host: str,
    port: int,
    model: str,
    base_url: str | None,
    api_key: str | None,
    mode: str | None,
    policy: Path | None,
    timeout: float | None,
    max_body_bytes: int | None,
    limit_message_chars: int,
    limit_messages: int,
    no_cache: bool,
) -> None:
    """Serve POST /v1/extract (a conversation in, the result line out) over HTTP.

    Needs the 'server' extra: pip install 'memory-candidate-extractor[server]'.

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
    from ..pipeline import Extractor

    limits = Limits(max_message_chars=limit_message_chars, max_messages=limit_messages)
    try:
        client = get_client(
            model, base_url=base_url, api_key=api_key, mode=mode, cache=not no_cache
        )
        extractor = Extractor(client, policy=policy, limits=limits, timeout=timeout)
    except (ExtractorError, ValueError) as exc:
        raise UnusableInput(str(exc)) from None
    app = create_app(extractor, max_body_bytes=max_body_bytes or DEFAULT_MAX_BODY_BYTES)
    uvicorn.run(app, host=host, port=port, log_level="info")
