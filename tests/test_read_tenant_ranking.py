"""Lexical ranking within a tenant: BM25's statistics are the tenant's own, so another
tenant's memories change nothing of a tenant's read -- neither which claims are ranked nor
their order and scores (the side channel FTS5's store-wide statistics opened)."""

from __future__ import annotations

import math
import sqlite3
import tempfile
from pathlib import Path

from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from read_factories import view
from read_store_helpers import Clock, pipeline

from extractor import MemoryStore
from extractor.read import Caller, MemoryReader
from extractor.read.rank import EligibleSlice, LexicalRanker, create_fts, index_fts
from extractor.vocab import Capability

AGENT = Caller(id="agent:support")
WORDS = ["tea", "jazz", "piano", "hiking", "lisbon", "coffee", "chess", "cats", "sushi", "yoga"]
LIKES = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3, unique=True).map(
    lambda ws: "I like " + " and ".join(ws) + "."
)


def _seen(reader: MemoryReader, query: str) -> list[tuple[object, ...]]:
    result = reader.read(query, tenant="acme", subject="u1", caller=AGENT,
                         purpose=Capability.PERSONALIZATION, k=20)  # fmt: skip
    items = [(i.claim_id, i.rank, i.score) for i in result.items]
    excluded = [(e.claim_id, e.stage, e.rule_id, e.rank) for e in result.excluded]
    return [*items, *excluded]


@settings(max_examples=examples(12), deadline=None)
@given(
    mine=st.lists(LIKES, min_size=1, max_size=4),
    theirs=st.lists(LIKES, min_size=1, max_size=6),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_another_tenants_memories_change_nothing_in_a_tenants_ranking(
    mine: list[str], theirs: list[str], query: list[str]
):
    text = " ".join(query)
    with tempfile.TemporaryDirectory() as d, MemoryStore(Path(d) / "m.db", clock=Clock()) as s:
        for n, sentence in enumerate(mine):
            s.ingest(pipeline(f"a{n}", sentence))
        with MemoryReader(s, clock=Clock()) as reader:
            before = _seen(reader, text)
            for n, sentence in enumerate(theirs):  # the same words, in another tenant
                s.ingest(pipeline(f"b{n}", sentence, tenant="globex"))
                s.ingest(pipeline(f"c{n}", sentence + " " + sentence, tenant="globex"))
            assert _seen(reader, text) == before  # the same reader (its caches) ...
        with MemoryReader(s, clock=Clock()) as fresh:
            assert _seen(fresh, text) == before  # ... and a new one
        acme = {c.claim_id for c in s.claims(tenant="acme")}
        assert {row[0] for row in before} <= acme


def _fts5_scores(texts: list[str], terms: list[str]) -> dict[str, float]:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(content, claim_id UNINDEXED, "
               "tokenize = 'unicode61 remove_diacritics 2')")  # fmt: skip
    db.executemany("INSERT INTO t VALUES (?, ?)", [(x, f"c{n}") for n, x in enumerate(texts)])
    match = " OR ".join(f'"{w}"' for w in terms)
    rows = db.execute("SELECT claim_id, -bm25(t) FROM t WHERE t MATCH ?", (match,))
    return {c: float(score) for c, score in rows}


def test_the_query_is_its_distinct_tokens_as_the_index_tokenizes_them():
    db = sqlite3.connect(":memory:")
    create_fts(db)
    assert LexicalRanker(db).terms("Café CAFE foo_bar, the") == ["bar", "cafe", "foo", "the"]
    assert LexicalRanker(db).terms("  -- ") == []


@settings(max_examples=examples(40), deadline=None)
@given(
    texts=st.lists(
        st.lists(st.sampled_from([*WORDS, "Café", "café", "the"]), min_size=1, max_size=8).map(
            " ".join
        ),
        min_size=1,
        max_size=12,
    ),
    query=st.lists(st.sampled_from([*WORDS, "cafe", "CAFÉ"]), min_size=1, max_size=3).map(" ".join),
)
def test_over_a_corpus_of_its_own_the_scores_are_fts5s_bm25(texts: list[str], query: str):
    """When the slice is the whole index, BM25 here is FTS5's ``bm25()`` over the query's
    distinct tokens (formula, parameters, tokenizer): only the corpus of its statistics moved."""
    db = sqlite3.connect(":memory:")
    create_fts(db)
    vs = [view(t, claim_id=f"c{n}") for n, t in enumerate(texts)]
    index_fts(db, vs)
    ranker = LexicalRanker(db)
    ranked = ranker.rank(query, EligibleSlice.of(vs), len(vs))
    got = {s.claim_id: s.score for s in ranked}
    want = _fts5_scores(texts, ranker.terms(query))
    assert got.keys() == want.keys()
    for c, score in want.items():
        assert math.isclose(got[c], score, rel_tol=1e-9, abs_tol=1e-9), (c, got[c], score)
