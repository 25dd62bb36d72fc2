"""Several processes writing to one ledger at once: no row lost, none duplicated, no corruption."""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Callable
from pathlib import Path

from test_ledger import RUN_PROV

from extractor.ledger import Ledger
from extractor.ledger.migrations import migration_names

WORKERS = 4
PER_WORKER = 10
SHARED_RUN = "run-shared"


def context() -> multiprocessing.context.BaseContext:
    """Fresh processes (no inherited connections or threads), forked from one preloaded server so
    each worker does not pay for its own imports."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["extractor.ledger", "test_ledger"])
    return ctx


def run_workers(target: Callable[..., None], path: Path) -> list[int | None]:
    """Run ``target(path, worker, start)`` in :data:`WORKERS` processes released at once; their
    exit codes."""
    ctx = context()
    start = ctx.Event()
    procs = [ctx.Process(target=target, args=(str(path), w, start)) for w in range(WORKERS)]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(120)
    return [proc.exitcode for proc in procs]


def write_many(path: str, worker: int, start: multiprocessing.synchronize.Event) -> None:
    from test_ledger import make_failure, make_result

    start.wait(30)
    with Ledger(path, busy_timeout=120) as ledger:
        own = ledger.start_run(RUN_PROV, {"worker": worker}, run_id=f"run-w{worker}")
        for i in range(PER_WORKER):
            ledger.record_result(own, make_result(f"w{worker}-c{i}", n=2))
            # every worker also records the same results into one shared run: idempotent writes
            ledger.record_result(SHARED_RUN, make_result(f"shared-{i}", n=1))
        ledger.record_failure(own, make_failure(f"w{worker}-failed"))
        ledger.finish_run(own, {"written": PER_WORKER})


def test_concurrent_writer_processes_lose_and_duplicate_nothing(tmp_path: Path):
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        ledger.start_run(RUN_PROV, run_id=SHARED_RUN)
    assert run_workers(write_many, path) == [0] * WORKERS

    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        counts = {
            table: db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("runs", "conversations", "candidates", "decisions", "failures")
        }
        shared = db.execute(
            "SELECT COUNT(*) FROM conversations WHERE run_id = ?", (SHARED_RUN,)
        ).fetchone()[0]
    own_results = WORKERS * PER_WORKER
    assert counts == {
        "runs": WORKERS + 1,
        "conversations": own_results + PER_WORKER,
        "candidates": own_results * 2 + PER_WORKER,
        "decisions": own_results * 2 + PER_WORKER,
        "failures": WORKERS,
    }
    assert shared == PER_WORKER
    with Ledger(path) as ledger:
        statuses = {run.run_id: run.status for run in ledger.runs()}
    assert statuses == {SHARED_RUN: "running"} | {f"run-w{w}": "completed" for w in range(WORKERS)}


def open_blank(path: str, worker: int, start: multiprocessing.synchronize.Event) -> None:
    start.wait(30)
    with Ledger(path, busy_timeout=120) as ledger:
        ledger.start_run(RUN_PROV, run_id=f"run-{worker}")


def test_processes_opening_a_blank_file_at_once_migrate_it_once(tmp_path: Path):
    path = tmp_path / "fresh.db"
    assert run_workers(open_blank, path) == [0] * WORKERS
    with sqlite3.connect(path) as db:
        names = [r[0] for r in db.execute("SELECT name FROM migrations ORDER BY rowid")]
        assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == WORKERS
    assert names == migration_names()
