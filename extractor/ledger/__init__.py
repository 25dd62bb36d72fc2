"""The SQLite ledger: every run, conversation, candidate, rejection and admission decision,
stored so that a decision can be replayed and audited later.

::

    from extractor.ledger import Ledger

    with Ledger("ledger.db") as ledger:
        run_id = ledger.start_run(provenance, settings={"concurrency": 4})
        ledger.record_result(run_id, result)       # a ConversationResult
        ledger.record_failure(run_id, failure)     # a FailureRecord
        ledger.finish_run(run_id, summary={"conversations": 1})

The table schema is a public contract, versioned by the names of the migrations applied to the
file (:data:`MIGRATIONS`), and documented column by column in the README.
"""

from __future__ import annotations

from .migrations import MIGRATIONS, migration_names
from .models import ConversationHistory, MemoryRecord, RecordedFailure, RecordedResult, RunRecord
from .store import EXPORTABLE, JSON_COLUMNS, Ledger, new_run_id

__all__ = [
    "EXPORTABLE",
    "JSON_COLUMNS",
    "MIGRATIONS",
    "ConversationHistory",
    "Ledger",
    "MemoryRecord",
    "RecordedFailure",
    "RecordedResult",
    "RunRecord",
    "migration_names",
    "new_run_id",
]
