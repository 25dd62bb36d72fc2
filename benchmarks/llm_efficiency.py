"""LLM path efficiency: achieved throughput against the mock server as a fraction of ideal C/L.

The mock server (``extractor mock-server --latency L``) answers every request L seconds after it
arrives. With C conversations in flight, each needing one call, the ideal throughput is C / L
conversations per second; anything below it is overhead on our side. Two paths are measured:

``client``
    the LLM path alone: ``OpenAIClient.extract`` for each conversation, at most C at a time --
    request building, the SDK and HTTP transport, instructor, the gate the re-ask loop runs
    on every answer. This is what issue 7's target (>= 90% at C = 32) is about.
``pipeline``
    everything ``extractor run --base-url <mock> --concurrency C`` does: the batch runner and
    the pipeline around the client (candidates, admission, JSONL writing) as well. Its CPU per
    conversation includes the gate and admission, which no model latency can hide.

The server runs in its own process (its CPU is not charged to the process measured) and each
row first runs its conversations once untimed: that warms the connections and fills the mock's
per-transcript answer memo, so during the timed run the server only waits out L, as a remote
model would, instead of competing for this machine's cores with the offline model. Columns:
"client CPU" is this process's CPU time per conversation, "server CPU" the mock's; a core can
complete at most 1000 / (client CPU ms) conversations per second, whatever C. "core share" is
the fraction of one core a busy loop got just before the row (1.00 on an idle machine; less when
other jobs compete for the cores), to read the wall-clock figures against. With ``--repeat N``
each row is run N times and the median run (by seconds) is printed.

    /tmp/venv/bin/python benchmarks/llm_efficiency.py                 # L=0.2, C=1,8,32,64
    /tmp/venv/bin/python benchmarks/llm_efficiency.py --path client --concurrency 32
    /tmp/venv/bin/python benchmarks/llm_efficiency.py --cold-server   # no untimed first pass
    /tmp/venv/bin/python benchmarks/llm_efficiency.py --repeat 3      # median of three runs
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic

from extractor.batch import BatchConfig, run_batch
from extractor.clients.openai_client import OpenAIClient
from extractor.conversation import Conversation, iter_inputs
from extractor.errors import ExtractorError
from extractor.pipeline import Extractor
from extractor.prompts import load_prompt
from extractor.validation import ValidationOptions

try:
    from extractor.heap import tune_collector
except ImportError:  # an older checkout measured through PYTHONPATH: it did not tune the GC

    def tune_collector() -> int:
        return 0


PATHS = ("client", "pipeline")


@dataclass
class Row:
    path: str
    concurrency: int
    conversations: int
    seconds: float
    steady: float
    client_cpu: float
    server_cpu: float
    failed: int
    core_share: float


class TimedClient(OpenAIClient):
    """Records when each ``extract`` call started and ended (``perf_counter`` seconds)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls: list[tuple[float, float]] = []

    async def extract(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return await super().extract(*args, **kwargs)
        finally:
            self.calls.append((started, time.perf_counter()))


def steady_throughput(calls: list[tuple[float, float]], concurrency: int) -> float:
    """Conversations per second in the run's steady state, by Little's law.

    The window opens when the first ``concurrency`` calls have ended (connections made, the
    first wave's synchronized start over) and closes when the last call starts (from then on
    fewer than ``concurrency`` remain, the drain). Throughput = mean calls in flight over the
    window / mean duration of the calls started in it: the time a slot sits between two calls
    (our overhead too) lowers the first, our per-call overhead raises the second. Counting
    completions in the window instead would depend on where its edges cut the bursts of
    completions a fixed latency produces. A long batch spends nearly all its time in this
    state; a short one also pays ramp and drain once, which the wall-clock column shows.
    """
    if len(calls) < 3 * concurrency:
        return float("nan")
    opened = sorted(end for _, end in calls)[concurrency - 1]
    closed = max(start for start, _ in calls)
    if closed <= opened:
        return float("nan")
    busy = sum(max(0.0, min(end, closed) - max(start, opened)) for start, end in calls)
    inside = [end - start for start, end in calls if opened <= start <= closed]
    return (busy / (closed - opened)) / (sum(inside) / len(inside))


@contextlib.contextmanager
def mock_endpoint(latency: float) -> Iterator[tuple[str, int]]:
    """The base URL and process id of ``extractor mock-server`` in a process of its own."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    exe = Path(sys.executable).with_name("extractor")
    cmd = [str(exe), "mock-server", "--port", str(port), "--latency", str(latency)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(200):
            with contextlib.suppress(OSError):
                urllib.request.urlopen(base + "/models", timeout=1).close()
                break
            time.sleep(0.05)
        yield base, proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_client(client: OpenAIClient, conversations: list[Conversation], concurrency: int) -> int:
    """``client.extract`` for every conversation, at most ``concurrency`` at a time, on one
    event loop (as the batch runner does); returns the number that failed."""
    prompt, options = load_prompt(), ValidationOptions()

    async def main() -> int:
        gate = asyncio.Semaphore(concurrency)

        async def one(conversation: Conversation) -> bool:
            async with gate:
                try:
                    await client.extract(conversation, prompt, options)
                except ExtractorError:
                    return False
                return True

        done = await asyncio.gather(*(one(c) for c in conversations))
        return done.count(False)

    return asyncio.run(main())


def core_share(seconds: float = 0.5) -> float:
    """The fraction of one core a busy loop gets for ``seconds`` of wall-clock time."""
    started, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - started < seconds:
        pass
    return (time.process_time() - cpu) / (time.perf_counter() - started)


def measure(path: str, latency: float, concurrency: int, rounds: int, cold: bool) -> Row:
    count = concurrency * rounds
    share = core_share()
    with tempfile.TemporaryDirectory() as tmp, mock_endpoint(latency) as (base_url, pid):
        src = synthetic.write(count, Path(tmp) / "in.jsonl", seed=concurrency)
        client = TimedClient(model="offline", base_url=base_url, api_key="mock-key")
        extractor = Extractor(client)
        loaded = [c for c in iter_inputs([src]) if isinstance(c, Conversation)]

        def once(out: str) -> int:
            client.calls.clear()
            if path == "client":
                return run_client(client, loaded, concurrency)
            config = BatchConfig(out=Path(tmp) / out, concurrency=concurrency)
            return run_batch([src], extractor, config).failed

        warm = synthetic.write(1, Path(tmp) / "warm.jsonl", seed=0)
        run_batch([warm], extractor, BatchConfig(out=Path(tmp) / "warm-out.jsonl"))
        if not cold:
            once("untimed.jsonl")
        tune_collector()  # as `extractor run` does once it is set up (extractor/heap.py)
        server, cpu, started = cpu_seconds(pid), time.process_time(), time.perf_counter()
        failed = once("out.jsonl")
        seconds = time.perf_counter() - started
        cpu, server = time.process_time() - cpu, cpu_seconds(pid) - server
        steady = steady_throughput(client.calls, concurrency)
    return Row(path, concurrency, count, seconds, steady, cpu, server, failed, share)


def measure_shards(latency: float, concurrency: int, shards: int, rounds: int) -> Row:
    """``extractor run --shard k/N --concurrency C/N`` in N processes at once over one input.

    Seconds = the slowest process's own ``wall_time_s`` (from its summary, so interpreter
    start-up is not counted); the first pass, untimed, warms the mock's answer memo.
    """
    count = concurrency * rounds
    share = core_share()
    exe = str(Path(sys.executable).with_name("extractor"))
    with tempfile.TemporaryDirectory() as tmp, mock_endpoint(latency) as (base_url, pid):
        src = synthetic.write(count, Path(tmp) / "in.jsonl", seed=concurrency)

        def once(tag: str) -> tuple[float, int]:
            common = [exe, "run", str(src), "--model", "mock", "--base-url", base_url,
                      "--api-key", "mock-key", "--no-cache", "--json",
                      "--concurrency", str(concurrency // shards)]  # fmt: skip
            procs = [
                subprocess.Popen(
                    [*common, "--shard", f"{k}/{shards}", "--out", f"{tmp}/{tag}-{k}.jsonl"],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    text=True,
                )
                for k in range(1, shards + 1)
            ]
            summaries = [json.loads(p.communicate()[0]) for p in procs]
            return max(s["wall_time_s"] for s in summaries), sum(s["failed"] for s in summaries)

        once("untimed")
        server = cpu_seconds(pid)
        seconds, failed = once("timed")
        server = cpu_seconds(pid) - server
    return Row(
        f"pipeline, {shards} processes", concurrency, count, seconds, float("nan"),
        float("nan"), server, failed, share,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 8, 32, 64])
    parser.add_argument("--rounds", type=int, default=16, help="conversations = C x rounds")
    parser.add_argument("--path", choices=PATHS, nargs="*", default=list(PATHS))
    parser.add_argument("--repeat", type=int, default=1, help="runs per row; the median is shown")
    parser.add_argument("--shards", type=int, default=0,
                        help="also run the pipeline as this many `extractor run --shard` "
                        "processes sharing C")  # fmt: skip
    parser.add_argument("--cold-server", action="store_true",
                        help="no untimed first pass: the mock computes every answer while timed")  # fmt: skip
    args = parser.parse_args()
    print(f"latency L = {args.latency * 1000:.0f} ms, conversations = C x {args.rounds}, "
          f"mock server in its own process, {'cold' if args.cold_server else 'warm'}")  # fmt: skip
    print("| path | C | conversations | seconds | achieved conv/s | ideal C/L | efficiency | "
          "steady conv/s | steady efficiency | client CPU ms/conv | server CPU ms/conv | "
          "core share | failed |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    jobs = [(path, c) for path in args.path for c in args.concurrency]
    jobs += [("shards", c) for c in args.concurrency if args.shards > 1]
    for path, c in jobs:
        runs = [
            measure_shards(args.latency, c, args.shards, args.rounds)
            if path == "shards"
            else measure(path, args.latency, c, args.rounds, args.cold_server)
            for _ in range(max(1, args.repeat))
        ]
        row = sorted(runs, key=lambda r: r.seconds)[len(runs) // 2]
        achieved, ideal = row.conversations / row.seconds, c / args.latency
        print(f"| {row.path} | {c} | {row.conversations} | {row.seconds:.2f} | {achieved:.1f} | "
              f"{ideal:.1f} | {100 * achieved / ideal:.1f}% | {_num(row.steady)} | "
              f"{_pct(row.steady / ideal)} | {_num(1000 * row.client_cpu / row.conversations)} | "
              f"{1000 * row.server_cpu / row.conversations:.1f} | {row.core_share:.2f} | "
              f"{row.failed} |", flush=True)  # fmt: skip


def _num(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.1f}"


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{100 * value:.1f}%"


if __name__ == "__main__":
    main()
