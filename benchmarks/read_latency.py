"""Read latency of the governed read path at N memories per tenant (p50 / p95 over queries).

One tenant holds N memories for one subject (the worst case: the whole tenant is one user's
eligible slice), plus a second tenant of N/10 that must never be read. A third of the memories
are user assertion events (ACTIVE, factual evidence), a third the propositions they assert
(PROVISIONAL, personalization), a third model output (QUARANTINED, regression only), as the real
pipeline and the default admission policy decide them; contents are random sentences over a
2,000-word vocabulary (seeded). Each read is the full path: stage 1 in SQL, ranking over the
eligible slice, the read policy, evidence dereferencing for FACTUAL_EVIDENCE, serialization and
the audit write.

    .venv/bin/python benchmarks/read_latency.py --sizes 10000 100000 --queries 50

``--store-dir DIR`` keeps each store as ``DIR/memory-N.db`` and reuses it on the next run (the
transcripts are regenerated from the same seed, so nothing but the ingest is skipped).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from read_store_helpers import Transcripts, candidate, conversation

from extractor import Extractor, MemoryStore, OfflineClient
from extractor.admission import admit
from extractor.read import Caller, HashingEmbedder, MemoryReader
from extractor.vocab import CandidateKind, MemoryType, Origin, VerificationState

PER_CONVERSATION = 1000
RANKERS = ("lexical", "hybrid")
KINDS = [
    {
        "origin_kind": Origin.USER,
        "memory_type": MemoryType.ASSERTION_EVENT,
        "kind": CandidateKind.OBSERVATION,
        "verification_state": VerificationState.VERIFIED_OBSERVATION_OF_EVENT,
    },
    {
        "origin_kind": Origin.USER,
        "memory_type": MemoryType.WORLD_PROPOSITION,
        "kind": CandidateKind.PROPOSITION,
        "verification_state": VerificationState.UNVERIFIED,
    },
    {
        "origin_kind": Origin.MODEL_OUTPUT,
        "memory_type": MemoryType.MODEL_INFERENCE,
        "kind": CandidateKind.PROPOSITION,
        "verification_state": VerificationState.UNVERIFIED,
    },
]


def sentences(rng: random.Random, words: list[str], n: int) -> list[str]:
    return [" ".join(rng.choice(words) for _ in range(rng.randint(6, 14))) + "." for _ in range(n)]


def populate(
    store: MemoryStore | None, transcripts: Transcripts, tenant: str, n: int, rng, words
) -> float:
    """Ingest ``n`` memories into ``store`` (``None``: only regenerate their transcripts)."""
    extractor = Extractor(client=OfflineClient())
    started = time.perf_counter()
    for c in range(0, n, PER_CONVERSATION):
        texts = sentences(rng, words, min(PER_CONVERSATION, n - c))
        conv = conversation(f"{tenant}-{c}", *texts, tenant=tenant, user="u1")
        transcripts.add(conv)
        if store is None:
            continue
        cands = [
            candidate(conv, i, memory_id=f"mem_{tenant}_{c + i}", **KINDS[i % 3])
            for i in range(len(texts))
        ]
        base = extractor.process({"id": conv.id, "messages": [{"role": "user", "content": "x"}]})
        result = base.model_copy(
            update={
                "conversation_id": conv.id,
                "conversation_hash": conv.content_hash(),
                "candidates": cands,
                "decisions": admit(cands),
            }
        )
        store.ingest(result, tenant=tenant, subject="u1")
    return time.perf_counter() - started


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(path: Path, transcripts, queries, purpose: str, embedder) -> dict[str, float]:
    with MemoryReader(path, transcripts=transcripts, embedder=embedder) as reader:
        caller = Caller(id="bench")
        reader.read(queries[0], tenant="big", subject="u1", caller=caller, purpose=purpose)  # warm
        times = []
        for q in queries:
            t = time.perf_counter()
            result = reader.read(q, tenant="big", subject="u1", caller=caller, purpose=purpose, k=8)
            times.append((time.perf_counter() - t) * 1000)
        return {
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(percentile(times, 0.95), 1),
            "eligible": result.eligible_count,
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--store-dir", type=Path, default=None, help="keep and reuse the stores")
    parser.add_argument(
        "--purposes", nargs="+", default=["PERSONALIZATION", "FACTUAL_EVIDENCE"], help="to read for"
    )
    parser.add_argument("--rankers", nargs="+", default=["lexical", "hybrid"], choices=RANKERS)
    args = parser.parse_args()
    rng = random.Random(0)
    words = sorted(
        {
            "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
            for _ in range(2000)
        }
    )
    ask = random.Random(1)  # its own seed: the stores do not depend on --queries
    queries = [" ".join(ask.choice(words) for _ in range(3)) for _ in range(args.queries)]
    print(
        f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, SQLite {__import__('sqlite3').sqlite_version}"
    )
    for n in args.sizes:
        workdir = args.store_dir or Path(tempfile.mkdtemp(prefix="read-bench-"))
        workdir.mkdir(parents=True, exist_ok=True)
        path = workdir / f"memory-{n}.db"
        transcripts = Transcripts()
        if path.exists():
            MemoryStore(path).close()  # applies any newer store migration
            populate(None, transcripts, "big", n, rng, words)
            populate(None, transcripts, "other", max(1, n // 10), rng, words)
            row: dict[str, object] = {"memories": n, "ingest_s": "reused"}
        else:
            with MemoryStore(path) as store:
                ingest_s = populate(store, transcripts, "big", n, rng, words)
                populate(store, transcripts, "other", max(1, n // 10), rng, words)
            row = {"memories": n, "ingest_s": round(ingest_s, 1)}
        for purpose in args.purposes:
            for ranker in args.rankers:
                embedder = HashingEmbedder(256) if ranker == "hybrid" else None
                row[f"{ranker} {purpose}"] = measure(path, transcripts, queries, purpose, embedder)
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
