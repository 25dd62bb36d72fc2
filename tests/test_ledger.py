"""The SQLite ledger: exact schema, idempotent writes, readers, and replay-relevant content."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extractor.candidates import Provenance, build_candidates
from extractor.conversation import Conversation, conversation_from_data
from extractor.decisions import AdmissionDecision, DeniedUse, FiredRule
from extractor.errors import LedgerError
from extractor.hashing import content_hash, text_hash
from extractor.ledger import EXPORTABLE, Ledger, migration_names
from extractor.results import ConversationResult, FailureRecord, InputRef, RunProvenance
from extractor.validation import validate_extraction
from extractor.vocab import Capability, LifecycleState

T0 = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)

RUN_PROV = RunProvenance(
    model="offline",
    prompt_id="extract_candidates",
    prompt_version="1",
    prompt_hash="sha256:prompt",
    policy_id="default",
    policy_version="1.0.0",
    extractor_version="0.1.0",
)
PROV = Provenance(
    model="offline",
    prompt_id="extract_candidates",
    prompt_version="1",
    prompt_hash="sha256:prompt",
    schema_version="1.0.0",
    extractor_version="0.1.0",
)


def make_conversation(conv_id: str, n: int = 2) -> Conversation:
    messages = [
        {"role": "user", "content": f"I live in town {i}.", "timestamp": "2024-05-10T09:00:00"}
        for i in range(n)
    ]
    return conversation_from_data({"id": conv_id, "messages": messages})


def make_result(
    conv_id: str = "conv-1", n: int = 2, *, recorded_at: datetime = T0, reject: bool = True
) -> ConversationResult:
    """A real result: candidates through the validation gate, decisions shaped like a policy's."""
    conv = make_conversation(conv_id, n)
    raw = []
    for i, message in enumerate(conv.messages):
        quote = message.text
        raw.append({
            "id": f"c{i}", "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT",
            "span": {"message_id": message.id, "quote": quote, "start": 0, "end": len(quote)},
            "content": f"User stated: {quote}", "origin": "USER",
            "requested_uses": ["PERSONALIZATION", "FACTUAL_EVIDENCE"],
        })  # fmt: skip
    if reject:
        raw.append({"id": "bad", "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT",
                    "span": {"message_id": "m0", "quote": "not there", "start": 0, "end": 9},
                    "content": "x", "origin": "USER"})  # fmt: skip
    report = validate_extraction({"candidates": raw}, conv)
    candidates = build_candidates(report.accepted, conv, provenance=PROV, recorded_at=recorded_at)
    decisions = [make_decision(c.memory_id, persist=i % 2 == 0) for i, c in enumerate(candidates)]
    return ConversationResult(
        conversation_id=conv.id,
        conversation_hash=conv.content_hash(),
        input=InputRef(source="input.jsonl", line=1),
        candidates=candidates,
        decisions=decisions,
        rejections=report.rejections,
        provenance=RUN_PROV,
        recorded_at=recorded_at,
    )


def make_decision(memory_id: str, *, persist: bool = True) -> AdmissionDecision:
    return AdmissionDecision(
        memory_id=memory_id,
        persist=persist,
        lifecycle_state=LifecycleState.PROVISIONAL if persist else LifecycleState.EPHEMERAL,
        allowed_uses=[Capability.PERSONALIZATION],
        forbidden_uses=[Capability.FACTUAL_EVIDENCE],
        denied_requested_uses=[
            DeniedUse(use=Capability.FACTUAL_EVIDENCE, rule_id="R-unverified", reason="unverified")
        ],
        eligible_for_admission=True,
        flags=[],
        rules_fired=[
            FiredRule(rule_id="R-user-event", reason="user assertion event"),
            FiredRule(rule_id="R-unverified", reason="proposition not verified"),
        ],
        policy_id="default",
        policy_version="1.0.0",
        as_of=T0,
        input_hash=content_hash(["decision-input", memory_id]),
    )


