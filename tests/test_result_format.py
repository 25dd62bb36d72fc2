"""Result line format 2 (lean lines, read back whole), secrets kept out of the ledger's
transcripts and the response cache, the offline model's dropped candidates made visible, and the
one pre-batch endpoint check."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from extractor import Extractor, Ledger, MemoryStore, iter_results, load_result
from extractor.admission import load_policy, with_reasons
from extractor.batch import check_endpoint
from extractor.cache import CachingClient
from extractor.cli import cli
from extractor.clients.base import ClientResult
from extractor.clients.openai_client import OpenAIClient
from extractor.content import MASK
from extractor.conversation import Conversation, Limits, conversation_from_data
from extractor.errors import ModelClientError
from extractor.hashing import text_hash
from extractor.mockserver import MockServer
from extractor.offline import offline_extract
from extractor.prompts import Prompt, load_prompt
from extractor.read.evidence import check_evidence
from extractor.read.models import EvidenceStatus
from extractor.resultline import decode, dump_line, encode
from extractor.results import ConversationResult
from extractor.schemas import schema_for
from extractor.validation import ValidationOptions

CHAT = {
    "id": "onboarding",
    "metadata": {"tenant": "acme", "user_id": "u7"},
    "messages": [
        {"role": "user", "content": "My manager is Alice. I think the launch moved to Friday.",
         "timestamp": "2026-11-30T09:00:00Z"},
        {"role": "assistant", "content": "Q3 revenue was approximately $46 million.",
         "commitment": "HOLD"},
        {"role": "user", "content": "I used to live in Denver. My password is hunter22x."},
        {"role": "user", "content": "I used to live in Denver."},
    ],
}  # fmt: skip


@pytest.fixture(scope="module")
def result() -> ConversationResult:
    return Extractor().process(CHAT)


def test_a_line_reads_back_as_the_result_it_was_and_matches_the_published_schema(
    result: ConversationResult,
) -> None:
    line = json.loads(dump_line(result))
    assert list(Draft202012Validator(schema_for("result")).iter_errors(line)) == []
    back = load_result(dump_line(result))
    # everything but the reason sentences, which are the policy's: the policy puts them back
    assert back.candidates == result.candidates
    assert with_reasons(back.decisions, load_policy()) == result.decisions
    assert back.model_dump(exclude={"decisions"}) == result.model_dump(exclude={"decisions"})
    assert load_result(dump_line(back)) == back  # a line read and written again is the same


def test_a_line_holds_each_shared_thing_once(result: ConversationResult) -> None:
    text = dump_line(result)
    line = json.loads(text)
    assert "decisions" not in line and line["outcomes"] and line["rules"]
    assert all("provenance" not in c and "recorded_at" not in c for c in line["candidates"])
    assert result.provenance.prompt_hash in text and text.count(result.provenance.prompt_hash) == 1
    for rule in (r for d in result.decisions for r in d.rules_fired if r.reason):
        assert rule.reason not in text  # the reason is the policy's (by id, version and hash)
    whole = len(result.model_dump_json())
    assert len(text) < whole / 2


def test_format_1_lines_and_expanded_lines_are_still_read(
    result: ConversationResult, tmp_path: Path
) -> None:
    old = result.model_dump(mode="json") | {"schema_version": "1.2.0"}
    old["provenance"]["schema_version"] = "1.2.0"
    path = tmp_path / "mixed.jsonl"
    lines = [json.dumps(old), result.model_dump_json(), dump_line(result)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    first, expanded, lean = list(iter_results(path))
    assert isinstance(first, ConversationResult) and first.decisions == result.decisions
    assert expanded == result
    assert isinstance(lean, ConversationResult) and lean.candidates == result.candidates
    assert decode(old) is old  # format 1 passes through untouched


def test_store_ingest_reads_old_and_new_result_files_alike(
    result: ConversationResult, tmp_path: Path
) -> None:
    stored = {}
    for name, text in (("old", result.model_dump_json()), ("new", dump_line(result))):
        results = tmp_path / f"{name}.jsonl"
        results.write_text(text + "\n", encoding="utf-8")
        db = tmp_path / f"{name}.db"
        out = CliRunner().invoke(cli, ["store", "ingest", str(results), "--db", str(db)])
        assert out.exit_code == 0, out.output
        with MemoryStore(db, create=False) as store:
            stored[name] = sorted((c.claim_id, c.content, c.lifecycle_state)
                                  for c in store.claims(tenant="acme", subject="u7"))  # fmt: skip
    assert stored["new"] == stored["old"] and stored["new"]


def test_a_decision_under_another_policy_is_written_whole(result: ConversationResult) -> None:
    other = result.decisions[0].model_copy(update={"policy_version": "older"})
    mixed = result.model_copy(update={"decisions": [other, *result.decisions[1:]]})
    line = encode(mixed)
    assert line["candidates"][0]["decision"] == {"whole": other.model_dump(mode="json")}
    assert load_result(json.dumps(line)).decisions[0] == other


# --- secrets --------------------------------------------------------------------------------


def test_the_ledger_masks_secrets_in_transcripts_and_evidence_still_checks(
    tmp_path: Path,
) -> None:
    conversation = conversation_from_data(CHAT)
    result = Extractor().process(conversation)
    assert any(r.code.value == "SECRET_IN_CANDIDATE" for r in result.rejections)
    with Ledger(tmp_path / "l.db") as ledger:
        run = ledger.start_run(result.provenance)
        ledger.record_result(run, result, conversation=conversation)
        stored = ledger.transcript(result.conversation_hash)
        assert stored is not None
        text = "\n".join(m.text for m in stored.messages)
        assert "hunter22x" not in text and MASK * len("hunter22x") in text
        [row] = ledger.export("transcripts", decode_json=True)
        assert row["redactions"] == [{"message_id": "m2", "field": "content", "start": 41,
                                      "end": 50, "kind": "password"}]  # fmt: skip
        assert "hunter22x" not in json.dumps(row)
        # replay reads the masked transcript; every kept candidate's evidence still verifies
        for candidate in result.candidates:
            [record] = ledger.memory(candidate.memory_id)
            status = check_evidence(record.evidence_ref, text_hash(candidate.source_span.quote),
                                    transcripts=ledger, sources_admissible=True)  # fmt: skip
            assert status is EvidenceStatus.VERIFIED, candidate.content
        assert [r.result for r in ledger.results()] == [result]


class Answers:
    """A client answering with the offline model's extraction of the conversation."""

    model_name = "m"

    def __init__(self) -> None:
        self.calls = 0
        self.settings: dict[str, Any] = {}

    async def extract(self, conv: Conversation, prompt: Prompt, options: Any) -> ClientResult:
        self.calls += 1
        return ClientResult(output=offline_extract(conv), model="m")


