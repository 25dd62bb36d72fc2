"""The one SQLite opening the store, the read path and the ledger share (extractor.sqlitedb)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from extractor.sqlitedb import JournalModeError, connect


def pragma(db: sqlite3.Connection, name: str) -> object:
    return db.execute(f"PRAGMA {name}").fetchone()[0]


def test_a_file_is_opened_in_wal_autocommit_with_the_busy_timeout(tmp_path: Path) -> None:
    db = connect(tmp_path / "a.db", busy_timeout=2.5, pragmas={"secure_delete": "ON"})
    try:
        assert pragma(db, "journal_mode") == "wal"
        assert pragma(db, "busy_timeout") == 2500
        assert pragma(db, "synchronous") == 1  # NORMAL
        assert pragma(db, "secure_delete") == 1
        assert db.isolation_level is None
    finally:
        db.close()


def test_a_reader_keeps_the_journal_mode_and_sets_its_cache(tmp_path: Path) -> None:
    path = tmp_path / "b.db"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.close()
    db = connect(path, wal=False, pragmas={"cache_size": -4096})
    try:
        assert pragma(db, "journal_mode") == "delete"
        assert pragma(db, "cache_size") == -4096
    finally:
        db.close()


def test_memory_databases_keep_their_journal(tmp_path: Path) -> None:
    db = connect(":memory:", require_wal=True)
    try:
        assert pragma(db, "journal_mode") == "memory"
    finally:
        db.close()


def test_a_database_that_cannot_use_wal_is_refused_only_when_wal_is_required() -> None:
    # "" is SQLite's private temporary database, which has no write-ahead log
    with pytest.raises(JournalModeError, match=r"cannot switch to WAL mode \(got delete\)"):
        connect("", require_wal=True)
    db = connect("")
    try:
        assert pragma(db, "journal_mode") == "delete"
    finally:
        db.close()
