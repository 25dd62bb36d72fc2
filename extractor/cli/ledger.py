"""``extractor ledger list/show/export``: read a ledger written by ``extractor run --ledger``."""

from __future__ import annotations

import csv
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import IO, Any

import click

from ..errors import LedgerError
from ..hashing import canonical_json
from ..ledger import EXPORTABLE, ConversationHistory, Ledger, MemoryRecord, RunRecord
from ._base import EXIT_REJECTED, UnusableInput, rejection_line

LEDGER_PATH = click.Path(path_type=Path, exists=True, dir_okay=False)


@contextmanager
def _open(path: Path) -> Iterator[Ledger]:
    try:
        with Ledger(path, create=False) as ledger:
            yield ledger
    except LedgerError as exc:
        raise UnusableInput(str(exc)) from None


@click.group()
def ledger() -> None:
    """Read the SQLite ledger that 'extractor run --ledger PATH' writes.

    \b
    Examples:
        extractor ledger list ledger.db
        extractor ledger show ledger.db mem_0123456789abcdef0123
        extractor ledger export ledger.db --table decisions --format csv
    """


@ledger.command("list")
@click.argument("path", type=LEDGER_PATH)
@click.option("--json", "as_json", is_flag=True, help="Print the runs as a JSON array.")
def list_runs(path: Path, as_json: bool) -> None:
    """List the runs in a ledger, oldest first, with what each recorded.

    \b
    Example:
        extractor ledger list ledger.db
    """
    with _open(path) as opened:
        runs = opened.runs()
    if as_json:
        click.echo(json.dumps([_run_json(r) for r in runs], indent=2, ensure_ascii=False))
        return
    head = ("RUN", "STARTED", "STATUS", "MODEL", "POLICY", "CONV", "CAND", "PERSIST", "REJ", "FAIL")
    table = [head] + [_run_cells(r) for r in runs]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def _run_cells(run: RunRecord) -> tuple[str, ...]:
    p = run.provenance
    counts = (run.conversations, run.candidates, run.persisted, run.rejections, run.failures)
    return (run.run_id, run.started_at[:19], run.status, p.model,
            f"{p.policy_id}@{p.policy_version}", *map(str, counts))  # fmt: skip


def _run_json(run: RunRecord) -> dict[str, Any]:
    """Every field of the record, in its order; the provenance as JSON."""
    data = {f.name: getattr(run, f.name) for f in fields(run)}
    data["provenance"] = run.provenance.model_dump(mode="json")
    return data


@ledger.command()
@click.argument("path", type=LEDGER_PATH)
@click.argument("identifier", metavar="MEMORY_ID|CONVERSATION_ID")
@click.option("--json", "as_json", is_flag=True, help="Print the stored records as JSON.")
def show(path: Path, identifier: str, as_json: bool) -> None:
    """Show a memory candidate with its decision and the rules that fired (why it has the
    capabilities it has), or everything recorded about a conversation (id or content hash).

    Exit code 1 when the ledger holds nothing under that id.

    \b
    Examples:
        extractor ledger show ledger.db onboarding-1
        extractor ledger show ledger.db mem_1cb76bd89d5961214c77 --json
    """
    with _open(path) as opened:
        memories = opened.memory(identifier)
        history = opened.conversation(identifier) if not memories else None
    if not memories and not history:
        click.echo(f"{path}: no memory or conversation {identifier!r}", err=True)
        raise SystemExit(EXIT_REJECTED)
    if as_json:
        data = [_memory_json(m) for m in memories] if memories else _history_json(history)
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    elif memories:
        for i, record in enumerate(memories):
            click.echo("\n" if i else "", nl=False)
            _render_memory(record)
    else:
        assert history is not None
        _render_history(history)


def _memory_json(record: MemoryRecord) -> dict[str, Any]:
    return {
        "run_id": record.run_id,
        "evidence_ref": record.evidence_ref,
        "evidence_hash": record.evidence_hash,
        "candidate": record.candidate.model_dump(mode="json"),
        "decision": None if record.decision is None else record.decision.model_dump(mode="json"),
    }


def _history_json(history: ConversationHistory | None) -> dict[str, Any]:
    assert history is not None
    return {
        "conversation_id": history.conversation_id,
        "results": [{"run_id": r.run_id, "result": r.result.model_dump(mode="json")}
                    for r in history.results],
        "failures": [{"run_id": f.run_id, "failure": f.failure.model_dump(mode="json")}
                     for f in history.failures],
    }  # fmt: skip


def _uses(values: list[Any]) -> str:
    return ", ".join(str(v) for v in values) or "-"


