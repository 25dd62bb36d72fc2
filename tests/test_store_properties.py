"""Properties of the store over random derivation DAGs, support cycles and event orders
(hypothesis): labels are the well-founded ones, taint never escapes, incremental updates equal a
full recompute, rebuild is deterministic, revoke-then-restore is the identity."""

from __future__ import annotations

import json
from functools import cache

from helpers import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import Clock, result, user_says

from extractor import MemoryStore
from extractor.store import DerivedClaim

FE = "FACTUAL_EVIDENCE"

ROOT_TEXTS = [
    ("user", "Our Q2 revenue was $43.8M."),
    ("user", "My manager is Alice."),
    ("assistant", "Q3 revenue was approximately $46 million."),
    ("user", "I prefer tea."),
]


@cache
def root_results() -> list:
    return [
        result(f"root-{i}", (role, text, "2026-06-01T10:00:00"))
        if role == "user"
        else result(f"root-{i}", (role, text))
        for i, (role, text) in enumerate(ROOT_TEXTS)
    ]


op = st.one_of(
    st.tuples(
        st.just("derive"),
        st.lists(st.integers(0, 40), min_size=1, max_size=3),
        st.sampled_from(["SUMMARIZED_FROM", "COPIED_FROM", "PARAPHRASED_FROM"]),
    ),
    st.tuples(
        st.just("support"), st.integers(0, 40), st.lists(st.integers(0, 40), min_size=1, max_size=2)
    ),
    st.tuples(st.just("revoke"), st.integers(0, 40)),
    st.tuples(st.just("restore"), st.integers(0, 40)),
    st.tuples(st.just("verify"), st.integers(0, 40)),
    st.tuples(st.just("revoke_source"), st.integers(0, 40)),
    st.tuples(st.just("echo"), st.integers(0, 40)),  # a root cites the model's output as support
)


def build(ops: list) -> MemoryStore:
    store = MemoryStore(clock=Clock())
    for r in root_results():
        store.ingest(r, subject="u1")
    revoked: list[str] = []
    for n, o in enumerate(ops):
        ids = [c.claim_id for c in store.claims()]

        def pick(i: int, ids: list[str] = ids) -> str:
            return ids[i % len(ids)]

        if o[0] == "derive":
            parents = [pick(i) for i in o[1]]
            text = store.claim(parents[0]).content
            store.derive(
                [DerivedClaim(content=text, requires=parents, relation=o[2])], produced_by=f"op-{n}"
            )
        elif o[0] == "support":
            store.support(pick(o[1]), by=[pick(i) for i in o[2]], informant=f"op-{n}")
        elif o[0] == "revoke":
            store.revoke(pick(o[1]), reason=f"op-{n}")
            revoked.append(pick(o[1]))
        elif o[0] == "restore" and revoked:
            store.restore(revoked[o[1] % len(revoked)], reason=f"op-{n}")
        elif o[0] == "verify":
            store.add_source(f"doc-{n}", kind="DOCUMENT")
            store.verify(pick(o[1]), source=f"doc-{n}", verifier="checker")
        elif o[0] == "echo":
            model = [c.claim_id for c in store.claims() if c.origin_kind == "MODEL_OUTPUT"]
            store.support(pick(o[1]), by=[model[0]], informant=f"op-{n}")
        elif o[0] == "revoke_source":
            sources = sorted(r["source_id"] for r in store.backend.select("sources"))
            store.revoke(sources[o[1] % len(sources)], reason=f"op-{n}")
    return store


def naive_labels(store: MemoryStore) -> dict[str, int | None]:
    """Synchronous Kleene iteration from all-OUT: a claim is IN at round k when one of its
    justifications has every antecedent IN before round k. Independent of the store's code."""
    db = store.backend
    claims = {r["claim_id"]: r for r in db.select("claims")}
    sources = {r["source_id"]: r["status"] for r in db.select("sources")}
    justs: dict[str, list[list[tuple[str, str]]]] = {}
    ants: dict[str, list[tuple[str, str]]] = {}
    for a in db.select("justification_antecedents"):
        ants.setdefault(a["just_id"], []).append((a["antecedent_kind"], a["antecedent_id"]))
    for j in db.select("justifications"):
        justs.setdefault(j["claim_id"], []).append(ants.get(j["just_id"], []))
    level: dict[str, int | None] = dict.fromkeys(claims)
    k = 0
    while True:
        k += 1
        known = {c for c, v in level.items() if v is not None}
        new = [
            c
            for c, row in claims.items()
            if level[c] is None
            and not row["revoked"]
            and not row["erased"]
            and any(
                all(sources.get(i) == "ACTIVE" if kind == "source" else i in known for kind, i in j)
                for j in justs.get(c, [])
            )
        ]
        if not new:
            return level
        for c in new:
            level[c] = k


