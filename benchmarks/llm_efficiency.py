"""LLM path efficiency: achieved throughput against the mock server as a fraction of ideal C/L.

The mock server (``extractor.mockserver.MockServer``) answers every request after ``latency`` L
seconds. With C conversations in flight, each needing one call, the ideal throughput is C / L
conversations per second; anything below it is overhead of our client, pipeline and batch
runner (the offline model behind the mock is fast). The batch runs exactly as ``extractor run
--model offline --base-url <mock> --concurrency C`` does, after one untimed warm-up conversation
(imports and client set-up are paid once per process, not per call). The mock server runs in its
own process by default (``--server thread`` keeps it in this one); "client CPU ms/conv" is this
process's CPU time per conversation, the cost that bounds throughput once latency is hidden.

    /tmp/venv/bin/python benchmarks/llm_efficiency.py                 # L=0.2, C=1,8,32,64
    /tmp/venv/bin/python benchmarks/llm_efficiency.py --latency 0.5 --concurrency 32
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic

from extractor.batch import BatchConfig, run_batch
from extractor.clients.openai_client import OpenAIClient
from extractor.mockserver import MockServer
from extractor.pipeline import Extractor


@contextlib.contextmanager
def mock_endpoint(latency: float, where: str) -> Iterator[str]:
    """A mock server's base URL: in its own process (``extractor mock-server``), so its CPU is
    not charged to the process being measured, or as a thread of this one."""
    if where == "thread":
        with MockServer(latency=latency) as server:
            yield server.base_url
        return
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
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def measure(
    latency: float, concurrency: int, rounds: int, where: str
) -> tuple[int, float, float, int]:
    """Conversations run, wall seconds, CPU seconds of this process, failures."""
    count = concurrency * rounds
    with tempfile.TemporaryDirectory() as tmp, mock_endpoint(latency, where) as base_url:
        src = synthetic.write(count, Path(tmp) / "in.jsonl", seed=concurrency)
        client = OpenAIClient(model="offline", base_url=base_url, api_key="mock-key")
        extractor = Extractor(client)
        warm = synthetic.write(1, Path(tmp) / "warm.jsonl", seed=0)
        run_batch([warm], extractor, BatchConfig(out=Path(tmp) / "warm-out.jsonl"))
        config = BatchConfig(out=Path(tmp) / "out.jsonl", concurrency=concurrency)
        started, cpu = time.perf_counter(), time.process_time()
        summary = run_batch([src], extractor, config)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    return count, seconds, cpu, summary.failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="*", default=[1, 8, 32, 64])
    parser.add_argument("--rounds", type=int, default=8, help="conversations = C x rounds")
    parser.add_argument("--server", choices=["process", "thread"], default="process")
    args = parser.parse_args()
    print(f"latency L = {args.latency * 1000:.0f} ms, conversations = C x {args.rounds}, "
          f"mock server in a {args.server}")  # fmt: skip
    print("| C | conversations | seconds | achieved conv/s | ideal C/L | efficiency | "
          "client CPU ms/conv | failed |")  # fmt: skip
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in args.concurrency:
        count, seconds, cpu, failed = measure(args.latency, c, args.rounds, args.server)
        achieved, ideal = count / seconds, c / args.latency
        print(f"| {c} | {count} | {seconds:.2f} | {achieved:.1f} | {ideal:.1f} | "
              f"{100 * achieved / ideal:.1f}% | {1000 * cpu / count:.1f} | {failed} |")  # fmt: skip


if __name__ == "__main__":
    main()
