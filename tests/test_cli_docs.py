"""Every CLI command -- including ones added later -- has ``--help`` with a description and an
example that uses the command."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from extractor.cli import cli


def _commands(
    group: click.Group, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    found: list[tuple[tuple[str, ...], click.Command]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        found.append(((*path, name), command))
        if isinstance(command, click.Group):
            found.extend(_commands(command, (*path, name)))
    return found


COMMANDS = _commands(cli)


def test_commands_are_discovered() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"run", "schema", "validate"} <= names


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_has_help_with_an_example(
    path: tuple[str, ...], command: click.Command
) -> None:
    result = CliRunner().invoke(cli, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert (command.help or "").strip(), f"'extractor {' '.join(path)}' has no description"
    assert "Example" in result.output, f"'extractor {' '.join(path)} --help' shows no example"
    assert f"extractor {' '.join(path)}" in result.output, "the example should use the command"
