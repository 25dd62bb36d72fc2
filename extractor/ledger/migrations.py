"""Named schema migrations for the SQLite ledger.

The ledger's tables are a public contract (documented column by column in the README), so the
schema only ever changes through a new, named migration appended to :data:`MIGRATIONS`. Each
migration runs in one transaction together with the row that records it in ``migrations``: a
crash leaves the database either before or after the migration, never half-way. Opening a ledger
applies whatever is pending; several processes opening a fresh file at once are serialized by
``BEGIN IMMEDIATE`` and the re-check inside it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from ..errors import LedgerError
from . import packing

Migration = Callable[[sqlite3.Connection], None]

MIGRATIONS_TABLE = """CREATE TABLE IF NOT EXISTS migrations (
    name TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
)"""


def m001_initial(db: sqlite3.Connection) -> None:
    """Runs, conversations (one row per recorded result), candidates, decisions, rejections,
    failures and content-addressed transcripts."""
    db.execute("""CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
    model TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    schema_version TEXT NOT NULL,
    policy_id TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    extractor_version TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    summary_json TEXT
)""")
    db.execute("""CREATE TABLE conversations (
    result_key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    conversation_id TEXT NOT NULL,
    conversation_hash TEXT NOT NULL,
    source TEXT,
    line INTEGER,
    field TEXT,
    model TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    schema_version TEXT NOT NULL,
    policy_id TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    candidate_count INTEGER NOT NULL,
    rejection_count INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    cached INTEGER NOT NULL CHECK (cached IN (0, 1)),
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    total_ms REAL NOT NULL,
    recorded_at TEXT NOT NULL,
    result_json TEXT NOT NULL
)""")
    db.execute("""CREATE TABLE candidates (
    result_key TEXT NOT NULL REFERENCES conversations (result_key),
    memory_id TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    conversation_id TEXT NOT NULL,
    conversation_hash TEXT NOT NULL,
    candidate_id TEXT NOT NULL,
    candidate_hash TEXT NOT NULL,
    content TEXT NOT NULL,
    memory_type TEXT NOT NULL,
    kind TEXT NOT NULL,
    origin_kind TEXT NOT NULL,
    verification_state TEXT NOT NULL,
    lifecycle_state TEXT NOT NULL,
    temporal_kind TEXT NOT NULL,
    temporal_expression TEXT,
    valid_from TEXT,
    valid_to TEXT,
    observed_at TEXT,
    recorded_at TEXT NOT NULL,
    parent_memory_ids TEXT NOT NULL,
    requested_uses TEXT NOT NULL,
    evidence_ids TEXT NOT NULL,
    evidence_ref TEXT NOT NULL,
    evidence_hash TEXT NOT NULL,
    quote TEXT NOT NULL,
    span_corrected INTEGER NOT NULL CHECK (span_corrected IN (0, 1)),
    hedges TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    memory_schema_version TEXT NOT NULL,
    candidate_json TEXT NOT NULL,
    PRIMARY KEY (result_key, memory_id)
)""")
    db.execute("""CREATE TABLE decisions (
    result_key TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    input_hash TEXT NOT NULL,
    persist INTEGER NOT NULL CHECK (persist IN (0, 1)),
    lifecycle_state TEXT NOT NULL,
    allowed_uses TEXT NOT NULL,
    forbidden_uses TEXT NOT NULL,
    denied_requested_uses TEXT NOT NULL,
    eligible_for_admission INTEGER NOT NULL CHECK (eligible_for_admission IN (0, 1)),
    flags TEXT NOT NULL,
    rules_fired TEXT NOT NULL,
    inherited_from TEXT NOT NULL,
    evidence_as_of TEXT,
    policy_id TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    as_of TEXT,
    decision_json TEXT NOT NULL,
    PRIMARY KEY (result_key, memory_id),
    FOREIGN KEY (result_key, memory_id) REFERENCES candidates (result_key, memory_id)
)""")
    db.execute("""CREATE TABLE rejections (
    result_key TEXT NOT NULL REFERENCES conversations (result_key),
    seq INTEGER NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    conversation_id TEXT NOT NULL,
    candidate_index INTEGER NOT NULL,
    candidate_id TEXT,
    code TEXT NOT NULL,
    field TEXT,
    message TEXT NOT NULL,
    raw_json TEXT NOT NULL,
    PRIMARY KEY (result_key, seq)
)""")
    db.execute("""CREATE TABLE failures (
    failure_key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    conversation_id TEXT,
    conversation_hash TEXT,
    source TEXT,
    line INTEGER,
    field TEXT,
    stage TEXT NOT NULL,
    error_code TEXT NOT NULL,
    error TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    failure_json TEXT NOT NULL
)""")
    db.execute("""CREATE TABLE transcripts (
    conversation_hash TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    conversation_json TEXT NOT NULL
)""")
    for table, column in [
        ("conversations", "run_id"),
        ("conversations", "conversation_id"),
        ("conversations", "conversation_hash"),
        ("candidates", "memory_id"),
        ("candidates", "conversation_id"),
        ("candidates", "run_id"),
        ("decisions", "input_hash"),
        ("decisions", "run_id"),
        ("rejections", "run_id"),
        ("rejections", "conversation_id"),
        ("failures", "run_id"),
        ("failures", "conversation_id"),
    ]:
        db.execute(f"CREATE INDEX idx_{table}_{column} ON {table} ({column})")


def m002_memory_ledger_view(db: sqlite3.Connection) -> None:
    """The seed chapter's memory-ledger record: each candidate joined with its decision."""
    db.execute(MEMORY_LEDGER_VIEW)


