"""LLM path efficiency: achieved throughput against the mock server as a fraction of ideal C/L.

The mock server (``extractor.mockserver.MockServer``) answers every request after ``latency`` L
seconds. With C conversations in flight, each needing one call, the ideal throughput is C / L
conversations per second; anything below it is overhead of our client, pipeline and batch
runner (the offline model behind the mock is fast). The batch runs exactly as ``extractor run
--model offline --base-url <mock> --concurrency C`` does, after one untimed warm-up conversation
(imports and client set-up are paid once per process, not per call).

    /tmp/venv/bin/python benchmarks/llm_efficiency.py                 # L=0.2, C=1,8,32,64
    /tmp/venv/bin/python benchmarks/llm_efficiency.py --latency 0.5 --concurrency 32
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic

from extractor.batch import BatchConfig, run_batch
from extractor.clients.openai_client import OpenAIClient
from extractor.mockserver import MockServer
from extractor.pipeline import Extractor


def measure(latency: float, concurrency: int, rounds: int) -> tuple[int, float, int]:
    """Conversations run, wall seconds, failures."""
    count = concurrency * rounds
    with tempfile.TemporaryDirectory() as tmp, MockServer(latency=latency) as server:
        src = synthetic.write(count, Path(tmp) / "in.jsonl", seed=concurrency)
        client = OpenAIClient(model="offline", base_url=server.base_url, api_key="mock-key")
        extractor = Extractor(client)
        warm = synthetic.write(1, Path(tmp) / "warm.jsonl", seed=0)
        run_batch([warm], extractor, BatchConfig(out=Path(tmp) / "warm-out.jsonl"))
        config = BatchConfig(out=Path(tmp) / "out.jsonl", concurrency=concurrency)
        started = time.perf_counter()
        summary = run_batch([src], extractor, config)
        seconds = time.perf_counter() - started
    return count, seconds, summary.failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 8, 32, 64])
    parser.add_argument("--rounds", type=int, default=8, help="conversations = C x rounds")
    args = parser.parse_args()
    print(f"latency L = {args.latency * 1000:.0f} ms, conversations = C x {args.rounds}")
    print("| C | conversations | seconds | achieved conv/s | ideal C/L | efficiency | failed |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for c in args.concurrency:
        count, seconds, failed = measure(args.latency, c, args.rounds)
        achieved, ideal = count / seconds, c / args.latency
        print(f"| {c} | {count} | {seconds:.2f} | {achieved:.1f} | {ideal:.1f} | "
              f"{100 * achieved / ideal:.1f}% | {failed} |")  # fmt: skip


if __name__ == "__main__":
    main()
