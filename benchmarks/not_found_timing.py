"""HTTP service: does a 404 for another tenant's memory take longer than one for no memory?

Tenant ``globex`` stores real conversations (``/work/shared/data/synthetic_persona_chat.jsonl``,
the first ``--conversations``, offline pipeline); tenant ``acme`` asks for memories it does not
own: one set of ids that are globex's, one set that exist nowhere (same shape, ``mem_`` + 20
hex). The two kinds of request are interleaved in a random order (seeded) so that drift of the
shared machine falls on both alike, and timed one by one with ``perf_counter_ns``:

* ``http``: ``GET /v1/memories/{id}`` through the whole app in-process (ASGI, no socket): key
  check, routing, the store lookup, the 404 body;
* ``owned``: the lookup alone that decides the 404, the service's
  :func:`extractor.service.memories.owned` (one tenant-first ``memories`` query);
* ``claims``: for comparison, ``MemoryStore.claims(tenant="acme", memory_id=...)``, the lookup
  the service made before: its view query finds the other tenant's memory by id and only then
  filters on the tenant (see /work/team/service-notes.md).

Reported per level: the median, p10/p90/p99 of each kind, the difference of medians with a
bootstrap 95% interval, and the two-sided Mann-Whitney U test (normal approximation with tie
correction). A timed assertion is never made: the suite checks instead that both kinds make the
same store calls and run the same SQL (``tests/test_service_tenants.py``).

    .venv/bin/python benchmarks/not_found_timing.py --conversations 300 --samples 4000
"""

from __future__ import annotations

import argparse
import json
import math
import random
import secrets
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from extractor import Extractor, MemoryStore, OfflineClient
from extractor.service import ApiError, Caller, KeyStore, Scope, ServiceLimits, create_app
from extractor.service.memories import owned

DATA = Path("/work/shared/data/synthetic_persona_chat.jsonl")


def fill(store: MemoryStore, data: Path, conversations: int) -> list[str]:
    """Ingest the first ``conversations`` into tenant globex; their memory ids."""
    extractor = Extractor(OfflineClient())
    ids: list[str] = []
    with data.open(encoding="utf-8") as lines:
        for _, line in zip(range(conversations), lines, strict=False):
            data = json.loads(line)
            data["id"] = f"globex/{data['id']}"
            report = store.ingest(extractor.process(data, tenant="globex"), tenant="globex")
            ids += report.stored
    return ids


def timed(kinds: dict[str, list[str]], call: Callable[[str], Any], samples: int, seed: int):
    order = [(kind, i % len(ids)) for kind, ids in kinds.items() for i in range(samples)]
    random.Random(seed).shuffle(order)
    out: dict[str, list[int]] = {kind: [] for kind in kinds}
    for kind, index in order:
        start = time.perf_counter_ns()
        call(kinds[kind][index])
        out[kind].append(time.perf_counter_ns() - start)
    return {kind: np.array(values, dtype=float) / 1000.0 for kind, values in out.items()}


def mann_whitney(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """U of ``a`` and the two-sided p-value (normal approximation, tie-corrected)."""
    both = np.concatenate([a, b])
    order = both.argsort(kind="mergesort")
    ranks = np.empty(len(both))
    sorted_values = both[order]
    start = 0
    ties = 0.0
    while start < len(both):
        end = start
        while end + 1 < len(both) and sorted_values[end + 1] == sorted_values[start]:
            end += 1
        ranks[order[start : end + 1]] = (start + end) / 2 + 1
        t = end - start + 1
        ties += t**3 - t
        start = end + 1
    n1, n2 = len(a), len(b)
    u = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    n = n1 + n2
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))))
    z = (u - n1 * n2 / 2) / sigma
    return u, math.erfc(abs(z) / math.sqrt(2))


def bootstrap_median_diff(a: np.ndarray, b: np.ndarray, seed: int, rounds: int = 2000):
    rng = np.random.default_rng(seed)
    diffs = [
        np.median(rng.choice(a, len(a))) - np.median(rng.choice(b, len(b))) for _ in range(rounds)
    ]
    return float(np.median(a) - np.median(b)), np.percentile(diffs, [2.5, 97.5])


def report(level: str, times: dict[str, np.ndarray], seed: int) -> None:
    theirs, nowhere = times["another tenant's"], times["nonexistent"]
    for kind, values in times.items():
        p10, p50, p90, p99 = np.percentile(values, [10, 50, 90, 99])
        print(f"| {level} | {kind} | {len(values)} | {p50:.1f} | {p10:.1f} | {p90:.1f} | "
              f"{p99:.1f} |")  # fmt: skip
    diff, (lo, hi) = bootstrap_median_diff(theirs, nowhere, seed)
    u, p = mann_whitney(theirs, nowhere)
    effect = u / (len(theirs) * len(nowhere))
    SUMMARY.append(f"| {level} | {diff:+.2f} [{lo:+.2f}, {hi:+.2f}] | {u:.0f} | {effect:.3f} | "
                   f"{p:.3g} |")  # fmt: skip


SUMMARY: list[str] = []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="Conversations (JSONL).")
    parser.add_argument("--conversations", type=int, default=300)
    parser.add_argument("--samples", type=int, default=4000, help="Requests of each kind.")
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        store = MemoryStore(Path(scratch) / "memory.db")
        theirs = fill(store, args.data, args.conversations)
        nowhere = [f"mem_{secrets.token_hex(10)}" for _ in theirs]
        kinds = {"another tenant's": theirs, "nonexistent": nowhere}
        keys = KeyStore(":memory:")
        key, token = keys.create(tenant="acme", caller="bench", scopes=[Scope.AUDIT])
        caller = Caller.of(key)
        app = create_app(keys=keys, store=store, service_limits=ServiceLimits(rate_per_s=None))
        headers = {"authorization": f"Bearer {token}"}
        print(f"{len(theirs)} memories of globex; {args.samples} requests of each kind\n")
        print(
            "| level | 404 for | n | median µs | p10 | p90 | p99 |\n|---|---|---:|---:|---:|---:|---:|"
        )
        with TestClient(app) as client:

            def http(memory_id: str) -> None:
                response = client.get(f"/v1/memories/{memory_id}", headers=headers)
                assert response.status_code == 404

            def lookup(memory_id: str) -> None:
                try:
                    owned(store, caller, memory_id)
                except ApiError:
                    return
                raise AssertionError(memory_id)

            def claims(memory_id: str) -> None:
                assert store.claims(tenant="acme", memory_id=memory_id) == []

            for call in (http, lookup, claims):
                call(theirs[0])  # warm up
            report("http", timed(kinds, http, args.samples, args.seed), args.seed)
            report("owned", timed(kinds, lookup, args.samples, args.seed), args.seed)
            report("claims", timed(kinds, claims, args.samples // 10, args.seed), args.seed)
        keys.close()
        store.close()
    print("\n| level | median difference µs (theirs - none) [95% CI] | Mann-Whitney U | "
          "U/(n1 n2) | p (two-sided) |\n|---|---|---:|---:|---:|")  # fmt: skip
    print("\n".join(SUMMARY))
    return 0


if __name__ == "__main__":
    sys.exit(main())