#: The view as m002 created it; later migrations that extend it start from this text.
MEMORY_LEDGER_VIEW = """CREATE VIEW memory_ledger AS
SELECT
    c.memory_id,
    c.content,
    c.memory_type,
    c.origin_kind,
    c.verification_state,
    c.valid_from,
    c.valid_to,
    c.observed_at,
    c.recorded_at,
    COALESCE(d.lifecycle_state, c.lifecycle_state) AS lifecycle_state,
    c.parent_memory_ids,
    d.allowed_uses,
    d.forbidden_uses,
    d.persist,
    d.policy_id AS admission_policy_id,
    d.policy_version AS admission_policy_version,
    c.memory_schema_version,
    c.prompt_hash AS normalizer_version,
    c.evidence_ref,
    c.evidence_hash,
    d.input_hash AS decision_input_hash,
    c.conversation_id,
    c.run_id,
    c.result_key
FROM candidates AS c
LEFT JOIN decisions AS d ON d.result_key = c.result_key AND d.memory_id = c.memory_id"""


def m003_tenant_subject(db: sqlite3.Connection) -> None:
    """Whose memory it is: ``tenant`` and ``subject`` on conversations, candidates and failures
    (NULL for rows recorded before), indexed for per-user queries, and in ``memory_ledger``."""
    for table in ("conversations", "candidates", "failures"):
        db.execute(f"ALTER TABLE {table} ADD COLUMN tenant TEXT")
        db.execute(f"ALTER TABLE {table} ADD COLUMN subject TEXT")
    db.execute("CREATE INDEX idx_candidates_tenant_subject ON candidates (tenant, subject)")
    db.execute("CREATE INDEX idx_conversations_tenant_subject ON conversations (tenant, subject)")
    db.execute("DROP VIEW memory_ledger")
    columns, joins, rest = MEMORY_LEDGER_VIEW.partition("\nFROM candidates")
    db.execute(columns + ",\n    c.tenant,\n    c.subject" + joins + rest)


def m004_run_process(db: sqlite3.Connection) -> None:
    """Which process a run is (``pid``, ``host``), so the next start can tell a run that was
    killed (status still ``running``, process gone) and mark it ``interrupted``."""
    db.execute("ALTER TABLE runs ADD COLUMN pid INTEGER")
    db.execute("ALTER TABLE runs ADD COLUMN host TEXT")


def m005_transcript_redactions(db: sqlite3.Connection) -> None:
    """Transcripts are stored with their secrets masked in place (same length, so every span
    still points at its text): ``redactions`` lists what was masked (JSON, NULL: nothing) and
    ``stored_hash`` is the content hash of the stored, masked transcript (NULL: the transcript
    is stored as it was, and hashes to ``conversation_hash``). Rows recorded before stay as
    they were."""
    db.execute("ALTER TABLE transcripts ADD COLUMN redactions TEXT")
    db.execute("ALTER TABLE transcripts ADD COLUMN stored_hash TEXT")


