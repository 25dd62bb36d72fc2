"""The :class:`Ledger`: an append-only SQLite record of runs and everything they decided.

Concurrency: the database runs in WAL mode with a busy timeout, and every write is one
``BEGIN IMMEDIATE`` transaction, so several processes of a batch can write to one ledger at
once; SQLite serializes the writers and none of their rows is lost. One :class:`Ledger` object may
also be shared between threads (writes are serialized by a lock).

Idempotency: every row is keyed by a content hash (see :mod:`extractor.ledger.rows`), and inserts
are ``ON CONFLICT DO NOTHING`` -- recording the same result again adds nothing. Only uniqueness
conflicts are ignored: a ``NOT NULL`` or ``CHECK`` violation still fails loudly.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import BaseModel

from ..candidates import MemoryCandidate, Provenance
from ..conversation import Conversation
from ..decisions import AdmissionDecision
from ..errors import LedgerError
from ..results import ConversationResult, FailureRecord, RunProvenance
from ..sqlitedb import DEFAULT_BUSY_TIMEOUT_S, JournalModeError, connect
from . import packing, rows
from .migrations import applied, migrate
from .models import (
    ConversationHistory,
    MemoryRecord,
    RecordedFailure,
    RecordedResult,
    RunRecord,
)

#: Tables and views ``export`` can read, in the order ``extractor ledger export`` lists them.
EXPORTABLE = (
    "memory_ledger",
    "runs",
    "conversations",
    "candidates",
    "decisions",
    "rejections",
    "failures",
    "transcripts",
    "policy_rules",
    "migrations",
)

RUN_STATUSES = ("completed", "failed", "interrupted")

#: Columns that hold JSON text (arrays, objects, or a whole canonical record).
JSON_COLUMNS = frozenset(
    {
        "settings_json", "summary_json", "result_json", "candidate_json", "decision_json",
        "raw_json", "failure_json", "conversation_json", "parent_memory_ids", "requested_uses",
        "evidence_ids", "hedges", "allowed_uses", "forbidden_uses", "denied_requested_uses",
        "flags", "rules_fired", "inherited_from", "redactions",
    }
)  # fmt: skip


def new_run_id(now: datetime | None = None) -> str:
    """Sortable by start time, unique by its random suffix: ``run-20250101T120000-1a2b3c``."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%S")
    return f"run-{stamp}-{secrets.token_hex(3)}"


