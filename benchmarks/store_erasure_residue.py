"""Measure why erasure needs more than DELETE: where a deleted string survives in SQLite.

Builds a small FTS5 database in WAL mode with ``secure_delete = ON`` (as the memory store runs),
deletes one row, and after each further step counts the files that still contain the string:

    1. DELETE + FTS5 'delete' (what a naive erase does)
    2. + FTS5 'rebuild'
    3. + PRAGMA wal_checkpoint(TRUNCATE)
    4. + VACUUM
    5. + PRAGMA wal_checkpoint(TRUNCATE) again (in WAL mode VACUUM writes through the WAL)

Then runs the store's own erase on the same content and reports its residue.

    .venv/bin/python benchmarks/store_erasure_residue.py
"""

from __future__ import annotations

import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

SECRET = "42 Wallaby Way in Sydney"


def residue(db: Path) -> list[str]:
    out = []
    for p in sorted(db.parent.iterdir()):
        n = p.read_bytes().count(SECRET.encode())
        if n:
            out.append(f"{p.name} x{n}")
    return out


def raw_sqlite(work: Path, secure: bool) -> None:
    db = work / f"raw-{int(secure)}" / "raw.db"
    db.parent.mkdir()
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute(f"PRAGMA secure_delete = {'ON' if secure else 'OFF'}")
    con.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    con.execute("CREATE VIRTUAL TABLE f USING fts5(body, content='t', content_rowid='id')")
    for i in range(200):
        body = f"User lives at {SECRET}." if i == 7 else f"filler row {i} about tea and paris"
        con.execute("INSERT INTO t (id, body) VALUES (?, ?)", (i, body))
        con.execute("INSERT INTO f (rowid, body) VALUES (?, ?)", (i, body))
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # old data lives in the main file
    (old,) = con.execute("SELECT body FROM t WHERE id = 7").fetchone()
    con.execute("INSERT INTO f (f, rowid, body) VALUES ('delete', 7, ?)", (old,))
    con.execute("DELETE FROM t WHERE id = 7")
    print(f"sqlite {sqlite3.sqlite_version}, secure_delete={'ON' if secure else 'OFF'}, WAL")
    print(f"  1. DELETE + fts 'delete'       : string in {residue(db) or 'no file'}")
    con.execute("INSERT INTO f (f) VALUES ('rebuild')")
    print(f"  2. + fts 'rebuild'             : string in {residue(db) or 'no file'}")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print(f"  3. + wal_checkpoint(TRUNCATE)  : string in {residue(db) or 'no file'}")
    con.execute("VACUUM")
    print(f"  4. + VACUUM                    : string in {residue(db) or 'no file'}")
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    print(f"  5. + wal_checkpoint(TRUNCATE)  : string in {residue(db) or 'no file'}")
    con.close()


def store_erase(work: Path) -> None:
    from store_helpers import Clock, user_says

    from extractor import MemoryStore

    db = work / "store.db"
    with MemoryStore(db, clock=Clock()) as store:
        store.ingest(user_says("c-home", f"I live at {SECRET}."), subject="u1")
        for i in range(50):
            store.ingest(user_says(f"c{i}", f"I prefer tea number {i}."), subject="u1")
        before = store.verify_erasure([SECRET])
        report = store.erase(conversation="c-home")
        print(
            f"MemoryStore.erase: residue before {len(before.residue)} file(s), after "
            f"{len(report.residue)}; FTS integrity-check ok: {store.verify_erasure([SECRET]).clean}"
        )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        raw_sqlite(Path(tmp), secure=True)
        raw_sqlite(Path(tmp), secure=False)
        store_erase(Path(tmp))
