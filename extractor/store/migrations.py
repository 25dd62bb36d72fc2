"""Named schema migrations of the SQLite memory store (documented column by column in
``docs/store.md``).

As in the ledger, each migration runs in one ``BEGIN IMMEDIATE`` transaction with the row that
records it, so a crash leaves the file before or after a migration, never half-way. The store's
bookkeeping table is ``store_migrations`` (not ``migrations``), so a store may live in the same
file as a ledger. Append only: never edit or reorder a migration that has shipped.

Table groups:

* the append-only log ``memory_events`` -- the only source of truth;
* the projection (rebuilt from the log by ``rebuild``): ``memories``, ``claims``,
  ``claim_versions``, ``derivations``, ``justifications``, ``justification_antecedents``,
  ``sources``, ``evidence``, ``source_links``, ``source_families``, ``verifications``,
  ``supersessions``, ``conflicts``, ``erasures``;
* the full-text index ``claims_fts`` (FTS5, external content on ``claims``);
* the read audit ``reads`` / ``read_items``, written by the read path (``extractor.read``) and
  read by revocation's impact report;
* the views ``memory_current`` (one row per claim, its current version) and ``claim_history``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from ..errors import StoreError
from .erasure import EMBEDDINGS_DDL

Migration = Callable[[sqlite3.Connection], None]

MIGRATIONS_TABLE = """CREATE TABLE IF NOT EXISTS store_migrations (
    name TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
)"""

_BOOL = "INTEGER NOT NULL DEFAULT 0 CHECK ({0} IN (0, 1))"

_TABLES = [
    """CREATE TABLE memory_events (
    seq INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('INGEST', 'DERIVE', 'SUPPORT', 'SOURCE', 'LINK',
        'EVIDENCE', 'VERIFY', 'REVOKE', 'RESTORE', 'ERASE')),
    at TEXT NOT NULL,
    tenant TEXT,
    actor TEXT,
    idempotency_key TEXT UNIQUE,
    payload_json TEXT NOT NULL,
    redacted """
    + _BOOL.format("redacted")
    + """
)""",
    """CREATE TABLE memories (
    memory_id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    subject TEXT,
    conversation_id TEXT,
    conversation_hash TEXT,
    memory_type TEXT NOT NULL,
    kind TEXT,
    origin_kind TEXT NOT NULL,
    activity TEXT,
    produced_by TEXT,
    created_seq INTEGER NOT NULL,
    erased """
    + _BOOL.format("erased")
    + """
)""",
    """CREATE TABLE claims (
    claim_rowid INTEGER PRIMARY KEY,
    claim_id TEXT NOT NULL UNIQUE,
    memory_id TEXT NOT NULL REFERENCES memories (memory_id),
    ordinal INTEGER NOT NULL,
    tenant TEXT NOT NULL,
    subject TEXT,
    content TEXT NOT NULL,
    content_hash TEXT,
    quote TEXT,
    evidence_ref TEXT,
    hedges TEXT NOT NULL,
    observed_at TEXT,
    recorded_at TEXT NOT NULL,
    key_subject TEXT,
    key_relation TEXT,
    key_object TEXT,
    key_scope TEXT,
    normalizer_version TEXT,
    base_lifecycle TEXT NOT NULL,
    base_verification TEXT NOT NULL,
    base_allowed TEXT NOT NULL,
    base_forbidden TEXT NOT NULL,
    base_flags TEXT NOT NULL,
    rules_fired TEXT NOT NULL,
    policy_id TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    decision_input_hash TEXT,
    stated_valid_from TEXT,
    stated_valid_to TEXT,
    revoked """
    + _BOOL.format("revoked")
    + """,
    revoked_reason TEXT,
    support_level INTEGER,
    erased """
    + _BOOL.format("erased")
    + """
)""",
    """CREATE TABLE claim_versions (
    claim_id TEXT NOT NULL REFERENCES claims (claim_id),
    version INTEGER NOT NULL,
    sys_from TEXT NOT NULL,
    sys_to TEXT,
    lifecycle_state TEXT NOT NULL,
    verification_state TEXT NOT NULL,
    allowed_uses TEXT NOT NULL,
    forbidden_uses TEXT NOT NULL,
    allowed_mask INTEGER NOT NULL,
    forbidden_mask INTEGER NOT NULL,
    flags TEXT NOT NULL,
    support_label TEXT NOT NULL CHECK (support_label IN ('IN', 'OUT')),
    valid_from TEXT,
    valid_to TEXT,
    superseded_at TEXT,
    superseded_by TEXT,
    reason TEXT NOT NULL,
    cause_seq INTEGER NOT NULL,
    cause_kind TEXT NOT NULL,
    PRIMARY KEY (claim_id, version)
)""",
    """CREATE TABLE derivations (
    child_claim_id TEXT NOT NULL,
    parent_claim_id TEXT NOT NULL,
    relation TEXT NOT NULL,
    required """
    + _BOOL.format("required")
    + """,
    carries_content """
    + _BOOL.format("carries_content")
    + """,
    activity TEXT,
    cause_seq INTEGER NOT NULL,
    PRIMARY KEY (child_claim_id, parent_claim_id)
)""",
    """CREATE TABLE justifications (
    just_id TEXT PRIMARY KEY,
    claim_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('EVIDENCE', 'DERIVATION', 'SUPPORT', 'VERIFICATION')),
    informant TEXT,
    cause_seq INTEGER NOT NULL
)""",
    """CREATE TABLE justification_antecedents (
    just_id TEXT NOT NULL REFERENCES justifications (just_id),
    antecedent_kind TEXT NOT NULL CHECK (antecedent_kind IN ('claim', 'source')),
    antecedent_id TEXT NOT NULL,
    PRIMARY KEY (just_id, antecedent_kind, antecedent_id)
)""",
    """CREATE TABLE sources (
    source_id TEXT PRIMARY KEY,
    tenant TEXT,
    kind TEXT NOT NULL,
    uri TEXT,
    published_at TEXT,
    status TEXT NOT NULL CHECK (status IN ('ACTIVE', 'REVOKED', 'ERASED')),
    cause_seq INTEGER NOT NULL
)""",
    """CREATE TABLE evidence (
    evidence_id TEXT PRIMARY KEY,
    claim_id TEXT NOT NULL,
    source_id TEXT NOT NULL REFERENCES sources (source_id),
    locator TEXT,
    quote TEXT,
    cause_seq INTEGER NOT NULL
)""",
    """CREATE TABLE source_links (
    a TEXT NOT NULL,
    b TEXT NOT NULL,
    relation TEXT NOT NULL CHECK (relation IN ('COPIED_FROM', 'SYNDICATED_FROM',
        'SHARES_PRIMARY_SOURCE_WITH', 'SAME_CONTENT')),
    cause_seq INTEGER NOT NULL,
    PRIMARY KEY (a, b, relation)
)""",
    """CREATE TABLE source_families (
    source_id TEXT PRIMARY KEY,
    family_id TEXT NOT NULL
)""",
    """CREATE TABLE verifications (
    verification_id TEXT PRIMARY KEY,
    claim_id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    verifier TEXT NOT NULL,
    lifecycle_state TEXT NOT NULL,
    allowed_uses TEXT NOT NULL,
    forbidden_uses TEXT NOT NULL,
    flags TEXT NOT NULL,
    rules_fired TEXT NOT NULL,
    policy_id TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    decision_input_hash TEXT NOT NULL,
    cause_seq INTEGER NOT NULL
)""",
    """CREATE TABLE supersessions (
    old_claim_id TEXT NOT NULL,
    new_claim_id TEXT NOT NULL,
    key_json TEXT NOT NULL,
    effective_at TEXT NOT NULL,
    sys_at TEXT NOT NULL,
    rule_id TEXT NOT NULL,
    cause_seq INTEGER NOT NULL,
    PRIMARY KEY (old_claim_id, new_claim_id)
)""",
    """CREATE TABLE conflicts (
    claim_a TEXT NOT NULL,
    claim_b TEXT NOT NULL,
    key_json TEXT NOT NULL,
    flag_json TEXT NOT NULL,
    rule_id TEXT NOT NULL,
    cause_seq INTEGER NOT NULL,
    PRIMARY KEY (claim_a, claim_b)
)""",
    """CREATE TABLE erasures (
    erasure_id TEXT PRIMARY KEY,
    selector_kind TEXT NOT NULL CHECK (selector_kind IN ('subject', 'conversation',
        'memory', 'source')),
    requested_at TEXT NOT NULL,
    counts_json TEXT NOT NULL,
    cause_seq INTEGER NOT NULL
)""",
]

_INDEXES = [
    ("memories", "tenant, subject"),
    ("memories", "conversation_id"),
    ("claims", "memory_id"),
    ("claims", "tenant, key_subject, key_relation"),
    ("claim_versions", "sys_to, claim_id"),
    ("derivations", "parent_claim_id"),
    ("justifications", "claim_id"),
    ("justification_antecedents", "antecedent_id"),
    ("evidence", "claim_id"),
    ("evidence", "source_id"),
    ("verifications", "claim_id"),
    ("supersessions", "new_claim_id"),
    ("conflicts", "claim_b"),
]

_FTS = [
    """CREATE VIRTUAL TABLE claims_fts USING fts5(
    content, content='claims', content_rowid='claim_rowid'
)""",
    """CREATE TRIGGER claims_fts_insert AFTER INSERT ON claims BEGIN
    INSERT INTO claims_fts (rowid, content) VALUES (new.claim_rowid, new.content);
