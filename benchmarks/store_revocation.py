"""Memory store: revocation cost against a full recompute, ingest throughput, size per memory.

* **Revocation.** A store holds one root with D dependents (a fan-out-4 tree: each claim
  extracted from its parent, ingested through the normal INGEST path) beside an unrelated tree
  of ``--background`` claims (default 4D); ``--alternatives`` dependents also get a SUPPORT
  from an independent root. Revoking the root revalidates exactly its D dependents
  (NEEDS_REVALIDATION, relabel, settle, two versions each, written); a full recompute relabels
  and settles every claim without writing. Reported: wall and CPU time of each and the CPU
  ratio (the machine is shared: CPU time is the comparable figure).
* **Ingest.** Real conversations (``../shared/data/synthetic_persona_chat.jsonl``, the first
  ``--conversations``) through the offline pipeline (not timed), then ``MemoryStore.ingest`` of
  every result into a fresh file store (timed): candidates stored per second.
* **Size.** The store file after ingest and VACUUM, per stored claim.
* **Erasure.** One conversation erased from a file store of ``--erasure-claims`` claims: the
  incremental erasure (CPU, wall; it includes the compaction and the residue scan) against a
  full replay of the log, which each erasure did before.

    .venv/bin/python benchmarks/store_revocation.py --dependents 10000 100000
    .venv/bin/python benchmarks/store_revocation.py --dependents --conversations 300 \\
        --data ../shared/data/synthetic_persona_chat.jsonl
    .venv/bin/python benchmarks/store_revocation.py --dependents --conversations 0 \\
        --erasure-claims 10000 [--erasure-keyed]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from extractor import ConversationResult, Extractor, MemoryStore, OfflineClient
from extractor.store.projection import Cause
from extractor.vocab import CandidateKind

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "synthetic_persona_chat.jsonl"
BATCH = 2000


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 7, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


def template(ex: Extractor) -> ConversationResult:
    r = ex.process({"id": "t", "messages": [{"role": "user", "content": "Our Q2 revenue was $43.8M.",
                                             "timestamp": "2026-06-01T10:00:00"}]})  # fmt: skip
    keep = [c for c in r.candidates if c.kind.value == "OBSERVATION"][:1]
    return r.model_copy(update={"candidates": keep, "decisions": r.decisions[: len(keep)]})


def tree_results(t: ConversationResult, name: str, size: int) -> list[ConversationResult]:
    """A root and ``size`` dependents (fan-out 4: claim i is extracted from claim (i-1)//4),
    as results of BATCH candidates each -- the same INGEST path a real run takes."""
    c0, d0 = t.candidates[0], t.decisions[0]
    ids = [f"mem_{name}{i:09d}" for i in range(size + 1)]
    out = []
    for start in range(0, size + 1, BATCH):
        cands, decs = [], []
        for i in range(start, min(size + 1, start + BATCH)):
            parents = [] if i == 0 else [ids[(i - 1) // 4]]
            cands.append(c0.model_copy(update={"memory_id": ids[i], "parent_memory_ids": parents}))
            decs.append(d0.model_copy(update={"memory_id": ids[i]}))
        out.append(t.model_copy(update={"conversation_id": f"{name}-{start}",
                                        "conversation_hash": f"sha256:{name}{start:012d}",
                                        "candidates": cands, "decisions": decs}))  # fmt: skip
    return out


def revocation(dependents: int, background: int, alternatives: int) -> dict[str, Any]:
    ex = Extractor(client=OfflineClient())
    t = template(ex)
    store = MemoryStore(clock=Clock())
    start = time.perf_counter()
    for r in tree_results(t, "a", dependents) + tree_results(t, "b", background):
        store.ingest(r, subject="u1")
    alt = store.ingest(t.model_copy(update={"conversation_id": "alt",
                                            "conversation_hash": "sha256:alt"}),
                       subject="u1").stored[0] + ":c1"  # fmt: skip
    step = max(1, dependents // max(1, alternatives))
    for i in range(1, dependents + 1, step)[:alternatives]:
        store.support(f"mem_a{i:09d}:c1", by=[alt], informant="bench")
    build = time.perf_counter() - start
    wall, cpu = time.perf_counter(), time.process_time()
    report = store.revoke("mem_a000000000:c1", reason="bench")
    revoke = (time.perf_counter() - wall, time.process_time() - cpu)
    wall, cpu = time.perf_counter(), time.process_time()
    store._projector.recompute_all(Cause(0, "CHECK", ""), write=False)
    full = (time.perf_counter() - wall, time.process_time() - cpu)
    return {
        "dependents": dependents, "background_claims": background,
        "claims_total": len(store.backend.select("claims")), "affected": len(report.affected),
        "restored": len(report.restored), "quarantined": len(report.quarantined),
        "max_depth": report.max_depth, "build_s": round(build, 1),
        "revoke_wall_s": round(revoke[0], 2), "revoke_cpu_s": round(revoke[1], 2),
        "full_recompute_wall_s": round(full[0], 2), "full_recompute_cpu_s": round(full[1], 2),
        "ratio_revoke_to_full_cpu": round(revoke[1] / full[1], 3),
    }  # fmt: skip


def erasure(claims: int, *, keyed: bool = False) -> dict[str, Any]:
    """Erase one conversation (a claim without a structural key; with ``keyed``, a claim alone
    under its key, ``works_at``) from a store of ``claims`` claims: the erasure against a full
    replay of the log (what every erasure cost before it was incremental; ``rebuild`` still
    does it)."""
    ex = Extractor(client=OfflineClient())
    t = template(ex)
    with (
        tempfile.TemporaryDirectory() as tmp,
        MemoryStore(Path(tmp) / "m.db", clock=Clock()) as store,
    ):
        for r in tree_results(t, "e", claims - 1):
            store.ingest(r, subject="u1")
        # in no other claim, so any residue is this erasure's
        secret = "User works at Zanzibar Ledger 7741." if keyed else "Zanzibar ledger 7741"
        c0 = t.candidates[0]
        span = c0.source_span.model_copy(update={"quote": secret})
        kind = CandidateKind.PROPOSITION if keyed else c0.kind
        gone = t.model_copy(update={
            "conversation_id": "gone", "conversation_hash": "sha256:gone",
            "candidates": [c0.model_copy(update={"content": secret, "source_span": span,
                                                 "kind": kind})],
        })  # fmt: skip
        store.ingest(gone, subject="u2")
        wall, cpu = time.perf_counter(), time.process_time()
        report = store.erase(conversation="gone")
        erase = (time.perf_counter() - wall, time.process_time() - cpu)
        wall, cpu = time.perf_counter(), time.process_time()
        rebuilt = store.rebuild()
        replay = (time.perf_counter() - wall, time.process_time() - cpu)
    return {"claims": claims, "keyed": keyed, "projection": report.projection, "residue": len(report.residue),
            "erase_wall_s": round(erase[0], 2), "erase_cpu_s": round(erase[1], 2),
            "replay_wall_s": round(replay[0], 2), "replay_cpu_s": round(replay[1], 2),
            "rebuild_identical": rebuilt.identical}  # fmt: skip


def ingest(conversations: int, data: Path) -> dict[str, float | int]:
    ex = Extractor(client=OfflineClient())
    results = []
    with data.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            if n >= conversations:
                break
            conv = json.loads(line)
            results.append(ex.process({"id": conv["id"], "messages": conv["messages"]}))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.db"
        with MemoryStore(path, clock=Clock()) as store:
            t, cpu = time.perf_counter(), time.process_time()
            stored = sum(len(store.ingest(r, subject=f"u{i}").stored)
                         for i, r in enumerate(results))  # fmt: skip
            elapsed, cpu = time.perf_counter() - t, time.process_time() - cpu
            store.backend.compact()
            size = sum(p.stat().st_size for p in Path(tmp).iterdir())
    return {"conversations": len(results), "memories": stored, "ingest_wall_s": round(elapsed, 2),
            "ingest_cpu_s": round(cpu, 2), "memories_per_cpu_s": round(stored / cpu, 1),
            "bytes_per_memory": round(size / max(1, stored))}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dependents", type=int, nargs="*", default=[10_000])
    ap.add_argument("--background", type=int, default=None, help="Default: 4 x dependents.")
    ap.add_argument("--alternatives", type=int, default=100, help="Dependents given alt support.")
    ap.add_argument("--conversations", type=int, default=300)
    ap.add_argument("--erasure-claims", type=int, default=0, help="Erasure cost in a store of N.")
    ap.add_argument(
        "--erasure-keyed",
        action="store_true",
        help="The erased claim has a structural key (alone under it).",
    )
    ap.add_argument("--data", type=Path, default=DATA, help="The conversations ingested.")
    args = ap.parse_args()
    if args.conversations and not args.data.is_file():
        ap.error(f"{args.data}: no such file (synthetic_persona_chat.jsonl of shared/data; "
                 "give it with --data, or --conversations 0)")  # fmt: skip
    if args.erasure_claims:
        print(json.dumps({"erasure": erasure(args.erasure_claims, keyed=args.erasure_keyed)}))
    for d in args.dependents:
        bg = args.background if args.background is not None else 4 * d
        print(json.dumps({"revocation": revocation(d, bg, args.alternatives)}))
        sys.stdout.flush()
    if args.conversations:
        print(json.dumps({"ingest": ingest(args.conversations, args.data)}))


if __name__ == "__main__":
    main()