def m006_policy_rules(db: sqlite3.Connection) -> None:
    """Each fired rule's reason sentence once per rule definition: ``policy_rules`` (policy id
    and version, rule id, rule hash -- '' for a rule without one -- and reason). Decisions
    recorded from now on keep only rule ids, details and hashes in ``rules_fired``; the reader
    joins the reasons back. Rows recorded before keep their reasons inline."""
    db.execute("""CREATE TABLE policy_rules (
    policy_id TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    rule_id TEXT NOT NULL,
    rule_hash TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (policy_id, policy_version, rule_id, rule_hash)
)""")


def m007_compact_storage(db: sqlite3.Connection) -> None:
    """Compact storage (issue 14: the ledger was 5.5-14.7x its input). ``conversations``,
    ``candidates``, ``decisions`` and ``rejections`` become views, column for column as before,
    over ``results``, ``memories`` (a candidate and its decision in one row, keyed by integers),
    ``rejection_rows`` and ``texts`` (each repeated value once); hashes are stored as 32-byte
    BLOBs and what a row's result holds is not stored again (:mod:`extractor.ledger.packing`).
    Indexes nothing reads are dropped (decisions by input hash, every table by run). Every row
    recorded before is moved into the new tables as it was, in its order."""
    db.execute("CREATE TABLE texts (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE)")
    db.execute("""CREATE TABLE results (
    id INTEGER PRIMARY KEY,
    result_key BLOB NOT NULL UNIQUE,
    run INTEGER NOT NULL,
    conversation_id TEXT NOT NULL,
    conversation_hash BLOB NOT NULL,
    source INTEGER,
    line INTEGER,
    field TEXT,
    model INTEGER NOT NULL,
    prompt_hash INTEGER NOT NULL,
    schema_version INTEGER NOT NULL,
    policy_id INTEGER NOT NULL,
    policy_version INTEGER NOT NULL,
    candidate_count INTEGER NOT NULL,
    rejection_count INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    cached INTEGER NOT NULL CHECK (cached IN (0, 1)),
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    total_ms REAL NOT NULL,
    recorded_at TEXT NOT NULL,
    result_json TEXT NOT NULL,
    tenant INTEGER,
    subject INTEGER
)""")
    db.execute("""CREATE TABLE memories (
    id INTEGER PRIMARY KEY,
    result INTEGER NOT NULL REFERENCES results (id),
    seq INTEGER NOT NULL,
    memory_id TEXT NOT NULL,
    conversation_id TEXT,
    candidate_id TEXT NOT NULL,
    candidate_hash BLOB NOT NULL,
    content TEXT NOT NULL,
    memory_type INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    origin_kind INTEGER NOT NULL,
    verification_state INTEGER NOT NULL,
    lifecycle_state INTEGER NOT NULL,
    temporal_kind INTEGER NOT NULL,
    temporal_expression TEXT,
    valid_from INTEGER,
    valid_to INTEGER,
    observed_at INTEGER,
    recorded_at TEXT,
    parent_memory_ids TEXT NOT NULL,
    requested_uses INTEGER NOT NULL,
    evidence_ids INTEGER NOT NULL,
    evidence_ref TEXT NOT NULL,
    evidence_hash BLOB NOT NULL,
    quote TEXT NOT NULL,
    span_corrected INTEGER NOT NULL CHECK (span_corrected IN (0, 1)),
    hedges INTEGER NOT NULL,
    model INTEGER NOT NULL,
    prompt_hash INTEGER NOT NULL,
    memory_schema_version INTEGER NOT NULL,
    candidate_json TEXT NOT NULL,
    decided INTEGER,
    input_hash BLOB,
    persist INTEGER CHECK (persist IN (0, 1)),
    d_lifecycle_state INTEGER,
    d_allowed_uses INTEGER,
    d_forbidden_uses INTEGER,
    d_denied_requested_uses INTEGER,
    eligible_for_admission INTEGER CHECK (eligible_for_admission IN (0, 1)),
    d_flags INTEGER,
    rules INTEGER,
    rule_details TEXT,
    inherited_from TEXT,
    d_evidence_as_of INTEGER,
    d_policy_id INTEGER,
    d_policy_version INTEGER,
    d_as_of INTEGER,
    decision_json TEXT,
    UNIQUE (result, memory_id),
    CHECK ((decided IS NULL) = (input_hash IS NULL))
)""")
    db.execute("""CREATE TABLE rejection_rows (
    id INTEGER PRIMARY KEY,
    result INTEGER NOT NULL REFERENCES results (id),
    seq INTEGER NOT NULL,
    candidate_index INTEGER NOT NULL,
    candidate_id TEXT,
    code INTEGER NOT NULL,
    field TEXT,
    message TEXT NOT NULL,
    raw_json TEXT NOT NULL,
    UNIQUE (result, seq)
)""")
    _move_rows(db)
    db.execute("DROP VIEW memory_ledger")
    for table in ("decisions", "candidates", "rejections", "conversations"):
        db.execute(f"DROP TABLE {table}")
    for index, on in [
        ("idx_results_conversation_id", "results (conversation_id)"),
        ("idx_results_conversation_hash", "results (conversation_hash)"),
        ("idx_results_run", "results (run)"),
        ("idx_results_tenant_subject", "results (tenant, subject)"),
        ("idx_memories_memory_id", "memories (memory_id)"),
    ]:
        db.execute(f"CREATE INDEX {index} ON {on}")
    for name, body in packing.VIEWS.items():
        db.execute(f"CREATE VIEW {name} AS\n{body}")


