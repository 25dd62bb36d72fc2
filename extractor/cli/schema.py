from __future__ import annotations

from pathlib import Path
from types import ModuleType

import click

from ..schemas import DEFAULT_SCHEMAS_DIR, SCHEMAS, drifted, render, write_schemas
from ._base import UnusableInput

OPENAPI = "openapi"


def _openapi() -> ModuleType:
    """The service's OpenAPI module (it needs the 'server' extra)."""
    try:
        from ..service import openapi
    except ImportError as exc:
        raise UnusableInput(f"{exc} (schemas/openapi.json is generated from the service)") from None
    return openapi


@click.command()
@click.argument("name", required=False, type=click.Choice(sorted([*SCHEMAS, OPENAPI])))
@click.option("--write", is_flag=True, help="Regenerate every schema file into --dir.")
@click.option("--check", is_flag=True, help="Exit 1 if the files in --dir drift from the models.")
@click.option(
    "--dir", "directory", type=click.Path(path_type=Path), default=DEFAULT_SCHEMAS_DIR,
    show_default=True, help="Where the schema files live.",
)  # fmt: skip
def schema(name: str | None, write: bool, check: bool, directory: Path) -> None:
    """Print, write or check the published JSON Schema files and the HTTP service's OpenAPI
    document (openapi.json).

    \b
    Examples:
        extractor schema memory-candidate
        extractor schema openapi
        extractor schema --write
        extractor schema --check
    """
    if write:
        for path in [*write_schemas(directory), _openapi().write(directory)]:
            click.echo(f"wrote {path}")
        return
    if check:
        stale = [f"{item}.schema.json" for item in drifted(directory)]
        stale += [_openapi().OPENAPI_FILE] if _openapi().drifted(directory) else []
        for item in stale:
            click.echo(f"drifted: {item} (run 'extractor schema --write')", err=True)
        raise SystemExit(1 if stale else 0)
    if name is None:
        for item in sorted([*SCHEMAS, OPENAPI]):
            click.echo(item)
        return
    click.echo(_openapi().render() if name == OPENAPI else render(name), nl=False)