def make_failure(conv_id: str = "conv-bad") -> FailureRecord:
    return FailureRecord(
        conversation_id=conv_id,
        input=InputRef(source="input.jsonl", line=7),
        stage="extract",
        error_code="MODEL_RATE_LIMITED",
        error="rate limited after 3 attempts",
        recorded_at=T0,
    )


def count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


@pytest.fixture
def ledger(tmp_path: Path):
    with Ledger(tmp_path / "ledger.db") as opened:
        yield opened


# -- schema ---------------------------------------------------------------------------------------

EXPECTED_SCHEMA = Path(__file__).with_name("test_ledger_schema.sql")


def schema_sql(path: Path) -> str:
    with sqlite3.connect(path) as db:
        found = db.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name"
        ).fetchall()
    return "\n\n".join(f"-- {kind} {name}\n{sql};" for kind, name, sql in found) + "\n"


def test_blank_database_migrates_to_the_exact_documented_schema(tmp_path: Path):
    path = tmp_path / "blank.db"
    with Ledger(path) as ledger:
        assert ledger.applied_now == migration_names() == ledger.migrations
    assert schema_sql(path) == EXPECTED_SCHEMA.read_text(encoding="utf-8")


def test_reopening_applies_nothing_and_keeps_rows(tmp_path: Path):
    path = tmp_path / "l.db"
    with Ledger(path) as ledger:
        ledger.record_result(ledger.start_run(RUN_PROV), make_result())
    with Ledger(path) as again:
        assert again.applied_now == []
        assert again.migrations == migration_names()
    assert count(path, "candidates") == 2


