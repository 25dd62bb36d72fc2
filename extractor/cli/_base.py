"""What every command shares and nothing heavy: exit codes, the error type for unusable input,
small option helpers and message texts.

It imports click and the standard library only, so a command that needs no pipeline (``keys``,
``schema``, ``store read`` ...) does not pay for importing one; the model and pipeline options
are in :mod:`._common`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ..validation import Rejection

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2

#: A click option decorator, or several stacked into one.
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class UnusableInput(click.ClickException):
    """An input file or option the command cannot use at all: exit code 2."""

    exit_code = EXIT_USAGE


def rejection_line(r: Rejection) -> str:
    """One rejection as ``validate`` and ``ledger show`` print it."""
    field = f" ({r.field})" if r.field else ""
    return f"rejected {r.candidate_id or '#' + str(r.index)}: {r.code.value}{field}: {r.message}"


def _stack(*decorators: Decorator) -> Decorator:
    """Apply ``decorators`` as if written one above the other, first on top (first in --help)."""

    def apply(function: Callable[..., Any]) -> Callable[..., Any]:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return apply


def file_option(*decls: str, help: str, exists: bool = False, **kwargs: Any) -> Decorator:
    """A ``--name FILE`` option whose value is a :class:`~pathlib.Path` (never a directory);
    ``exists`` refuses a file that is not there."""
    kind = click.Path(path_type=Path, dir_okay=False, exists=exists)
    return click.option(*decls, type=kind, help=help, **kwargs)


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


def no_subject_note(count: int, fix: str) -> str:
    """What to tell a user whose memories were stored with no subject (the read path reads one
    subject at a time, so it never reads them)."""
    return (
        f"note: {count} memories were stored without a subject (their conversations carry no "
        f"metadata.user_id): 'extractor store read --subject S' never reads them. Give the "
        f"subject with {fix} or metadata.user_id in each conversation, when they are first "
        "ingested (a stored memory keeps its subject)."
    )
