"""``extractor run``: the batch job. Parse options, make one library call, render the summary."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from ..batch import DEFAULT_CONCURRENCY, BatchConfig, BatchObserver, estimate_total, run_batch
from ..conversation import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MAX_MESSAGE_CHARS,
    DEFAULT_MAX_MESSAGES,
    Limits,
)
from ..errors import ExtractorError
from ..models import DEFAULT_MODEL, get_client
from ..pipeline import DEFAULT_MAX_CHUNK_CHARS, Extractor
from ..summary import ProgressBar, RunSummary, render_summary, show_progress
from ..validation import ValidationOptions
from ._common import UnusableInput


class _Progress(BatchObserver):
    def __init__(self, bar: ProgressBar) -> None:
        self.bar = bar

    def on_progress(self, summary: RunSummary) -> None:
        self.bar.advance(summary)


def _as_of(
    ctx: click.Context, param: click.Parameter, value: str | None
) -> datetime | None:  # fmt: skip
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not an ISO 8601 date or date-time") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _check_inputs(inputs: tuple[str, ...]) -> None:
    for item in inputs:
        if item != "-" and not Path(item).exists():
            raise click.BadParameter(f"{item}: no such file or directory", param_hint="INPUT")


@click.command()
@click.argument("inputs", metavar="INPUT...", nargs=-1, required=True)
@click.option(
    "-o",
    "--out",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Results file (JSONL), appended to and resumed. Default: stdout.",
)
@click.option(
    "--failures",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Failures file (JSONL). Default: <out>.failures.jsonl.",
)
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
    "--concurrency",
    type=click.IntRange(min=1),
    default=DEFAULT_CONCURRENCY,
    show_default=True,
    help="Extractions in flight at once.",
)
@click.option(
    "--policy",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Admission policy file. Default: the shipped policy.",
)
@click.option(
    "--as-of",
    callback=_as_of,
    help="ISO time the policy judges current state at (naive times are UTC).",
)
@click.option("--allow-system-sources", is_flag=True, help="Let system-prompt text be quoted.")
@click.option(
    "--limit-message-chars",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_MESSAGE_CHARS,
    show_default=True,
    help="A longer message fails its conversation (stage load).",
)
@click.option(
    "--limit-messages",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_MESSAGES,
    show_default=True,
    help="A conversation with more messages fails (stage load).",
)
@click.option(
    "--limit-candidates",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_CANDIDATES,
    show_default=True,
    help="Candidates beyond this are rejected (CANDIDATE_LIMIT_EXCEEDED).",
)
@click.option(
    "--max-chunk-chars",
    type=click.IntRange(min=1000),
    default=DEFAULT_MAX_CHUNK_CHARS,
    show_default=True,
    help="Longer transcripts are extracted in chunks.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds allowed per conversation (all chunks and retries).",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Response cache directory.",
)
@click.option(
    "--ledger",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also record the run in this SQLite ledger.",
)
@click.option(
    "--retry-failed",
    is_flag=True,
    help="Clear the failures file first, so earlier failures are attempted again.",
)
@click.option("--fsync", is_flag=True, help="fsync every line (survives power loss; slower).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar and no summary table.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the summary as JSON (on stdout with --out, else on stderr).",
)
@click.pass_context
def run(ctx: click.Context, /, inputs: tuple[str, ...], **options: Any) -> None:  # fmt: skip
    """Extract, validate and admit every conversation in INPUT... (JSON or JSONL files, gzip
    welcome, directories of them, or - for stdin), one JSONL result line per conversation.

    Re-running with the same --out resumes: conversations already in the results or failures
    file are skipped. Lines are written in input order.

    Exit codes: 0 every conversation processed; 1 some failed (see the failures file);
    2 usage error or unusable input/output.

    \b
    Examples:
        extractor run examples/ --out results.jsonl
        zcat chats.jsonl.gz | extractor run - > results.jsonl
        extractor run chats.jsonl --model gpt-4o-mini --base-url http://localhost:8000/v1 \\
            --concurrency 8 --out results.jsonl --json
    """
    _check_inputs(inputs)
    o = options
    if o["out"] is not None and o["failures"] is not None and o["out"] == o["failures"]:
        raise click.BadParameter("must differ from --out", param_hint="--failures")
    limits = Limits(o["limit_message_chars"], o["limit_messages"], o["limit_candidates"])
    extractor = _extractor(limits, o)
    config = BatchConfig(
        out=o["out"], failures=o["failures"], concurrency=o["concurrency"], limits=limits,
        retry_failed=o["retry_failed"], fsync=o["fsync"],
    )  # fmt: skip
    try:
        with _ledger(o["ledger"]) as ledger, _progress(inputs, o["quiet"]) as observers:
            summary = run_batch(inputs, extractor, config, observers=observers, ledger=ledger)
    except ExtractorError as exc:
        raise UnusableInput(str(exc)) from None
    _render(summary, as_json=o["as_json"], quiet=o["quiet"], to_stdout=o["out"] is not None)
    ctx.exit(summary.exit_code)


def _extractor(limits: Limits, o: dict[str, Any]) -> Extractor:
    try:
        client = get_client(
            o["model"], base_url=o["base_url"], api_key=o["api_key"], mode=o["mode"],
            cache=not o["no_cache"], cache_dir=o["cache_dir"],
        )  # fmt: skip
        return Extractor(
            client,
            policy=o["policy"],
            limits=limits,
            validation=ValidationOptions(
                allow_system_sources=o["allow_system_sources"],
                max_candidates=limits.max_candidates,
            ),
            max_chunk_chars=o["max_chunk_chars"],
            timeout=o["timeout"],
            as_of=o["as_of"],
        )
    except ExtractorError as exc:
        raise UnusableInput(str(exc)) from None
    except ValueError as exc:  # a client rejecting its configuration (e.g. an unknown --mode)
        raise click.UsageError(str(exc)) from None


@contextlib.contextmanager
def _ledger(path: Path | None) -> Iterator[Any]:
    if path is None:
        yield None
        return
    from ..ledger import Ledger

    with Ledger(path) as ledger:
        yield ledger


@contextlib.contextmanager
def _progress(inputs: tuple[str, ...], quiet: bool) -> Iterator[list[BatchObserver]]:
    if not show_progress(sys.stderr, quiet=quiet):
        yield []
        return
    with ProgressBar(sys.stderr, estimate_total(inputs)) as bar:
        yield [_Progress(bar)]


def _render(summary: RunSummary, *, as_json: bool, quiet: bool, to_stdout: bool) -> None:
    if as_json:
        click.echo(summary.model_dump_json(indent=2), err=not to_stdout)
    elif not quiet:
        render_summary(summary, sys.stderr)
