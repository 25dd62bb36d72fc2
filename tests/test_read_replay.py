"""Replaying a recorded read under another read policy: what each candidate's use becomes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from read_store_helpers import Clock, Transcripts, candidate, conversation, handmade, pipeline

from extractor import MemoryStore
from extractor.cli import cli
from extractor.errors import StoreError
from extractor.read import Caller, MemoryReader, parse_read_policy, replay
from extractor.read.policy import DEFAULT_READ_POLICY_PATH
from extractor.store import store_memory_id
from extractor.vocab import Origin, VerificationState

AGENT = Caller(id="agent:support")
SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
DEFAULT_TEXT = DEFAULT_READ_POLICY_PATH.read_text(encoding="utf-8")


def _policy(extra: str = "", **replacements: str):
    text = DEFAULT_TEXT.replace('version = "2026.12.01.1"', 'version = "test-replay"')
    for old, new in replacements.items():
        assert old in text
        text = text.replace(old, new)
    return parse_read_policy(text + extra)


#: Factual evidence must be PROVISIONAL: every ACTIVE hit leaves at stage 1.
NO_ACTIVE_FACTS = {
    '[purposes.FACTUAL_EVIDENCE]\nrisk = "HIGH"\nlifecycles = ["ACTIVE"]':
    '[purposes.FACTUAL_EVIDENCE]\nrisk = "HIGH"\nlifecycles = ["PROVISIONAL"]'
}  # fmt: skip
USER_CONTEXT_ONLY = """
[[rules]]
id = "user-statements-context-only"
reason = "test: what users say only informs"
match = { origin_kind = ["USER"] }
effect = { use = "CONTEXT_ONLY" }
"""


def _claim_id(candidate_id: str) -> str:
    """The store's claim id of a candidate's one claim (memory ids are tenant-scoped)."""
    return store_memory_id("acme", candidate_id) + ":c1"


@pytest.fixture
def world(tmp_path: Path):
    clock = Clock()
    with MemoryStore(tmp_path / "memory.db", clock=clock) as store:
        conv = conversation(
            "ex5",
            "Q3 revenue was approximately $46 million, Q3 revenue $46 million.",
            "Q3 revenue was $43.8 million according to the filing.",
        )
        rumour = candidate(conv, 0, origin_kind=Origin.USER,
                           verification_state=VerificationState.UNVERIFIED,
                           memory_type="WORLD_PROPOSITION")  # fmt: skip
        store.ingest(handmade(conv, [rumour, candidate(conv, 1)]))
        yield store, conv, clock, _claim_id("mem_ex5_0"), _claim_id("mem_ex5_1")


def _read(store, conv, clock, purpose, **kw):
    with MemoryReader(store, clock=clock, transcripts=Transcripts(conv)) as reader:
        return reader.read("Q3 revenue", tenant="acme", subject="u1", caller=AGENT,
                           purpose=purpose, **kw)  # fmt: skip


def test_replay_under_the_recording_policy_reproduces_the_read_after_the_store_changed(world):
    store, conv, clock, _, verified = world
    result = _read(store, conv, clock, "FACTUAL_EVIDENCE")
    assert [i.claim_id for i in result.items] == [verified]
    store.revoke(verified, reason="the filing was restated")  # after the read
    assert _read(store, conv, clock, "FACTUAL_EVIDENCE").items == []
    report = replay(store.backend.location, result.read_id, transcripts=Transcripts(conv))
    assert report.changed == []
    assert report.admitted_recorded == report.admitted_replayed == [verified]
    assert report.recorded_policy == report.replay_policy
    (item,) = report.items  # the rumour forbids FACTUAL_EVIDENCE: never retrieved, not replayed
    assert item.claim_id == verified and item.decision is not None
    assert item.decision.evidence == "VERIFIED"  # the recorded check, not a new one


def test_replay_under_another_policy_reports_each_changed_use(world):
    store, conv, clock, rumour, verified = world
    factual = _read(store, conv, clock, "FACTUAL_EVIDENCE")
    report = replay(store.backend.location, factual.read_id, policy=_policy(**NO_ACTIVE_FACTS))
    assert report.changed == [verified] and report.admitted_replayed == []
    (item,) = report.items
    assert (item.replayed.stage, item.replayed.excluded_by) == (
        "ELIGIBILITY",
        "lifecycle-not-eligible",
    )
    assert item.decision is None and report.replay_policy.version == "test-replay"

    personal = _read(store, conv, clock, "PERSONALIZATION")
    assert {i.claim_id: i.use for i in personal.items}[rumour] == "PERSONALIZATION"
    report = replay(store.backend.location, personal.read_id, policy=_policy(USER_CONTEXT_ONLY))
    changed = {i.claim_id: i for i in report.items if i.changed}
    assert set(changed) == {rumour}
    # the rumour may only personalize: a downgrade to context only leaves it no use at all
    assert changed[rumour].recorded.use == "PERSONALIZATION"
    assert not changed[rumour].replayed.admissible
    assert changed[rumour].replayed.excluded_by == "context-only-needs-context-capability"
    assert rumour not in report.admitted_replayed and verified in report.admitted_replayed


def test_a_policy_that_newly_dereferences_checks_evidence_now_and_fails_closed_without_it(world):
    store, conv, clock, _, verified = world
    context = _read(store, conv, clock, "CONVERSATIONAL_CONTEXT")
    assert verified in {i.claim_id for i in context.items}
    stricter = _policy(**{
        '[purposes.CONVERSATIONAL_CONTEXT]\nrisk = "LOW"':
        '[purposes.CONVERSATIONAL_CONTEXT]\nrisk = "HIGH"\ndereference = true'
    })  # fmt: skip
    path = store.backend.location
    with_transcripts = replay(path, context.read_id, policy=stricter, transcripts=Transcripts(conv))
    without = replay(path, context.read_id, policy=stricter)
    by_id = {i.claim_id: i for i in with_transcripts.items}
    assert by_id[verified].decision is not None
    assert by_id[verified].decision.evidence == "VERIFIED" and by_id[verified].replayed.admissible
    assert {i.claim_id: i.replayed.excluded_by for i in without.items}[verified] == (
        "high-risk-dereferences-evidence"
    )


def test_a_read_of_erased_claims_still_replays_and_says_so(tmp_path: Path):
    clock = Clock()
    with MemoryStore(tmp_path / "memory.db", clock=clock) as store:
        store.ingest(pipeline("c1", "My sister's name is Zelda."))
        with MemoryReader(store, clock=clock) as reader:
            before = reader.read("Zelda sister", tenant="acme", subject="u1",
                                 caller=AGENT, purpose="PERSONALIZATION")  # fmt: skip
        assert before.items
        store.erase(conversation="c1")
        with MemoryReader(store, clock=clock) as reader:
            report = reader.replay(before.read_id)
    assert report.changed == [] and all(i.erased_since for i in report.items)
    assert "Zelda" not in report.model_dump_json()


def test_replay_errors_name_the_read(world):
    store, conv, clock, _, _ = world
    path = store.backend.location
    with pytest.raises(StoreError, match="no recorded read 'read_nope'"):
        replay(path, "read_nope")
    old = _read(store, conv, clock, "PERSONALIZATION")
    db = sqlite3.connect(path)
    db.execute("UPDATE reads SET subject = NULL, k = NULL WHERE read_id = ?", (old.read_id,))
    db.commit()
    with pytest.raises(StoreError, match="recorded before migration s004_read_replay"):
        replay(path, old.read_id)


def test_cli_read_replay(world, tmp_path: Path):
    store, conv, clock, _, verified = world
    factual = _read(store, conv, clock, "FACTUAL_EVIDENCE")
    policy = tmp_path / "stricter.toml"
    text = DEFAULT_TEXT.replace('version = "2026.12.01.1"', 'version = "test-replay"')
    for old, new in NO_ACTIVE_FACTS.items():
        text = text.replace(old, new)
    policy.write_text(text, encoding="utf-8")
    db = str(store.backend.location)
    runner = CliRunner()
    out = runner.invoke(cli, ["store", "read-replay", factual.read_id, "--db", db,
                               "--read-policy", str(policy)])  # fmt: skip
    assert out.exit_code == 0, out.output
    assert f"{verified}: admitted as FACTUAL_EVIDENCE -> excluded by lifecycle-not-eligible" in (
        out.output
    )
    as_json = runner.invoke(cli, ["store", "read-replay", factual.read_id, "--db", db, "--json"])
    document = json.loads(as_json.output)
    assert document["changed"] == [] and document["admitted_replayed"] == [verified]
    schema = json.loads((SCHEMAS / "read-replay.schema.json").read_text(encoding="utf-8"))
    jsonschema.validate(document, schema)
    missing = runner.invoke(cli, ["store", "read-replay", "read_nope", "--db", db])
    assert missing.exit_code == 2 and "no recorded read 'read_nope'" in missing.output
