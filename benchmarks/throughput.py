"""Offline throughput: conversations/s and peak RSS of the whole pipeline (``extractor run``).

Every measurement runs in a fresh subprocess, so peak RSS is that run's alone and 1k vs 10k
conversations are comparable (flat memory = streaming works). The real data sets in
``../shared/data`` are run whole, one file per subprocess, and every conversation must be
accounted for (results + failures = lines in the file) with no crash.

    /tmp/venv/bin/python benchmarks/throughput.py                 # 1k and 10k synthetic
    /tmp/venv/bin/python benchmarks/throughput.py --real          # plus every real data file
    /tmp/venv/bin/python benchmarks/throughput.py --profile 2000  # where the time goes
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synthetic

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def child(inputs: list[str]) -> dict[str, Any]:
    """Run the batch exactly as ``extractor run INPUT --out ...`` does, and measure it."""
    from extractor.batch import BatchConfig, run_batch
    from extractor.pipeline import Extractor

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "results.jsonl"
        started = time.perf_counter()
        summary = run_batch(inputs, Extractor(), BatchConfig(out=out))
        seconds = time.perf_counter() - started
        written = sum(1 for _ in out.open("rb")) if out.exists() else 0
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "conversations": summary.conversations,
        "processed": summary.processed,
        "failed": summary.failed,
        "result_lines": written,
        "candidates": summary.candidates,
        "seconds": round(seconds, 2),
        "conv_per_s": round(summary.conversations / seconds, 1),
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "failures_by_stage": summary.failures_by_stage,
    }


def measure(inputs: list[Path]) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", *map(str, inputs)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        return {"crashed": done.returncode, "stderr": done.stderr[-2000:]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def lines_in(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


def profile(count: int) -> str:
    from extractor.batch import BatchConfig, run_batch
    from extractor.pipeline import Extractor

    with tempfile.TemporaryDirectory() as tmp:
        src = synthetic.write(count, Path(tmp) / "in.jsonl")
        prof = cProfile.Profile()
        prof.enable()
        run_batch([src], Extractor(), BatchConfig(out=Path(tmp) / "out.jsonl"))
        prof.disable()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("cumulative")
    stats.print_stats(25)
    return buf.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--real", action="store_true", help="also run ../shared/data/*.jsonl")
    parser.add_argument("--profile", type=int, metavar="N", help="cProfile N synthetic convs")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return
    if args.profile:
        print(profile(args.profile))
        return
    rows: list[tuple[str, int, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            path = synthetic.write(size, Path(tmp) / f"synthetic-{size}.jsonl")
            rows.append((f"synthetic {size}", size, measure([path])))
    if args.real:
        for path in sorted(DATA.glob("*.jsonl")):
            rows.append((path.name, lines_in(path), measure([path])))
    print("| input | conversations | accounted for | failed | seconds | conv/s | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, expected, r in rows:
        if "crashed" in r:
            print(f"| {name} | {expected} | CRASHED rc={r['crashed']} | | | | |")
            print(r["stderr"], file=sys.stderr)
            continue
        accounted = r["processed"] + r["failed"]
        mark = "" if accounted == expected else f" (expected {expected})"
        print(f"| {name} | {r['conversations']} | {accounted}{mark} | {r['failed']} | "
              f"{r['seconds']} | {r['conv_per_s']} | {r['peak_rss_mb']} |")  # fmt: skip


if __name__ == "__main__":
    main()
