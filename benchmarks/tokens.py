"""Prompt tokens per conversation and per call, against one-call-per-message and mem0's prompt.

Tokens are o200k_base counts when the ``bpe-openai`` package is importable (see
``benchmarks/prompt_size.py``), else characters / 4. The schema overhead is measured, not
guessed: one request is sent through the mock server and what the client really sends besides
the messages (the tool / response-format schema, as compact JSON) is taken from the recorded
request body.

* this project: one call per chunk (one per conversation below 24,000 rendered characters),
  each = system prompt + schema + the whole rendered transcript;
* one call per message: the same system prompt and schema, with one message each time;
* mem0: its FACT_RETRIEVAL_PROMPT (mem0ai/mem0, ``mem0/configs/prompts.py``, commit 099e325a,
  3,180 characters / 645 o200k tokens with the date filled in) plus ``Input:`` and the
  messages as mem0 renders them (``role: text`` lines); mem0 then makes a second,
  update-memory call (1,467 tokens before any memory or fact) that is not counted here.

    PYTHONPATH=/tmp/bpe /tmp/venv/bin/python benchmarks/tokens.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic
from prompt_size import MEM0, tokenizer

from extractor.chunking import split_conversation
from extractor.clients.base import extract_sync
from extractor.clients.openai_client import OpenAIClient
from extractor.clients.wire import fixed_parts
from extractor.conversation import Conversation, conversation_from_data
from extractor.evaluation import load_evalset
from extractor.evaluation.msc import iter_msc
from extractor.mockserver import MockServer
from extractor.prompts import Prompt, load_prompt

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
count, EXACT = tokenizer()
_, MEM0_FACT_CHARS, MEM0_FACT_TOKENS = MEM0[0]
MEM0_FACT = MEM0_FACT_TOKENS if EXACT else MEM0_FACT_CHARS / 4


def schema_overhead(conv: Conversation, prompt: Prompt) -> tuple[str, str]:
    """The client's mode and what it sends besides the chat messages (compact JSON)."""
    with MockServer() as server:
        client = OpenAIClient(model="offline", base_url=server.base_url, api_key="mock-key")
        extract_sync(client, conv, prompt)
        body = server.requests[0]
    return client.mode, fixed_parts(body, prompt.render(conv)[1]["content"])["schema"]


def call_tokens(conv: Conversation, prompt: Prompt, fixed: float) -> float:
    """One call: the fixed part (system prompt + schema) plus the rendered user turn."""
    return fixed + count(prompt.render(conv)[1]["content"])


def per_message_tokens(conv: Conversation, prompt: Prompt, fixed: float) -> float:
    total = 0.0
    for message in conv.messages:
        if message.text:
            single = conv.model_copy(update={"messages": [message]})
            total += call_tokens(single, prompt, fixed)
    return total


def mem0_tokens(conv: Conversation) -> float:
    """mem0's extraction call: its prompt, then ``Input:`` and ``role: text`` lines."""
    lines = "".join(f"{m.role.value}: {m.text}\n" for m in conv.messages)
    return MEM0_FACT + count(f"Input:\n{lines}")


def row(name: str, convs: list[Conversation], prompt: Prompt, fixed: float) -> str:
    calls = [len(split_conversation(c)) for c in convs]
    ours = [sum(call_tokens(ch, prompt, fixed) for ch in split_conversation(c)) for c in convs]
    single = [per_message_tokens(c, prompt, fixed) for c in convs]
    transcript = [count(prompt.render(c)[1]["content"]) for c in convs]
    mem0 = [mem0_tokens(c) for c in convs]
    mean = statistics.fmean
    return (
        f"| {name} | {len(convs)} | {mean(len(c.messages) for c in convs):.1f} | "
        f"{mean(transcript):.0f} | {mean(calls):.2f} | {mean(ours):.0f} | "
        f"{sum(ours) / sum(calls):.0f} | {mean(single):.0f} | "
        f"{mean(single) / mean(ours):.1f}x | {mean(mem0):.0f} | {mean(ours) / mean(mem0):.1f}x |"
    )


def main() -> None:
    prompt = load_prompt()
    evalset = [c.conversation for c in load_evalset()]
    mode, schema = schema_overhead(evalset[0], prompt)
    system = count(prompt.system_template)
    unit = "o200k tokens" if EXACT else "tokens (characters / 4)"
    print(f"prompt {prompt.version}, client mode {mode}, {unit}: system prompt {system:.0f}; "
          f"schema sent with each call {count(schema):.0f}; mem0 FACT_RETRIEVAL_PROMPT "
          f"{MEM0_FACT:.0f}")  # fmt: skip
    print()
    print("| data | convs | msgs/conv | user turn tok/conv | calls/conv | prompt tok/conv | "
          "prompt tok/call | one-call-per-message tok/conv | ratio | mem0 extraction call "
          "tok/conv | ours / mem0 |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    fixed = system + count(schema)
    print(row("gold eval set", evalset, prompt, fixed))
    synth = [conversation_from_data(c) for c in synthetic.conversations(1000)]
    print(row("synthetic", synth, prompt, fixed))
    msc = DATA / "msc-valid.jsonl"
    if msc.exists():
        convs = [c.conversation for c in iter_msc(msc, limit=200)]
        print(row("MSC valid (first 200)", convs, prompt, fixed))


if __name__ == "__main__":
    main()
