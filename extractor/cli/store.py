"""``extractor store ...``: the memory store's commands (docs/store.md; ``store read``: see
docs/read.md). Each parses, makes one :class:`~extractor.store.MemoryStore` call and renders the
result (``--json`` for the record)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel, TypeAdapter, ValidationError

from ..admission.replay import iter_results
from ..errors import ExtractorError, InputError
from ..hashing import canonical_json
from ..store import DerivedClaim, MemoryStore, RevocationReport
from ..store.explaining import EXPORTABLE
from ._base import EXIT_REJECTED, UnusableInput, no_subject_note
from .store_read import read, read_replay

DB = click.Path(path_type=Path, dir_okay=False)
EXISTING_DB = click.Path(path_type=Path, dir_okay=False, exists=True)
JSON_FLAG = click.option("--json", "as_json", is_flag=True, help="Print the full record as JSON.")
TRIGGERS = ["SOURCE_REVOKED", "SOURCE_UPDATED", "USER_CORRECTION", "POLICY_CHANGE", "MANUAL"]


@contextmanager
def _open(path: Path, *, create: bool = False) -> Iterator[MemoryStore]:
    """The store at ``path``; a store error opening it or inside the block (an unknown
    reference, a refused input) is a usage error (exit 2) with the store's message."""
    try:
        with MemoryStore(path, create=create) as store:
            yield store
    except ExtractorError as exc:
        raise UnusableInput(str(exc)) from None


def _emit(record: BaseModel, as_json: bool, lines: list[str]) -> None:
    if as_json:
        click.echo(record.model_dump_json(indent=2))
    else:
        for line in lines:
            click.echo(line)


def _ref_command(name: str) -> Callable[[Callable[..., None]], click.Command]:
    """``extractor store NAME DB REF [--json]``: a command about one claim, memory or source."""

    def command(f: Callable[..., None]) -> click.Command:
        f = click.argument("db", type=EXISTING_DB)(click.argument("ref")(JSON_FLAG(f)))
        return store.command(name)(f)

    return command


def _affected(report: RevocationReport) -> list[str]:
    """One line per revalidated dependent of a revocation (``revoke``, ``readmit``)."""
    return [f"  {a.claim_id}  {a.lifecycle_before} -> {a.lifecycle_after}  depth {a.depth}"
            for a in report.affected]  # fmt: skip


@click.group()
def store() -> None:
    """The governed memory store: ingest admitted results, derive, revoke, explain, erase.

    \b
    Examples:
        extractor store ingest results.jsonl --db memory.db --tenant acme
        extractor store why memory.db mem_0123456789abcdef0123:c1
        extractor store erase memory.db --subject user-42 --ledger ledger.db
        extractor store read "Who is my manager?" --db memory.db --subject user-42 \\
            --purpose PERSONALIZATION
    """


store.add_command(read)
store.add_command(read_replay)


