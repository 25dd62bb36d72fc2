"""Prompt tokens per conversation and per call, against one-call-per-message and mem0's prompt.

Tokens are *estimated* as characters / 4 (no tokenizer can be downloaded here; tiktoken fetches
its BPE files at run time). The schema overhead is measured, not guessed: one request is sent
through the mock server and the size of what the client really sends besides the messages
(the tool / response-format schema) is taken from the recorded request body.

* this project: one call per chunk (one per conversation below 24,000 rendered characters),
  each = system prompt + schema + the whole rendered transcript;
* one call per message: the same system prompt and schema, with one message each time;
* mem0: its FACT_RETRIEVAL_PROMPT (mem0ai/mem0, ``mem0/configs/prompts.py``) is 3,180
  characters with the date filled in (counted from commit 099e325a), sent with the messages;
  mem0 then makes a second, update-memory call that is not counted here.

    /tmp/venv/bin/python benchmarks/tokens.py
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic

from extractor.chunking import split_conversation
from extractor.clients.base import extract_sync
from extractor.clients.openai_client import OpenAIClient
from extractor.conversation import Conversation, conversation_from_data
from extractor.evaluation import load_evalset
from extractor.evaluation.msc import iter_msc
from extractor.mockserver import MockServer
from extractor.prompts import Prompt, load_prompt

CHARS_PER_TOKEN = 4
MEM0_FACT_PROMPT_CHARS = 3180
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def tokens(chars: int) -> float:
    return chars / CHARS_PER_TOKEN


def schema_overhead(conv: Conversation, prompt: Prompt) -> tuple[str, int]:
    """The client's mode and the characters it sends beyond the chat messages' text."""
    with MockServer() as server:
        client = OpenAIClient(model="offline", base_url=server.base_url, api_key="mock-key")
        extract_sync(client, conv, prompt)
        body = server.requests[0]
    extra = {k: v for k, v in body.items() if k in ("tools", "tool_choice", "response_format")}
    return client.mode, len(json.dumps(extra, ensure_ascii=False))


def call_chars(conv: Conversation, prompt: Prompt, overhead: int) -> int:
    return sum(len(m["content"]) for m in prompt.render(conv)) + overhead


def per_message_chars(conv: Conversation, prompt: Prompt, overhead: int) -> int:
    total = 0
    for message in conv.messages:
        if message.text:
            single = conv.model_copy(update={"messages": [message]})
            total += call_chars(single, prompt, overhead)
    return total


def row(name: str, convs: list[Conversation], prompt: Prompt, overhead: int) -> str:
    calls = [len(split_conversation(c)) for c in convs]
    ours = [sum(call_chars(ch, prompt, overhead) for ch in split_conversation(c)) for c in convs]
    single = [per_message_chars(c, prompt, overhead) for c in convs]
    transcript = [sum(len(m.text) for m in c.messages) for c in convs]
    mem0 = [MEM0_FACT_PROMPT_CHARS + t for t in transcript]
    mean = statistics.fmean
    return (
        f"| {name} | {len(convs)} | {mean(len(c.messages) for c in convs):.1f} | "
        f"{tokens(mean(transcript)):.0f} | {mean(calls):.2f} | {tokens(mean(ours)):.0f} | "
        f"{tokens(sum(ours) / sum(calls)):.0f} | {tokens(mean(single)):.0f} | "
        f"{mean(single) / mean(ours):.1f}x | {tokens(mean(mem0)):.0f} |"
    )


def main() -> None:
    prompt = load_prompt()
    evalset = [c.conversation for c in load_evalset()]
    mode, overhead = schema_overhead(evalset[0], prompt)
    system = len(prompt.system_template)
    print(f"client mode {mode}; system prompt {system} chars (~{tokens(system):.0f} tokens); "
          f"schema sent with each call {overhead} chars (~{tokens(overhead):.0f} tokens); "
          f"mem0 FACT_RETRIEVAL_PROMPT {MEM0_FACT_PROMPT_CHARS} chars "
          f"(~{tokens(MEM0_FACT_PROMPT_CHARS):.0f} tokens)")  # fmt: skip
    print()
    print("| data | convs | msgs/conv | transcript tok/conv | calls/conv | prompt tok/conv | "
          "prompt tok/call | one-call-per-message tok/conv | ratio | mem0 fact prompt + "
          "transcript tok/conv |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(row("gold eval set", evalset, prompt, overhead))
    synth = [conversation_from_data(c) for c in synthetic.conversations(1000)]
    print(row("synthetic", synth, prompt, overhead))
    msc = DATA / "msc-valid.jsonl"
    if msc.exists():
        convs = [c.conversation for c in iter_msc(msc, limit=200)]
        print(row("MSC valid (first 200)", convs, prompt, overhead))


if __name__ == "__main__":
    main()