def _move_rows(db: sqlite3.Connection) -> None:
    """The rows of m001-m006's tables into m007's, each result with its rows, in order."""
    intern = packing.Interner(db, {})

    def rows(sql: str, *params: Any) -> list[dict[str, Any]]:
        cursor = db.execute(sql, params)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]

    for result in rows("SELECT * FROM conversations ORDER BY rowid"):
        key = result["result_key"]
        result_id = _insert_row(db, "results", packing.pack_result(result, intern))
        decisions = rows("SELECT * FROM decisions WHERE result_key = ? ORDER BY rowid", key)
        order = {d["memory_id"]: i for i, d in enumerate(decisions)}
        by_id = {d["memory_id"]: d for d in decisions}
        found = rows("SELECT * FROM candidates WHERE result_key = ? ORDER BY rowid", key)
        for seq, candidate in enumerate(found):
            mid = candidate["memory_id"]
            packed = packing.pack_memory(
                candidate, by_id.get(mid), result,
                result_id=result_id, seq=seq, decided=order.get(mid), intern=intern,
            )  # fmt: skip
            _insert_row(db, "memories", packed)
        for rejection in rows("SELECT * FROM rejections WHERE result_key = ? ORDER BY seq", key):
            _insert_row(db, "rejection_rows", packing.pack_rejection(rejection, result_id, intern))


def _insert_row(db: sqlite3.Connection, table: str, row: dict[str, Any]) -> int:
    marks = ", ".join("?" for _ in row)
    cursor = db.execute(
        f"INSERT INTO {table} ({', '.join(row)}) VALUES ({marks})", tuple(row.values())
    )
    return int(cursor.lastrowid or 0)


#: Every migration, in order. Append only: never edit or reorder one that has shipped.
MIGRATIONS: list[Migration] = [
    m001_initial,
    m002_memory_ledger_view,
    m003_tenant_subject,
    m004_run_process,
    m005_transcript_redactions,
    m006_policy_rules,
    m007_compact_storage,
]


def migration_names() -> list[str]:
    return [m.__name__ for m in MIGRATIONS]


def applied(db: sqlite3.Connection) -> list[str]:
    rows = db.execute("SELECT name FROM migrations ORDER BY rowid").fetchall()
    return [str(row[0]) for row in rows]


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply every pending migration, each in its own transaction; return the names applied.

    ``db`` must be in autocommit mode (``isolation_level=None``) so transactions are explicit.
    """
    db.execute(MIGRATIONS_TABLE)
    done: list[str] = []
    for migration in MIGRATIONS:
        name = migration.__name__
        db.execute("BEGIN IMMEDIATE")
        try:
            known = set(applied(db))
            if name not in known:
                migration(db)
                db.execute(
                    "INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
                    (name, datetime.now(UTC).isoformat()),
                )
                done.append(name)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    unknown = sorted(set(applied(db)) - set(migration_names()))
    if unknown:
        raise LedgerError(
            f"the ledger has migrations this version does not know ({', '.join(unknown)}): "
            "it was written by a newer memory-candidate-extractor"
        )
    return done
