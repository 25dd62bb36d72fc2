"""The governed memory store: what happens to admitted memories after the write gate.

::

    from extractor import MemoryStore

    with MemoryStore("memory.db") as store:
        store.ingest(result, tenant="acme", subject="user-42")
        store.claims(tenant="acme", subject="user-42", as_of="2026-06-20", known_at="2026-07-02")

Append-only events, current state as their projection, two graphs kept apart (derivation vs
support), claim-level lineage, revocation with truth-maintenance revalidation, source families,
valid and system time, supersession, and privacy erasure. The tables are a public contract,
documented column by column in ``docs/store.md``. All SQL is behind
:class:`~extractor.store.backend.Backend` (SQLite by default).
"""

from __future__ import annotations

from .apply import store_memory_id
from .backend import Backend, SQLiteBackend
from .derivation import DerivationRejection, DerivedClaim
from .migrations import MIGRATIONS, PROJECTION_TABLES, migration_names
from .models import (
    AffectedClaim,
    ClaimVersion,
    Corroboration,
    DeriveReport,
    ErasureReport,
    ErasureVerification,
    Exposure,
    IngestReport,
    Lineage,
    LineageEdge,
    MemoryEvent,
    ReadmitChange,
    ReadmitReport,
    ReadmitSkip,
    RebuildReport,
    RevocationReport,
    StoredClaim,
    VerifyReport,
)
from .store import DEFAULT_TENANT, MemoryStore

__all__ = [
    "DEFAULT_TENANT",
    "MIGRATIONS",
    "PROJECTION_TABLES",
    "AffectedClaim",
    "Backend",
    "ClaimVersion",
    "Corroboration",
    "DerivationRejection",
    "DeriveReport",
    "DerivedClaim",
    "ErasureReport",
    "ErasureVerification",
    "Exposure",
    "IngestReport",
    "Lineage",
    "LineageEdge",
    "MemoryEvent",
    "MemoryStore",
    "ReadmitChange",
    "ReadmitReport",
    "ReadmitSkip",
    "RebuildReport",
    "RevocationReport",
    "SQLiteBackend",
    "StoredClaim",
    "VerifyReport",
    "migration_names",
    "store_memory_id",
]
