"""Result line format 3 (SCHEMA_VERSION 3.x): a claim's observed_at is its parent's, an event's
temporal scope its observed_at, and a rule's 'inherits from <parents>' detail a flag of the
shared outcome -- all left out and rebuilt exactly; format-2 files written before still read
the same everywhere (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from extractor import Extractor, MemoryStore, iter_results, load_result
from extractor.admission import load_policy, with_reasons
from extractor.candidates import MemoryCandidate
from extractor.cli import cli
from extractor.extraction import TemporalScope
from extractor.resultline import dump_line, encode, line_format
from extractor.results import ConversationResult
from extractor.schemas import schema_for

SAMPLES = Path(__file__).with_name("samples") / "ledger-m006"
#: Result lines written by the code before format 3 (main at 2e4516e, format 2).
FORMAT_2 = SAMPLES / "results.jsonl"


@pytest.fixture(scope="module")
def result() -> ConversationResult:
    chat = json.loads((SAMPLES / "input.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    return Extractor().process(chat)


def reread(result: ConversationResult) -> ConversationResult:
    back = load_result(dump_line(result))
    return back.model_copy(update={"decisions": with_reasons(back.decisions, load_policy())})


def test_format_3_leaves_out_what_the_line_rebuilds_and_reads_back_exactly(
    result: ConversationResult,
) -> None:
    line = json.loads(dump_line(result))
    assert line_format(line) == 3
    assert list(Draft202012Validator(schema_for("result")).iter_errors(line)) == []
    by_id = {c.memory_id: c for c in result.candidates}
    for item in line["candidates"]:
        candidate = by_id[item["memory_id"]]
        if candidate.temporal.kind.value == "POINT_IN_TIME":
            assert "temporal" not in item  # an event: a point at its observed_at
        if candidate.parent_memory_ids and candidate.observed_at is not None:
            assert "observed_at" not in item  # a claim said when its event was
    assert any(o.get("parent_details") for o in line["outcomes"])
    assert "inherits from" not in json.dumps(line)
    assert reread(result) == result


def test_values_that_are_not_the_defaults_are_written_out(result: ConversationResult) -> None:
    event = next(c for c in result.candidates if not c.parent_memory_ids)
    claim = next(c for c in result.candidates if c.parent_memory_ids)
    odd: list[MemoryCandidate] = []
    for c in result.candidates:
        if c.memory_id == event.memory_id:
            c = c.model_copy(update={"temporal": TemporalScope()})  # no scope, but observed_at
        elif c.memory_id == claim.memory_id:
            c = c.model_copy(update={"observed_at": None})  # not its parent's time
        odd.append(c)
    changed = result.model_copy(update={"candidates": odd})
    items = {i["memory_id"]: i for i in encode(changed)["candidates"]}
    assert items[event.memory_id]["temporal"] == {}
    assert items[claim.memory_id]["observed_at"] is None
    assert reread(changed) == changed


def test_a_detail_that_names_other_parents_is_kept_per_decision(
    result: ConversationResult,
) -> None:
    decision = next(d for d in result.decisions if any(r.detail for r in d.rules_fired))
    rules = [r.model_copy(update={"detail": "inherits from mem_elsewhere"}) if r.detail else r
             for r in decision.rules_fired]  # fmt: skip
    other = decision.model_copy(update={"rules_fired": rules})
    changed = result.model_copy(
        update={"decisions": [other if d is decision else d for d in result.decisions]}
    )
    assert "inherits from mem_elsewhere" in dump_line(changed)
    assert reread(changed) == changed


def test_format_2_lines_written_before_read_the_same_and_are_written_back_unchanged() -> None:
    old_lines = FORMAT_2.read_text(encoding="utf-8").splitlines()
    results = list(iter_results(FORMAT_2))
    assert {line_format(json.loads(line)) for line in old_lines} == {2}
    assert any(c.parent_memory_ids and c.observed_at for r in results for c in r.candidates)
    for text, result in zip(old_lines, results, strict=True):
        assert json.loads(dump_line(result)) == json.loads(text)  # a 2.x result: format 2
        now = result.model_copy(update={"schema_version": "3.0.0"})
        assert load_result(dump_line(now)) == now


def test_store_ingest_and_admit_read_format_2_and_3_files_alike(tmp_path: Path) -> None:
    new = tmp_path / "new.jsonl"
    lines = [dump_line(r.model_copy(update={"schema_version": "3.0.0"}))
             for r in iter_results(FORMAT_2)]  # fmt: skip
    new.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stored, reports = {}, {}
    for name, path in (("old", FORMAT_2), ("new", new)):
        db = tmp_path / f"{name}.db"
        out = CliRunner().invoke(cli, ["store", "ingest", str(path), "--db", str(db)])
        assert out.exit_code == 0, out.output
        with MemoryStore(db, create=False) as store:
            stored[name] = sorted((c.claim_id, c.content, c.lifecycle_state, c.valid_from)
                                  for c in store.claims(tenant="acme", subject="u7"))  # fmt: skip
        admitted = CliRunner().invoke(cli, ["admit", "--json", str(path)])
        assert admitted.exit_code == 0, admitted.output
        reports[name] = json.loads(admitted.output)
    assert stored["new"] == stored["old"] and stored["new"]
    assert reports["new"] == reports["old"]