END""",
    """CREATE TRIGGER claims_fts_delete AFTER DELETE ON claims BEGIN
    INSERT INTO claims_fts (claims_fts, rowid, content)
    VALUES ('delete', old.claim_rowid, old.content);
END""",
    """CREATE TRIGGER claims_fts_update AFTER UPDATE OF content ON claims BEGIN
    INSERT INTO claims_fts (claims_fts, rowid, content)
    VALUES ('delete', old.claim_rowid, old.content);
    INSERT INTO claims_fts (rowid, content) VALUES (new.claim_rowid, new.content);
END""",
]

_VIEWS = [
    """CREATE VIEW memory_current AS
SELECT
    c.claim_id, c.claim_rowid, c.memory_id, c.tenant, c.subject, m.conversation_id,
    m.memory_type, m.kind, m.origin_kind, v.verification_state, v.lifecycle_state,
    v.allowed_uses, v.forbidden_uses, v.allowed_mask, v.forbidden_mask, v.flags,
    v.support_label, c.content, v.valid_from, v.valid_to, c.observed_at, c.recorded_at,
    v.sys_from, v.superseded_at, v.superseded_by, c.erased, v.version, c.evidence_ref,
    c.policy_id, c.policy_version, v.reason
FROM claims AS c
JOIN memories AS m ON m.memory_id = c.memory_id
JOIN claim_versions AS v ON v.claim_id = c.claim_id AND v.sys_to IS NULL""",
    """CREATE VIEW claim_history AS
