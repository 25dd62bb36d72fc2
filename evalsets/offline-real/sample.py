"""Draw a fixed sample of the offline model's candidates from the real data sets, and score labels.

    python evalsets/offline-real/sample.py draw --seed 1 --out evalsets/offline-real/round1.jsonl
    python evalsets/offline-real/sample.py show evalsets/offline-real/round1.jsonl   # with context
    python evalsets/offline-real/sample.py rate evalsets/offline-real/round1.jsonl

``draw`` runs the whole pipeline (offline model, gate, default admission policy) as
``extractor run`` does with no options, over the four real data sets of ``../shared/data``
(LoCoMo, MemoryBank, Synthetic-Persona-Chat, HH-RLHF), and draws ``--per-set`` accepted
candidates from each. A candidate is a memory the gate accepted, of any type but the bookkeeping
events (ASSERTION_EVENT, INTERACTION_EVENT): exactly what ``extractor eval`` scores. Conversations
are visited in a seeded random order, one random candidate from each in turn, so a sample spreads
over as many conversations as the set has. Only the candidate's own text and ids are written
(the quote, the content, the fields a reader judges); ``show`` prints the surrounding messages
from the data for the reader, never into the file.

Labels follow ``README.md`` (the rubric): each line gets ``label`` -- ``sensible`` or the first
rubric criterion it fails -- and a short ``note``. ``rate`` prints the sensible rate per data set
and overall with a 95% Wilson interval.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from extractor.pipeline import Extractor

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
SETS = {
    "locomo": "locomo.jsonl",
    "memorybank": "memorybank.jsonl",
    "persona-chat": "synthetic_persona_chat.jsonl",
    "hh-rlhf": "hh_rlhf_harmless_test.jsonl",
}
EVENTS = {"ASSERTION_EVENT", "INTERACTION_EVENT"}
LABELS = (
    "sensible",
    "not_about_user",
    "not_self_contained",
    "unfaithful",
    "wrong_time",
    "not_lasting",
    "harmful_unflagged",
)


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _candidates(extractor: Extractor, line: str, dataset: str) -> list[dict[str, Any]]:
    result = extractor.process(json.loads(line))
    decisions = {d.memory_id: d for d in result.decisions}
    out = []
    for c in result.candidates:
        if c.memory_type.value in EVENTS:
            continue
        d = decisions[c.memory_id]
        out.append(
            {
                "key": f"{c.conversation_id}#{c.candidate_id}",
                "dataset": dataset,
                "conversation_id": c.conversation_id,
                "message_id": c.source_span.message_id,
                "memory_type": c.memory_type.value,
                "quote": c.source_span.quote,
                "content": c.content,
                "temporal": c.temporal.model_dump(mode="json", exclude_none=True),
                "hedges": list(c.uncertainty.hedges),
                "reported_by": c.uncertainty.reported_by,
                "lifecycle": d.lifecycle_state.value,
                "allowed_uses": [u.value for u in d.allowed_uses],
                "flags": [str(f) for f in d.flags],
                "model": c.provenance.model,
                "label": None,
                "note": "",
            }
        )
    return out


def draw(seed: int, per_set: int, data: Path) -> Iterator[dict[str, Any]]:
    rng = random.Random(seed)
    extractor = Extractor()
    for dataset, name in SETS.items():
        lines = _lines(data / name)
        order = list(range(len(lines)))
        rng.shuffle(order)
        pools: dict[int, list[dict[str, Any]]] = {}
        taken = 0
        while taken < per_set:
            progressed = False
            for index in order:
                if taken >= per_set:
                    break
                if index not in pools:
                    pools[index] = _candidates(extractor, lines[index], dataset)
                pool = pools[index]
                if pool:
                    yield pool.pop(rng.randrange(len(pool)))
                    taken += 1
                    progressed = True
            if not progressed:
                break  # the set has fewer candidates than asked for


def show(path: Path, data: Path) -> None:
    rows = [json.loads(line) for line in _lines(path)]
    convs: dict[str, dict[str, Any]] = {}
    wanted = {r["conversation_id"] for r in rows}
    for name in SETS.values():
        for line in _lines(data / name):
            conv = json.loads(line)
            if conv["id"] in wanted:
                convs[conv["id"]] = conv
    for n, r in enumerate(rows):
        msgs = convs[r["conversation_id"]]["messages"]
        index = int(r["message_id"].removeprefix("m"))
        before = msgs[index - 1]["content"] if index else ""
        said = msgs[index]["content"]
        print(
            f"[{n}] {r['key']}  {r['memory_type']}  {r['temporal']}  {r['lifecycle']}"
            f"  uses={r['allowed_uses']} flags={r['flags']}"
        )
        print(f"    before: {str(before)[:300]!r}")
        print(f"    said:   {str(said)[:400]!r}")
        print(f"    quote:  {r['quote']!r}")
        print(f"    content:{r['content']!r}")


def rate(path: Path) -> None:
    rows = [json.loads(line) for line in _lines(path)]
    missing = [r["key"] for r in rows if r.get("label") not in LABELS]
    if missing:
        sys.exit(f"{path}: {len(missing)} lines have no valid label (first: {missing[0]})")
    by_set: dict[str, list[bool]] = {}
    for r in rows:
        by_set.setdefault(r["dataset"], []).append(r["label"] == "sensible")
    by_set["all"] = [r["label"] == "sensible" for r in rows]
    for name, marks in by_set.items():
        lo, hi = _wilson(sum(marks), len(marks))
        print(
            f"{name:13} {sum(marks):4}/{len(marks):<4} {100 * sum(marks) / len(marks):5.1f}%"
            f"  (95% {100 * lo:.1f}-{100 * hi:.1f})"
        )
    print("errors:", dict(Counter(r["label"] for r in rows if r["label"] != "sensible")))


def _wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("draw")
    d.add_argument("--seed", type=int, required=True)
    d.add_argument("--per-set", type=int, default=80)
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--data", type=Path, default=DATA)
    s = sub.add_parser("show")
    s.add_argument("path", type=Path)
    s.add_argument("--data", type=Path, default=DATA)
    r = sub.add_parser("rate")
    r.add_argument("path", type=Path)
    args = parser.parse_args()
    if args.command == "draw":
        if args.out.exists():
            sys.exit(f"{args.out} exists: a sample is drawn once (pick another --out)")
        with args.out.open("w", encoding="utf-8") as out:
            for row in draw(args.seed, args.per_set, args.data):
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
    elif args.command == "show":
        show(args.path, args.data)
    else:
        rate(args.path)


if __name__ == "__main__":
    main()
