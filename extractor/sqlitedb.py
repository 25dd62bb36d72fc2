"""Opening a SQLite file the way every SQLite file of this project is opened.

The memory store (:mod:`extractor.store.backend`), the read path (:mod:`extractor.read.reader`)
and the ledger (:mod:`extractor.ledger.store`) each hold one connection to one file: autocommit
(``isolation_level=None``; transactions are explicit ``BEGIN IMMEDIATE``), a busy timeout so
that several processes can share the file, ``synchronous = NORMAL`` and, for the files that are
written, write-ahead logging. :func:`connect` is that opening; the caller turns
:class:`sqlite3.Error` into its own error, naming its file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from pathlib import Path

#: How long a connection waits for another process's write lock, in seconds.
DEFAULT_BUSY_TIMEOUT_S = 60.0

MEMORY = ":memory:"


class JournalModeError(sqlite3.OperationalError):
    """The file would not switch to write-ahead logging (``require_wal=True``)."""

    def __init__(self, mode: str) -> None:
        super().__init__(f"cannot switch to WAL mode (got {mode})")
        self.mode = mode


def connect(
    path: str | Path,
    *,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT_S,
    wal: bool = True,
    require_wal: bool = False,
    check_same_thread: bool = False,
    pragmas: Mapping[str, str | int] | None = None,
) -> sqlite3.Connection:
    """Open ``path`` (``":memory:"`` works) in autocommit mode and configure it.

    Sets ``busy_timeout``; with ``wal`` switches a file (not ``:memory:``) to write-ahead
    logging, and with ``require_wal`` raises :class:`JournalModeError` when SQLite keeps another
    mode; sets ``synchronous = NORMAL``; then each of ``pragmas`` in order (``name = value``;
    names and values come from this project's code, never from a user). Any failure closes the
    connection and raises :class:`sqlite3.Error`.
    """
    db = sqlite3.connect(
        path, timeout=busy_timeout, isolation_level=None, check_same_thread=check_same_thread
    )
    try:
        db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        if wal and str(path) != MEMORY:
            (mode,) = db.execute("PRAGMA journal_mode = WAL").fetchone()
            if require_wal and str(mode).lower() != "wal":
                raise JournalModeError(str(mode))
        db.execute("PRAGMA synchronous = NORMAL")
        for name, value in (pragmas or {}).items():
            db.execute(f"PRAGMA {name} = {value}")
    except BaseException:
        db.close()
        raise
    return db