@store.command("ingest")
@click.argument("results", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--db", "db", type=DB, required=True, help="The memory store file (created).")
@click.option("--tenant", help="Tenant of every result, over the result's own tenant.")
@click.option("--subject", help="Subject of every result, over the result's own subject.")
@JSON_FLAG
def ingest(
    results: tuple[Path, ...], db: Path, tenant: str | None, subject: str | None, as_json: bool
) -> None:
    """Persist the admitted memories of RESULTS... (result JSONL from 'extractor run').

    Only decisions with persist = true are stored; ingesting a result again changes nothing. A
    line that is not a result is reported on stderr (file:line) and the others go on; the exit
    code is then 1.

    \b
    Example:
        extractor store ingest results.jsonl --db memory.db --tenant acme
    """
    totals = {"results": 0, "stored": 0, "already_stored": 0, "not_persisted": 0,
              "superseded": 0, "conflicts": 0, "unreadable": 0}  # fmt: skip
    without_subject = 0
    with _open(db, create=True) as opened:
        for path in results:
            for item in iter_results(path):
                if isinstance(item, InputError):
                    click.echo(f"error: {item}", err=True)
                    totals["unreadable"] += 1
                    continue
                try:
                    report = opened.ingest(item, tenant=tenant, subject=subject)
                except ExtractorError as exc:
                    click.echo(f"error: {path}: {item.conversation_id}: {exc}", err=True)
                    totals["unreadable"] += 1
                    continue
                totals["results"] += 1
                if report.subject is None:
                    without_subject += len(report.stored)
                for name in ("stored", "already_stored", "not_persisted", "superseded",
                             "conflicts"):  # fmt: skip
                    totals[name] += len(getattr(report, name))
    if as_json:
        click.echo(json.dumps(totals, indent=2))
    else:
        click.echo(", ".join(f"{v} {k.replace('_', ' ')}" for k, v in totals.items()))
    if without_subject:
        click.echo(no_subject_note(without_subject, "--subject S"), err=True)
    if totals["unreadable"]:
        raise click.exceptions.Exit(EXIT_REJECTED)


@store.command("derive")
@click.argument("db", type=EXISTING_DB)
@click.option(
    "--claims",
    "claims_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    required=True,
    help="JSON array of claims: {content, requires: [claim ids], context, relation, hedges}.",
)
@click.option("--produced-by", required=True, help="The summarizer (model or program).")
@click.option("--activity", default="SUMMARIZE", show_default=True, help="SUMMARIZE, PROFILE ...")
@JSON_FLAG
def derive(db: Path, claims_file: Path, produced_by: str, activity: str, as_json: bool) -> None:
    """Record a derived memory whose claims each name the parent claims they require.

    The derivation gate refuses a claim its parents do not support (exit 1, listed); the
    admission policy decides the rest as MEMORY_DERIVED output.

    \b
    Example:
        extractor store derive memory.db --claims summary.json --produced-by summarizer-v1
    """
    try:
        raw = json.loads(claims_file.read_text(encoding="utf-8"))
        claims = TypeAdapter(list[DerivedClaim]).validate_python(raw)
    except (ValueError, ValidationError) as exc:
        raise UnusableInput(f"{claims_file}: not a JSON array of claims: {exc}") from None
    with _open(db) as opened:
        report = opened.derive(claims, activity=activity, produced_by=produced_by)
    lines = [f"{c.claim_id}  {c.lifecycle_state}  {','.join(c.allowed_uses) or '-'}"
             for c in report.stored]  # fmt: skip
    lines += [f"rejected claim {r.index}: {r.code}: {r.message}" for r in report.rejected]
    _emit(report, as_json, lines)
    if report.rejected:
        raise click.exceptions.Exit(EXIT_REJECTED)


@store.command("revoke")
@click.argument("db", type=EXISTING_DB)
@click.argument("ref")
@click.option("--reason", required=True, help="Why (recorded in the event and the versions).")
@click.option("--trigger", type=click.Choice(TRIGGERS), default="MANUAL", show_default=True)
@JSON_FLAG
def revoke(db: Path, ref: str, reason: str, trigger: str, as_json: bool) -> None:
    """Revoke a claim, a memory or a source; revalidate its dependents; print the impact.

    \b
    Example:
        extractor store revoke memory.db mem_0123456789abcdef0123 --reason "user corrected it"
    """
    with _open(db) as opened:
        report = opened.revoke(ref, reason=reason, trigger=trigger)  # type: ignore[arg-type]
    lines = [
             f"revoked {', '.join(report.targets)}",
             f"{len(report.affected)} dependents revalidated (max depth {report.max_depth}): "
             f"{len(report.restored)} restored, {len(report.quarantined)} quarantined, "
             f"{len(report.revoked)} revoked",
             f"{len(report.exposures)} recorded reads consumed them before containment",
    ]  # fmt: skip
    lines += _affected(report)
    _emit(report, as_json, lines)


@store.command("readmit")
@click.argument("db", type=EXISTING_DB)
@click.option(
    "--policy",
    "policy_file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Admission policy (TOML/JSON) to decide every stored claim under; default: shipped.",
)
@click.option("--reason", default="admission policy changed", show_default=True)
@JSON_FLAG
def readmit(db: Path, policy_file: Path | None, reason: str, as_json: bool) -> None:
    """Decide every stored claim again under a policy (a policy change); revalidate the
    dependents of the claims whose decision changed; print the impact.

    \b
    Example:
        extractor store readmit memory.db --policy mine.toml
    """
    from ..admission import load_policy

    try:
        policy = load_policy(policy_file) if policy_file is not None else None
    except ExtractorError as exc:
        raise UnusableInput(str(exc)) from None
    with _open(db) as opened:
        report = opened.readmit(policy, reason=reason)
    impact = report.revocation
    lines = [
        f"policy {report.policy_id} {report.policy_version} (was: "
        f"{', '.join(report.previous_policies) or '-'}): {report.decided} claims decided, "
        f"{len(report.changed)} changed, {len(report.skipped)} could not be decided",
    ]
    lines += [f"  {c.claim_id}  {c.lifecycle_before} -> {c.lifecycle_after}  "
              f"{','.join(c.allowed_before) or '-'} -> {','.join(c.allowed_after) or '-'}"
              for c in report.changed]  # fmt: skip
    if impact is not None:
        lines.append(f"{len(impact.affected)} dependents revalidated (max depth "
                     f"{impact.max_depth}); {len(impact.exposures)} recorded reads consumed "
                     "them before")  # fmt: skip
        lines += _affected(impact)
    lines += [f"  skipped {s.claim_id}: {s.reason}" for s in report.skipped]
    _emit(report, as_json, lines)


@_ref_command("why")
def why(db: Path, ref: str, as_json: bool) -> None:
    """Explain a memory: lineage, support paths, source families, the rules behind its uses.

    \b
    Example:
        extractor store why memory.db mem_0123456789abcdef0123:c1
    """
    with _open(db) as opened:
        w = opened.why(ref)
    c = w.claim
    lines = [f"{c.claim_id}: {c.content!r}",
             f"  {c.origin_kind} {c.verification_state} {c.lifecycle_state} "
             f"support {c.support_label}",
             f"  allowed: {', '.join(c.allowed_uses) or '-'}; forbidden: "
             f"{', '.join(c.forbidden_uses) or '-'}",
             f"  rules: {', '.join(w.rules) or '-'} ({c.policy_id}@{c.policy_version})",
             f"  reason: {c.reason}"]  # fmt: skip
    lines += [f"  verified: {v}" for v in w.verified_by]
    for j in w.support:
        mark = "*" if j.current else ("+" if j.holds else "-")
        ants = ", ".join(f"{a.id} [{a.standing}]" for a in j.antecedents)
        lines.append(f"  {mark} {j.kind} {j.just_id} by {j.informant}: {ants}")
    lines.append(f"  families: {', '.join(w.families) or '-'}")
    lines += [f"  from {e.parent_claim_id} ({e.relation}, depth {e.depth})"
              for e in w.lineage.ancestors]  # fmt: skip
    if w.superseded_by:
        lines.append(f"  superseded by {w.superseded_by} at {c.superseded_at}")
    lines += [f"  supersedes {s}" for s in w.supersedes]
    lines += [f"  conflicts with {s}" for s in w.conflicts_with]
    _emit(w, as_json, lines)


@_ref_command("lineage")
def lineage(db: Path, ref: str, as_json: bool) -> None:
    """Print a claim's derivation lineage: its ancestors and descendants.

    \b
    Example:
        extractor store lineage memory.db der_0123456789abcdef0123:c1
    """
    with _open(db) as opened:
        found = opened.lineage(ref)
    lines = [found.claim_id]
    lines += [f"  <- {e.parent_claim_id} ({e.relation}{', required' if e.required else ''}, "
              f"depth {e.depth})" for e in found.ancestors]  # fmt: skip
    lines += [f"  -> {e.child_claim_id} ({e.relation}, depth {e.depth})"
              for e in found.descendants]  # fmt: skip
    _emit(found, as_json, lines)


@store.command("erase")
@click.argument("db", type=EXISTING_DB)
@click.option("--subject", help="Erase every memory about this subject.")
@click.option("--conversation", help="Erase every memory of this conversation id.")
@click.option("--memory", "memory_id", help="Erase this memory (or claim).")
@click.option("--source", help="Erase this source and the claims only it evidences.")
@click.option("--tenant", help="Only within this tenant.")
@click.option("--ledger", type=EXISTING_DB, help="Also erase from this ledger.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), help="And cache.")
@JSON_FLAG
def erase(db: Path, as_json: bool, **selector: Any) -> None:
    """Privacy erasure: remove the content everywhere, keep a content-free tombstone, and scan
    every file for residue (exit 1 if any is found).

    \b
    Example:
        extractor store erase memory.db --subject user-42 --ledger ledger.db
    """
    with _open(db) as opened:
        report = opened.erase(**selector)
    lines = [
             f"erased {len(report.erased_claims)} claims ({len(report.derived_claims)} derived), "
             f"revalidated {len(report.revalidated)}, redacted {report.events_redacted} events, "
             f"scrubbed {report.ledger_rows_scrubbed} ledger rows, removed "
             f"{report.cache_entries_removed} cache entries",
             f"residue: {len(report.residue)} in {len(report.files_scanned)} files scanned",
    ]  # fmt: skip
    lines += [f"  residue: {r}" for r in report.residue]
    lines += [f"  not reachable from here, erase it too: {u}" for u in report.unreachable]
    _emit(report, as_json, lines)
    if report.residue:
        raise click.exceptions.Exit(EXIT_REJECTED)


@store.command("verify-erasure")
@click.argument("db", type=EXISTING_DB)
@click.option("--string", "strings", multiple=True, help="An erased string to look for.")
@click.option(
    "--strings-file",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="A file of erased strings, one per line.",
)
@click.option("--ledger", type=EXISTING_DB, help="Scan this ledger too.")
@click.option("--cache-dir", type=click.Path(path_type=Path, file_okay=False), help="And cache.")
@JSON_FLAG
def verify_erasure(
    db: Path,
    strings: tuple[str, ...],
    strings_file: Path | None,
    ledger: Path | None,
    cache_dir: Path | None,
    as_json: bool,
) -> None:
    """Prove erased strings are gone: a byte-level scan of the store file, its WAL and
    shared memory, the ledger and the cache, and an FTS integrity check (exit 1 on residue).

    \b
    Example:
        extractor store verify-erasure memory.db --string "+1 555 0100" --ledger ledger.db
    """
    wanted = list(strings)
    if strings_file is not None:
        wanted += [s for s in strings_file.read_text(encoding="utf-8").splitlines() if s.strip()]
    if not wanted:
        raise click.UsageError("give the erased strings with --string or --strings-file")
    with _open(db) as opened:
        check = opened.verify_erasure(wanted, ledger=ledger, cache_dir=cache_dir)
    lines = [
             f"{'clean' if check.clean else 'RESIDUE'}: {check.strings} strings, "
             f"{len(check.files_scanned)} files, FTS consistent: {check.index_consistent}",
    ]  # fmt: skip
    lines += [f"  {r}" for r in check.residue]
    _emit(check, as_json, lines)
    if not check.clean:
        raise click.exceptions.Exit(EXIT_REJECTED)


@store.command("rebuild")
@click.argument("db", type=EXISTING_DB)
@JSON_FLAG
def rebuild(db: Path, as_json: bool) -> None:
    """Replay every event into an empty projection; exit 1 unless the state hash is identical.

    \b
    Example:
        extractor store rebuild memory.db
    """
    with _open(db) as opened:
        report = opened.rebuild()
    lines = [
        f"{report.events} events replayed; state hash {report.state_hash_after} "
        f"({'identical' if report.identical else 'DIFFERENT from ' + report.state_hash_before})"
    ]
    _emit(report, as_json, lines)
    if not report.identical:
        raise click.exceptions.Exit(EXIT_REJECTED)


@store.command("export")
@click.argument("db", type=EXISTING_DB)
@click.option("--table", type=click.Choice(EXPORTABLE), default="memory_current",
              show_default=True)  # fmt: skip
def export(db: Path, table: str) -> None:
    """Print every row of a store table or view as JSON lines.

    \b
    Example:
        extractor store export memory.db --table memory_current > memories.jsonl
    """
    with _open(db) as opened:
        for row in opened.export(table):
            click.echo(canonical_json(row))
