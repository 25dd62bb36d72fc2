"""Bytes out per byte in: results file and ledger against the input, and where the bytes go.

    extractor run ../shared/data/memorybank.jsonl --out /tmp/mb.jsonl --ledger /tmp/mb.db -q
    python benchmarks/output_size.py ../shared/data/memorybank.jsonl /tmp/mb.jsonl /tmp/mb.db

Prints the ratios, the result line's bytes by field (and by candidate / decision field), and the
ledger's bytes by table and index (SQLite's ``dbstat``; the ledger's size includes its ``-wal``
file when one is left).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any


def size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def result_fields(results: Path) -> tuple[Counter[str], Counter[str]]:
    top: Counter[str] = Counter()
    inner: Counter[str] = Counter()
    with results.open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            for key, value in record.items():
                top[key] += size(value)
            for kind in ("candidates", "decisions"):  # format 1: both lists
                for item in record.get(kind, []):
                    for key, value in item.items():
                        inner[f"{kind}.{key}"] += size(value)
                    for key, value in (item.get("decision") or {}).items():  # format 2
                        inner[f"{kind}.decision.{key}"] += size(value)
    return top, inner


def ledger_objects(ledger: Path) -> list[tuple[str, int]]:
    with sqlite3.connect(ledger) as db:
        rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")
        return [(str(n), int(s)) for n, s in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", type=Path)
    parser.add_argument("results", type=Path)
    parser.add_argument("ledger", type=Path, nargs="?")
    args = parser.parse_args()
    n_in = args.input.stat().st_size
    n_out = args.results.stat().st_size
    print(f"input {n_in:,} B; results {n_out:,} B = {n_out / n_in:.2f}x")
    if args.ledger is not None:
        files = [args.ledger, args.ledger.with_name(args.ledger.name + "-wal")]
        n_led = sum(p.stat().st_size for p in files if p.exists())
        print(f"ledger {n_led:,} B = {n_led / n_in:.2f}x")
    top, inner = result_fields(args.results)
    print("\n| result field | bytes | share |\n|---|---:|---:|")
    for key, n in top.most_common(8):
        print(f"| {key} | {n:,} | {n / n_out:.0%} |")
    print("\n| candidate / decision field | bytes | share of results |\n|---|---:|---:|")
    for key, n in inner.most_common(12):
        print(f"| {key} | {n:,} | {n / n_out:.0%} |")
    if args.ledger is not None:
        print("\n| ledger table / index | bytes |\n|---|---:|")
        for name, n in ledger_objects(args.ledger)[:10]:
            print(f"| {name} | {n:,} |")


if __name__ == "__main__":
    main()
