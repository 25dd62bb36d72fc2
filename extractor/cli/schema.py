from __future__ import annotations

from pathlib import Path

import click

from ..schemas import DEFAULT_SCHEMAS_DIR, SCHEMAS, drifted, render, write_schemas


@click.command()
@click.argument("name", required=False, type=click.Choice(sorted(SCHEMAS)))
@click.option("--write", is_flag=True, help="Regenerate every schema file into --dir.")
@click.option("--check", is_flag=True, help="Exit 1 if the files in --dir drift from the models.")
@click.option(
    "--dir", "directory", type=click.Path(path_type=Path), default=DEFAULT_SCHEMAS_DIR,
    show_default=True, help="Where the schema files live.",
)  # fmt: skip
def schema(name: str | None, write: bool, check: bool, directory: Path) -> None:
    """Print, write or check the published JSON Schema files.

    \b
    Examples:
        extractor schema memory-candidate
        extractor schema --write
        extractor schema --check
    """
    if write:
        for path in write_schemas(directory):
            click.echo(f"wrote {path}")
        return
    if check:
        stale = drifted(directory)
        for item in stale:
            click.echo(f"drifted: {item}.schema.json (run 'extractor schema --write')", err=True)
        raise SystemExit(1 if stale else 0)
    if name is None:
        for item in sorted(SCHEMAS):
            click.echo(item)
        return
    click.echo(render(name), nl=False)
