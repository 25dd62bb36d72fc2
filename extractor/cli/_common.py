"""Shared pieces of the CLI: exit codes and the error type for unusable input."""

from __future__ import annotations

import click

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2


class UnusableInput(click.ClickException):
    """An input file or option the command cannot use at all: exit code 2."""

    exit_code = EXIT_USAGE
