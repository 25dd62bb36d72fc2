"""``extractor store read``: one governed read of a memory store (the read path, docs/read.md);
``extractor store read-replay``: a recorded read judged again under another read policy."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import LedgerError, PolicyError, StoreError
from ..vocab import Capability
from ._base import Decorator, UnusableInput, _as_of, _stack, file_option, no_subject_note

if TYPE_CHECKING:
    from ..ledger import Ledger
    from ..read import ReadPolicy
    from ..read.replay import ItemOutcome


def _db_option(help: str) -> Decorator:
    return file_option("--db", "db", help=help, default=Path("memory.db"), show_default=True)


def _sources_options(policy_help: str, ledger_help: str) -> Decorator:
    """``--read-policy FILE`` and ``--ledger FILE`` (an existing ledger, for the transcripts)."""
    return _stack(
        file_option("--read-policy", help=policy_help),
        file_option("--ledger", "ledger_path", help=ledger_help, exists=True),
    )


@contextmanager
def _usable(db: Path, fix: str) -> Iterator[None]:
    """Refuse a missing store file; a store, policy or ledger error inside the block is a usage
    error (exit 2) with its message."""
    if not db.is_file():
        raise UnusableInput(f"{db}: no memory store file here {fix}".rstrip())
    try:
        yield
    except (StoreError, PolicyError, LedgerError) as exc:
        raise UnusableInput(str(exc)) from None


def _sources(
    read_policy: Path | None, ledger: Path | None
) -> tuple[ReadPolicy | None, Ledger | None]:
    """The read policy (``None``: the shipped one) and the ledger the options name."""
    from ..ledger import Ledger
    from ..read import load_read_policy

    policy = load_read_policy(read_policy) if read_policy else None
    return policy, (Ledger(ledger, create=False) if ledger else None)


@click.command("read")
@click.argument("query")
@_db_option("The memory store file.")
@click.option(
    "--purpose",
    required=True,
    type=click.Choice([c.value for c in Capability]),
    help="What the memories will be used for.",
)
@click.option("--subject", required=True, help="The user whose memories are read.")
@click.option("--tenant", default="default", show_default=True, help="The tenant read.")
@click.option("--caller", default="cli", show_default=True, help="Who reads (recorded).")
@click.option(
    "--acting-for-subject",
    is_flag=True,
    help="The caller acts for the subject: their own shared third-party data is eligible.",
)
@click.option("--as-of", "as_of", callback=_as_of, help="Valid time to judge at (ISO 8601).")
@click.option(
    "--known-at",
    "known_at",
    callback=_as_of,
    help="System time: read what the store believed then (ISO 8601).",
)
@click.option(
    "-k",
    "k",
    type=click.IntRange(1, 1000),
    default=8,
    show_default=True,
    help="At most this many memories.",
)
@click.option("--token-budget", type=click.IntRange(1), help="Token budget of the context.")
@_sources_options(
    "A read-policy TOML/JSON file instead of the shipped one.",
    "Ledger with the transcripts, so FACTUAL_EVIDENCE and "
    "AUTONOMOUS_ACTION_JUSTIFICATION reads can dereference evidence.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole read result as JSON.")
def read(
    query: str,
    db: Path,
    purpose: str,
    subject: str,
    tenant: str,
    caller: str,
    acting_for_subject: bool,
    as_of: object,
    known_at: object,
    k: int,
    token_budget: int | None,
    read_policy: Path | None,
    ledger_path: Path | None,
    as_json: bool,
) -> None:
    """Read the memories usable for PURPOSE that match QUERY: access first, relevance, then
    admissibility; print the context (or the full result with --json). Excluded candidates are
    listed on stderr with the stage and rule that excluded them.

    \b
    Example:
        extractor store read "Who is my manager?" --db memory.db --tenant acme \\
            --subject user-42 --purpose PERSONALIZATION
    """
    from ..read import Caller
    from ..read import read as read_store

    with _usable(db, "(create it with ingest)"):
        policy, ledger = _sources(read_policy, ledger_path)
        who = Caller(id=caller, acting_for=subject if acting_for_subject else None)
        result = read_store(
            db,
            query,
            policy=policy,
            transcripts=ledger,
            tenant=tenant,
            subject=subject,
            caller=who,
            purpose=purpose,
            as_of=as_of,
            known_at=known_at,
            k=k,
            token_budget=token_budget,
        )
    if as_json:
        click.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    if result.text:
        click.echo(result.text)
    elif not result.items:
        _explain_empty(db, tenant)
    for e in result.excluded:
        click.echo(f"excluded {e.claim_id}: {e.stage.value} {e.rule_id}: {e.reason}", err=True)


@click.command("read-replay")
@click.argument("read_id")
@_db_option("The memory store file that recorded the read.")
@_sources_options(
    "The read-policy TOML/JSON file to judge under (default: the shipped one).",
    "Ledger with the transcripts, for hits the replay policy newly dereferences.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the whole replay report as JSON.")
def read_replay(
    read_id: str, db: Path, read_policy: Path | None, ledger_path: Path | None, as_json: bool
) -> None:
    """Judge the candidates of recorded read READ_ID again under another read policy and
    print what changes: one line per candidate whose outcome differs, then the top k before
    and after. The claim versions judged are the ones the read saw.

    \b
    Example:
        extractor store read-replay read_0123456789abcdef01234567 --db memory.db \\
            --read-policy stricter.toml
    """
    from ..read import replay as replay_store

    with _usable(db, ""):
        policy, ledger = _sources(read_policy, ledger_path)
        report = replay_store(db, read_id, policy=policy, transcripts=ledger)
    if as_json:
        click.echo(json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    old, new = report.recorded_policy, report.replay_policy
    click.echo(
        f"{report.read_id}: {len(report.items)} candidates, {len(report.changed)} changed "
        f"({old.id} {old.version} -> {new.id} {new.version})"
    )
    for item in report.items:
        if item.changed:
            click.echo(
                f"  {item.claim_id}: {_outcome(item.recorded)} -> {_outcome(item.replayed)}"
                + (" (erased since)" if item.erased_since else "")
            )
    click.echo(f"  top {report.k} recorded: {' '.join(report.admitted_recorded) or '-'}")
    click.echo(f"  top {report.k} replayed: {' '.join(report.admitted_replayed) or '-'}")


def _outcome(o: ItemOutcome) -> str:
    if o.admissible:
        return f"admitted as {o.use}"
    return f"excluded by {o.excluded_by} ({o.stage.value})"


def _explain_empty(db: Path, tenant: str) -> None:
    """Nothing was read: say so when the tenant's memories were stored with no subject."""
    from ..store import MemoryStore

    with MemoryStore(db, create=False) as store:
        count = store.without_subject(tenant)
    if count:
        fix = "'extractor run --subject S' / 'store ingest --subject S'"
        click.echo(no_subject_note(count, fix), err=True)
