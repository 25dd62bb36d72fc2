"""``extractor store ...``: commands over a memory store file (docs/store.md, docs/read.md)."""

from __future__ import annotations

import click

from .store_read import read


@click.group()
def store() -> None:
    """Work with a memory store (a SQLite file written by MemoryStore).

    \b
    Example:
        extractor store read "Who is my manager?" --db memory.db --subject user-42 \\
            --purpose PERSONALIZATION
    """


store.add_command(read)
