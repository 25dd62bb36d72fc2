"""Tokens, cost and generation time per conversation: this project against mem0, on the wire.

One run, one logging stub: an OpenAI-compatible server that records every request and answer.
Our requests it answers as :class:`~extractor.mockserver.MockServer` does (the offline model,
output format 2); mem0's chat requests it answers in mem0's own format (``{"memory": [{"id",
"text"}]}``) with *the same facts* -- the contents of the offline model's claims for that
conversation -- and mem0's embedding requests with fixed vectors. mem0 runs from its public
PyPI package in a throwaway venv outside the repo (``benchmarks/mem0_driver.py``, which imports
nothing of ours), its default pipeline (one ``Memory.add`` per conversation, Qdrant in a
temporary directory). Tokens are exact o200k_base counts (``bpe-openai``, tiktoken-compatible,
ships its tables) of what crossed the wire: the messages' contents plus the tool /
response-format schema as compact JSON (per-message framing tokens are left out on both sides).

Generation time: the stub sleeps ``--token-latency`` seconds per completion token of each answer
(the mock's generation-time mode), for both, so wall time per conversation is measured at
``--concurrency`` 1 and 32 for us and at mem0's one-at-a-time ``add``.

    python3 -m venv /tmp/mem0-venv && /tmp/mem0-venv/bin/pip install mem0ai   # once
    .venv/bin/pip install bpe-openai                                          # once
    .venv/bin/python benchmarks/tokens.py --limit 50 --mem0-python /tmp/mem0-venv/bin/python
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from extractor.clients.openai_client import OpenAIClient
from extractor.conversation import Conversation
from extractor.evaluation.msc import iter_msc
from extractor.mockserver import MockServer
from extractor.offline import offline_extract
from extractor.pipeline import Extractor

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "msc-valid.jsonl"
#: USD per million tokens (input, output), public list prices (OpenAI pricing page, 2025).
PRICES = {"gpt-4o-mini": (0.15, 0.60), "gpt-4.1": (2.00, 8.00)}
EMBEDDING_PRICE = 0.02  # text-embedding-3-small, USD per million tokens
EVENTS = {"ASSERTION_EVENT", "TOOL_OBSERVATION", "INTERACTION_EVENT"}


def counter() -> Any:
    import bpe_openai  # type: ignore[import-not-found]

    encoding = bpe_openai.get_encoding("o200k_base")
    return lambda text: len(encoding.encode(text)) if text else 0


count = counter()


@dataclass
class Tally:
    requests: int = 0
    prompt: int = 0
    completion: int = 0
    embedding_requests: int = 0
    embedding: int = 0
    answer_seconds: list[float] = field(default_factory=list)


@dataclass
class Stub:
    """What the logging stub knows: the facts per conversation, and what it has seen."""

    facts: dict[str, list[str]]
    token_latency: float
    mock: MockServer = field(default_factory=MockServer)
    current: str = ""
    ours: Tally = field(default_factory=Tally)
    mem0: Tally = field(default_factory=Tally)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def chat(self, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        request = json.loads(body)
        messages = request.get("messages", [])
        text = "\n".join(str(m.get("content") or "") for m in messages)
        schema = {
            k: request[k] for k in ("tools", "tool_choice", "response_format") if k in request
        }
        prompt = count(text) + (count(json.dumps(schema, separators=(",", ":"))) if schema else 0)
        if '<conversation id="' in text:
            reply = self.mock.handle("POST", "/v1/chat/completions", headers, body)
            status, answer = reply.status, reply.body
            tally = self.ours
        else:
            memory = [{"id": str(i), "text": t} for i, t in enumerate(self.facts[self.current])]
            content = json.dumps({"memory": memory}, ensure_ascii=False)
            status, answer, tally = 200, _completion(request, content), self.mem0
        message = answer.get("choices", [{}])[0].get("message", {}) if status == 200 else {}
        calls = message.get("tool_calls") or []
        out = calls[0]["function"]["arguments"] if calls else message.get("content") or ""
        tokens = count(out)
        time.sleep(self.token_latency * tokens)
        with self.lock:
            tally.requests += 1
            tally.prompt += prompt
            tally.completion += tokens
        return status, answer

    def embeddings(self, body: bytes) -> dict[str, Any]:
        request = json.loads(body)
        inputs = request["input"] if isinstance(request["input"], list) else [request["input"]]
        with self.lock:
            self.mem0.embedding_requests += 1
            self.mem0.embedding += sum(count(str(i)) for i in inputs)
        vector = [0.0] * 1535 + [1.0]
        data = [
            {"object": "embedding", "index": i, "embedding": vector} for i in range(len(inputs))
        ]
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        return {"object": "list", "data": data, "model": request.get("model"), "usage": usage}


def _completion(request: dict[str, Any], content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub", "object": "chat.completion", "created": 0,
        "model": request.get("model", "stub"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }  # fmt: skip


def serve(stub: Stub) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            if self.path.endswith("/control"):
                stub.current = json.loads(body)["conversation"]
                status, answer = 200, {}
            elif self.path.endswith("/embeddings"):
                status, answer = 200, stub.embeddings(body)
            else:
                status, answer = stub.chat(headers, body)
            payload = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def facts_of(conv: Conversation) -> list[str]:
    """What the offline model claims in ``conv``: the facts mem0 is answered with."""
    return [
        c["content"] for c in offline_extract(conv)["candidates"] if c["memory_type"] not in EVENTS
    ]


async def run_ours(convs: list[Conversation], base_url: str, concurrency: int) -> float:
    client = OpenAIClient(model="stub", base_url=base_url, api_key="k", timeout=600)
    extractor = Extractor(client)
    gate = asyncio.Semaphore(concurrency)

    async def one(conv: Conversation) -> None:
        async with gate:
            await extractor.aprocess(conv)

    started = time.perf_counter()
    await asyncio.gather(*(one(c) for c in convs))
    return time.perf_counter() - started


def cost(tally: Tally, n: int, prices: tuple[float, float]) -> float:
    inp, out = prices
    return (
        (tally.prompt * inp + tally.completion * out + tally.embedding * EMBEDDING_PRICE) / n / 1e6
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--mem0-python", type=Path, required=True)
    parser.add_argument("--token-latency", type=float, default=0.001)
    parser.add_argument("--timed", type=int, default=16, help="conversations for wall time")
    args = parser.parse_args()
    convs = [c.conversation for c in iter_msc(DATA, limit=args.limit)]
    stub = Stub({c.id: facts_of(c) for c in convs}, token_latency=0.0)
    server = serve(stub)
    base = f"http://127.0.0.1:{server.server_address[1]}/v1"
    asyncio.run(run_ours(convs, base, 8))
    driver = Path(__file__).with_name("mem0_driver.py")
    subprocess.run([str(args.mem0_python), str(driver), "--base-url", base,
                    "--limit", str(args.limit)], check=True)  # fmt: skip
    n = len(convs)
    print(f"{n} MSC conversations, o200k tokens per conversation (exact counts of the wire):\n")
    print("| per MSC conversation | this project | mem0 " + _mem0_version(args.mem0_python) + " |")
    print("|---|---:|---:|")
    ours, mem0 = stub.ours, stub.mem0
    rows = [
        ("LLM requests", ours.requests / n, mem0.requests / n, "{:.2f}"),
        ("embedding requests", 0, mem0.embedding_requests / n, "{:.2f}"),
        ("prompt tokens (incl. schema)", ours.prompt / n, mem0.prompt / n, "{:,.0f}"),
        ("**completion tokens**", ours.completion / n, mem0.completion / n, "{:,.0f}"),
        ("embedding tokens", 0, mem0.embedding / n, "{:,.0f}"),
    ]
    for name, a, b, fmt in rows:
        print(f"| {name} | {fmt.format(a)} | {fmt.format(b)} |")
    for model, prices in PRICES.items():
        print(f"| cost at {model} (${prices[0]}/${prices[1]} per M in/out) | "
              f"${cost(ours, n, prices):.5f} | ${cost(mem0, n, prices):.5f} |")  # fmt: skip
    timed = convs[: args.timed]
    stub.token_latency = args.token_latency
    c1 = asyncio.run(run_ours(timed, base, 1)) / len(timed)
    c32 = asyncio.run(run_ours(timed * 2, base, 32)) / (2 * len(timed))
    print(f"\nwall time per conversation, generation at {args.token_latency * 1000:g} ms per "
          f"output token ({len(timed)} conversations): C=1 {c1:.2f} s, C=32 {c32:.3f} s")  # fmt: skip
    server.shutdown()


def _mem0_version(python: Path) -> str:
    done = subprocess.run([str(python), "-c", "import importlib.metadata as m; "
                           "print(m.version('mem0ai'))"], capture_output=True, text=True)  # fmt: skip
    return done.stdout.strip()


if __name__ == "__main__":
    sys.exit(main())
