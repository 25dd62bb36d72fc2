"""The fixed part of every extraction request, per instructor mode, against mem0's prompts.

"Fixed" is everything a request carries besides the transcript, taken from the request body the
client really sends (one request per mode through the mock server, split by
:func:`extractor.clients.wire.fixed_parts`): the system prompt (with the schema instructor writes
into it in ``json``/``md_json`` modes), the tool or response-format fields as compact JSON, what
instructor adds to the user turn, and the frame of ``user.md`` around the transcript.

Tokens are o200k_base (GPT-4o family) counts from the ``bpe-openai`` package, which ships its BPE
tables (tiktoken downloads them at run time, which fails offline). Without it the script prints
characters / 4, marked ``~``. OpenAI renders tool schemas into its own, terser form before
billing, so for ``tools`` the JSON count is an upper bound; servers whose chat template inlines
the tools as JSON (vLLM, Ollama) see about this much.

mem0's figures were counted the same way on ``mem0/configs/prompts.py`` of mem0ai/mem0 at commit
``099e325a`` with the date filled in (only the numbers are kept here, not mem0's text).

    /tmp/venv/bin/pip install --target /tmp/bpe bpe-openai   # once
    PYTHONPATH=/tmp/bpe /tmp/venv/bin/python benchmarks/prompt_size.py
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from extractor.clients.base import extract_sync
from extractor.clients.openai_client import MODES, OpenAIClient
from extractor.clients.wire import fixed_parts
from extractor.conversation import conversation_from_data
from extractor.mockserver import MockServer
from extractor.prompts import Prompt, load_prompt

#: (what, characters, o200k tokens), measured on mem0ai/mem0 commit 099e325a.
MEM0 = [
    ("mem0 `FACT_RETRIEVAL_PROMPT` (extraction call, older releases)", 3180, 645),
    ("mem0 `USER_MEMORY_EXTRACTION_PROMPT` (extraction call, mem0 1.0.x default)", 4181, 872),
    ("mem0 update-memory call, fixed part (empty memory, no facts)", 6851, 1467),
]
CONVERSATION = conversation_from_data(
    {"id": "size", "messages": [{"role": "user", "content": "My manager is Alice."}]}
)


def tokenizer() -> tuple[Callable[[str], float], bool]:
    """o200k_base token counts, or characters / 4 when bpe-openai is not installed."""
    try:
        import bpe_openai  # type: ignore[import-not-found]
    except ImportError:
        return (lambda text: len(text) / 4), False
    encoding = bpe_openai.get_encoding("o200k_base")
    return (lambda text: float(len(encoding.encode(text))) if text else 0.0), True


def user_frame(prompt: Prompt) -> str:
    """``user.md`` with its placeholders empty: the part of the user turn that never changes."""
    return prompt.user_template.replace("$transcript", "").replace("$conversation_id", "")


def request_parts(prompt: Prompt, mode: str) -> dict[str, str]:
    with MockServer() as server:
        client = OpenAIClient(model="offline", base_url=server.base_url, api_key="k", mode=mode)
        extract_sync(client, CONVERSATION, prompt)
        body: dict[str, Any] = server.requests[0]
    parts = fixed_parts(body, prompt.render(CONVERSATION)[1]["content"])
    parts["user frame"] = user_frame(prompt).replace("$message_count", "")
    return parts


def main() -> None:
    count, exact = tokenizer()
    mark = "" if exact else "~"
    prompt = load_prompt()
    print(f"prompt {prompt.id} {prompt.version}; tokens: "
          + ("o200k_base (bpe-openai)" if exact else "characters / 4 (bpe-openai not installed)"))  # fmt: skip
    print()
    print("| request | system prompt chars / tok | schema chars / tok | instructor's extra + "
          "user frame chars / tok | **fixed part chars / tok** |")  # fmt: skip
    print("|---|---:|---:|---:|---:|")
    for mode in MODES:
        parts = request_parts(prompt, mode)
        extra = parts["extra"] + parts["user frame"]
        cells = [parts["system"], parts["schema"], extra]
        total_chars = sum(len(c) for c in cells)
        total_tokens = sum(count(c) for c in cells)
        print(f"| `{mode}` | " + " | ".join(f"{len(c):,} / {mark}{count(c):,.0f}" for c in cells)
              + f" | **{total_chars:,} / {mark}{total_tokens:,.0f}** |")  # fmt: skip
    for what, chars, tokens in MEM0:
        shown = f"{tokens:,}" if exact else f"~{chars / 4:,.0f}"
        print(f"| {what} | {chars:,} / {shown} | | | **{chars:,} / {shown}** |")


if __name__ == "__main__":
    main()