SELECT
    c.claim_id, c.claim_rowid, c.memory_id, c.tenant, c.subject, m.conversation_id,
    m.memory_type, m.kind, m.origin_kind, v.verification_state, v.lifecycle_state,
    v.allowed_uses, v.forbidden_uses, v.allowed_mask, v.forbidden_mask, v.flags,
    v.support_label, c.content, v.valid_from, v.valid_to, c.observed_at, c.recorded_at,
    v.sys_from, v.sys_to, v.superseded_at, v.superseded_by, c.erased, v.version,
    c.evidence_ref, c.policy_id, c.policy_version, v.reason
FROM claims AS c
JOIN memories AS m ON m.memory_id = c.memory_id
JOIN claim_versions AS v ON v.claim_id = c.claim_id""",
]


def s001_memory_store(db: sqlite3.Connection) -> None:
    """The event log, the projection tables, the FTS5 index and the two views."""
    for statement in _TABLES:
        db.execute(statement)
    for table, columns in _INDEXES:
        name = "idx_" + table + "_" + columns.replace(", ", "_")
        db.execute(f"CREATE INDEX {name} ON {table} ({columns})")
    for statement in _FTS + _VIEWS:
        db.execute(statement)


def s002_read_audit(db: sqlite3.Connection) -> None:
    """The read audit written by the read path; revocation reports the reads it finds here."""
    db.execute("""CREATE TABLE reads (
    read_id TEXT PRIMARY KEY,
    at TEXT NOT NULL,
    tenant TEXT NOT NULL,
    caller TEXT NOT NULL,
    purpose TEXT NOT NULL,
    query_hash TEXT NOT NULL,
    as_of TEXT,
    known_at TEXT,
    read_policy_id TEXT,
    read_policy_version TEXT
)""")
    db.execute("""CREATE TABLE read_items (
    read_id TEXT NOT NULL REFERENCES reads (read_id),
    claim_id TEXT NOT NULL,
    stage TEXT NOT NULL CHECK (stage IN ('ELIGIBLE', 'RETRIEVED', 'ADMITTED', 'SERIALIZED')),
    rank INTEGER,
    score REAL,
    rules_fired TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (read_id, claim_id, stage)
)""")
    db.execute("CREATE INDEX idx_read_items_claim_id ON read_items (claim_id)")
    db.execute("CREATE INDEX idx_reads_tenant_at ON reads (tenant, at)")


def s003_source_derivation(db: sqlite3.Connection) -> None:
    """``sources.derived_from``: the claims a source was produced from (a report the system
    wrote from memory), so it can never count as independent verification of them."""
    db.execute("ALTER TABLE sources ADD COLUMN derived_from TEXT NOT NULL DEFAULT '[]'")


def s004_read_replay(db: sqlite3.Connection) -> None:
    """What a recorded read needs to be replayed under another read policy: the read's subject,
    the subject its caller acted for, ``k``, its store position and the read policy's hash; per
    item, the claim version judged, the decision, and the judge's inputs that are not in the
    version (the evidence check's result, the independent families)."""
    for column in (
        "subject TEXT",
        "acting_for TEXT",
        "k INTEGER",
        "store_seq INTEGER",
        "read_policy_hash TEXT",
    ):
        db.execute(f"ALTER TABLE reads ADD COLUMN {column}")
    for column in (
        "version INTEGER",
        "admissible INTEGER CHECK (admissible IN (0, 1))",
        "use TEXT",
        "excluded_by TEXT",
        "evidence TEXT",
        "families INTEGER",
    ):
        db.execute(f"ALTER TABLE read_items ADD COLUMN {column}")


def s005_claim_evidence_scope(db: sqlite3.Connection) -> None:
    """``claims.evidence_as_of``: the admission decision's evidence scope (the claim is evidence
    only about the world as of then), kept from the INGEST / DERIVE event's decision."""
    db.execute("ALTER TABLE claims ADD COLUMN evidence_as_of TEXT")


def s006_claim_embeddings(db: sqlite3.Connection) -> None:
    """Vectors the read path computed from claim content, one per (claim, model): derived from
    content, so erasure deletes them with it."""
    db.execute(EMBEDDINGS_DDL)


def s009_claims_by_subject(db: sqlite3.Connection) -> None:
    """An index on ``claims (tenant, subject)``: the read path's stage 1 selects one subject's
    claims of one tenant; without it every read scanned every current version of the store."""
    db.execute("CREATE INDEX idx_claims_tenant_subject ON claims (tenant, subject)")


def _views_with_external_id() -> list[str]:
    """The two views of s001 with ``m.external_id`` as their last column."""
    old = "c.policy_id, c.policy_version, v.reason\n"
    return [view.replace(old, old[:-1] + ", m.external_id\n") for view in _VIEWS]


def s007_tenant_scoped_ids(db: sqlite3.Connection) -> None:
    """Memory ids scoped by tenant: ``memories.external_id`` holds the id a memory has outside
    the store (the candidate's ``memory_id`` in result files, the id given to ``derive``),
    unique within a tenant; ``memory_id`` is the store's own id, derived from the tenant and the
    external id (:func:`~extractor.store.apply.store_memory_id`), so the same content in two
    tenants never collides. Memories stored before keep their ids (external id = memory id);
    the views gain ``external_id``."""
    db.execute("ALTER TABLE memories ADD COLUMN external_id TEXT")
    db.execute("UPDATE memories SET external_id = memory_id")
    db.execute(
        "CREATE UNIQUE INDEX idx_memories_tenant_external_id ON memories (tenant, external_id)"
    )
    db.execute("DROP VIEW memory_current")
    db.execute("DROP VIEW claim_history")
    for statement in _views_with_external_id():
        db.execute(statement)


def s008_readmit_event(db: sqlite3.Connection) -> None:
    """``memory_events.kind`` may be ``READMIT``: a policy change re-decided stored claims
    (SQLite cannot alter a CHECK constraint, so the log is copied into a new table, row for row,
    ``seq`` kept)."""
    old = _TABLES[0]
    new = old.replace("'RESTORE', 'ERASE')", "'RESTORE', 'ERASE', 'READMIT')")
    assert new != old
    db.execute(new.replace("CREATE TABLE memory_events", "CREATE TABLE memory_events_s008"))
    db.execute("INSERT INTO memory_events_s008 SELECT * FROM memory_events")
    db.execute("DROP TABLE memory_events")
    db.execute("ALTER TABLE memory_events_s008 RENAME TO memory_events")


def s010_memory_lookup(db: sqlite3.Connection) -> None:
    """Looking one memory up reads its own rows only. ``memory_current`` by ``memory_id`` went
    from the memory to *every* current version (the ``claim_versions (sys_to, claim_id)`` index
    searched on ``sys_to IS NULL`` alone) and kept those of the memory's claims; a partial index
    of the current versions by claim id takes its place, so the plan goes memory -> its claims ->
    their current versions. ``memories (tenant, memory_id)``: the tenant-first lookup (the
    service's, ``tenant = ? AND memory_id = ?``) searches both columns, so another tenant's
    memory is not found by the index search, exactly as a memory that does not exist."""
    db.execute("DROP INDEX idx_claim_versions_sys_to_claim_id")
    db.execute(
        "CREATE INDEX idx_claim_versions_current ON claim_versions (claim_id) WHERE sys_to IS NULL"
    )
    db.execute("CREATE INDEX idx_memories_tenant_memory_id ON memories (tenant, memory_id)")


#: Every migration, in order. Append only.
MIGRATIONS: list[Migration] = [
    s001_memory_store,
    s002_read_audit,
    s003_source_derivation,
    s004_read_replay,
    s005_claim_evidence_scope,
    s006_claim_embeddings,
    s009_claims_by_subject,
    s007_tenant_scoped_ids,
    s008_readmit_event,
    s010_memory_lookup,
]

#: Tables rebuilt from ``memory_events`` (hashed by ``state_hash``, in this order).
PROJECTION_TABLES: dict[str, tuple[str, ...]] = {
    "memories": ("memory_id",),
    "claims": ("claim_id",),
    "claim_versions": ("claim_id", "version"),
    "derivations": ("child_claim_id", "parent_claim_id"),
    "justifications": ("just_id",),
    "justification_antecedents": ("just_id", "antecedent_kind", "antecedent_id"),
    "sources": ("source_id",),
    "evidence": ("evidence_id",),
    "source_links": ("a", "b", "relation"),
    "source_families": ("source_id",),
    "verifications": ("verification_id",),
    "supersessions": ("old_claim_id", "new_claim_id"),
    "conflicts": ("claim_a", "claim_b"),
    "erasures": ("erasure_id",),
}


def migration_names() -> list[str]:
    return [m.__name__ for m in MIGRATIONS]


def applied(db: sqlite3.Connection) -> list[str]:
    rows = db.execute("SELECT name FROM store_migrations ORDER BY rowid").fetchall()
    return [str(row[0]) for row in rows]


def migrate(db: sqlite3.Connection) -> list[str]:
    """Apply every pending migration, each in its own transaction; return the names applied."""
    db.execute(MIGRATIONS_TABLE)
    done: list[str] = []
    for migration in MIGRATIONS:
        db.execute("BEGIN IMMEDIATE")
        try:
            if migration.__name__ not in set(applied(db)):
                migration(db)
                db.execute(
                    "INSERT INTO store_migrations (name, applied_at) VALUES (?, ?)",
                    (migration.__name__, datetime.now(UTC).isoformat()),
                )
                done.append(migration.__name__)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
    unknown = sorted(set(applied(db)) - set(migration_names()))
    if unknown:
        raise StoreError(
            f"the store has migrations this version does not know ({', '.join(unknown)}): "
            "it was written by a newer memory-candidate-extractor"
        )
    return done
