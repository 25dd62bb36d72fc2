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

from collections.abc import Iterator, Mapping, MutableMapping
from importlib import import_module

import click

from ._base import EXIT_OK, EXIT_REJECTED, EXIT_USAGE, UnusableInput

#: Each command's name -> the module that defines it and the command's name in that module.
COMMANDS: Mapping[str, tuple[str, str]] = {
    "admit": (".admit", "admit"),
    "doctor": (".doctor", "doctor"),
    "eval": (".eval", "eval_command"),
    "keys": (".keys", "keys"),
    "ledger": (".ledger", "ledger"),
    "mock-server": (".mock_server", "mock_server"),
    "run": (".run", "run"),
    "schema": (".schema", "schema"),
    "serve": (".serve", "serve"),
    "store": (".store", "store"),
    "validate": (".validate", "validate"),
}


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's subcommands by name, each module imported when its command is first looked up.

    ``extractor run`` imports the pipeline, not the store, the read path, the schemas or the
    evaluation; ``extractor --help`` (which lists every command with its summary) imports them
    all. It is the mapping click keeps as :attr:`click.Group.commands`, so ``get_command``,
    ``list_commands``, ``cli.commands["run"]`` and the "did you mean" suggestions work as with
    a plain dict, without importing a module to list the names.
    """

    def __init__(self, where: Mapping[str, tuple[str, str]]) -> None:
        self._where = dict(where)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            module, attribute = self._where[name]
            command = getattr(import_module(module, __name__), attribute)
            if not isinstance(command, click.Command) or command.name != name:
                raise RuntimeError(f"{module}.{attribute} is not the command {name!r}")
            self._loaded[name] = command
        return command

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._where.pop(name, None)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self._where.pop(name, None)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(self._where), **dict.fromkeys(self._loaded)})

    def __len__(self) -> int:
        return len(self._where.keys() | self._loaded.keys())

    def __contains__(self, name: object) -> bool:
        return name in self._where or name in self._loaded


@click.group(
    commands=LazyCommands(COMMANDS), context_settings={"help_option_names": ["-h", "--help"]}
)
@click.version_option(package_name="memory-candidate-extractor")
def cli() -> None:
    """Extract candidate memories from conversations, validate them against the transcript, and
    admit them under a deterministic policy. The extractor proposes; it never certifies.

    \b
    Example:
        extractor run examples/conversations.jsonl --out results.jsonl
    """


__all__ = ["EXIT_OK", "EXIT_REJECTED", "EXIT_USAGE", "UnusableInput", "cli", "main"]


def main() -> None:
    cli()