class Ledger:
    """A ledger file. ``create=False`` refuses to create a missing file (for read commands)."""

    def __init__(
        self,
        path: str | Path,
        *,
        create: bool = True,
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT_S,
    ) -> None:
        self.path = Path(path)
        if not create and not self.path.is_file():
            raise LedgerError(f"{self.path}: no ledger file here")
        self._lock = threading.RLock()
        self._texts: dict[str, int] = {}  # texts keys committed (append-only: never stale)
        try:
            self._db = connect(self.path, busy_timeout=busy_timeout, require_wal=True,
                               pragmas={"foreign_keys": "ON"})  # fmt: skip
        except JournalModeError as exc:
            raise LedgerError(
                f"{self.path}: cannot switch the ledger to WAL mode (got {exc.mode})"
            ) from None
        except sqlite3.Error as exc:
            raise LedgerError(f"{self.path}: cannot open the ledger: {exc}") from None
        with self._errors("open"):
            tables = self._user_tables()
            if tables and "migrations" not in tables:
                raise LedgerError(f"{self.path}: not a memory-candidate-extractor ledger")
            self.applied_now = migrate(self._db)

    def _user_tables(self) -> set[str]:
        found = self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        return {str(r[0]) for r in found}

    # -- lifecycle ------------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def migrations(self) -> list[str]:
        """Names of the migrations applied to this file, in order (the schema's version)."""
        with self._errors("read"):
            return applied(self._db)

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            raise LedgerError(f"{self.path}: cannot {action} the ledger: {exc}") from None

    @contextmanager
    def _transaction(self, action: str) -> Iterator[sqlite3.Connection]:
        with self._lock, self._errors(action):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- writes ---------------------------------------------------------------------------------

    def start_run(
        self,
        provenance: RunProvenance,
        settings: Mapping[str, Any] | None = None,
        *,
        run_id: str | None = None,
        started_at: datetime | None = None,
    ) -> str:
        """Record a new run (model, prompt, schema and policy versions, settings); return its id.

        Passing the ``run_id`` of an existing run with the same provenance and settings resumes
        it (status back to ``running``); a different provenance under that id is an error.
        """
        started = started_at or datetime.now(UTC)
        run_id = run_id or new_run_id(started)
        row = rows.run_row(run_id, provenance, dict(settings or {}), started.isoformat(), "running")
        row |= {"pid": os.getpid(), "host": socket.gethostname()}
        with self._transaction("write a run to") as db:
            self._mark_killed(db)
            if not _insert(db, "runs", row):
                self._resume(db, run_id, row)
        return run_id

    def _mark_killed(self, db: sqlite3.Connection) -> None:
        """Runs of this host still ``running`` whose process is gone were killed (``kill -9``,
        a crash, a power cut): mark them ``interrupted``. Their rows are all kept."""
        host = socket.gethostname()
        found = db.execute(
            "SELECT run_id, pid FROM runs "
            "WHERE status = 'running' AND host = ? AND pid IS NOT NULL",
            (host,),
        ).fetchall()
        for run_id, pid in found:
            if not _alive(int(pid)):
                db.execute("UPDATE runs SET status = 'interrupted' WHERE run_id = ?", (run_id,))

    def _resume(self, db: sqlite3.Connection, run_id: str, row: rows.Row) -> None:
        cursor = db.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        old = dict(zip([d[0] for d in cursor.description], cursor.fetchone(), strict=True))
        keys = [k for k in row if k not in ("started_at", "status", "pid", "host")]
        changed = [k for k in keys if old[k] != row[k]]
        if changed:
            raise LedgerError(
                f"{self.path}: run {run_id!r} already exists with a different {', '.join(changed)}"
            )
        db.execute("UPDATE runs SET status = 'running', finished_at = NULL, pid = ?, host = ? "
                   "WHERE run_id = ?", (row["pid"], row["host"], run_id))  # fmt: skip

    def record_result(
        self,
        run_id: str,
        result: ConversationResult,
        *,
        conversation: Conversation | None = None,
    ) -> bool:
        """Record one conversation's result: its candidates, rejections and decisions.

        With ``conversation``, its transcript is stored too (once per content hash), so a
        validation can be replayed from the ledger alone. Returns ``False`` when this exact
        result was already recorded for this run (nothing is written then).
        """
        key = rows.result_key(run_id, result)
        by_id = _check_result(result)
        with self._transaction("write a result to") as db:
            self._require_run(db, run_id)
            intern = packing.Interner(db, self._texts)
            run = self._run_provenance(db, run_id)
            line = rows.conversation_row(run_id, key, result, run)
            if not _insert(db, "results", packing.pack_result(line, intern)):
                return False
            result_id = int(db.execute("SELECT last_insert_rowid()").fetchone()[0])
            decisions = {d.memory_id: (i, d) for i, d in enumerate(result.decisions)}
            for seq, candidate in enumerate(by_id.values()):
                crow = rows.candidate_row(run_id, key, result, candidate)
                decided, decision = decisions.get(candidate.memory_id, (None, None))
                drow = None if decision is None else rows.decision_row(run_id, key, decision)
                packed = packing.pack_memory(crow, drow, line, result_id=result_id, seq=seq,
                                             decided=decided, intern=intern)  # fmt: skip
                _insert(db, "memories", packed)
            for decision in result.decisions:
                for rule in rows.policy_rule_rows(decision):
                    _insert(db, "policy_rules", rule)
            for seq, rejection in enumerate(result.rejections):
                row = rows.rejection_row(run_id, key, result.conversation_id, seq, rejection)
                _insert(db, "rejection_rows", packing.pack_rejection(row, result_id, intern))
            if conversation is not None:
                _insert(db, "transcripts", rows.transcript_row(conversation))
        intern.commit()
        return True

    def _run_provenance(self, db: sqlite3.Connection, run_id: str) -> RunProvenance:
        cursor = db.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,))
        row = dict(zip([d[0] for d in cursor.description], cursor.fetchone(), strict=True))
        return RunProvenance.model_validate({k: row[k] for k in RunProvenance.model_fields})

    def record_failure(self, run_id: str, failure: FailureRecord) -> bool:
        """Record a conversation that could not be processed. ``False`` if already recorded."""
        key = rows.failure_key(run_id, failure)
        with self._transaction("write a failure to") as db:
            self._require_run(db, run_id)
            return _insert(db, "failures", rows.failure_row(run_id, key, failure))

    def finish_run(
        self,
        run_id: str,
        summary: Mapping[str, Any] | BaseModel | None = None,
        *,
        status: str = "completed",
        finished_at: datetime | None = None,
    ) -> None:
        """Close a run with its summary (counts, usage, timings: whatever the caller reports)."""
        if status not in RUN_STATUSES:
            allowed = ", ".join(RUN_STATUSES)
            raise LedgerError(f"run status must be one of {allowed}, not {status!r}")
        data = summary.model_dump(mode="json") if isinstance(summary, BaseModel) else summary
        finished = (finished_at or datetime.now(UTC)).isoformat()
        with self._transaction("finish a run in") as db:
            self._require_run(db, run_id)
            db.execute(
                "UPDATE runs SET status = ?, finished_at = ?, summary_json = ? WHERE run_id = ?",
                (status, finished, None if data is None else rows._json(dict(data)), run_id),
            )

    def _require_run(self, db: sqlite3.Connection, run_id: str) -> None:
        if db.execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,)).fetchone() is None:
            raise LedgerError(f"{self.path}: no run {run_id!r} (call start_run first)")

    # -- reads ----------------------------------------------------------------------------------

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        with self._lock, self._errors("read"):
            cursor = self._db.execute(sql, params)
            cursor.row_factory = sqlite3.Row
            return list(cursor.fetchall())

    def runs(self) -> list[RunRecord]:
        """Every run, oldest first, with how many rows of each kind it recorded."""
        found = self._query(
            """SELECT r.*,
    (SELECT COUNT(*) FROM results x WHERE x.run = t.id) AS n_conversations,
    (SELECT COUNT(*) FROM memories m JOIN results x ON x.id = m.result
     WHERE x.run = t.id) AS n_candidates,
    (SELECT COUNT(*) FROM memories m JOIN results x ON x.id = m.result
     WHERE x.run = t.id AND m.persist = 1) AS n_persisted,
    (SELECT COUNT(*) FROM rejection_rows j JOIN results x ON x.id = j.result
     WHERE x.run = t.id) AS n_rejections,
    (SELECT COUNT(*) FROM failures f WHERE f.run_id = r.run_id) AS n_failures
FROM runs r LEFT JOIN texts t ON t.value = r.run_id ORDER BY r.started_at, r.run_id"""
        )
        return [_run_record(row) for row in found]

    def run(self, run_id: str) -> RunRecord | None:
        return next((r for r in self.runs() if r.run_id == run_id), None)

    def memory(self, memory_id: str) -> list[MemoryRecord]:
        """Every recorded version of ``memory_id`` (one per run that extracted it)."""
        found = self._query(
            """SELECT c.* FROM candidates c JOIN runs r ON r.run_id = c.run_id
WHERE c.memory_id = ? ORDER BY r.started_at, c.recorded_at""",
            (memory_id,),
        )
        records = []
        reasons = self._reasons()
        for row in found:
            key = packing.packed_hash(row["result_key"])
            decided = self._query(
                packing.DECISIONS_SELECT + "\nWHERE m.memory_id = ? AND r.result_key = ? "
                "AND m.decided IS NOT NULL",
                (memory_id, key),
            )
            line = self._query(packing.CONVERSATIONS_SELECT + "\nWHERE r.result_key = ?", (key,))
            provenance = self._line(line[0]).get("provenance") if line else None
            candidate = _candidate(row, provenance)
            decision = _decision(decided[0], reasons) if decided else None
            records.append(_memory_record(row, candidate, decision))
        return records

    def _reasons(self) -> dict[tuple[str, str, str, str], str]:
        """Every recorded rule's reason by (policy id, version, rule id, rule hash or '')."""
        found = self._query("SELECT * FROM policy_rules")
        return {(r["policy_id"], r["policy_version"], r["rule_id"], r["rule_hash"]): r["reason"]
                for r in found}  # fmt: skip

    def conversation(self, conversation_id: str) -> ConversationHistory:
        """Every result and failure recorded for a conversation id (or conversation hash)."""
        results = self._query(
            f"""SELECT c.* FROM ({packing.CONVERSATIONS_SELECT}
WHERE r.conversation_id = ? OR r.conversation_hash = ?) AS c
JOIN runs u ON u.run_id = c.run_id ORDER BY u.started_at, c.recorded_at""",
            (conversation_id, packing.packed_hash(conversation_id)),
        )
        failures = self._query(
            """SELECT run_id, failure_key, failure_json FROM failures
WHERE conversation_id = ? OR conversation_hash = ? ORDER BY recorded_at""",
            (conversation_id, conversation_id),
        )
        return ConversationHistory(
            conversation_id,
            [self._recorded_result(r) for r in results],
            [
                RecordedFailure(
                    f["run_id"],
                    f["failure_key"],
                    FailureRecord.model_validate_json(f["failure_json"]),
                )
                for f in failures
            ],
        )

    def results(self, run_id: str | None = None) -> Iterator[RecordedResult]:
        """The stored result lines in the order they were recorded (of one run, or all)."""
        sql = "SELECT * FROM conversations"
        params: tuple[Any, ...] = ()
        if run_id is not None:
            sql, params = sql + " WHERE run_id = ?", (run_id,)
        for row in self._query(sql, params):
            yield self._recorded_result(row)

    def _line(self, row: sqlite3.Row) -> dict[str, Any]:
        """A result's fields but its candidates, decisions and rejections, from its
        ``conversations`` row: ``result_json`` and the columns it leaves out (rows written
        before hold them all in ``result_json``)."""
        data: dict[str, Any] = json.loads(row["result_json"])
        for name in rows.RESULT_COLUMNS:
            data.setdefault(name, row[name])
        data.setdefault("recorded_at", row["recorded_at"])
        data.setdefault("input", {k: row[k] for k in ("source", "line", "field")})
        data.setdefault("usage", rows.usage_of(row))
        if "provenance" not in data:
            run = self._query("SELECT * FROM runs WHERE run_id = ?", (row["run_id"],))
            data["provenance"] = rows.provenance_of(row, run[0])
        return data

    def _recorded_result(self, row: sqlite3.Row) -> RecordedResult:
        """The result line rebuilt from its row (:meth:`_line`) and its candidates, decisions
        and rejections, rows of their own tables in their order, stored once (rows written
        before m007 list the memory ids in ``result_json``; before that, whole records)."""
        data = self._line(row)
        key = row["result_key"]
        where = (packing.packed_hash(key),)
        if isinstance(data.get("rejections"), int) or "rejections" not in data:
            found = self._query(packing.REJECTIONS_SELECT + "\nWHERE r.result_key = ? "
                                "ORDER BY j.seq", where)  # fmt: skip
            data["rejections"] = [_rejection(r) for r in found]
        reasons = self._reasons()
        readers: dict[str, tuple[str, Callable[[sqlite3.Row], dict[str, Any]]]] = {
            "candidates": (packing.CANDIDATES_SELECT + "\nWHERE r.result_key = ? ORDER BY m.seq",
                           lambda r: _candidate(r, data.get("provenance"))),
            "decisions": (packing.DECISIONS_SELECT + "\nWHERE r.result_key = ? "
                          "AND m.decided IS NOT NULL ORDER BY m.decided",
                          lambda r: _decision(r, reasons)),
        }  # fmt: skip
        for table, (sql, read) in readers.items():
            ids = data.get(table)
            if ids is None or (ids and all(isinstance(i, str) for i in ids)):
                records = [(r["memory_id"], read(r)) for r in self._query(sql, where)]
                by_id = dict(records)
                data[table] = [v for _, v in records] if ids is None else [by_id[i] for i in ids]
        result = ConversationResult.model_validate(data)
        return RecordedResult(row["run_id"], key, result)

    def stored_transcript_hash(self, conversation_hash: str) -> str | None:
        """The content hash of the transcript as stored: ``conversation_hash`` itself, or the
        hash of its masked copy when secrets were masked (``None``: no such transcript)."""
        found = self._query(
            "SELECT stored_hash FROM transcripts WHERE conversation_hash = ?",
            (conversation_hash,),
        )
        return (found[0][0] or conversation_hash) if found else None

    def transcript(self, conversation_hash: str) -> Conversation | None:
        """The stored transcript with this content hash, if it was recorded -- with its secrets
        masked when it had any (:meth:`stored_transcript_hash` is then what it hashes to)."""
        found = self._query(
            "SELECT conversation_json FROM transcripts WHERE conversation_hash = ?",
            (conversation_hash,),
        )
        return Conversation.model_validate_json(found[0][0]) if found else None

    def export(
        self, table: str, *, run_id: str | None = None, decode_json: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Rows of a table or view as plain dicts (column order kept), optionally for one run.

        ``decode_json`` parses the :data:`JSON_COLUMNS` into lists and objects (and puts each
        fired rule's reason from ``policy_rules`` back into ``decisions.rules_fired``);
        otherwise every value is exactly what the column stores.
        """
        if table not in EXPORTABLE:
            raise LedgerError(f"unknown table {table!r} (expected one of {', '.join(EXPORTABLE)})")
        sql = f"SELECT * FROM {table}"
        params: tuple[Any, ...] = ()
        if run_id is not None:
            if "run_id" not in self.columns(table):
                raise LedgerError(f"table {table!r} has no run_id column to filter on")
            sql, params = sql + " WHERE run_id = ?", (run_id,)
        order = "" if table in packing.VIEWS else " ORDER BY rowid"  # views: their order
        reasons = self._reasons() if decode_json and table == "decisions" else {}
        for row in self._query(sql + order, params):
            record = dict(zip(row.keys(), tuple(row), strict=True))
            if decode_json:
                for name, value in record.items():
                    if name in JSON_COLUMNS and isinstance(value, str):
                        record[name] = json.loads(value)
                policy = (record.get("policy_id"), record.get("policy_version"))
                for rule in record.get("rules_fired") or [] if reasons else []:
                    if isinstance(rule, dict) and "reason" not in rule:
                        key = (*policy, rule.get("rule_id"), rule.get("rule_hash") or "")
                        rule["reason"] = reasons.get(key)  # type: ignore[arg-type]
            yield record

    def columns(self, table: str) -> list[str]:
        return [str(r["name"]) for r in self._query(f"PRAGMA table_info({table})")]

    def integrity_check(self) -> str:
        """``"ok"``, or SQLite's description of the damage."""
        return "\n".join(str(r[0]) for r in self._query("PRAGMA integrity_check"))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this host (signal 0 checks without signalling)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return True  # cannot tell: leave the run as it is
    return True


def _insert(db: sqlite3.Connection, table: str, row: Mapping[str, Any]) -> bool:
    names = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    sql = f"INSERT INTO {table} ({names}) VALUES ({marks}) ON CONFLICT DO NOTHING"
    return db.execute(sql, tuple(row.values())).rowcount == 1


def _check_result(result: ConversationResult) -> dict[str, MemoryCandidate]:
    """Candidates by memory id; refuses a result the ledger could not store faithfully."""
    by_id: dict[str, MemoryCandidate] = {}
    where = f"conversation {result.conversation_id!r}"
    for candidate in result.candidates:
        seen = by_id.setdefault(candidate.memory_id, candidate)
        if seen != candidate:
            raise LedgerError(f"{where}: two different candidates share memory id "
                              f"{candidate.memory_id!r}")  # fmt: skip
    decided: set[str] = set()
    for decision in result.decisions:
        if decision.memory_id not in by_id:
            raise LedgerError(f"{where}: decision for unknown memory id {decision.memory_id!r}")
        if decision.memory_id in decided:
            raise LedgerError(f"{where}: two decisions for memory id {decision.memory_id!r}")
        decided.add(decision.memory_id)
    return by_id


def _rejection(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "index": row["candidate_index"],
        "candidate_id": row["candidate_id"],
        "code": row["code"],
        "field": row["field"],
        "message": row["message"],
        "raw": json.loads(row["raw_json"]),
    }


def _run_record(row: sqlite3.Row) -> RunRecord:
    prov = RunProvenance.model_validate({k: row[k] for k in RunProvenance.model_fields})
    summary = row["summary_json"]
    return RunRecord(
        run_id=row["run_id"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        status=row["status"],
        provenance=prov,
        settings=json.loads(row["settings_json"]),
        summary=None if summary is None else json.loads(summary),
        conversations=row["n_conversations"],
        candidates=row["n_candidates"],
        persisted=row["n_persisted"],
        rejections=row["n_rejections"],
        failures=row["n_failures"],
    )


def _candidate(row: sqlite3.Row, provenance: dict[str, Any] | None) -> dict[str, Any]:
    """A candidate from its row; its provenance, when the row leaves it out, is its result's
    (``provenance`` of the result line, less the policy fields), its quote the quote column."""
    data = rows.rebuild(MemoryCandidate.model_fields, row["candidate_json"], row)
    if "temporal" not in data:
        data["temporal"] = rows.temporal_of(row)
    if "uncertainty" not in data:
        data["uncertainty"] = rows.uncertainty_of(row)
    if "source_span" not in data:
        data["source_span"] = rows.span_of(row["evidence_ref"])
    if "provenance" not in data and provenance is not None:
        data["provenance"] = {k: v for k, v in provenance.items() if k in Provenance.model_fields}
    span = data.get("source_span")
    if isinstance(span, dict) and "quote" not in span:
        span["quote"] = row["quote"]
    return data


def _decision(row: sqlite3.Row, reasons: dict[tuple[str, str, str, str], str]) -> dict[str, Any]:
    """A decision from its row, each fired rule's reason from ``policy_rules`` (rows recorded
    before hold it inline)."""
    data = rows.rebuild(AdmissionDecision.model_fields, row["decision_json"], row)
    policy = (data.get("policy_id"), data.get("policy_version"))
    for rule in data.get("rules_fired") or []:
        if isinstance(rule, dict) and "reason" not in rule:
            key = (*policy, rule.get("rule_id"), rule.get("rule_hash") or "")
            rule["reason"] = reasons.get(key)  # type: ignore[arg-type]
    return data


def _memory_record(
    row: sqlite3.Row, candidate: dict[str, Any], decision: dict[str, Any] | None
) -> MemoryRecord:
    return MemoryRecord(
        run_id=row["run_id"],
        result_key=row["result_key"],
        candidate=MemoryCandidate.model_validate(candidate),
        decision=None if decision is None else AdmissionDecision.model_validate(decision),
        evidence_ref=row["evidence_ref"],
        evidence_hash=row["evidence_hash"],
    )
