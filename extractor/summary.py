"""What a batch run reports: the :class:`RunSummary` model, its table, and the progress bar.

The summary is data first (the library returns it; ``extractor run --json`` prints it as is) and
a table second (rendered for people on stderr). The progress bar is for people only: it is shown
when stderr is a terminal and ``CI`` is not set, and never otherwise, so pipes and CI logs stay
clean.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import IO, TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from .results import ConversationResult, FailureRecord
from .usage import Usage

LIMIT_CODE = "CANDIDATE_LIMIT_EXCEEDED"
MAX_EXAMPLES = 5

if TYPE_CHECKING:
    from rich.progress import TaskID


class RunSummary(BaseModel):
    """Counts for one batch run. ``conversations`` counts every input seen, including those
    skipped because an earlier run already recorded them."""

    model_config = ConfigDict(extra="forbid")

    conversations: int = 0
    processed: int = Field(default=0, description="Results written by this run.")
    failed: int = Field(default=0, description="Failure records written by this run.")
    skipped: int = Field(default=0, description="Already in --out or the failures file.")
    duplicates: int = Field(
        default=0,
        description="Inputs that were the same conversation (id and content) as an earlier "
        "input: counted, not processed again.",
    )
    duplicate_examples: list[str] = Field(
        default_factory=list, description="The first few duplicates: 'where = first seen'."
    )
    candidates: int = 0
    candidates_by_state: dict[str, int] = Field(
        default_factory=dict, description="Admitted lifecycle state -> count."
    )
    persisted: int = Field(default=0, description="Candidates the policy lets persist.")
    rejections: int = 0
    rejections_by_code: dict[str, int] = Field(default_factory=dict)
    candidate_limit: int | None = Field(
        default=None, description="--limit-candidates: candidates accepted per model call."
    )
    limited_conversations: int = Field(
        default=0, description="Conversations that lost candidates to the candidate limit."
    )
    dropped_by_model: int = Field(
        default=0,
        description="Candidates the model left out of its answers to stay within the candidate "
        "limit per call (the offline model reports them), in limited_conversations too.",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="What to act on although the run went through, naming the option to change.",
    )
    failures_by_stage: dict[str, int] = Field(default_factory=dict)
    usage: Usage = Field(default_factory=Usage)
    cached: int = Field(default=0, description="Results answered from the cache.")
    wall_time_s: float = 0.0
    model: str | None = None
    policy_id: str | None = None
    policy_version: str | None = None
    out: str | None = Field(default=None, description="Results file (None: stdout).")
    failures_file: str | None = None

    @property
    def exit_code(self) -> int:
        """0 when every conversation was processed, 1 when any failed (see ``docs``)."""
        return 1 if self.failed else 0

    def add_result(self, result: ConversationResult) -> None:
        self.conversations += 1
        self.processed += 1
        self.candidates += len(result.candidates)
        codes = Counter(r.code.value for r in result.rejections) + Counter(
            result.rejections_omitted
        )
        self.rejections += codes.total()
        self.persisted += sum(d.persist for d in result.decisions)
        _bump(self.candidates_by_state, (d.lifecycle_state.value for d in result.decisions))
        _bump(self.rejections_by_code, codes.elements())
        self.limited_conversations += bool(codes[LIMIT_CODE] or result.dropped_by_model)
        self.dropped_by_model += result.dropped_by_model
        self._warn()
        self.usage = self.usage + result.usage
        self.cached += result.cached

    def _warn(self) -> None:
        lost = self.rejections_by_code.get(LIMIT_CODE, 0)
        dropped = self.dropped_by_model
        if not lost and not dropped:
            return
        limit = f" ({self.candidate_limit} per model call)" if self.candidate_limit else ""
        what = [f"{lost} rejected {LIMIT_CODE}"] if lost else []
        what += [f"{dropped} left out by the model itself"] if dropped else []
        self.warnings = [
            f"{lost + dropped} candidates in {self.limited_conversations} conversation(s) were "
            f"over the candidate limit{limit} ({' and '.join(what)}): raise --limit-candidates "
            "to keep them"
        ]

    def add_failure(self, failure: FailureRecord) -> None:
        self.conversations += 1
        self.failed += 1
        _bump(self.failures_by_stage, [failure.stage])
        self.usage = self.usage + failure.usage

    def add_duplicate(self, where: str, first: str) -> None:
        self.conversations += 1
        self.duplicates += 1
        if len(self.duplicate_examples) < MAX_EXAMPLES:
            self.duplicate_examples.append(f"{where} = {first}")

    def add_skipped(self) -> None:
        self.conversations += 1
        self.skipped += 1


def _bump(counts: dict[str, int], keys: Any) -> None:
    merged = Counter(counts)
    merged.update(keys)
    counts.clear()
    counts.update(sorted(merged.items()))


# ---------------------------------------------------------------------------------------------
# Rendering


def summary_table(summary: RunSummary) -> Table:
    """The closing table: conversations, candidates by state, rejections by code, tokens, time,
    failures."""
    table = Table(title="extractor run", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("count", justify="right")
    done = f"{summary.processed} processed, {summary.failed} failed, {summary.skipped} skipped"
    if summary.duplicates:
        done += f", {summary.duplicates} duplicates"
    table.add_row("conversations", f"{summary.conversations} ({done})")
    for example in summary.duplicate_examples:
        table.add_row("  duplicate", example)
    table.add_row("candidates", f"{summary.candidates} ({summary.persisted} persist)")
    for state, n in summary.candidates_by_state.items():
        table.add_row(f"  {state}", str(n))
    table.add_row("rejections", str(summary.rejections))
    for code, n in summary.rejections_by_code.items():
        table.add_row(f"  {code}", str(n))
    u = summary.usage
    table.add_row(
        "tokens", f"{u.total_tokens} ({u.prompt_tokens} prompt, {u.completion_tokens} completion)"
    )
    table.add_row("wall time", f"{summary.wall_time_s:.2f}s")
    table.add_row("failures", str(summary.failed))
    for stage, n in summary.failures_by_stage.items():
        table.add_row(f"  {stage}", str(n))
    if summary.failed and summary.failures_file:
        table.add_row("failures file", summary.failures_file)
    return table


def render_summary(summary: RunSummary, stream: IO[str]) -> None:
    """Print the closing table to ``stream`` (plain text when it is not a terminal), then every
    warning on a line of its own."""
    console = Console(file=stream, highlight=False, soft_wrap=True)
    console.print(summary_table(summary))
    for warning in summary.warnings:
        console.print(Text(f"WARNING: {warning}", style="bold red"))


def show_progress(stream: IO[str], *, quiet: bool = False) -> bool:
    """Whether a progress bar belongs on ``stream``: a terminal, not CI, not ``--quiet``."""
    return not quiet and _isatty(stream) and not os.environ.get("CI")


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:.1f} conv/s")


class ProgressBar:
    """A batch observer that draws a rich progress bar with rate and ETA on a terminal.

    ``total`` may be ``None`` (stdin, or a JSON file whose size is unknown): the bar then shows
    count, rate and elapsed time without an ETA.
    """

    def __init__(self, stream: IO[str], total: int | None = None) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _RateColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=stream),
            transient=True,
        )
        self._total = total
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressBar:
        self._progress.start()
        self._task = self._progress.add_task("extracting", total=self._total)
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def advance(self, summary: RunSummary) -> None:
        if self._task is None:
            return
        total = self._total
        if total is not None and summary.conversations > total:
            total = None
        self._progress.update(self._task, completed=summary.conversations, total=total)


__all__ = ["ProgressBar", "RunSummary", "render_summary", "show_progress", "summary_table"]
