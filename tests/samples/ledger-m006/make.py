"""How ``ledger.db`` and ``results.jsonl`` here were made: with the code of main at 2e4516e
(ledger migrations m001-m006, result line format 2, SCHEMA_VERSION 2.1.0), not with this tree.

    git archive 2e4516e | tar -x -C /tmp/oldmain
    PYTHONPATH=/tmp/oldmain python tests/samples/ledger-m006/make.py tests/samples/ledger-m006

Two runs: the offline model over ``input.jsonl`` (events, claims with parents, a tool call, a
transcript with a password masked in the ledger), with a load failure; and a scripted model
whose answer has a rejected candidate and a failed attempt. Tests read the files; they never
run this script (it needs the old code).
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from extractor.clients.base import AttemptRecord, ClientResult
from extractor.conversation import conversation_from_data
from extractor.errors import InputLocation
from extractor.ledger import Ledger
from extractor.pipeline import Extractor
from extractor.resultline import dump_line
from extractor.results import FailureRecord, InputRef

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class Scripted:
    model_name = "scripted-1"

    async def extract(self, conversation: Any, prompt: Any, options: Any) -> ClientResult:
        m = conversation.messages[0]
        good = {
            "id": "c1",
            "kind": "OBSERVATION",
            "memory_type": "ASSERTION_EVENT",
            "span": {"message_id": m.id, "quote": m.text, "start": 0, "end": len(m.text)},
            "content": f'User stated: "{m.text}"',
            "origin": "USER",
        }
        bad = {**good, "id": "c2", "span": {**good["span"], "quote": "never said", "end": 10}}
        return ClientResult(
            output={"candidates": [good, bad]},
            model="scripted-1",
            attempts=2,
            failed_attempts=[AttemptRecord(attempt=1, error="not JSON", raw_output="{oops")],
        )


def conv(chat: dict[str, Any], line: int) -> Any:
    return conversation_from_data(chat, location=InputLocation(source="input.jsonl", line=line))


def main(out: Path) -> None:
    chats = [json.loads(line) for line in (out / "input.jsonl").read_text().splitlines()]
    (out / "ledger.db").unlink(missing_ok=True)
    lines = []
    with Ledger(out / "ledger.db") as ledger:
        offline = Extractor(clock=lambda: T0, as_of=T0)
        run = ledger.start_run(
            offline.provenance(), {"concurrency": 1}, run_id="run-offline", started_at=T0
        )
        for i, chat in enumerate(chats, 1):
            result = offline.process(conv(chat, i))
            ledger.record_result(run, result, conversation=conv(chat, i))
            lines.append(dump_line(result))
        ledger.record_failure(
            run,
            FailureRecord(
                conversation_id="broken",
                input=InputRef(source="input.jsonl", line=len(chats) + 1),
                stage="load",
                error_code="INPUT_INVALID",
                error="field messages: must be a list",
                recorded_at=T0,
            ),
        )
        ledger.finish_run(run, {"conversations": len(chats) + 1, "failed": 1}, finished_at=T0)
        scripted = Extractor(Scripted(), clock=lambda: T0, as_of=T0)
        run2 = ledger.start_run(
            scripted.provenance(), {"concurrency": 1}, run_id="run-scripted", started_at=T0
        )
        result = scripted.process(conv(chats[0], 1))
        ledger.record_result(run2, result, conversation=conv(chats[0], 1))
        lines.append(dump_line(result))
        ledger.finish_run(run2, {"conversations": 1}, finished_at=T0)
    with Ledger(out / "ledger.db") as ledger:  # checkpoint the WAL into the file
        ledger.integrity_check()
    (out / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
