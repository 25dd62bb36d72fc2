"""``extractor admit``: re-run admission over stored results and show which decisions change."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from ..admission import DecisionChange, ReplayReport, iter_results, load_policy, replay
from ..errors import PolicyError
from ..results import ConversationResult
from ._base import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, UnusableInput


class _Reader:
    """Streams results from every file, printing each bad line to stderr and counting it."""

    def __init__(self, paths: Iterable[Path]) -> None:
        self.paths = list(paths)
        self.errors = 0

    def __iter__(self) -> Iterator[ConversationResult]:
        for path in self.paths:
            stream = sys.stdin if str(path) == "-" else None
            name = "<stdin>" if stream is not None else str(path)
            for item in iter_results(name, stream):
                if isinstance(item, ConversationResult):
                    yield item
                else:
                    self.errors += 1
                    click.echo(f"error: {item}", err=True)


_LABELS = {
    "NOW_FIRES": "now fires",
    "NO_LONGER_FIRES": "no longer fires",
    "DEFINITION_CHANGED": "definition changed",
    "DETAIL_CHANGED": "detail changed",
}


def _show(value: Any) -> str:
    if isinstance(value, list):
        items = [f"{v['use']} ({v['rule_id']})" if isinstance(v, dict) else str(v) for v in value]
        return "[" + ", ".join(items) + "]"
    return "-" if value is None else str(value)


def _render_change(change: DecisionChange) -> list[str]:
    lines = [f"{change.conversation_id}  {change.memory_id}  {change.candidate_id}  "
             f"{json.dumps(change.content, ensure_ascii=False)}"]  # fmt: skip
    lines += [f"  {f.field}: {_show(f.before)} -> {_show(f.after)}" for f in change.fields]
    if change.rules:
        lines.append("  because:")
        lines += [f"    rule {r.rule_id}: {_LABELS[r.change]}: {r.reason}" for r in change.rules]
    lines += [f"  note: {note}" for note in change.notes]
    return lines


def _render(report: ReplayReport) -> str:
    stored = ", ".join(report.previous_policies) or "none"
    lines = [
        f"policy {report.policy_id} {report.policy_version} (stored decisions: {stored})",
        f"{report.conversations} conversations, {report.decisions} decisions: "
        f"{len(report.changed)} changed, {report.unchanged} unchanged",
    ]
    for change in report.changed:
        lines += ["", *_render_change(change)]
    return "\n".join(lines)


def _parse_as_of(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO 8601 time", param_hint="--as-of"
        ) from None


@click.command()
@click.argument(
    "results",
    nargs=-1,
    required=True,
    type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
)
@click.option(
    "--policy", "policy_path", type=click.Path(path_type=Path, dir_okay=False),
    help="Policy file (TOML, or JSON by extension). Default: the shipped policy.",
)  # fmt: skip
@click.option(
    "--as-of", "as_of", metavar="ISO",
    help="Judge current-state authority at this time. Default: each stored decision's as-of.",
)  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the replay report as JSON.")
@click.option("--fail-on-change", is_flag=True, help="Exit 1 when any decision changed.")
def admit(
    results: tuple[Path, ...],
    policy_path: Path | None,
    as_of: str | None,
    as_json: bool,
    fail_on_change: bool,
) -> None:
    """Re-admit the candidates stored in RESULTS (JSONL result lines) under a policy and report
    exactly which decisions change and why.

    Exit code 0 when nothing changed (or changes without --fail-on-change), 1 with
    --fail-on-change when any decision changed, 2 for an invalid policy or unreadable input
    (bad lines are reported by file:line; the other lines are still replayed).

    \b
    Examples:
        extractor admit results.jsonl
        extractor admit --policy new.toml --fail-on-change results.jsonl
        extractor admit --as-of 2027-01-01 --json results.jsonl
    """
    when = _parse_as_of(as_of)
    try:
        policy = load_policy(policy_path)
    except PolicyError as exc:
        raise UnusableInput(str(exc)) from None
    reader = _Reader(results)
    report = replay(reader, policy, as_of=when)
    click.echo(report.model_dump_json(indent=2) if as_json else _render(report))
    if reader.errors:
        click.echo(f"{reader.errors} line(s) could not be read", err=True)
        raise SystemExit(EXIT_USAGE)
    raise SystemExit(EXIT_REJECTED if fail_on_change and report.changed else EXIT_OK)
