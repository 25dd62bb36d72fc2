"""Recall of LoCoMo evidence turns: the full read path against plain top-k over everything.

Every LoCoMo conversation (``../shared/data/locomo.jsonl``) goes through the real pipeline with
the offline model and the default admission policy, into one memory store (tenant ``locomo``,
one subject per conversation). For each question with evidence turns, the question is the query;
a claim "hits" a turn when its evidence span is in that message. We report, per purpose:

* recall@k of the evidence turns for the full read path (eligibility, ranking over the eligible
  slice, read policy, with evidence dereferenced against the stored transcripts);
* recall@k for plain top-k over every claim of the subject (the same ranker, no gate);
* how many of plain top-k's items the read path would not have admitted for the purpose
  (exposure), and on how many questions at least one.

Intervals are 95% percentile-bootstrap over questions (2,000 resamples, seed 0). Conversations
0-4 are the development half, 5-9 the held-out half; nothing here was tuned on either (the read
policy is the shipped one, written before this ran). LoCoMo's second speaker is a person, but the
data set maps it to ``assistant``, so its turns are MODEL_OUTPUT to the pipeline: quarantined,
never evidence. That is the pipeline's documented mapping, and it caps what any governed read
can recall here.

    .venv/bin/python benchmarks/locomo_read.py --k 10 [--embedder minilm|hashing] [--json out]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from extractor import Extractor, MemoryStore, OfflineClient
from extractor.conversation import Conversation, conversation_from_data
from extractor.read import Caller, MemoryReader, UseDecision
from extractor.read.embed import HashingEmbedder, VectorRanker
from extractor.read.evidence import parse_ref
from extractor.read.rank import EligibleSlice, HybridRanker, LexicalRanker

DATA = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo.jsonl"
)  # ../shared/data
PURPOSES = ("CONVERSATIONAL_CONTEXT", "PERSONALIZATION", "FACTUAL_EVIDENCE")
CALLER = Caller(id="eval:locomo")


class Transcripts:
    def __init__(self) -> None:
        self.by_hash: dict[str, Conversation] = {}

    def transcript(self, conversation_hash: str) -> Conversation | None:
        return self.by_hash.get(conversation_hash)


def bootstrap(values: list[float], n: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    if not values:
        return (float("nan"),) * 3
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=len(values))) / len(values) for _ in range(n))
    return sum(values) / len(values), means[int(0.025 * n)], means[int(0.975 * n) - 1]


def turn_of(ref: str | None) -> int | None:
    span = parse_ref(ref)
    if span is None or not span.message_id.startswith("m"):
        return None
    return int(span.message_id[1:])


def ingest(store: MemoryStore, rows: list[dict[str, Any]], transcripts: Transcripts) -> float:
    extractor = Extractor(client=OfflineClient())
    started = time.perf_counter()
    for row in rows:
        data = {
            "id": row["id"],
            "messages": row["messages"],
            "metadata": {"tenant": "locomo", "user_id": row["id"]},
        }
        conversation = conversation_from_data(data)
        transcripts.by_hash[conversation.content_hash()] = conversation
        store.ingest(extractor.process(data))
    return time.perf_counter() - started


def evaluate(args: argparse.Namespace) -> dict[str, Any]:
    rows = [json.loads(line) for line in args.data.open(encoding="utf-8")]
    workdir = Path(tempfile.mkdtemp(prefix="locomo-read-"))
    transcripts = Transcripts()
    store = MemoryStore(workdir / "memory.db")
    ingest_s = ingest(store, rows, transcripts)
    claims = {r["id"]: store.claims(tenant="locomo", subject=r["id"]) for r in rows}
    turns = {c.claim_id: turn_of(c.evidence_ref) for cs in claims.values() for c in cs}
    embedder = None
    if args.embedder == "minilm":
        from extractor.read import SentenceTransformerEmbedder

        embedder = SentenceTransformerEmbedder()
    elif args.embedder == "hashing":
        embedder = HashingEmbedder()
    reader = MemoryReader(store, transcripts=transcripts, embedder=embedder)
    vectors = VectorRanker(embedder) if embedder is not None else None
    lexical = LexicalRanker(reader._db, index="claims_fts")
    plain = HybridRanker([lexical, vectors]) if vectors is not None else lexical
    out: dict[str, Any] = {
        "k": args.k,
        "ranker": reader.ranker.name,
        "ingest_s": round(ingest_s, 1),
        "claims": sum(len(c) for c in claims.values()),
        "purposes": {},
    }
    for purpose in args.purposes:
        out["purposes"][purpose] = run_purpose(
            rows, claims, turns, reader, plain, purpose, args.k, args.questions
        )
    store.close()
    return out


def run_purpose(rows, claims, turns, reader, plain, purpose, k, limit=None) -> dict[str, Any]:
    per_half: dict[str, dict[str, list[float]]] = {}
    for index, row in enumerate(rows):
        half = "dev" if index < 5 else "held_out"
        acc = per_half.setdefault(half, {"gated": [], "plain": [], "exposed": [], "any": []})
        subject = row["id"]
        everything = EligibleSlice(
            tuple(sorted(c.claim_id for c in claims[subject])), _texts(claims[subject])
        )
        verdict = reader.decide(
            everything.claim_ids, tenant="locomo", subject=subject, caller=CALLER, purpose=purpose
        )
        admissible = {c for c, d in verdict.items() if isinstance(d, UseDecision) and d.admissible}
        asked = 0
        for qa in row["gold"]["qa"]:
            gold = set(qa.get("message_indices") or [])
            if not gold:
                continue
            if limit is not None and asked >= limit:
                break
            asked += 1
            result = reader.read(
                qa["question"],
                tenant="locomo",
                subject=subject,
                caller=CALLER,
                purpose=purpose,
                k=k,
            )
            got = {turns[i.claim_id] for i in result.items}
            top = plain.rank(qa["question"], everything, k)
            plain_turns = {turns[h.claim_id] for h in top}
            exposed = [h.claim_id for h in top if h.claim_id not in admissible]
            acc["gated"].append(len(got & gold) / len(gold))
            acc["plain"].append(len(plain_turns & gold) / len(gold))
            acc["exposed"].append(float(len(exposed)))
            acc["any"].append(1.0 if exposed else 0.0)
    report = {}
    for half, acc in per_half.items():
        report[half] = {
            "questions": len(acc["gated"]),
            "recall_gated": bootstrap(acc["gated"]),
            "recall_plain": bootstrap(acc["plain"]),
            "exposed_per_question": bootstrap(acc["exposed"]),
            "questions_with_exposure": bootstrap(acc["any"]),
            "exposed_total": int(sum(acc["exposed"])),
        }
    return report


def _texts(claims):
    by_id = {c.claim_id: c.content for c in claims}
    return lambda ids: {c: by_id[c] for c in ids}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--embedder", choices=["none", "hashing", "minilm"], default="none")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--data", type=Path, default=DATA, help="locomo.jsonl")
    parser.add_argument(
        "--questions", type=int, help="At most this many questions per conversation (first ones)."
    )
    parser.add_argument("--purposes", nargs="+", default=list(PURPOSES), choices=PURPOSES)
    args = parser.parse_args()
    if not args.data.is_file():
        print(
            f"{args.data}: not found (the LoCoMo file of ../shared/data; --data)", file=sys.stderr
        )
        return 2
    report = evaluate(args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
