"""``extractor doctor``: check a server and recommend ``extractor run`` options for it."""

from __future__ import annotations

import asyncio
import shlex
from typing import TYPE_CHECKING

import click

from ..chunking import DEFAULT_MAX_CHUNK_CHARS
from ..clients.compat import DEFAULT_PROBE_TIMEOUT
from ._base import EXIT_OK, EXIT_REJECTED
from ._common import model_options

if TYPE_CHECKING:
    from ..doctor import DoctorReport


@click.command()
@model_options("The model name at --base-url.")
@click.option(
    "--max-chunk-chars",
    type=click.IntRange(min=1000),
    default=DEFAULT_MAX_CHUNK_CHARS,
    show_default=True,
    help="The chunk size the recommendation starts from.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_PROBE_TIMEOUT,
    show_default=True,
    help="Seconds allowed per probe request.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def doctor(
    ctx: click.Context,
    /,
    model: str,
    base_url: str | None,
    api_key: str | None,
    max_chunk_chars: int,
    timeout: float,
    as_json: bool,
) -> None:
    """Check an OpenAI-compatible server: reach and key, whether the system prompt reaches the
    model, which --mode really works (tools, json_schema, json, md_json), how fast it reads
    prompts and generates, whether it runs two requests at once; then recommend the
    `extractor run` options for it.

    Exit codes: 0 the server is usable (some mode works); 1 it is not (see the problems).

    \b
    Example:
        extractor doctor --base-url http://127.0.0.1:8000/v1 --model gemma-3-270m-it
    """
    if base_url is None:
        raise click.UsageError("--base-url is required (or set EXTRACTOR_BASE_URL)")
    # Imported here: the probe needs openai, which every other command (the offline model
    # above all) does without; importing it costs each `extractor` start about a second.
    from ..doctor import check_server

    report = asyncio.run(
        check_server(
            base_url=base_url,
            model=model,
            api_key=api_key,
            timeout=timeout,
            chunk_chars=max_chunk_chars,
        )
    )
    if as_json:
        click.echo(report.model_dump_json(indent=2))
    else:
        click.echo(render(report))
    ctx.exit(EXIT_OK if report.usable else EXIT_REJECTED)


def render(report: DoctorReport) -> str:
    """The report as the lines ``extractor doctor`` prints."""
    lines = [f"server {report.base_url} ({'local' if report.local else 'remote'}), model "
             f"{report.model}"]  # fmt: skip
    lines.append(f"  reachable: {_yes(report.reachable)}, key accepted: "
                 f"{_yes(report.authenticated)}")  # fmt: skip
    lines.append(f"  system prompt reaches the model: {_yes(report.system_prompt_delivered)}")
    for check in report.modes:
        took = f" in {check.seconds:g}s" if check.seconds is not None else ""
        lines.append(f"  --mode {check.mode}: {check.outcome}{took}: {check.detail}")
    s = report.speeds
    lines.append(f"  prompt reading: {_rate(s.prompt_tokens_per_s)}, generation: "
                 f"{_rate(s.generation_tokens_per_s)}")  # fmt: skip
    lines.append(f"  one request at a time: {_yes(s.single_slot)}")
    lines += [f"problem: {p}" for p in report.problems]
    if report.usable and report.recommendation is not None:
        command = ["extractor", "run", "INPUT", "--model", report.model, "--base-url",
                   report.base_url, *report.recommendation.options()]  # fmt: skip
        lines.append("recommended:\n  " + shlex.join(command))
    return "\n".join(lines)


def _yes(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "NO")


def _rate(value: float | None) -> str:
    return "too fast to time" if value is None else f"{value:g} tokens/s"
