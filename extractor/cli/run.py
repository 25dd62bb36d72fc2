"""``extractor run``: the batch job. Parse options, make one library call, render the summary."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from ..batch import DEFAULT_CONCURRENCY, BatchConfig, BatchObserver, estimate_total, run_batch
from ..conversation import Conversation, Owner
from ..errors import ExtractorError
from ..formats import AUTO, FORMAT_NAMES
from ..heap import tune_collector
from ..results import ConversationResult
from ..summary import ProgressBar, RunSummary, render_summary, show_progress
from ._base import UnusableInput, file_option, no_subject_note
from ._common import build_extractor, extractor_options


class _Progress(BatchObserver):
    def __init__(self, bar: ProgressBar) -> None:
        self.bar = bar

    def on_progress(self, summary: RunSummary) -> None:
        self.bar.advance(summary)


def _parse_shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    k, sep, n = value.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise click.BadParameter(
            f"{value!r}: expected K/N with 1 <= K <= N, e.g. 1/2", param_hint="--shard"
        )
    return int(k), int(n)


def _check_inputs(inputs: tuple[str, ...]) -> None:
    for item in inputs:
        if item != "-" and not Path(item).exists():
            raise click.BadParameter(f"{item}: no such file or directory", param_hint="INPUT")


@click.command()
@click.argument("inputs", metavar="INPUT...", nargs=-1, required=True)
@file_option("-o", "--out", help="Results file (JSONL), appended to and resumed. Default: stdout.")
@file_option("--failures", help="Failures file (JSONL). Default: <out>.failures.jsonl.")
@extractor_options
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=DEFAULT_CONCURRENCY,
    show_default=True,
    help="Extractions in flight at once.",
)
@click.option(
    "--shard",
    metavar="K/N",
    callback=lambda ctx, param, value: _parse_shard(value),
    help="Process only every N-th input, starting with the K-th (run K = 1..N in parallel, "
    "each with its own --out).",
)
@click.option(
    "--format",
    "input_format",
    type=click.Choice(FORMAT_NAMES),
    default=AUTO,
    show_default=True,
    help="Input format: OpenAI chat, ChatGPT or Claude export, LangChain messages, OpenAI "
    "Responses items; auto recognizes each conversation.",
)
@click.option(
    "--tenant",
    help="Tenant of every conversation, over its metadata.tenant (results, failures, ledger).",
)
@click.option(
    "--subject",
    help="Whose memory every conversation is, over its metadata.user_id (results, failures, "
    "ledger).",
)
@file_option("--ledger", help="Also record the run in this SQLite ledger.")
@file_option(
    "--store",
    "store_path",
    help="Also ingest every admitted memory into this memory store (extractor store ...).",
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
        extractor run chats.jsonl --shard 1/2 --out part1.jsonl &   # two cores
        extractor run chats.jsonl --shard 2/2 --out part2.jsonl
    """
    _check_inputs(inputs)
    o = options
    if o["out"] is not None and o["out"] == o["failures"]:
        raise click.BadParameter("must differ from --out", param_hint="--failures")
    extractor = build_extractor(o)
    tune_collector()
    config = BatchConfig(
        out=o["out"], failures=o["failures"], concurrency=o["concurrency"], limits=extractor.limits,
        retry_failed=o["retry_failed"], fsync=o["fsync"], shard=o["shard"],
        owner=Owner(o["tenant"], o["subject"]), input_format=o["input_format"],
    )  # fmt: skip
    latest = _Latest()
    try:
        progress = _progress(inputs, o["quiet"], o["shard"])
        with (
            _ledger(o["ledger"]) as ledger,
            _store(o["store_path"], extractor.policy) as ingesting,
            progress as observers,
        ):
            observers = [*ingesting, *observers, latest]
            summary = run_batch(inputs, extractor, config, observers=observers, ledger=ledger)
    except ExtractorError as exc:
        raise UnusableInput(str(exc)) from None
    except KeyboardInterrupt:
        _interrupted(latest.summary, o)
        ctx.exit(EXIT_INTERRUPTED)
    if summary.conversations == 0:
        raise UnusableInput(
            f"no conversations in {', '.join(inputs)}: the input is empty (or a directory "
            "without .json / .jsonl files)"
        )
    _render(summary, as_json=o["as_json"], quiet=o["quiet"], to_stdout=o["out"] is not None)
    ctx.exit(summary.exit_code)


#: 128 + SIGINT, as shells report a command stopped by Ctrl-C.
EXIT_INTERRUPTED = 130


class _Latest(BatchObserver):
    """Keeps the run's live summary, to report what was done when the run is interrupted."""

    def __init__(self) -> None:
        self.summary = RunSummary()

    def on_progress(self, summary: RunSummary) -> None:
        self.summary = summary


def _interrupted(summary: RunSummary, o: dict[str, Any]) -> None:
    """What a Ctrl-C'd run did, and how to pick it up again."""
    err = sys.stderr
    if not o["quiet"]:
        render_summary(summary, err)
    where = f"in {o['out']}" if o["out"] is not None else "on stdout"
    print(
        f"extractor: interrupted after {summary.processed} processed, {summary.failed} failed "
        f"and {summary.skipped} skipped conversations (their lines are {where}).",
        file=err,
    )
    if o["out"] is not None:
        print(
            "extractor: to resume, run the same command again: what is already in the "
            "results and failures files is skipped.",
            file=err,
        )
    else:
        print(
            "extractor: results went to stdout, so there is nothing to resume from: give "
            "--out FILE to make a run resumable.",
            file=err,
        )


@contextlib.contextmanager
def _ledger(path: Path | None) -> Iterator[Any]:
    if path is None:
        yield None
        return
    from ..ledger import Ledger

    with Ledger(path) as ledger:
        yield ledger


class _StoreIngest(BatchObserver):
    """Ingests each result into a memory store (idempotent, so a resumed run adds nothing)."""

    def __init__(self, store: Any, policy: Any) -> None:
        self.store = store
        self.policy = policy  # the run's admission policy: a new version re-admits the store
        self.without_subject = 0

    def on_result(self, result: ConversationResult, conversation: Conversation) -> None:
        report = self.store.ingest(result, policy=self.policy)
        if report.subject is None:
            self.without_subject += len(report.stored)


@contextlib.contextmanager
def _store(path: Path | None, policy: Any = None) -> Iterator[list[BatchObserver]]:
    if path is None:
        yield []
        return
    from ..store import MemoryStore

    with MemoryStore(path) as store:
        observer = _StoreIngest(store, policy)
        yield [observer]
    if observer.without_subject:
        print(no_subject_note(observer.without_subject, "extractor run --subject S"),
              file=sys.stderr)  # fmt: skip


@contextlib.contextmanager
def _progress(
    inputs: tuple[str, ...], quiet: bool, shard: tuple[int, int] | None
) -> Iterator[list[BatchObserver]]:
    if not show_progress(sys.stderr, quiet=quiet):
        yield []
        return
    with ProgressBar(sys.stderr, estimate_total(inputs, shard)) as bar:
        yield [_Progress(bar)]


def _render(summary: RunSummary, *, as_json: bool, quiet: bool, to_stdout: bool) -> None:
    if as_json:
        click.echo(summary.model_dump_json(indent=2), err=not to_stdout)
    elif not quiet:
        render_summary(summary, sys.stderr)
    if as_json or quiet:  # the table carries them otherwise; a warning is never silent
        for warning in summary.warnings:
            click.echo(f"extractor: WARNING: {warning}", err=True)
