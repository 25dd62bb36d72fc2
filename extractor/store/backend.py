"""The storage seam: every SQL statement of the memory store is in this module.

:class:`Backend` is the protocol the store's logic uses (small, table-shaped operations);
:class:`SQLiteBackend` implements it on one SQLite file (WAL, ``BEGIN IMMEDIATE`` writes, as the
ledger does). A PostgreSQL backend implements the same protocol; nothing outside this module and
``migrations.py`` knows which database holds the store.

Table and column names passed in come from the store's own code (never from a user), and are
checked against the schema before they reach a statement.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

from ..errors import StoreError
from ..sqlitedb import DEFAULT_BUSY_TIMEOUT_S, connect
from .migrations import PROJECTION_TABLES, applied, migrate

Row = dict[str, Any]


class Backend(Protocol):
    """What the store needs from a database. Rows are plain dicts of column -> value."""

    location: str

    def close(self) -> None: ...

    def transaction(self) -> Any: ...

    def migrations(self) -> list[str]: ...

    def append_event(self, row: Mapping[str, Any]) -> int | None: ...

    def events(self, after_seq: int = 0) -> Iterator[Row]: ...

    def last_event(self) -> tuple[int, str] | None: ...

    def insert(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None: ...

    def select(
        self, table: str, where: Mapping[str, Any] | None = None, *, order_by: str | None = None
    ) -> list[Row]: ...

    def select_in(
        self,
        table: str,
        column: str,
        values: Iterable[Any],
        *,
        where: Mapping[str, Any] | None = None,
    ) -> list[Row]: ...

    def latest(
        self, table: str, order_by: str, where: Mapping[str, Any] | None = None
    ) -> Row | None: ...

    def update(self, table: str, where: Mapping[str, Any], values: Mapping[str, Any]) -> int: ...

    def delete(self, table: str, where: Mapping[str, Any]) -> int: ...

    def current(self, where: Mapping[str, Any] | None = None) -> list[Row]: ...

    def current_in(self, claim_ids: Iterable[str]) -> dict[str, Row]: ...

    def history(self, claim_ids: Iterable[str], *, view: bool = False) -> list[Row]: ...

    def write_versions(self, rows: Sequence[Mapping[str, Any]]) -> None: ...

    def clear_projection(self) -> None: ...

    def dump(self, table: str) -> Iterator[tuple[Any, ...]]: ...

    def redact_event(self, seq: int, payload_json: str) -> None: ...

    def set_levels(self, levels: Mapping[str, int | None]) -> None: ...

    def compact(self) -> None: ...

    def index_consistent(self) -> bool: ...

    def delete_vectors(self, claim_ids: Iterable[str]) -> int: ...

    def erased_vectors(self) -> list[str]: ...

    def files(self) -> list[Path]: ...


_IN_CHUNK = 500


class SQLiteBackend:
    """The default backend: one SQLite file (``:memory:`` works too, for tests)."""

    def __init__(
        self, path: str | Path, *, create: bool = True, busy_timeout: float = DEFAULT_BUSY_TIMEOUT_S
    ) -> None:
        self.location = str(path)
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise StoreError(f"{self.path}: no memory store file here (create it with ingest)")
        self._lock = threading.RLock()
        self._depth = 0
        try:
            self._db = connect(
                self.location, busy_timeout=busy_timeout, pragmas={"secure_delete": "ON"}
            )
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the memory store: {exc}") from None
        self._db.row_factory = sqlite3.Row
        with self._errors("open"):
            tables = self._tables()
            if tables and not tables & {"store_migrations", "migrations"}:
                raise StoreError(f"{self.path}: not a memory store (it holds other tables)")
            self.applied_now = migrate(self._db)
        self._columns: dict[str, list[str]] = {}

    # -- plumbing -------------------------------------------------------------------------------

    def _tables(self) -> set[str]:
        found = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        return {str(r[0]) for r in found}

    def columns(self, table: str) -> list[str]:
        if table not in self._columns:
            info = self._db.execute(f"PRAGMA table_info({_ident(table)})").fetchall()
            if not info:
                raise StoreError(f"no table {table!r} in the memory store")
            self._columns[table] = [str(r[1]) for r in info]
        return self._columns[table]

    def _check(self, table: str, names: Iterable[str]) -> None:
        known = set(self.columns(table))
        unknown = [n for n in names if n not in known]
        if unknown:
            raise StoreError(f"table {table!r} has no column {unknown[0]!r}")

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot {action} the memory store: {exc}") from None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One ``BEGIN IMMEDIATE`` transaction; nested calls join the outer one."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            with self._errors("write"):
                self._db.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield
            except BaseException:
                self._depth = 0
                self._db.execute("ROLLBACK")
                raise
            self._depth = 0
            with self._errors("write"):
                self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def migrations(self) -> list[str]:
        with self._lock, self._errors("read"):
            return applied(self._db)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run one statement of this module's own SQL (never user text)."""
        with self._lock, self._errors("use"):
            return [dict(r) for r in self._db.execute(sql, tuple(params)).fetchall()]

    # -- events ---------------------------------------------------------------------------------

    def append_event(self, row: Mapping[str, Any]) -> int | None:
        """Append one event; ``None`` when its ``idempotency_key`` is already in the log."""
        self._check("memory_events", row)
        names = list(row)
        sql = (
            f"INSERT INTO memory_events ({', '.join(names)}) "
            f"VALUES ({', '.join('?' for _ in names)}) "
            "ON CONFLICT (idempotency_key) DO NOTHING"
        )
        with self._lock, self._errors("write"):
            cursor = self._db.execute(sql, [row[n] for n in names])
            return int(cursor.lastrowid) if cursor.rowcount and cursor.lastrowid else None

    def last_event(self) -> tuple[int, str] | None:
        """``(seq, at)`` of the last event, or ``None`` for an empty log."""
        rows = self.execute("SELECT seq, at FROM memory_events ORDER BY seq DESC LIMIT 1")
        return (int(rows[0]["seq"]), str(rows[0]["at"])) if rows else None

    def events(self, after_seq: int = 0) -> Iterator[Row]:
        with self._lock, self._errors("read"):
            rows = self._db.execute(
                "SELECT * FROM memory_events WHERE seq > ? ORDER BY seq", (after_seq,)
            ).fetchall()
        for r in rows:
            yield dict(r)

    # -- generic table access -------------------------------------------------------------------

    def insert(self, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        names = list(rows[0])
        self._check(table, names)
        sql = (
            f"INSERT INTO {_ident(table)} ({', '.join(names)}) "
            f"VALUES ({', '.join('?' for _ in names)})"
        )
        with self._lock, self._errors("write"):
            self._db.executemany(sql, [[r[n] for n in names] for r in rows])

    def select(
        self, table: str, where: Mapping[str, Any] | None = None, *, order_by: str | None = None
    ) -> list[Row]:
        where = where or {}
        self._check(table, where)
        sql = f"SELECT * FROM {_ident(table)}" + _where(where)
        if order_by is not None:
            self._check(table, [c.strip().split()[0] for c in order_by.split(",")])
            sql += f" ORDER BY {order_by}"
        return self.execute(sql, list(where.values()))

    def select_in(
        self,
        table: str,
        column: str,
        values: Iterable[Any],
        *,
        where: Mapping[str, Any] | None = None,
    ) -> list[Row]:
        """Rows whose ``column`` is one of ``values`` (and that match ``where``)."""
        where = where or {}
        self._check(table, [column, *where])
        out: list[Row] = []
        items = list(dict.fromkeys(values))
        extra = "".join(f" AND {n} IS ?" for n in where)
        for start in range(0, len(items), _IN_CHUNK):
            chunk = items[start : start + _IN_CHUNK]
            marks = ", ".join("?" for _ in chunk)
            sql = f"SELECT * FROM {_ident(table)} WHERE {column} IN ({marks}){extra}"
            out += self.execute(sql, [*chunk, *where.values()])
        return out

    def latest(
        self, table: str, order_by: str, where: Mapping[str, Any] | None = None
    ) -> Row | None:
        """The row matching ``where`` with the largest ``order_by``, or ``None``."""
        where = where or {}
        self._check(table, [order_by, *where])
        sql = f"SELECT * FROM {_ident(table)}{_where(where)} ORDER BY {order_by} DESC LIMIT 1"
        rows = self.execute(sql, list(where.values()))
        return rows[0] if rows else None

    def update(self, table: str, where: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        self._check(table, [*where, *values])
        sets = ", ".join(f"{n} = ?" for n in values)
        sql = f"UPDATE {_ident(table)} SET {sets}" + _where(where)
        with self._lock, self._errors("write"):
            cursor = self._db.execute(sql, [*values.values(), *where.values()])
            return int(cursor.rowcount)

    def delete(self, table: str, where: Mapping[str, Any]) -> int:
        self._check(table, where)
        with self._lock, self._errors("write"):
            cursor = self._db.execute(
                f"DELETE FROM {_ident(table)}" + _where(where), list(where.values())
            )
            return int(cursor.rowcount)

    # -- claim versions -------------------------------------------------------------------------

    def current(self, where: Mapping[str, Any] | None = None) -> list[Row]:
        """Rows of ``memory_current`` matching ``where`` (column = value), by claim id."""
        where = where or {}
        self._check("claims", [])
        sql = "SELECT * FROM memory_current" + _where(where) + " ORDER BY claim_id"
        return self.execute(sql, list(where.values()))

    def current_in(self, claim_ids: Iterable[str]) -> dict[str, Row]:
        out: dict[str, Row] = {}
        items = list(dict.fromkeys(claim_ids))
        for start in range(0, len(items), _IN_CHUNK):
            chunk = items[start : start + _IN_CHUNK]
            marks = ", ".join("?" for _ in chunk)
            sql = f"SELECT * FROM claim_versions WHERE sys_to IS NULL AND claim_id IN ({marks})"
            out.update({r["claim_id"]: r for r in self.execute(sql, chunk)})
        return out

    def history(self, claim_ids: Iterable[str], *, view: bool = False) -> list[Row]:
        """Every version of the claims (``claim_versions`` rows; ``claim_history`` rows, with
        the claim's content and identity, when ``view``)."""
        source = "claim_history" if view else "claim_versions"
        items = list(dict.fromkeys(claim_ids))
        out: list[Row] = []
        for start in range(0, len(items), _IN_CHUNK):
            chunk = items[start : start + _IN_CHUNK]
            marks = ", ".join("?" for _ in chunk)
            sql = f"SELECT * FROM {source} WHERE claim_id IN ({marks})"
            out += self.execute(sql, chunk)
        return sorted(out, key=lambda r: (r["claim_id"], r["version"]))

    def write_versions(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Close each claim's current version at the new one's ``sys_from`` and insert it."""
        if not rows:
            return
        first: dict[str, Mapping[str, Any]] = {}
        ordered = [dict(r) for r in rows]
        last: dict[str, dict[str, Any]] = {}
        for r in ordered:
            first.setdefault(r["claim_id"], r)
            if r["claim_id"] in last:
                last[r["claim_id"]]["sys_to"] = r["sys_from"]
            last[r["claim_id"]] = r
        with self._lock, self._errors("write"):
            self._db.executemany(
                "UPDATE claim_versions SET sys_to = ? WHERE claim_id = ? AND sys_to IS NULL",
                [(r["sys_from"], cid) for cid, r in first.items()],
            )
        self.insert("claim_versions", ordered)

    def set_levels(self, levels: Mapping[str, int | None]) -> None:
        """``claims.support_level`` for many claims at once."""
        with self._lock, self._errors("write"):
            self._db.executemany(
                "UPDATE claims SET support_level = ? WHERE claim_id = ?",
                [(lv, cid) for cid, lv in levels.items()],
            )

    # -- rebuild and hashing --------------------------------------------------------------------

    def clear_projection(self) -> None:
        with self._lock, self._errors("write"):
            for table in PROJECTION_TABLES:
                self._db.execute(f"DELETE FROM {_ident(table)}")

    def dump(self, table: str) -> Iterator[tuple[Any, ...]]:
        keys = PROJECTION_TABLES[table]
        columns = [c for c in self.columns(table) if c != "claim_rowid"]
        sql = f"SELECT {', '.join(columns)} FROM {_ident(table)} ORDER BY {', '.join(keys)}"
        with self._lock, self._errors("read"):
            rows = self._db.execute(sql).fetchall()
        for r in rows:
            yield tuple(r)

    # -- erasure --------------------------------------------------------------------------------

    def redact_event(self, seq: int, payload_json: str) -> None:
        """Replace an event's payload by its redacted form (erasure only)."""
        with self._lock, self._errors("write"):
            self._db.execute(
                "UPDATE memory_events SET payload_json = ?, redacted = 1, idempotency_key = NULL "
                "WHERE seq = ?",
                (payload_json, seq),
            )

    def compact(self) -> None:
        """Make deleted bytes unreadable: rebuild the FTS index from the current content (its
        segments keep deleted terms otherwise), checkpoint and truncate the WAL, and VACUUM
        (free pages keep deleted rows even with ``secure_delete``; measured on SQLite 3.40)."""
        with self._lock, self._errors("compact"):
            self._db.execute("INSERT INTO claims_fts (claims_fts) VALUES ('rebuild')")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._db.execute("VACUUM")
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def index_consistent(self) -> bool:
        """FTS5 ``integrity-check``: the index holds exactly the terms of the current content."""
        with self._lock:
            try:
                self._db.execute("INSERT INTO claims_fts (claims_fts) VALUES ('integrity-check')")
            except sqlite3.DatabaseError:
                return False
        return True

    def delete_vectors(self, claim_ids: Iterable[str]) -> int:
        """Delete the read path's vectors (``claim_embeddings``) of these claims."""
        ids = sorted(set(claim_ids))
        removed = 0
        with self._lock, self._errors("write"):
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                cursor = self._db.execute(
                    f"DELETE FROM claim_embeddings WHERE claim_id IN ({marks})", chunk
                )
                removed += int(cursor.rowcount)
        return removed

    def erased_vectors(self) -> list[str]:
        """Claims with a vector left in ``claim_embeddings`` although erased (or gone)."""
        rows = self.execute(
            "SELECT DISTINCT e.claim_id FROM claim_embeddings AS e LEFT JOIN claims AS c "
            "ON c.claim_id = e.claim_id WHERE c.claim_id IS NULL OR c.erased != 0 "
            "ORDER BY e.claim_id"
        )
        return [str(r["claim_id"]) for r in rows]

    def files(self) -> list[Path]:
        if self.location == ":memory:":
            return []
        return [p for p in (self.path, Path(f"{self.path}-wal"), Path(f"{self.path}-shm"))
                if p.exists()]  # fmt: skip


def scrub_sqlite(path: Path, forms: Sequence[bytes]) -> int:
    """Remove every byte form of an erased string from every text column of every table of a
    SQLite file (the ledger), then checkpoint and VACUUM it. Returns the rows changed."""
    if not forms:
        return 0
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=DEFAULT_BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot open the ledger to erase from it: {exc}") from None
    changed = 0
    try:
        db.execute("PRAGMA secure_delete = ON")
        tables = [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        db.execute("BEGIN IMMEDIATE")
        for table in tables:
            cols = [r[1] for r in db.execute(f"PRAGMA table_info({_ident(table)})")
                    if str(r[2]).upper() in ("TEXT", "")]  # fmt: skip
            for col in cols:
                for form in forms:
                    text = form.decode("utf-8")
                    cursor = db.execute(
                        f"UPDATE {_ident(table)} SET {_ident(col)} = replace({_ident(col)}, ?, '') "
                        f"WHERE instr({_ident(col)}, ?) > 0",
                        (text, text),
                    )
                    changed += cursor.rowcount
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error as exc:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise StoreError(f"{path}: cannot erase from the ledger: {exc}") from None
    finally:
        db.close()
    return changed


def ledger_texts(path: Path, conversation_hashes: Sequence[str]) -> tuple[list[str], list[str]]:
    """Every message text of the given conversations in a ledger's transcripts, and the output
    files its runs wrote (copies the store cannot reach)."""
    db = sqlite3.connect(path)
    try:
        texts: list[str] = []
        for h in conversation_hashes:
            for (doc,) in db.execute(
                "SELECT conversation_json FROM transcripts WHERE conversation_hash = ?", (h,)
            ):
                for m in json.loads(doc).get("messages", []):
                    if isinstance(m.get("content"), str):
                        texts.append(m["content"])
        outputs: list[str] = []
        for (settings,) in db.execute("SELECT settings_json FROM runs"):
            for key, value in json.loads(settings).items():
                if key in ("out", "output", "failures", "failures_path") and isinstance(value, str):
                    outputs.append(value)
        return texts, sorted(set(outputs))
    except sqlite3.Error as exc:
        raise StoreError(f"{path}: cannot read the ledger: {exc}") from None
    finally:
        db.close()


def _ident(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise StoreError(f"invalid table name {name!r}")
    return name


def _where(where: Mapping[str, Any]) -> str:
    if not where:
        return ""
    return " WHERE " + " AND ".join(f"{n} IS ?" for n in where)
