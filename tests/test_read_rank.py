"""Relevance (stage 2): FTS5 BM25, exact cosine over the eligible slice, and their fusion."""

from __future__ import annotations

import random
import sqlite3

import numpy as np
import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from read_factories import view

from extractor.read.embed import HashingEmbedder, VectorRanker
from extractor.read.rank import (
    EligibleSlice,
    HybridRanker,
    LexicalRanker,
    Scored,
    create_fts,
    fts_query,
    index_fts,
)

WORDS = [
    "revenue",
    "quarter",
    "manager",
    "alice",
    "bob",
    "tea",
    "lisbon",
    "hiking",
    "filing",
    "report",
    "dog",
    "cat",
    "piano",
    "jazz",
]


def _corpus(n: int, seed: int = 7):
    rng = random.Random(seed)
    return [view(" ".join(rng.choice(WORDS) for _ in range(6))) for _ in range(n)]


@pytest.fixture
def db():
    con = sqlite3.connect(":memory:")
    create_fts(con)
    yield con
    con.close()


def test_fts_query_quotes_every_word_so_no_operator_is_injected():
    assert (
        fts_query('revenue NEAR("x" OR y) * -z')
        == '"revenue" OR "near" OR "x" OR "or" OR "y" OR "z"'
    )
    assert fts_query("  ?! ") is None


def test_lexical_ranker_ranks_only_the_eligible_ids(db):
    corpus = _corpus(200)
    index_fts(db, corpus)
    eligible = corpus[::10]
    hits = LexicalRanker(db).rank("revenue manager", EligibleSlice.of(eligible), 50)
    ids = {v.claim_id for v in eligible}
    assert hits and {h.claim_id for h in hits} <= ids
    with_word = {v.claim_id for v in eligible if "revenue" in v.content or "manager" in v.content}
    assert {h.claim_id for h in hits} == with_word
    assert hits == sorted(hits, key=lambda h: (-h.score, h.claim_id))


def test_index_fts_is_idempotent(db):
    corpus = _corpus(5)
    assert index_fts(db, corpus) == 5
    assert index_fts(db, corpus) == 0


def test_exact_cosine_over_a_one_percent_slice_equals_brute_force():
    corpus = _corpus(3000, seed=3)
    eligible = corpus[::100]  # 1%
    embedder = HashingEmbedder(64)
    got = VectorRanker(embedder).rank("alice manager report", EligibleSlice.of(eligible), 10)
    q = np.asarray(embedder.embed(["alice manager report"])[0])
    brute = sorted(
        (
            Scored(v.claim_id, float(np.asarray(embedder.embed([v.content])[0]) @ q))
            for v in eligible
        ),
        key=lambda s: (-s.score, s.claim_id),
    )[:10]
    assert [h.claim_id for h in got] == [h.claim_id for h in brute]
    assert len(got) == 10


def test_vector_ranker_caches_in_sqlite_and_forgets(tmp_path):
    con = sqlite3.connect(tmp_path / "v.db")
    corpus = _corpus(20)
    first = VectorRanker(HashingEmbedder(32), db=con).rank(
        "tea lisbon", EligibleSlice.of(corpus), 5
    )
    calls = []

    class Counting(HashingEmbedder):
        def embed(self, texts):
            calls.append(list(texts))
            return super().embed(texts)

    second = VectorRanker(Counting(32), db=con)
    assert second.rank("tea lisbon", EligibleSlice.of(corpus), 5) == first
    assert calls == [["tea lisbon"]]  # every memory vector came from the table
    second.forget([corpus[0].claim_id])
    rest = EligibleSlice.of(corpus[1:])
    assert second.rank("tea lisbon", rest, 5) == VectorRanker(HashingEmbedder(32)).rank(
        "tea lisbon", rest, 5
    )
    assert con.execute(
        "SELECT count(*) FROM claim_embeddings WHERE claim_id = ?", (corpus[0].claim_id,)
    ).fetchone() == (0,)


def test_hashing_embedder_is_deterministic_and_normalized():
    a, b = HashingEmbedder(128).embed(["Der Zug fährt um 7 Uhr.", ""])
    assert a == HashingEmbedder(128).embed(["Der Zug fährt um 7 Uhr."])[0]
    assert abs(sum(x * x for x in a) - 1) < 1e-9
    assert b == [0.0] * 128
    with pytest.raises(ValueError, match="at least 8"):
        HashingEmbedder(4)


class _Fixed:
    def __init__(self, name, order):
        self.name, self._order = name, order

    def rank(self, query, eligible, k):
        return [Scored(c, 1.0) for c in self._order][:k]


def test_rrf_fuses_and_breaks_ties_on_claim_id():
    eligible = EligibleSlice.of([])
    hybrid = HybridRanker([_Fixed("a", ["x", "y", "z"]), _Fixed("b", ["y", "x", "w"])])
    hits = hybrid.rank("q", eligible, 4)
    assert [h.claim_id for h in hits] == ["x", "y", "w", "z"]  # x,y tie and w,z tie: by claim id
    assert hybrid.name == "rrf(a,b)"
    with pytest.raises(ValueError, match="at least one ranker"):
        HybridRanker([])


@settings(max_examples=examples(40))
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), st.integers(1, 30))
def test_rankers_return_at_most_k_eligible_ids_deterministically(words, k):
    con = sqlite3.connect(":memory:")
    create_fts(con)
    corpus = _corpus(60, seed=1)
    index_fts(con, corpus)
    eligible = EligibleSlice.of(corpus[5:25])
    ids = set(eligible.claim_ids)
    query = " ".join(words)
    for ranker in (
        LexicalRanker(con),
        VectorRanker(HashingEmbedder(32)),
        HybridRanker([LexicalRanker(con), VectorRanker(HashingEmbedder(32))]),
    ):
        hits = ranker.rank(query, eligible, k)
        assert len(hits) <= k and {h.claim_id for h in hits} <= ids
        assert hits == ranker.rank(query, eligible, k)


def test_the_slice_never_reads_text_outside_itself():
    inside, outside = view("inside"), view("outside")
    read = []
    s = EligibleSlice(
        (inside.claim_id,), lambda ids: read.extend(ids) or dict.fromkeys(ids, "inside")
    )
    assert s.texts([inside.claim_id]) == {inside.claim_id: "inside"}
    with pytest.raises(KeyError, match="not in the eligible slice"):
        s.texts([outside.claim_id])
    assert read == [inside.claim_id]


def test_vector_top_k_with_many_ties_is_exact():
    corpus = [view("same words here") for _ in range(50)] + [view("other words")]
    hits = VectorRanker(HashingEmbedder(32)).rank("same words here", EligibleSlice.of(corpus), 5)
    assert [h.claim_id for h in hits] == sorted(v.claim_id for v in corpus[:50])[:5]