def unresolved_taint(store: MemoryStore, level: dict[str, int | None]) -> set[str]:
    """Claims whose current (well-founded, minimal) support reaches a claim its admission
    decision did not allow as factual evidence, without a holding verification in between."""
    db = store.backend
    base = {r["claim_id"]: FE in json.loads(r["base_allowed"]) for r in db.select("claims")}
    sources = {r["source_id"]: r["status"] for r in db.select("sources")}
    ants: dict[str, list[tuple[str, str]]] = {}
    for a in db.select("justification_antecedents"):
        ants.setdefault(a["just_id"], []).append((a["antecedent_kind"], a["antecedent_id"]))
    support: dict[str, list[tuple[str, list[tuple[str, str]]]]] = {}
    for j in db.select("justifications"):
        c, a = j["claim_id"], ants.get(j["just_id"], [])
        if level[c] is not None and all(
            (sources.get(i) == "ACTIVE")
            if kind == "source"
            else (level[i] is not None and level[i] < level[c])
            for kind, i in a  # type: ignore[operator]
        ):
            support.setdefault(c, []).append((j["kind"], a))
    tainted: set[str] = set()
    for c in sorted((c for c in level if level[c] is not None), key=lambda c: level[c]):  # type: ignore[arg-type, return-value]
        js = support.get(c, [])
        if any(kind == "VERIFICATION" for kind, _ in js):
            continue
        if not base[c] or any(i in tainted for _, a in js for kind, i in a if kind == "claim"):
            tainted.add(c)
    return tainted


@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, max_size=14))
def test_labels_are_well_founded_and_taint_never_escapes(ops):
    store = build(ops)
    level = naive_labels(store)
    current = {c.claim_id: c for c in store.claims()}
    for cid, lv in level.items():
        assert current[cid].support_label == ("IN" if lv is not None else "OUT"), cid
    for cid in unresolved_taint(store, level):
        assert FE not in current[cid].allowed_uses, f"taint escaped into {cid}"
    for cid, c in current.items():
        if c.support_label == "OUT":
            assert set(c.allowed_uses) <= {"REGRESSION_TEST"}, cid
    assert store.consistent()  # every incremental update equals a full recompute


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, max_size=12))
def test_rebuild_reproduces_the_state_hash(ops):
    store = build(ops)
    report = store.rebuild()
    assert report.identical and store.rebuild().state_hash_after == report.state_hash_after


def state(store: MemoryStore) -> dict[str, tuple]:
    return {
        c.claim_id: (
            c.lifecycle_state,
            tuple(c.allowed_uses),
            c.support_label,
            c.verification_state,
            c.valid_from,
            c.valid_to,
            c.superseded_by,
        )
        for c in store.claims()
    }


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, max_size=12), st.integers(0, 40))
def test_revoke_then_restore_gives_back_every_claims_state(ops, target):
    store = build(ops)
    ids = sorted(c.claim_id for c in store.claims() if c.lifecycle_state != "REVOKED")
    before = state(store)
    x = ids[target % len(ids)]
    store.revoke(x, reason="probe")
    store.restore(x, reason="probe withdrawn")
    assert state(store) == before


@settings(max_examples=examples(10), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.permutations(list(range(6))))
def test_interleaved_ingests_equal_their_serial_order(order):
    texts = [
        ("I live in Paris.", "2026-03-01"),
        ("I moved to Berlin.", "2026-09-01"),
        ("My manager is Alice.", "2026-04-01"),
    ]
    results = [
        (t, user_says(f"{t}-{i}", text, f"{day}T10:00:00"))
        for t in ("acme", "globex")
        for i, (text, day) in enumerate(texts)
    ]
    serial, mixed = MemoryStore(clock=Clock()), MemoryStore(clock=Clock())
    for tenant, r in results:
        serial.ingest(r, tenant=tenant, subject="u1")
    for i in order:
        tenant, r = results[i]
        mixed.ingest(r, tenant=tenant, subject="u1")
    assert state(serial) == state(mixed)
    assert sum(c.superseded_by is not None for c in mixed.claims()) == 2  # Paris, per tenant