def test_an_answer_quoting_a_secret_is_not_cached(tmp_path: Path) -> None:
    inner = Answers()
    cache = CachingClient(inner, tmp_path)
    secret = conversation_from_data(CHAT)
    plain = conversation_from_data({"id": "p", "messages": [{"role": "user",
                                                             "content": "I live in Porto."}]})  # fmt: skip
    for conv in (secret, secret, plain, plain):
        asyncio.run(cache.extract(conv, load_prompt(), ValidationOptions()))
    assert inner.calls == 3  # the secret's answer is asked again, the plain one is cached
    written = "".join(p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.json"))
    assert "Porto" in written and "hunter22x" not in written


# --- the offline model's own limit ----------------------------------------------------------


def test_candidates_the_offline_model_leaves_out_are_counted_and_warned_about(
    tmp_path: Path,
) -> None:
    chat = {"id": "long", "messages": [{"role": "user", "content": f"I moved to city {i}."}
                                       for i in range(12)]}  # fmt: skip
    result = Extractor(limits=Limits(max_candidates=6)).process(chat)
    assert result.dropped_by_model > 0
    assert len(result.candidates) + result.dropped_by_model >= 12
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps(chat) + "\n", encoding="utf-8")
    run = CliRunner().invoke(cli, ["run", str(src), "--out", str(out), "--json",
                                   "--limit-candidates", "6"], catch_exceptions=False)  # fmt: skip
    summary = json.loads(run.stdout)
    assert summary["dropped_by_model"] == result.dropped_by_model
    assert summary["limited_conversations"] == 1
    assert "left out by the model itself" in run.stderr and "raise --limit-candidates" in run.stderr
    assert json.loads(out.read_text())["dropped_by_model"] == result.dropped_by_model


# --- one endpoint check ---------------------------------------------------------------------


def test_the_batch_check_is_the_doctor_preflight() -> None:
    with MockServer() as server:

        def check(model: str, **options: Any) -> None:
            client = OpenAIClient(model=model, base_url=server.base_url, api_key="k", **options)
            asyncio.run(check_endpoint(Extractor(client)))

        check("mock")
        with pytest.raises(ModelClientError, match=r"first check.*--system-as-user"):
            check("mock+drop_system")
        check("mock+drop_system", system_as_user=True)
