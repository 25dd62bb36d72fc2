"""Looking one memory up reads that memory's rows, however large the store (s010_memory_lookup).

The work is counted in SQLite virtual-machine instructions (a progress handler called on every
one): deterministic, unlike a timing, and it grows with the rows a statement visits.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from read_store_helpers import candidate, conversation, handmade

from extractor import MemoryStore


def filled(path: Path, memories: int) -> tuple[MemoryStore, str]:
    """A store with ``memories`` one-claim memories of tenant acme; the id of the first."""
    conv = conversation("big", *(f"Fact number {i} is recorded here." for i in range(memories)))
    store = MemoryStore(path)
    report = store.ingest(handmade(conv, [candidate(conv, i) for i in range(memories)]))
    assert len(report.stored) == memories
    return store, report.stored[0]


def instructions(db: sqlite3.Connection, run: Callable[[], Any]) -> int:
    """How many virtual-machine instructions ``run`` makes ``db`` execute."""
    count = 0

    def tick() -> int:
        nonlocal count
        count += 1
        return 0

    db.set_progress_handler(tick, 1)
    try:
        run()
    finally:
        db.set_progress_handler(None, 1)
    return count


def plan(db: sqlite3.Connection, sql: str, params: list[object]) -> list[str]:
    return [str(r[3]) for r in db.execute(f"EXPLAIN QUERY PLAN {sql}", params)]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory):
    small = filled(tmp_path_factory.mktemp("small") / "memory.db", 20)
    large = filled(tmp_path_factory.mktemp("large") / "memory.db", 400)
    yield small, large
    small[0].close()
    large[0].close()


def test_a_memory_s_claims_are_found_from_the_memory_not_from_every_current_version(stores):
    (store, memory_id), _ = stores
    db = store.backend._db
    steps = plan(db, "SELECT * FROM memory_current WHERE tenant IS ? AND memory_id IS ? "
                 "ORDER BY claim_id", ["acme", memory_id])  # fmt: skip
    assert steps[:3] == [
        "SEARCH m USING INDEX sqlite_autoindex_memories_1 (memory_id=?)",
        "SEARCH c USING INDEX idx_claims_memory_id (memory_id=?)",
        "SEARCH v USING INDEX idx_claim_versions_current (claim_id=?)",
    ]
    tenant_first = plan(db, "SELECT * FROM memories WHERE tenant IS ? AND memory_id IS ?",
                        ["acme", memory_id])  # fmt: skip
    assert tenant_first == [
        "SEARCH memories USING INDEX idx_memories_tenant_memory_id (tenant=? AND memory_id=?)"
    ]


def test_the_work_of_a_lookup_does_not_grow_with_the_store(stores):
    (small, small_id), (large, large_id) = stores
    work = {}
    for name, store, memory_id in (("small", small, small_id), ("large", large, large_id)):
        work[name] = instructions(
            store.backend._db, lambda s=store, m=memory_id: s.claims(tenant="acme", memory_id=m)
        )
    # 20x the memories: before s010 the lookup visited every current version (about 20x the
    # work); now only the index descent deepens
    assert work["large"] < 1.5 * work["small"], work