def _render_memory(record: MemoryRecord) -> None:
    c, d = record.candidate, record.decision
    echo = click.echo
    echo(f"memory {c.memory_id}  (run {record.run_id}, conversation {c.conversation_id})")
    echo(f"  content:       {c.content}")
    echo(f"  type/kind:     {c.memory_type.value} / {c.kind.value}")
    echo(f"  origin:        {c.origin_kind.value}")
    echo(f"  verification:  {c.verification_state.value}")
    echo(f"  evidence:      {c.source_span.quote!r}")
    echo(f"                 {record.evidence_ref}  {record.evidence_hash}")
    t = c.temporal
    echo(f"  time:          {t.kind.value} {t.valid_from or '-'} .. {t.valid_to or '-'}"
         f"  observed {c.observed_at.isoformat() if c.observed_at else '-'}")  # fmt: skip
    echo(f"  parents:       {_uses(c.parent_memory_ids)}")
    echo(f"  requested:     {_uses(c.requested_uses)}")
    echo(f"  extracted by:  {c.provenance.model}, prompt {c.provenance.prompt_hash}")
    if d is None:
        echo("  decision:      none recorded")
        return
    echo(f"  decision:      {'PERSIST' if d.persist else 'DO NOT PERSIST'} as "
         f"{d.lifecycle_state.value} (policy {d.policy_id}@{d.policy_version}, as of "
         f"{d.as_of.isoformat() if d.as_of else '-'})")  # fmt: skip
    echo(f"  allowed uses:  {_uses(d.allowed_uses)}")
    echo(f"  forbidden:     {_uses(d.forbidden_uses)}")
    for denied in d.denied_requested_uses:
        echo(f"  denied:        {denied.use.value} by {denied.rule_id}: {denied.reason}")
    if d.flags:
        echo(f"  flags:         {_uses(d.flags)}")
    if d.inherited_from:
        echo(f"  inherited:     obligations of {_uses(d.inherited_from)}")
    if d.evidence_as_of:
        echo(f"  evidence as of {d.evidence_as_of}")
    echo("  rules fired:")
    for rule in d.rules_fired:
        echo(f"    {rule.rule_id}: {rule.reason}" + (f" ({rule.detail})" if rule.detail else ""))
    echo(f"  input hash:    {d.input_hash}")


def _render_history(history: ConversationHistory) -> None:
    echo = click.echo
    echo(f"conversation {history.conversation_id}")
    for rec in history.results:
        r = rec.result
        echo(f"run {rec.run_id}: {len(r.candidates)} candidates, {len(r.rejections)} rejected, "
             f"hash {r.conversation_hash}")  # fmt: skip
        decisions = {d.memory_id: d for d in r.decisions}
        for c in r.candidates:
            d = decisions.get(c.memory_id)
            verdict = "no decision" if d is None else (
                f"{'persist' if d.persist else 'drop'} {d.lifecycle_state.value} "
                f"uses={_uses(d.allowed_uses)}"
            )  # fmt: skip
            echo(f"  {c.memory_id}  {c.memory_type.value:<22} {verdict}  {c.content}")
        for j in r.rejections:
            echo(f"  {rejection_line(j)}")
    for failed in history.failures:
        f = failed.failure
        echo(f"run {failed.run_id}: FAILED at {f.stage}: {f.error_code}: {f.error}")


@ledger.command()
@click.argument("path", type=LEDGER_PATH)
@click.option("--table", type=click.Choice(EXPORTABLE), default="memory_ledger",
              show_default=True, help="Table or view to export.")  # fmt: skip
@click.option("--format", "fmt", type=click.Choice(["jsonl", "csv"]), default="jsonl",
              show_default=True, help="JSONL (JSON decoded) or CSV (as stored).")  # fmt: skip
@click.option("--run", "run_id", help="Only rows of this run.")
@click.option(
    "--results",
    is_flag=True,
    help="Write the stored result lines instead (the format of 'extractor run --out'), "
    "e.g. to replay them with 'extractor admit'.",
)
@click.option("-o", "--out", type=click.File("w", encoding="utf-8"), default="-",
              help="Write here instead of stdout.")  # fmt: skip
@click.pass_context
def export(
    ctx: click.Context,
    path: Path,
    table: str,
    fmt: str,
    run_id: str | None,
    results: bool,
    out: IO[str],
) -> None:
    """Export a table (or the memory_ledger view) as JSON Lines or CSV, or the stored result
    lines with --results.

    \b
    Examples:
        extractor ledger export ledger.db --table decisions --format csv --out decisions.csv
        extractor ledger export ledger.db --results > recorded.jsonl
    """
    if results:
        for name in ("table", "fmt"):
            if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT:
                option = "--table" if name == "table" else "--format"
                raise click.UsageError(f"--results writes result lines: drop {option}")
    with _open(path) as opened:
        try:
            _write_export(opened, table, fmt, run_id, results, out)
        except LedgerError as exc:
            raise UnusableInput(str(exc)) from None
        except BrokenPipeError:  # e.g. `| head`: the reader has all it wanted
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _write_export(
    opened: Ledger, table: str, fmt: str, run_id: str | None, results: bool, out: IO[str]
) -> None:
    if results:
        for recorded in opened.results(run_id):
            out.write(canonical_json(recorded.result) + "\n")
        return
    rows = opened.export(table, run_id=run_id, decode_json=fmt == "jsonl")
    if fmt == "csv":
        writer = csv.DictWriter(out, fieldnames=opened.columns(table), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    else:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    out.flush()
