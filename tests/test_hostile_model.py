"""A hostile model: every way an extractor's output can lie or break, and the defined outcome.

Two runs, each a whole batch in which different conversations meet different hostile behaviour:

* ``extractor run`` (in process, with ``--ledger``) over a scripted model that returns
  crafted raw text per conversation: VERIFIED claims, invented quotes, wrong offsets, laundered
  origins, dropped hedges, invented parents, extra fields, wrong types, duplicated keys, an
  enormous array, absurd nesting, lone surrogates, prose, output that stops mid-object, and a
  client that crashes;
* the OpenAI-compatible client against one :class:`MockServer` with per-conversation faults:
  429s, 500s, timeouts, refusals, truncation, malformed JSON and bad candidates that a re-ask
  fixes or never fixes.

Each behaviour has one defined outcome (a rejection code, or a failure at a stage with an error
code: the table in ``docs/guarantees.md``), and every run keeps the batch-level guarantee: no
unsafe candidate admitted, every conversation exactly once in the results or the failures file,
no crash.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import read_lines
from hostile import (
    BASE,
    VALID,
    assert_ledger_consistent,
    assert_run_gate_held,
    candidate,
    conversation,
)

import extractor.cli._common as cli_common
from extractor.batch import BatchConfig, run_batch
from extractor.cli import cli
from extractor.clients.base import ClientResult
from extractor.clients.openai_client import OpenAIClient, parse_output
from extractor.conversation import Conversation, conversation_from_data
from extractor.mockserver import MockServer
from extractor.offline import offline_extract
from extractor.pipeline import Extractor
from extractor.prompts import Prompt
from extractor.results import ConversationResult, FailureRecord
from extractor.validation import ValidationOptions
from extractor.vocab import Capability, LifecycleState

ASSISTANT_CLAIM = candidate("c2", "m1", "The deploy is safe to run.")
HEDGED = "Q3 revenue was approximately $46M."


def output(*candidates: Any) -> str:
    return json.dumps({"candidates": [VALID, *candidates]}, ensure_ascii=False)


def deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def surrogate_text() -> str:
    text = output(candidate("c2", "m0", "My manager is Alice.", content="User said \\ud800."))
    return text.replace('"c1"', '"c1", "\\udc80bad": 1', 1).replace("\\\\ud800", "\\ud800")


@dataclass(frozen=True)
class Rejected:
    """The conversation is processed; these candidates are rejected with these codes, and
    ``accepted`` candidates (the valid one at least) go on to admission."""

    codes: tuple[str, ...]
    accepted: int = 1
    corrected: int = 0


@dataclass(frozen=True)
class Failed:
    """The conversation is in the failures file, at this stage, with this error code."""

    stage: str
    code: str


#: behaviour -> (the model's raw text, or None for a client that raises; the defined outcome)
SCRIPTED: dict[str, tuple[str | None, Rejected | Failed]] = {
    "claims-verified": (
        output(
            candidate("c2", "m0", "My manager is Alice.", verification="VERIFIED"),
            candidate("c3", "m0", "My manager is Alice.", verified=True),
            candidate("c4", "m0", "My manager is Alice.", verification_state="VERIFIED"),
            candidate("c5", "m1", "The deploy is safe to run.", content="Verified: safe."),
            candidate(
                "c6",
                "m0",
                "My manager is Alice.",
                entities=[{"name": "Alice", "type": "CERTIFIED_FACT"}],
            ),
            candidate("c7", "m0", "My manager is Alice.", lifecycle_state="ACTIVE"),
            candidate("c8", "m0", "My manager is Alice.", allowed_uses=["FACTUAL_EVIDENCE"]),
        ),
        Rejected(("EXTRACTOR_CLAIMED_VERIFIED",) * 5 + ("SCHEMA_INVALID",) * 2),
    ),
    "invented-quote": (
        output(
            candidate(
                "c2",
                "m0",
                "My manager is Alice.",
                span={
                    "message_id": "m0",
                    "quote": "I was born on the Moon.",
                    "start": 0,
                    "end": 23,
                },
            ),
            candidate(
                "c3",
                "m0",
                "My manager is Alice.",
                span={"message_id": "m9", "quote": "My manager is Alice.", "start": 0, "end": 20},
            ),
        ),
        Rejected(("SPAN_NOT_FOUND", "SPAN_UNKNOWN_MESSAGE")),
    ),
    "wrong-offsets": (
        output(
            candidate(
                "c2",
                "m1",
                "The deploy is safe to run.",
                span={
                    "message_id": "m1",
                    "quote": "The deploy is safe to run.",
                    "start": 0,
                    "end": 26,
                },
            ),
            candidate(
                "c3", "m3", "ok", span={"message_id": "m3", "quote": "ok", "start": 1, "end": 3}
            ),
        ),
        Rejected(("SPAN_OFFSETS_AMBIGUOUS",), accepted=2, corrected=1),
    ),
    "laundered-origin": (
        output(
            candidate("c2", "m1", "The deploy is safe to run.", origin="EXTERNAL_SOURCE"),
            candidate("c3", "m1", "The deploy is safe to run.", origin="USER"),
            candidate("c4", "m0", "My manager is Alice.", origin="EXTERNAL_SOURCE"),
            candidate(
                "c5",
                "m1",
                "The deploy is safe to run.",
                origin="TOOL",
                kind="OBSERVATION",
                memory_type="TOOL_OBSERVATION",
            ),
            candidate(
                "c6",
                "m1",
                "The deploy is safe to run.",
                kind="OBSERVATION",
                memory_type="TOOL_OBSERVATION",
            ),
        ),
        Rejected(("ORIGIN_LAUNDERING",) * 4 + ("TYPE_ROLE_MISMATCH",)),
    ),
    "dropped-hedge": (
        output(
            candidate("c2", "m1", HEDGED, content="Q3 revenue was $46M."),
            candidate(
                "c3",
                "m1",
                HEDGED,
                content="Q3 revenue was $46M.",
                uncertainty={"hedges": ["approximately"]},
            ),
            candidate(
                "c4",
                "m0",
                "I think the budget is approximately $46M.",
                kind="PROPOSITION",
                memory_type="WORLD_PROPOSITION",
                content="The budget is $46M.",
                parent_ids=["c1"],
            ),
        ),
        Rejected(("UNCERTAINTY_DROPPED",) * 3),
    ),
    "invented-parent": (
        output(
            candidate("c2", "m1", "The deploy is safe to run.", parent_ids=["c99"]),
            candidate(
                "c3", "m1", HEDGED, uncertainty={"hedges": ["approximately"]}, parent_ids=["c2"]
            ),
            candidate(
                "c4",
                "m0",
                "Alice",
                parent_ids=["c4"],
            ),
        ),
        Rejected(("PARENT_UNKNOWN", "PARENT_REJECTED", "PARENT_CYCLE")),
    ),
    "extra-fields": (
        json.dumps(
            {
                "candidates": [VALID, {**ASSISTANT_CLAIM, "confidence": 0.99}],
                "notes": "top-level keys besides candidates are ignored",
            }
        ),
        Rejected(("SCHEMA_INVALID",)),
    ),
    "wrong-types": (
        output(
            {**ASSISTANT_CLAIM, "span": {**ASSISTANT_CLAIM["span"], "start": "zero"}},
            {**ASSISTANT_CLAIM, "id": "c3", "requested_uses": "FACTUAL_EVIDENCE"},
            {**ASSISTANT_CLAIM, "id": "c4", "span": "m1:0-26"},
            {**ASSISTANT_CLAIM, "id": 5},
            {**ASSISTANT_CLAIM, "id": "c6", "kind": "FACT"},
            42,
            None,
            ["c8"],
        ),
        Rejected(("SCHEMA_INVALID",) * 4 + ("VOCABULARY_UNKNOWN",) + ("SCHEMA_INVALID",) * 3),
    ),
    "duplicated-keys": (
        # The last of duplicated keys wins (as in every mainstream JSON parser); the gate judges
        # that value and stores the same, so no reader can see another.
        '{"candidates": ['
        + json.dumps(VALID)
        + ", "
        + json.dumps(ASSISTANT_CLAIM)[:-1]
        + ', "origin": "USER"}, '
        + json.dumps({**ASSISTANT_CLAIM, "id": "c3", "content": "The deploy is fine."})[:-1]
        + ', "id": "c1"}]}',
        Rejected(("ORIGIN_LAUNDERING", "DUPLICATE_ID")),
    ),
    "enormous-array": (
        output(
            *(
                candidate(
                    f"n{i}",
                    "m1",
                    "The deploy is safe to run.",
                    content="Safe to run" + " run" * i + ".",
                )
                for i in range(1000)
            )
        ),
        Rejected(("CANDIDATE_LIMIT_EXCEEDED",) * 801, accepted=200),
    ),
    "nested-200-deep": (
        output({**ASSISTANT_CLAIM, "entities": json.loads(deep(200))}),
        Rejected(("SCHEMA_INVALID",)),
    ),
    "nested-10000-deep": (
        '{"candidates": ' + deep(10_000) + "}",
        Failed("validate", "OUTPUT_UNREADABLE"),
    ),
    "lone-surrogates": (surrogate_text(), Rejected(("SCHEMA_INVALID",) * 2, accepted=0)),
    "nan-offsets": (
        output(ASSISTANT_CLAIM).replace('"start": 35, "end": 61', '"start": NaN, "end": Infinity'),
        Rejected(("SCHEMA_INVALID",)),
    ),
    "duplicate-memory": (
        output(
            candidate("c2", "m0", "My manager is Alice."),
            candidate(
                "c3",
                "m0",
                "My manager is Alice.",
                kind="PROPOSITION",
                memory_type="WORLD_PROPOSITION",
                content="User's manager is Alice.",
                parent_ids=["c2"],
            ),
        ),
        Rejected(("DUPLICATE_ID", "PARENT_REJECTED")),
    ),
    "asks-for-authority": (
        output(
            {
                **ASSISTANT_CLAIM,
                "requested_uses": ["FACTUAL_EVIDENCE", "AUTONOMOUS_ACTION_JUSTIFICATION"],
            }
        ),
        Rejected((), accepted=2),
    ),
    "prose": (
        "Sure! The user's manager is Alice, and this is VERIFIED.",
        Failed("validate", "OUTPUT_UNREADABLE"),
    ),
    "stops-mid-object": (output(ASSISTANT_CLAIM)[:150], Failed("validate", "OUTPUT_UNREADABLE")),
    "not-an-extraction": ('{"memories": ["Alice"]}', Failed("validate", "OUTPUT_UNREADABLE")),
    "client-crashes": (None, Failed("extract", "MODEL_ERROR")),
    "well-behaved": (output(ASSISTANT_CLAIM), Rejected((), accepted=2)),
}


class Scripted:
    """The model of the scripted run: answers each conversation with its crafted raw text."""

    model_name = "hostile-scripted"

    def __init__(self, scripts: dict[str, str | None]) -> None:
        self.scripts = scripts

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        text = self.scripts[conversation.id]
        if text is None:
            raise KeyError(conversation.id)  # a client with a bug
        return ClientResult(output=parse_output(text), raw_text=text, model=self.model_name)


@dataclass
class Run:
    returncode: int
    stderr: str
    out: Path
    failures: Path
    ledger: Path
    results: dict[str, ConversationResult]
    failed: dict[str, FailureRecord]


@pytest.fixture(scope="module")
def scripted(tmp_path_factory: pytest.TempPathFactory) -> Run:
    d = tmp_path_factory.mktemp("scripted")
    src = d / "in.jsonl"
    src.write_text("".join(json.dumps(conversation(cid)) + "\n" for cid in SCRIPTED))
    out, ledger = d / "out.jsonl", d / "ledger.db"
    args = [str(src), "--out", str(out), "--ledger", str(ledger), "--concurrency", "3", "-q"]
    model = Scripted({k: v for k, (v, _) in SCRIPTED.items()})
    # in process (the command as `extractor run` runs it, with the model swapped where the CLI
    # builds it): a crash raises here and fails every test of the run
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli_common, "get_client", lambda *args, **kwargs: model)
        proc = CliRunner().invoke(cli, ["run", *args], catch_exceptions=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    failures = Path(f"{out}.failures.jsonl")
    convs = {cid: conversation_from_data(conversation(cid)) for cid in SCRIPTED}
    results, failed = assert_run_gate_held(out, failures, convs)
    return Run(proc.exit_code, proc.stderr, out, failures, ledger, results, failed)


def test_the_run_never_crashes_and_exits_1_for_the_failed_ones(scripted: Run) -> None:
    assert "Traceback" not in scripted.stderr, scripted.stderr
    assert scripted.returncode == 1


@pytest.mark.parametrize("behaviour", list(SCRIPTED))
def test_each_hostile_behaviour_has_its_defined_outcome(scripted: Run, behaviour: str) -> None:
    expected = SCRIPTED[behaviour][1]
    if isinstance(expected, Failed):
        assert behaviour not in scripted.results
        failure = scripted.failed[behaviour]
        assert (failure.stage, failure.error_code) == (expected.stage, expected.code)
        return
    result = scripted.results[behaviour]
    listed = Counter(r.code.value for r in result.rejections)
    assert listed + Counter(result.rejections_omitted) == Counter(expected.codes)
    assert len(result.candidates) == expected.accepted
    if expected.accepted:
        assert result.candidates[0].candidate_id == "c1", "the valid candidate is kept"
    assert sum(c.span_corrected for c in result.candidates) == expected.corrected


def test_authority_a_model_asks_for_is_denied(scripted: Run) -> None:
    result = scripted.results["asks-for-authority"]
    claim = next(c for c in result.candidates if c.candidate_id == "c2")
    decision = next(d for d in result.decisions if d.memory_id == claim.memory_id)
    denied = {d.use for d in decision.denied_requested_uses}
    assert denied == {Capability.FACTUAL_EVIDENCE, Capability.AUTONOMOUS_ACTION_JUSTIFICATION}
    assert decision.lifecycle_state is LifecycleState.QUARANTINED


def test_rejections_keep_what_the_model_said_in_a_writable_form(scripted: Run) -> None:
    raws = [r.raw for r in scripted.results["lone-surrogates"].rejections]
    assert any("\\udc80bad" in r for r in raws if isinstance(r, dict))
    nested = scripted.results["nested-200-deep"].rejections[0]
    assert "nested more than 32 levels deep" in nested.message
    assert "<nested too deeply; not kept>" in json.dumps(nested.raw)
    verified = scripted.results["claims-verified"].rejections[0]
    assert verified.raw["verification"] == "VERIFIED"


def test_the_ledger_holds_exactly_the_two_files(scripted: Run) -> None:
    results, failures = read_lines(scripted.out), read_lines(scripted.failures)
    recorded, failed = assert_ledger_consistent(scripted.ledger, results, failures)
    assert recorded == Counter((r["conversation_id"], r["conversation_hash"]) for r in results)
    assert failed == Counter(f["conversation_id"] for f in failures)


# --- through the OpenAI-compatible client and the mock server ---------------------------------

#: conversation id -> (mock server fault, defined outcome). "slow" is answered after 30 s to a
#: client that waits 0.05 s. Clients retry transport errors once and re-ask once.
OFFLINE = len(offline_extract(BASE)["candidates"])  # what the mock server's model proposes
MOCK: dict[str, tuple[str | None, Rejected | Failed]] = {
    "clean": (None, Rejected((), accepted=OFFLINE)),
    "429-once": ("rate_limit:1", Rejected((), accepted=OFFLINE)),
    "429-always": ("rate_limit", Failed("extract", "MODEL_RATE_LIMITED")),
    "500-always": ("server_error", Failed("extract", "MODEL_ERROR")),
    "slow": (None, Failed("extract", "MODEL_TIMEOUT")),
    "refusal": ("refusal", Failed("extract", "MODEL_REFUSED")),
    "truncated": ("truncated", Failed("extract", "MODEL_OUTPUT_TRUNCATED")),
    "malformed": ("malformed", Failed("validate", "OUTPUT_UNREADABLE")),
    "verified-then-fixed": ("verified", Rejected((), accepted=OFFLINE)),
    "verified-always": ("verified:always", Rejected(("EXTRACTOR_CLAIMED_VERIFIED",), OFFLINE)),
    "fabricated-always": ("fabricated_span:always", Rejected(("SPAN_NOT_FOUND",), OFFLINE)),
    "laundering-always": ("origin_laundering:always", Rejected(("ORIGIN_LAUNDERING",), OFFLINE)),
}


class ByConversation:
    """Routes each conversation to its own client (here: one that is given a slow server)."""

    def __init__(self, default: OpenAIClient, special: dict[str, OpenAIClient]) -> None:
        self.default = default
        self.special = special

    @property
    def model_name(self) -> str:
        return self.default.model_name

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        client = self.special.get(conversation.id, self.default)
        return await client.extract(conversation, prompt, options)


@pytest.fixture(scope="module")
def mock_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    d = tmp_path_factory.mktemp("mock")
    faults = {cid: fault for cid, (fault, _) in MOCK.items() if fault}
    src = d / "in.jsonl"
    src.write_text("".join(json.dumps(conversation(cid)) + "\n" for cid in MOCK))
    out = d / "out.jsonl"
    with MockServer(conversation_faults=faults, retry_after=0) as server:
        settings: dict[str, Any] = {
            "model": "mock", "base_url": server.base_url, "api_key": "k", "retry_backoff": 0.0,
            "max_rate_limit_retries": 1, "max_attempts": 2,
        }  # fmt: skip
        slow = OpenAIClient(**settings, timeout=0.05, extra_headers={"X-Mock-Latency": "30"})
        client = ByConversation(OpenAIClient(**settings), {"slow": slow})
        summary = run_batch([src], Extractor(client), BatchConfig(out=out, concurrency=4))
    failures = Path(f"{out}.failures.jsonl")
    convs = {cid: conversation_from_data(conversation(cid)) for cid in MOCK}
    results, failed = assert_run_gate_held(out, failures, convs)
    assert summary.processed + summary.failed == len(MOCK)
    return Run(summary.exit_code, "", out, failures, d / "none", results, failed)


@pytest.mark.parametrize("cid", list(MOCK))
def test_each_mock_server_fault_has_its_defined_outcome(mock_run: Run, cid: str) -> None:
    expected = MOCK[cid][1]
    if isinstance(expected, Failed):
        failure = mock_run.failed[cid]
        assert (failure.stage, failure.error_code) == (expected.stage, expected.code)
        return
    result = mock_run.results[cid]
    assert [r.code.value for r in result.rejections] == list(expected.codes)
    assert len(result.candidates) == expected.accepted
    assert result.usage.total_tokens > 0


def test_a_model_that_listens_is_fixed_by_one_reask_and_one_that_does_not_is_recorded(
    mock_run: Run,
) -> None:
    fixed = mock_run.results["verified-then-fixed"]
    assert fixed.attempts == 2 and len(fixed.failed_attempts) == 1
    assert fixed.failed_attempts[0].rejections[0].code.value == "EXTRACTOR_CLAIMED_VERIFIED"
    stubborn = mock_run.results["verified-always"]
    assert stubborn.attempts == 2
    assert stubborn.rejections[0].raw["verification"] == "VERIFIED"


def test_the_mock_run_exits_1_and_the_clean_conversations_match_the_offline_model(
    mock_run: Run,
) -> None:
    assert mock_run.returncode == 1
    offline = asyncio.run(Extractor().aprocess(BASE))
    expected = [(c.candidate_id, c.content) for c in offline.candidates]
    for cid in ("clean", "429-once", "verified-then-fixed", "laundering-always"):
        got = [(c.candidate_id, c.content) for c in mock_run.results[cid].candidates]
        assert got == expected, cid
