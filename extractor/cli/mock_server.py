"""``extractor mock-server``: run the mock OpenAI-compatible server in the foreground."""

from __future__ import annotations

import threading

import click

from .. import offline  # noqa: F401 -- answers come from it: loaded before the heap is frozen
from ..heap import tune_collector
from ..mockserver import FAULT_NAMES, MockServer, parse_faults
from ._base import UnusableInput


def _faults(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    try:
        parse_faults(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    return value


@click.command("mock-server")
@click.option("--port", type=click.IntRange(0, 65535), default=8089, show_default=True,
              help="Port on 127.0.0.1 (0 picks a free one).")  # fmt: skip
@click.option("--fault", "faults", multiple=True, callback=_faults, metavar="NAME[:N]",
              help=f"Fault for every request, repeatable: {', '.join(FAULT_NAMES)}.")  # fmt: skip
@click.option("--latency", type=click.FloatRange(0), default=0.0, show_default=True,
              help="Seconds to wait before each answer.")  # fmt: skip
@click.option("--token-latency", type=click.FloatRange(0), default=0.0, show_default=True,
              help="Seconds more per completion token: a model's generation time.")  # fmt: skip
@click.option("--retry-after", type=click.FloatRange(0), default=0.0, show_default=True,
              help="Retry-After seconds sent with a 429.")  # fmt: skip
@click.option("--prompt-rate", type=click.FloatRange(0, min_open=True), metavar="TOKENS/S",
              help="Prompt tokens read per second (a slow local server). Default: instant.",
              )  # fmt: skip
@click.option("--slots", type=click.IntRange(min=1),
              help="Answer at most this many requests at a time; the rest queue, and a request "
              "its client abandoned still runs (a single-slot local server: --slots 1).",
              )  # fmt: skip
def mock_server(
    port: int,
    faults: tuple[str, ...],
    latency: float,
    token_latency: float,
    retry_after: float,
    prompt_rate: float | None,
    slots: int | None,
) -> None:
    """Serve /v1/chat/completions and /v1/models on 127.0.0.1, answering with the offline
    model in the OpenAI response shape, until Ctrl-C.

    Requests can pick faults themselves with the header X-Mock-Fault or a model-name suffix
    (offline+verified). See docs/llm-path.md for every fault.

    \b
    Example:
        extractor mock-server --port 8089 --fault verified --latency 0.2
        extractor run conversations.jsonl --model mock --base-url http://127.0.0.1:8089/v1 \\
            --api-key unused --no-cache
    """
    server = MockServer(
        port=port, faults=faults, latency=latency, token_latency=token_latency,
        retry_after=retry_after, prompt_rate=prompt_rate, slots=slots,
    )  # fmt: skip
    try:
        server.start()
    except OSError as exc:
        raise UnusableInput(f"cannot listen on 127.0.0.1:{port}: {exc.strerror}") from None
    tune_collector()
    fault_note = f" with faults {', '.join(faults)}" if faults else ""
    try:
        # the line inside: a Ctrl-C sent as soon as it is read (before the wait starts) stops
        # the server just as cleanly
        click.echo(
            f"mock OpenAI-compatible server at {server.base_url}{fault_note} (Ctrl-C to stop)"
        )
        threading.Event().wait()
    except KeyboardInterrupt:
        click.echo("stopped", err=True)
    finally:
        server.stop()
