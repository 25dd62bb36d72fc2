"""LoCoMo user-fact recall of a results file: how many gold user facts got a candidate.

A gold fact (``gold.facts`` of ../shared/data/locomo.jsonl, speaker mapped to ``user``) is found
when some candidate of its conversation quotes one of the fact's messages (``message_indices``;
message ids are ``m<index>``, as the loader assigns them). ``persisted`` counts only candidates
the policy lets persist. Conversations 1-5 and 6-10 are reported apart: nothing was tuned on
either, and the second half is the held-out check that the first is not a fluke. Intervals are
95% Wilson intervals over facts (facts of one chat are not independent: read them as a floor on
the uncertainty).

    extractor run ../shared/data/locomo.jsonl --out /tmp/locomo.jsonl -q
    python benchmarks/locomo_recall.py /tmp/locomo.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from extractor.resultline import decode

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo.jsonl"


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 0.0)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (centre - half, centre + half)


def quoted(result: dict[str, Any], persisted_only: bool) -> set[str]:
    persist = {d["memory_id"] for d in result["decisions"] if d["persist"]}
    return {
        c["source_span"]["message_id"]
        for c in result["candidates"]
        if not persisted_only or c["memory_id"] in persist
    }


def score(results: dict[str, dict[str, Any]], chats: list[dict[str, Any]]) -> list[str]:
    rows = ["| chats | user facts | candidate recall [95% CI] | persisted recall [95% CI] |",
            "|---|---:|---:|---:|"]  # fmt: skip
    halves = {"1-5 (dev)": chats[:5], "6-10 (held out)": chats[5:], "all 10": chats}
    for label, part in halves.items():
        n = found = kept = 0
        for chat in part:
            result = results.get(chat["id"])
            any_ids = quoted(result, False) if result else set()
            kept_ids = quoted(result, True) if result else set()
            for fact in chat["gold"]["facts"]:
                if fact["role"] != "user":
                    continue
                ids = {f"m{i}" for i in fact["message_indices"]}
                n += 1
                found += bool(ids & any_ids)
                kept += bool(ids & kept_ids)
        rows.append(f"| {label} | {n} | {cell(found, n)} | {cell(kept, n)} |")
    return rows


def cell(hits: int, n: int) -> str:
    low, high = wilson(hits, n)
    return f"{hits / n:.1%} [{low:.1%}, {high:.1%}]" if n else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path, help="results JSONL of `extractor run` on LoCoMo")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    with args.results.open(encoding="utf-8") as f:
        results = {r["conversation_id"]: r for r in (decode(json.loads(line)) for line in f)}
    with args.data.open(encoding="utf-8") as f:
        chats = [json.loads(line) for line in f]
    limited = sum(
        1
        for r in results.values()
        for j in r.get("rejections", [])
        if j["code"] == "CANDIDATE_LIMIT_EXCEEDED"
    ) + sum(
        r.get("rejections_omitted", {}).get("CANDIDATE_LIMIT_EXCEEDED", 0) for r in results.values()
    )
    total = sum(len(r["candidates"]) for r in results.values())
    print(f"candidates accepted: {total}; rejected CANDIDATE_LIMIT_EXCEEDED: {limited}\n")
    print("\n".join(score(results, chats)))


if __name__ == "__main__":
    main()
