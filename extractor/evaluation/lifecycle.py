"""Lifecycle metrics of the memory store (seed §17): generated scenarios, ground truth built
beside them, and the figures the chapter asks for. ``extractor eval --lifecycle``.

Scenario families (seeded, so a run is reproducible):

* **laundering** -- a model-output root summarized along a chain (depth 1-8, fan-in up to 4
  with clean context parents), sometimes verified at the end by an independent source, sometimes
  "verified" by a source from its own lineage. Taint escape: a claim descended from the root,
  not independently verified, that can serve as FACTUAL_EVIDENCE; or a self-verification
  accepted.
* **revocation** -- a random DAG over clean roots with alternative support, reads recorded on
  random claims, then one root revoked. The truth is the least fixpoint of the scenario's own
  graph. False invalidation: a claim the truth keeps IN that the store took OUT; missed
  invalidation: the reverse; restore correctness: dependents with independent support that
  ended IN; exposure before containment: recorded reads of affected claims the report found
  (recall of the impact report); post-revocation exposure: an OUT claim still usable beyond
  REGRESSION_TEST; descendants and depth per revoked root.
* **syndication** -- sources syndicated from k primary releases, chunks spread over them;
  corroboration error: the store's family count differs from k.
* **supersession** -- facts about one subject over several relations, then a new value for one;
  collateral: another relation's claim retired; and model output contradicting the user must
  not supersede it.
* **erasure** -- a file store with a secret in one conversation and a summary of it; residue:
  files in which the secret is still readable after ``erase``.

Safety figures (all must be zero): taint escape, false invalidation, missed invalidation,
post-revocation exposure, corroboration errors, collateral retirements, model-over-user
supersessions, erasure residue.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ..clients.offline import OfflineClient
from ..pipeline import Extractor
from ..results import ConversationResult
from ..store import DerivedClaim, MemoryStore

FE = "FACTUAL_EVIDENCE"
SECRET = "17 Quillfeather Lane"
T0 = datetime(2026, 7, 1, 9, 0, tzinfo=UTC)


class LifecycleFigures(BaseModel):
    """The figures of ``extractor eval --lifecycle`` (schemas/lifecycle-report.schema.json)."""

    model_config = ConfigDict(extra="forbid")

    scenarios: dict[str, int]
    seed: int
    taint_escapes: int
    taint_checked: int = Field(description="Descendants of a tainted root checked.")
    false_invalidations: int
    missed_invalidations: int
    labels_checked: int
    restore_correct: int
    restore_expected: int
    exposures_found: int
    exposures_expected: int = Field(description="Reads of affected claims before revocation.")
    post_revocation_exposure: int
    descendants_per_root_mean: float
    descendants_per_root_max: int
    depth_max: int
    corroboration_errors: int
    collateral_retirements: int
    model_over_user_supersessions: int
    erasure_residue: int

    @property
    def safety(self) -> dict[str, int]:
        return {
            "taint_escapes": self.taint_escapes,
            "false_invalidations": self.false_invalidations,
            "missed_invalidations": self.missed_invalidations,
            "post_revocation_exposure": self.post_revocation_exposure,
            "corroboration_errors": self.corroboration_errors,
            "collateral_retirements": self.collateral_retirements,
            "model_over_user_supersessions": self.model_over_user_supersessions,
            "erasure_residue": self.erasure_residue,
        }

    @property
    def clean(self) -> bool:
        return not any(self.safety.values())


class _Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@cache
def _results() -> dict[str, ConversationResult]:
    """The few conversations every scenario ingests (extracted once, offline)."""
    ex = Extractor(client=OfflineClient())

    def says(cid: str, role: str, text: str, when: str | None = None) -> ConversationResult:
        msg = {"role": role, "content": text, **({"timestamp": when} if when else {})}
        if role == "assistant":
            msg["commitment"] = "HOLD"  # the seed's held answer
        return ex.process({"id": cid, "messages": [msg]})

    out = {f"fact-{i}": says(f"fact-{i}", "user", t, "2026-06-01T10:00:00") for i, t in enumerate(
        ["Our Q2 revenue was $43.8M.", "My manager is Alice.", "I prefer green tea.",
         "I work at Acme.", "Our office is in Lisbon."])}  # fmt: skip
    out["rumor"] = says("rumor", "assistant", "Q3 revenue was approximately $46 million.")
    out["secret"] = says("secret", "user", f"I live in Sydney at {SECRET}.", "2026-06-01T10:00:00")
    for i, (t, day) in enumerate(
        [
            ("I live in Paris.", "03"),
            ("I work at Acme.", "04"),
            ("My manager is Alice.", "05"),
            ("My name is Sam.", "02"),
        ]
    ):
        out[f"about-{i}"] = says(f"about-{i}", "user", t, f"2026-{day}-01T10:00:00")
    out["move"] = says("move", "user", "I moved to Berlin.", "2026-09-01T10:00:00")
    out["model-move"] = says(
        "model-move", "assistant", "User lives in Rome.", "2026-10-01T10:00:00"
    )
    return out


def _claim(store: MemoryStore, key: str, *, kind: str | None = None) -> str:
    report = store.ingest(_results()[key], subject="u1")
    ids = [m + ":c1" for m in report.stored + report.already_stored]
    if kind is not None:
        ids = [c for c in ids if store.claim(c).kind == kind]
    return ids[0]


# --- laundering ------------------------------------------------------------------------------


def _laundering(rng: random.Random, f: dict[str, int]) -> None:
    store = MemoryStore(clock=_Clock())
    rumor = _claim(store, "rumor")
    clean = [_claim(store, f"fact-{i}", kind="OBSERVATION") for i in range(3)]
    text = store.claim(rumor).content
    chain = [rumor]
    for step in range(rng.randint(1, 8)):
        context = rng.sample(clean, rng.randint(0, 3))
        (claim,) = store.derive([DerivedClaim(content=text, requires=[chain[-1]], context=context)],
                                produced_by=f"summarizer-{step}").stored  # fmt: skip
        chain.append(claim.claim_id)
    verified: set[str] = set()
    if rng.random() < 0.5:
        store.add_source("independent-filing", kind="DOCUMENT")
        if store.verify(chain[-1], source="independent-filing", verifier="analyst").accepted:
            verified.add(chain[-1])
    if rng.random() < 0.5:
        store.add_source("from-memory", kind="DOCUMENT", derived_from=[rumor])
        attempt = store.verify(chain[-1], source="from-memory", verifier="loop")
        f["taint_escapes"] += int(attempt.accepted)
    for cid in chain[1:]:
        f["taint_checked"] += 1
        if cid not in verified and FE in store.claim(cid).allowed_uses:
            f["taint_escapes"] += 1


# --- revocation ------------------------------------------------------------------------------


def _fixpoint(nodes: dict[str, list[list[str]]], premises: set[str]) -> set[str]:
    held = set(premises)
    while True:
        new = {n for n, alts in nodes.items() if n not in held and any(
            all(a in held for a in alt) for alt in alts)}  # fmt: skip
        if not new:
            return held
        held |= new


def _revocation(rng: random.Random, f: dict[str, int], spread: list[int]) -> None:
    store = MemoryStore(clock=_Clock())
    roots = [_claim(store, f"fact-{i}", kind="OBSERVATION") for i in range(5)]
    graph: dict[str, list[list[str]]] = {}
    pool = list(roots)
    for n in range(rng.randint(3, 25)):
        parents = rng.sample(pool, rng.randint(1, min(3, len(pool))))
        text = store.claim(parents[0]).content
        (c,) = store.derive([DerivedClaim(content=text, requires=parents)],
                            produced_by=f"d{n}").stored  # fmt: skip
        graph[c.claim_id] = [sorted(parents)]
        if rng.random() < 0.3:
            alt = rng.sample(pool, 1)
            store.support(c.claim_id, by=alt, informant="alt")
            graph[c.claim_id].append(alt)
        pool.append(c.claim_id)
    target = rng.choice(roots)
    readers = rng.sample(pool, rng.randint(0, min(6, len(pool))))
    for i, cid in enumerate(readers):
        _record_read(store, f"read-{i}", cid)
    before_in = _fixpoint(graph, set(roots))
    after_in = _fixpoint(graph, set(roots) - {target})
    report = store.revoke(target, reason="eval")
    dependents = {a.claim_id for a in report.affected}
    spread.append(len(dependents))
    f["depth_max"] = max(f["depth_max"], report.max_depth)
    for cid in graph:
        label = store.claim(cid).support_label == "IN"
        truth = cid in after_in
        f["labels_checked"] += 1
        f["false_invalidations"] += int(truth and not label)
        f["missed_invalidations"] += int(label and not truth)
        if not label and set(store.claim(cid).allowed_uses) - {"REGRESSION_TEST"}:
            f["post_revocation_exposure"] += 1
        if cid in dependents and cid in before_in and truth:
            f["restore_expected"] += 1
            f["restore_correct"] += int(label)
    affected = dependents | {target}
    f["exposures_expected"] += sum(1 for c in readers if c in affected)
    f["exposures_found"] += len({e.read_id for e in report.exposures})


def _record_read(store: MemoryStore, read_id: str, claim_id: str) -> None:
    """A read as the read path records it (its audit tables), before the revocation."""
    at = "2026-07-01T09:00:00.000000+00:00"
    store.backend.insert("reads", [{
        "read_id": read_id, "at": at, "tenant": "default", "caller": "agent", "purpose": FE,
        "query_hash": "sha256:eval", "as_of": None, "known_at": None, "read_policy_id": None,
        "read_policy_version": None,
    }])  # fmt: skip
    store.backend.insert("read_items", [{"read_id": read_id, "claim_id": claim_id,
                                         "stage": "SERIALIZED", "rank": 1, "score": 1.0,
                                         "rules_fired": "[]"}])  # fmt: skip


# --- syndication, supersession, erasure ------------------------------------------------------


def _syndication(rng: random.Random, f: dict[str, int]) -> None:
    store = MemoryStore(clock=_Clock())
    claim = _claim(store, "fact-0", kind="OBSERVATION")
    k = rng.randint(1, 3)
    sources = []
    for r in range(k):
        store.add_source(f"release-{r}", kind="RELEASE")
        for u in range(rng.randint(1, 4)):
            sid = f"url-{r}-{u}"
            store.add_source(sid, kind="URL", uri=f"https://site-{u}.example/{r}")
            store.link_sources(sid, f"release-{r}", relation=rng.choice(
                ["SYNDICATED_FROM", "COPIED_FROM", "SHARES_PRIMARY_SOURCE_WITH"]))  # fmt: skip
            sources.append(sid)
    for n in range(rng.randint(len(sources), 3 * len(sources))):
        store.add_evidence(claim, source=sources[n % len(sources)], locator=f"chunk-{n}")
    families = store.corroboration(claim).families - 1  # minus the conversation it was said in
    f["corroboration_errors"] += int(families != k)


def _supersession(rng: random.Random, f: dict[str, int]) -> None:
    store = MemoryStore(clock=_Clock())
    about = [_claim(store, f"about-{i}", kind="PROPOSITION") for i in rng.sample(range(4), 4)]
    if rng.random() < 0.5:
        _claim(store, "model-move", kind="PROPOSITION")
        f["model_over_user_supersessions"] += int(store.claim(about[0]).superseded_by is not None)
    _claim(store, "move", kind="PROPOSITION")
    paris = _claim(store, "about-0", kind="PROPOSITION")
    for cid in about:
        retired = store.claim(cid).superseded_by is not None
        if cid != paris and retired:
            f["collateral_retirements"] += 1


def _erasure(rng: random.Random, f: dict[str, int]) -> None:
    with tempfile.TemporaryDirectory() as tmp, MemoryStore(Path(tmp) / "m.db",
                                                            clock=_Clock()) as store:  # fmt: skip
        prop = _claim(store, "secret", kind="PROPOSITION")
        for i in rng.sample(range(5), rng.randint(1, 5)):
            _claim(store, f"fact-{i}")
        content = store.claim(prop).content
        store.derive([DerivedClaim(content=content, requires=[prop])], produced_by="profile")
        report = (store.erase(subject="u1") if rng.random() < 0.3
                  else store.erase(conversation="secret"))  # fmt: skip
        f["erasure_residue"] += len(report.residue)
        f["erasure_residue"] += len(store.verify_erasure([SECRET]).residue)


FAMILIES: dict[str, Callable[[random.Random, dict[str, int]], None]] = {
    "laundering": _laundering, "syndication": _syndication, "supersession": _supersession,
}  # fmt: skip

#: Counters of :class:`LifecycleFigures`: every int field but the seed and the largest spread.
_COUNTERS = [
    n for n, field in LifecycleFigures.model_fields.items()
    if field.annotation is int and n not in ("seed", "descendants_per_root_max")
]  # fmt: skip


def evaluate_lifecycle(scenarios: int = 40, *, seed: int = 0) -> LifecycleFigures:
    """Run ``scenarios`` of each family (erasure, which writes files: a fifth as many) with
    ``random.Random(seed)``."""
    rng = random.Random(seed)
    f: dict[str, int] = dict.fromkeys(_COUNTERS, 0)
    spread: list[int] = []
    for _ in range(scenarios):
        _revocation(rng, f, spread)
        for run in FAMILIES.values():
            run(rng, f)
    erasures = max(1, scenarios // 5)
    for _ in range(erasures):
        _erasure(rng, f)
    return LifecycleFigures(
        scenarios={"revocation": scenarios, **dict.fromkeys(FAMILIES, scenarios),
                   "erasure": erasures},
        seed=seed,
        descendants_per_root_mean=round(sum(spread) / len(spread), 2) if spread else 0.0,
        descendants_per_root_max=max(spread, default=0),
        **f,
    )  # fmt: skip


def render_lifecycle(r: LifecycleFigures) -> str:
    runs = ", ".join(f"{n} {k}" for k, n in r.scenarios.items())
    rate = r.restore_correct / r.restore_expected if r.restore_expected else 1.0
    found = r.exposures_found / r.exposures_expected if r.exposures_expected else 1.0
    lines = [
        f"Lifecycle scenarios (seed {r.seed}): {runs}",
        f"  taint escape                 {r.taint_escapes} of {r.taint_checked} descendants",
        f"  false invalidation           {r.false_invalidations} of {r.labels_checked} claims",
        f"  missed invalidation          {r.missed_invalidations} of {r.labels_checked} claims",
        f"  restore correctness          {r.restore_correct}/{r.restore_expected} ({rate:.1%})",
        f"  exposure before containment  {r.exposures_found}/{r.exposures_expected} recorded "
        f"reads reported ({found:.1%})",
        f"  post-revocation exposure     {r.post_revocation_exposure}",
        f"  descendants per revoked root mean {r.descendants_per_root_mean}, max "
        f"{r.descendants_per_root_max}; max depth {r.depth_max}",
        f"  corroboration errors         {r.corroboration_errors}",
        f"  collateral retirements       {r.collateral_retirements}",
        f"  model over user supersession {r.model_over_user_supersessions}",
        f"  erasure residue              {r.erasure_residue}",
        "safety figures: " + ("all zero" if r.clean else "NOT ZERO: " + ", ".join(
            k for k, v in r.safety.items() if v)),
    ]  # fmt: skip
    return "\n".join(lines)
