"""A hostile model's answer never reaches a file verbatim: the failures file, the result line's
failed attempts, the rejections and the ledger keep the raw outputs with their secrets redacted,
and bounded (issue 14)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import read_raw_lines

import extractor.cli._common as cli_common
from extractor.bounded import DEFAULT_RAW_CHARS, bounded_output
from extractor.cli import cli
from extractor.clients.base import AttemptRecord, ClientResult
from extractor.content import redact
from extractor.conversation import Conversation
from extractor.errors import ModelClientError
from extractor.hashing import text_hash
from extractor.prompts import Prompt
from extractor.validation import ValidationOptions

API_KEY = "sk-proj-Ab12Cd34Ef56Gh78Ij90T3BlbkFJKl12Mn34Op56Qr78St90"
GITHUB_TOKEN = "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"
PASSWORD = "Tr0ub4dor&3xyz"
CARD = "4111 1111 1111 1111"
SECRETS = [API_KEY, GITHUB_TOKEN, PASSWORD, CARD, CARD.replace(" ", "")]

HOSTILE = (
    "Sure! Before the JSON, the config I was given: OPENAI_API_KEY=" + API_KEY + ", deploy "
    "token " + GITHUB_TOKEN + ", and the admin password is " + PASSWORD + ". The customer paid "
    "with card " + CARD + ' (exp 12/27). {"candidates": [oops'
)
#: A long answer with a card number straddling the point where the record cuts it.
LONG = "blah " * ((DEFAULT_RAW_CHARS - 6) // 5) + "card " + CARD + " " + "z" * 3000


class Hostile:
    """``fail-*`` conversations: the model's last answer is unusable and the call fails with
    it; every other conversation is answered, after a failed attempt that leaked secrets, with
    a candidate that quotes one."""

    model_name = "hostile-1"

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        if conversation.id.startswith("fail-long"):
            raise ModelClientError("model answer unusable", attempts=3, raw_output=LONG)
        if conversation.id.startswith("fail"):
            raise ModelClientError(f"model said: {HOSTILE}", attempts=3, raw_output=HOSTILE)
        message = conversation.messages[0]
        leak = {
            "id": "leak", "kind": "OBSERVATION", "memory_type": "ASSERTION_EVENT",
            "span": {"message_id": message.id, "quote": f"my password is {PASSWORD}",
                     "start": 0, "end": 10},
            "content": f"User's password is {PASSWORD}", "origin": "USER",
        }  # fmt: skip
        return ClientResult(
            output={"candidates": [leak]},
            model="hostile-1",
            attempts=2,
            failed_attempts=[AttemptRecord(attempt=1, error="not JSON", raw_output=HOSTILE)],
        )


def conversations(path: Path) -> Path:
    chats = [
        {"id": cid, "messages": [{"role": "user", "content": "I live in Lisbon."}]}
        for cid in ("ok-1", "fail-1", "fail-long")
    ]
    path.write_text("".join(json.dumps(c) + "\n" for c in chats), encoding="utf-8")
    return path


@pytest.fixture
def hostile_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.setattr(cli_common, "get_client", lambda *a, **k: Hostile())
    src = conversations(tmp_path / "in.jsonl")
    out, db = tmp_path / "out.jsonl", tmp_path / "ledger.db"
    done = CliRunner().invoke(
        cli, ["run", str(src), "--out", str(out), "--ledger", str(db), "-q"],
        catch_exceptions=False,
    )  # fmt: skip
    assert done.exit_code in (0, 1), done.output
    return {"out": out, "failures": tmp_path / "out.jsonl.failures.jsonl", "ledger": db}


def test_no_file_of_the_run_holds_a_secret_verbatim(hostile_run: dict[str, Path]) -> None:
    files = [*hostile_run.values(), hostile_run["ledger"].with_name("ledger.db-wal")]
    written = b"".join(p.read_bytes() for p in files if p.exists())
    assert b"REDACTED" in written
    for secret in SECRETS:
        assert secret.encode() not in written, secret
    assert b"4111" not in written, "no part of the card number survives the cut"


def test_the_failures_file_keeps_the_redacted_answer_bounded(
    hostile_run: dict[str, Path],
) -> None:
    failures = {f["conversation_id"]: f for f in read_raw_lines(hostile_run["failures"])}
    short = failures["fail-1"]
    assert short["raw_output"] == redact(HOSTILE)
    assert "[REDACTED OpenAI Token]" in short["raw_output"]
    assert "[REDACTED card number]" in short["raw_output"]
    assert "[REDACTED" in short["error"] and PASSWORD not in short["error"]
    assert short["raw_output_chars"] is None  # short enough to be kept whole
    cut = failures["fail-long"]
    whole = redact(LONG)
    assert cut["raw_output"] == whole[:DEFAULT_RAW_CHARS]
    assert (cut["raw_output_chars"], cut["raw_output_hash"]) == (len(whole), text_hash(whole))
    with sqlite3.connect(hostile_run["ledger"]) as db:
        stored = {r[0]: json.loads(r[1]) for r in
                  db.execute("SELECT conversation_id, failure_json FROM failures")}  # fmt: skip
    assert stored["fail-1"]["raw_output"] == short["raw_output"]
    assert stored["fail-long"]["raw_output_hash"] == cut["raw_output_hash"]


def test_failed_attempts_and_rejections_keep_only_redacted_copies(
    hostile_run: dict[str, Path],
) -> None:
    [line] = read_raw_lines(hostile_run["out"])
    [attempt] = line["failed_attempts"]
    assert attempt["raw_output"] == redact(HOSTILE)
    [rejection] = line["rejections"]
    assert rejection["code"] == "SECRET_IN_CANDIDATE"
    assert rejection["raw"]["content"] == "User's password is [REDACTED password]"


def test_bounded_output_redacts_before_it_cuts() -> None:
    kept: dict[str, Any] = bounded_output(LONG)
    assert len(kept["raw_output"]) == DEFAULT_RAW_CHARS
    assert kept["raw_output"].endswith("card [REDA")  # the card number straddled the cut
    assert bounded_output(None) == {"raw_output": None}
    assert bounded_output("fine") == {"raw_output": "fine"}


def test_redaction_leaves_the_products_own_hints_alone() -> None:
    hint = "no API key: set --api-key or EXTRACTOR_API_KEY"
    assert redact(hint) == hint
    once = redact(HOSTILE)
    assert redact(once) == once
