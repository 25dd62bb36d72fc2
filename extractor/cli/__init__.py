"""The ``extractor`` command line: thin commands over the library API.

Each command parses its options, makes one library call and renders the result. Library errors
become a one-line message on stderr here, at the boundary, and nowhere else.

Exit codes (documented in the README):

* ``0`` -- success;
* ``1`` -- the command ran, but something was rejected or failed (``validate`` rejected a
  candidate, ``run`` wrote entries to the failures file, ``admit`` found changed decisions when
  ``--fail-on-change`` is given);
* ``2`` -- usage error or unusable input (bad option, unreadable file, invalid policy).
"""

from __future__ import annotations

import click

from ._common import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, UnusableInput
from .admit import admit
from .doctor import doctor
from .eval import eval_command
from .keys import keys
from .ledger import ledger
from .mock_server import mock_server
from .run import run
from .schema import schema
from .serve import serve
from .store import store
from .validate import validate


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memory-candidate-extractor")
def cli() -> None:
    """Extract candidate memories from conversations, validate them against the transcript, and
    admit them under a deterministic policy. The extractor proposes; it never certifies.

    \b
    Example:
        extractor run examples/conversations.jsonl --out results.jsonl
    """


cli.add_command(admit)
cli.add_command(doctor)
cli.add_command(eval_command)
cli.add_command(keys)
cli.add_command(ledger)
cli.add_command(mock_server)
cli.add_command(run)
cli.add_command(schema)
cli.add_command(serve)
cli.add_command(store)
cli.add_command(validate)


__all__ = ["EXIT_OK", "EXIT_REJECTED", "EXIT_USAGE", "UnusableInput", "cli", "main"]


def main() -> None:
    cli()
