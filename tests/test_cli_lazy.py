"""The ``extractor`` command imports a subcommand's module only when that subcommand is used:
starting the CLI costs click, not the pipeline, the store, the read path and the schemas (issue
14: every ``extractor`` process, and each of the suite's, paid ~1.6 s of CPU for them)."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from extractor.cli import COMMANDS, LazyCommands, cli

#: What one process reports: the modules loaded after importing the CLI, then after
#: ``extractor run --help``.
PROBE = """
import json, sys
from extractor.cli import cli
seen = {"import": sorted(sys.modules)}
try:
    cli(["run", "--help"], standalone_mode=False)
except SystemExit:
    pass
seen["run"] = sorted(sys.modules)
print(json.dumps(seen))
"""


@pytest.fixture(scope="module")
def loaded() -> dict[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    return {stage: set(names) for stage, names in json.loads(done.stdout.splitlines()[-1]).items()}


def test_importing_the_cli_loads_no_subcommand(loaded: dict[str, set[str]]) -> None:
    ours = {m for m in loaded["import"] if m.split(".")[0] == "extractor"}
    assert ours == {"extractor", "extractor._version", "extractor.cli", "extractor.cli._base"}
    heavy = {"pydantic", "openai", "instructor", "jsonschema", "detect_secrets"}
    assert not heavy & loaded["import"]


def test_a_subcommand_loads_its_own_module_and_not_the_others(
    loaded: dict[str, set[str]],
) -> None:
    run = loaded["run"]
    assert {"extractor.cli.run", "extractor.pipeline"} <= run
    others = {f"extractor.cli{module}" for name, (module, _) in COMMANDS.items() if name != "run"}
    assert not others & run
    assert not {"extractor.schemas", "extractor.store", "extractor.evaluation", "openai"} & run


def test_every_listed_command_is_found_under_its_name() -> None:
    ctx = click.Context(cli)
    assert cli.list_commands(ctx) == sorted(COMMANDS)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name
        assert cli.commands[name] is command
    assert cli.get_command(ctx, "nosuch") is None


def test_the_lazy_mapping_behaves_as_a_dict() -> None:
    commands = LazyCommands({"run": (".run", "run"), "keys": (".keys", "keys")})
    assert len(commands) == 2 and "run" in commands and "nosuch" not in commands
    extra = click.Command("extra")
    commands["extra"] = extra
    assert list(commands) == ["run", "keys", "extra"] and commands["extra"] is extra
    del commands["run"]
    assert sorted(commands) == ["extra", "keys"] and commands.get("run") is None
    with pytest.raises(KeyError):
        del commands["run"]
    with pytest.raises(KeyError):
        commands["nosuch"]


def test_a_command_listed_under_another_name_is_refused() -> None:
    commands = LazyCommands({"walk": (".run", "run")})
    with pytest.raises(RuntimeError, match="is not the command 'walk'"):
        commands["walk"]