def test_migration_and_its_bookkeeping_row_commit_together(tmp_path: Path, monkeypatch):
    from extractor.ledger import migrations

    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x INTEGER)")
        raise RuntimeError("crash in the middle of a migration")

    monkeypatch.setattr(migrations, "MIGRATIONS", [migrations.m001_initial, broken])
    path = tmp_path / "l.db"
    with pytest.raises(RuntimeError, match="crash"):
        Ledger(path)
    with sqlite3.connect(path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        names = [r[0] for r in db.execute("SELECT name FROM migrations")]
    assert "half_done" not in tables and "runs" in tables
    assert names == ["m001_initial"]


def test_wal_mode_and_foreign_keys(ledger: Ledger):
    with sqlite3.connect(ledger.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(LedgerError, match="no run 'nope'"):
        ledger.record_result("nope", make_result())


def test_a_newer_ledger_is_refused(tmp_path: Path):
    path = tmp_path / "l.db"
    Ledger(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO migrations VALUES ('m999_future', '2030-01-01')")
    with pytest.raises(LedgerError, match=r"m999_future.*newer"):
        Ledger(path)


def test_a_foreign_database_is_refused_untouched(tmp_path: Path):
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (id INTEGER)")
    with pytest.raises(LedgerError, match=r"app\.db: not a memory-candidate-extractor ledger"):
        Ledger(path)
    with sqlite3.connect(path) as db:
        assert [r[0] for r in db.execute("SELECT name FROM sqlite_master")] == ["users"]


def test_missing_file_is_not_created_when_reading(tmp_path: Path):
    with pytest.raises(LedgerError, match="no ledger file here"):
        Ledger(tmp_path / "typo.db", create=False)
    assert not (tmp_path / "typo.db").exists()


def test_not_a_database_names_the_file(tmp_path: Path):
    path = tmp_path / "notes.txt"
    path.write_text("hello, this is not sqlite at all " * 100)
    with pytest.raises(LedgerError, match=r"notes\.txt: cannot open the ledger"):
        Ledger(path)


# -- writes ---------------------------------------------------------------------------------------


def test_record_result_writes_every_table(ledger: Ledger):
    run_id = ledger.start_run(RUN_PROV, {"concurrency": 4}, started_at=T0)
    result = make_result()
    assert ledger.record_result(run_id, result, conversation=make_conversation("conv-1"))
    assert ledger.record_failure(run_id, make_failure())
    path = ledger.path
    expected = {"runs": 1, "conversations": 1, "candidates": 2, "decisions": 2}
    expected |= {"rejections": 1, "failures": 1, "transcripts": 1, "memory_ledger": 2}
    assert {table: count(path, table) for table in expected} == expected


def test_recording_the_same_result_again_inserts_nothing(ledger: Ledger):
    run_id = ledger.start_run(RUN_PROV)
    result = make_result()
    assert ledger.record_result(run_id, result) is True
    again = ConversationResult.model_validate_json(result.model_dump_json())
    assert ledger.record_result(run_id, again) is False
    assert ledger.record_failure(run_id, make_failure()) is True
    assert ledger.record_failure(run_id, make_failure()) is False
    assert [count(ledger.path, t) for t in ("conversations", "candidates", "failures")] == [1, 2, 1]


def test_another_run_of_the_same_conversation_is_kept_separately(ledger: Ledger):
    first, second = ledger.start_run(RUN_PROV), ledger.start_run(RUN_PROV)
    result = make_result()
    assert ledger.record_result(first, result)
    assert ledger.record_result(second, result)
    (memory_id, *_) = [c.memory_id for c in result.candidates]
    assert [r.run_id for r in ledger.memory(memory_id)] == [first, second]


def test_transcripts_are_stored_once_per_content_hash(ledger: Ledger):
    run_id = ledger.start_run(RUN_PROV)
    conv = make_conversation("conv-1")
    ledger.record_result(run_id, make_result(recorded_at=T0), conversation=conv)
    later = make_result(recorded_at=T0 + timedelta(hours=1))
    ledger.record_result(run_id, later, conversation=conv)
    assert count(ledger.path, "transcripts") == 1
    assert count(ledger.path, "conversations") == 2
    stored = ledger.transcript(conv.content_hash())
    assert stored is not None and stored.model_dump() == conv.model_dump()
    assert stored.content_hash() == conv.content_hash()


def test_inconsistent_results_are_refused_and_nothing_is_written(ledger: Ledger):
    run_id = ledger.start_run(RUN_PROV)
    result = make_result()
    stray = result.model_copy(update={"decisions": [make_decision("mem_unknown")]})
    with pytest.raises(LedgerError, match=r"conversation 'conv-1': decision for unknown memory id"):
        ledger.record_result(run_id, stray)
    twice = result.model_copy(update={"decisions": result.decisions + result.decisions[:1]})
    with pytest.raises(LedgerError, match="two decisions for memory id"):
        ledger.record_result(run_id, twice)
    assert count(ledger.path, "conversations") == 0


def test_start_run_with_an_existing_id_resumes_only_the_same_run(ledger: Ledger):
    run_id = ledger.start_run(RUN_PROV, {"a": 1}, run_id="run-fixed")
    ledger.finish_run(run_id, {"conversations": 0})
    assert ledger.start_run(RUN_PROV, {"a": 1}, run_id="run-fixed") == "run-fixed"
    assert ledger.runs()[0].status == "running"
    with pytest.raises(LedgerError, match="run 'run-fixed' already exists with a different model"):
        ledger.start_run(RUN_PROV.model_copy(update={"model": "gpt"}), {"a": 1}, run_id="run-fixed")


def test_finish_run_records_status_and_summary(ledger: Ledger):
    run_id = ledger.start_run(RUN_PROV, {"limit": 10})
    ledger.record_result(run_id, make_result())
    ledger.record_failure(run_id, make_failure())
    ledger.finish_run(run_id, {"conversations": 2, "failed": 1}, status="failed")
    (run,) = ledger.runs()
    assert (run.status, run.summary, run.settings) == ("failed", {"conversations": 2, "failed": 1},
                                                       {"limit": 10})  # fmt: skip
    assert run.finished_at is not None and run.provenance == RUN_PROV
    assert (run.conversations, run.candidates, run.persisted) == (1, 2, 1)
    assert (run.rejections, run.failures) == (1, 1)
    with pytest.raises(LedgerError, match="run status must be one of"):
        ledger.finish_run(run_id, status="done")


# -- reads ----------------------------------------------------------------------------------------


def test_memory_shows_candidate_decision_and_rules(ledger: Ledger):
    run_id = ledger.start_run(RUN_PROV)
    result = make_result()
    ledger.record_result(run_id, result)
    (record,) = ledger.memory(result.candidates[0].memory_id)
    assert record.candidate == result.candidates[0]
    assert record.decision == result.decisions[0]
    assert [r.rule_id for r in record.decision.rules_fired] == ["R-user-event", "R-unverified"]
    span = record.candidate.source_span
    assert record.evidence_ref == f"{result.conversation_hash}#m0[0:{span.end}]"
    assert record.evidence_hash == text_hash(span.quote)
    assert ledger.memory("mem_nothing") == []


def test_conversation_history_round_trips_results_and_failures(ledger: Ledger):
    run_id = ledger.start_run(RUN_PROV)
    result = make_result()
    ledger.record_result(run_id, result)
    ledger.record_failure(run_id, make_failure("conv-1"))
    history = ledger.conversation("conv-1")
    assert [r.result for r in history.results] == [result]
    assert [f.failure.error_code for f in history.failures] == ["MODEL_RATE_LIMITED"]
    assert [r.code.value for r in history.rejections] == ["SPAN_NOT_FOUND"]
    assert ledger.conversation(result.conversation_hash).results[0].result == result
    assert not ledger.conversation("conv-unknown")


def test_memory_ledger_view_carries_the_seed_fields(ledger: Ledger):
    run_id = ledger.start_run(RUN_PROV)
    ledger.record_result(run_id, make_result())
    row = next(ledger.export("memory_ledger"))
    seed_fields = [
        "memory_id", "content", "memory_type", "origin_kind", "verification_state", "valid_from",
        "valid_to", "observed_at", "recorded_at", "lifecycle_state", "parent_memory_ids",
        "allowed_uses", "forbidden_uses", "admission_policy_version", "memory_schema_version",
        "evidence_ref", "evidence_hash",
    ]  # fmt: skip
    assert set(seed_fields) <= set(row)
    assert row["lifecycle_state"] == "PROVISIONAL"
    assert json.loads(row["allowed_uses"]) == ["PERSONALIZATION"]
    assert row["verification_state"] == "VERIFIED_OBSERVATION_OF_EVENT"


def test_export_filters_by_run_and_rejects_unknown_tables(ledger: Ledger):
    first, second = ledger.start_run(RUN_PROV), ledger.start_run(RUN_PROV)
    ledger.record_result(first, make_result("a"))
    ledger.record_result(second, make_result("b", n=3))
    assert {r["conversation_id"] for r in ledger.export("candidates", run_id=second)} == {"b"}
    assert len(list(ledger.export("candidates"))) == 5
    with pytest.raises(LedgerError, match="unknown table 'sqlite_master'"):
        list(ledger.export("sqlite_master"))
    with pytest.raises(LedgerError, match="no run_id column"):
        list(ledger.export("transcripts", run_id=first))


def test_every_exportable_table_exists(ledger: Ledger):
    for table in EXPORTABLE:
        assert ledger.columns(table), table


# -- properties -----------------------------------------------------------------------------------


@settings(
    max_examples=examples(12),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    plan=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(1, 3), st.integers(0, 2)),
        max_size=12,
    )
)
def test_rows_depend_only_on_the_set_of_distinct_results(tmp_path_factory, plan: list[Any]):
    """Any sequence of writes, with repeats, leaves one row set per distinct (run, result)."""
    path = tmp_path_factory.mktemp("prop") / "l.db"
    with Ledger(path) as ledger:
        runs = [ledger.start_run(RUN_PROV, run_id=f"run-{i}") for i in range(3)]
        distinct = set()
        for conv_id, n, run in plan:
            assert ledger.record_result(runs[run], make_result(conv_id, n)) == (
                (conv_id, n, run) not in distinct
            )
            distinct.add((conv_id, n, run))
        assert ledger.integrity_check() == "ok"
    assert count(path, "conversations") == len(distinct)
    assert count(path, "candidates") == sum(n for _, n, _ in distinct)
    assert count(path, "rejections") == len(distinct)
