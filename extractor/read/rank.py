"""Stage 2, relevance: rankers that only ever see the eligible slice.

A :class:`Ranker` gets the query, the :class:`EligibleSlice` that passed stage 1 and ``k``, and
returns at most ``k`` :class:`Scored` claim ids, best first. The slice holds only eligible claim
ids and reads only their text, so nothing ineligible can leak through a ranker, its logs or a
remote reranker (seed §8). Every ranker breaks ties on ``claim_id``, so a read is deterministic.

* :class:`LexicalRanker` -- BM25 over an SQLite FTS5 index, the default; needs no model. Its
  postings are read inside SQLite joined to the eligible ids, so no ineligible row is ever
  returned to Python, and its statistics (document frequencies, average length) are those of
  the read's corpus -- the tenant's claims -- never of the whole index.
* :class:`VectorRanker` -- exact cosine over the eligible slice with an :class:`Embedder`
  (numpy, the ``embed`` extra). Exact, so a selective filter never loses recall: the top k is
  the top k of the slice.
* :class:`HybridRanker` -- reciprocal-rank fusion of several rankers.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .models import MemoryView

#: Temp table stage 1 fills with the eligible claim ids of the read in progress.
ELIGIBLE_TABLE = "temp.read_eligible"
ELIGIBLE_DDL = "CREATE TEMP TABLE IF NOT EXISTS read_eligible (claim_id TEXT PRIMARY KEY)"
#: Reciprocal-rank-fusion constant (Cormack et al. 2009).
RRF_K = 60

_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Scored:
    claim_id: str
    score: float


@dataclass(frozen=True)
class SliceSQL:
    """Stage 1 as SQL: the rows ``v`` of ``source`` for which ``where`` holds are eligible."""

    source: str
    source_params: tuple[object, ...]
    where: str
    params: tuple[object, ...]
    #: A predicate implied by ``where`` that lets SQLite start from an index when it selects
    #: the ids (``claims (tenant, subject)``), instead of from every current version.
    narrow: str = "1"
    narrow_params: tuple[object, ...] = ()
    #: A query answering whether ``narrow`` pays (it costs more than it saves when the subject
    #: holds most of the store); ``None``: always use it.
    narrow_when: str | None = None
    narrow_when_params: tuple[object, ...] = ()
    #: The corpus whose statistics BM25 uses, as a predicate on ``claims AS c`` (the tenant's
    #: claims: ``c.tenant = ?``); ``None``: the slice itself.
    corpus: str | None = None
    corpus_params: tuple[object, ...] = ()


class EligibleSlice:
    """The claims that passed stage 1: their ids, and a way to read *their* text only.

    A slice is either given its ids (tests, callers with their own stage 1) or defined by
    ``sql`` on ``db`` (the read path's stage 1); then the ids are selected in SQL only when a
    ranker asks for them, and a lexical ranker on the same connection applies ``sql`` inside
    its own statement instead (another lexical ranker joins them in ``temp.read_eligible``).
    """

    def __init__(
        self,
        claim_ids: Sequence[str] | None,
        read_texts: Callable[[Sequence[str]], dict[str, str]],
        *,
        db: sqlite3.Connection | None = None,
        sql: SliceSQL | None = None,
    ) -> None:
        if claim_ids is None and (db is None or sql is None):
            raise ValueError("an EligibleSlice needs its claim ids, or db and sql to select them")
        self._ids = None if claim_ids is None else tuple(claim_ids)
        self._members: frozenset[str] | None = None
        self._read_texts = read_texts
        self.db = db
        self.sql = sql

    @property
    def claim_ids(self) -> tuple[str, ...]:
        if self._ids is None:
            assert self.db is not None
            assert self.sql is not None
            spec = self.sql
            narrow, narrow_params = spec.narrow, spec.narrow_params
            if spec.narrow_when is not None:
                (pays,) = self.db.execute(spec.narrow_when, spec.narrow_when_params).fetchone()
                narrow, narrow_params = (narrow, narrow_params) if pays else ("1", ())
            rows = self.db.execute(
                f"SELECT claim_id FROM {spec.source} WHERE {narrow} AND {spec.where} "
                "ORDER BY claim_id",
                [*spec.source_params, *narrow_params, *spec.params],
            )
            self._ids = tuple(r[0] for r in rows)
        return self._ids

    @property
    def materialized(self) -> bool:
        """True once the ids were selected (or given)."""
        return self._ids is not None

    def __len__(self) -> int:
        return len(self.claim_ids)

    def __bool__(self) -> bool:
        return self._ids is None or bool(self._ids)

    def texts(self, claim_ids: Sequence[str]) -> dict[str, str]:
        """Text of the given claims; ids outside the slice are refused, never read."""
        if self._members is None:
            self._members = frozenset(self.claim_ids)
        outside = [c for c in claim_ids if c not in self._members]
        if outside:
            raise KeyError(f"claim {outside[0]!r} is not in the eligible slice")
        return self._read_texts(claim_ids)

    @classmethod
    def of(cls, views: Iterable[MemoryView]) -> EligibleSlice:
        """A slice over views already in memory (tests, callers with their own stage 1)."""
        by_id = {v.claim_id: v.content for v in views}
        return cls(tuple(by_id), lambda ids: {c: by_id[c] for c in ids})


@runtime_checkable
class Ranker(Protocol):
    """Ranks eligible memories for a query; ``name`` is recorded with every read."""

    @property
    def name(self) -> str: ...

    def rank(self, query: str, eligible: EligibleSlice, k: int) -> list[Scored]: ...


def top_k(scores: Iterable[Scored], k: int) -> list[Scored]:
    """Best ``k`` by score, ties broken on ``claim_id`` (ascending)."""
    return sorted(scores, key=lambda s: (-s.score, s.claim_id))[:k]


def fts_query(query: str) -> str | None:
    """Free text as an FTS5 query: every word quoted (no operator can be injected), OR-ed."""
    words = dict.fromkeys(w.lower() for w in _WORD.findall(query))
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words) or None


def create_fts(db: sqlite3.Connection, table: str = "read_fts") -> None:
    """The lexical index the read path keeps: one row per claim (content, claim id)."""
    db.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5("
        "content, claim_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2')"
    )


def index_fts(db: sqlite3.Connection, views: Iterable[MemoryView], table: str = "read_fts") -> int:
    """Add claims to the lexical index that are not in it yet; returns how many were added."""
    present = {row[0] for row in db.execute(f"SELECT claim_id FROM {table}")}
    rows = [(v.content, v.claim_id) for v in views if v.claim_id not in present]
    db.executemany(f"INSERT INTO {table} (content, claim_id) VALUES (?, ?)", rows)
    return len(rows)


def fill_eligible(db: sqlite3.Connection, claim_ids: Iterable[str]) -> None:
    """(Re)fill the temp table of eligible ids that lexical ranking joins on."""
    db.execute(ELIGIBLE_DDL)
    db.execute(f"DELETE FROM {ELIGIBLE_TABLE}")
    db.executemany(f"INSERT OR IGNORE INTO {ELIGIBLE_TABLE} VALUES (?)", ((c,) for c in claim_ids))


#: FTS5's ``bm25()`` parameters (its defaults), kept so that one tenant's scores in a store of
#: its own are the scores FTS5 gives.
BM25_K1 = 1.2
BM25_B = 0.75
#: The tokenizer of each lexical index (the query is tokenized by the same one).
TOKENIZERS = {"read_fts": "unicode61 remove_diacritics 2", "claims_fts": "unicode61"}


def bm25(tf: int, df: int, docs: int, length: int, avg_length: float) -> float:
    """One term's BM25 weight in one document, as FTS5 computes it (its IDF floor included)."""
    idf = math.log((docs - df + 0.5) / (df + 0.5))
    idf = idf if idf > 0 else 1e-6
    norm = 1 - BM25_B + BM25_B * (length / avg_length if avg_length else 0.0)
    return idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * norm)


def _varint(blob: bytes) -> int:
    """The first varint of an FTS5 ``docsize`` record: the document's tokens in column 0."""
    value = 0
    for byte in blob[:9]:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            break
    return value


class LexicalRanker:
    """BM25 over an FTS5 index, restricted in SQL to the eligible claims of the current read.

    ``index`` is ``"read_fts"`` (the read path's own, :func:`create_fts`) or ``"claims_fts"``
    (the memory store's). The query is tokenized by the index's own tokenizer; each distinct
    token is a term. Postings are read from the index's ``fts5vocab`` (``instance``) joined in
    SQL to the slice (over the store's index, a slice defined by stage-1 SQL on the same
    connection is applied inside the statement; otherwise the ids are joined in
    ``temp.read_eligible``), so no ineligible row leaves SQLite.

    The statistics -- how many documents, their average length, how many hold each term -- are
    those of the slice's *corpus*: ``SliceSQL.corpus`` (the read path's: the tenant's claims),
    else the slice itself. FTS5's own ``bm25()`` would weigh terms by the whole index, which
    holds every tenant's claims, so another tenant's text would move a tenant's scores and
    order; here a tenant's read depends on its own claims only. Scores are BM25 (FTS5's
    formula and parameters), higher is better; ties are broken on claim id.
    """

    name = "fts5-bm25"

    def __init__(self, db: sqlite3.Connection, *, index: str = "read_fts") -> None:
        if index not in TOKENIZERS:
            raise ValueError(f"unknown lexical index {index!r}: 'read_fts' or 'claims_fts'")
        self._db = db
        self._index = index
        self._corpora: dict[tuple[object, ...], tuple[int, float]] = {}
        self._ready = False

    def _setup(self) -> None:
        if self._ready:
            return
        ix = self._index
        self._db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{ix}_query USING fts5(q, "
            f"tokenize = '{TOKENIZERS[ix]}')"
        )
        self._db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{ix}_query_terms "
            f"USING fts5vocab('temp', '{ix}_query', 'row')"
        )
        self._db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{ix}_instance "
            f"USING fts5vocab('main', '{ix}', 'instance')"
        )
        self._ready = True

    def terms(self, query: str) -> list[str]:
        """The query's distinct tokens, as the index's tokenizer makes them."""
        if fts_query(query) is None:
            return []
        self._setup()
        ix = self._index
        self._db.execute(f"DELETE FROM temp.{ix}_query")
        self._db.execute(f"INSERT INTO temp.{ix}_query (q) VALUES (?)", (query,))
        return [r[0] for r in self._db.execute(f"SELECT term FROM temp.{ix}_query_terms")]

    def rank(self, query: str, eligible: EligibleSlice, k: int) -> list[Scored]:
        if not eligible:
            return []
        terms = self.terms(query)
        if not terms:
            return []
        spec = eligible.sql if eligible.db is self._db and self._index == "claims_fts" else None
        if spec is None:
            fill_eligible(self._db, eligible.claim_ids)  # the ids only, selected by stage 1
        freqs: dict[int, dict[str, int]] = {}
        names: dict[int, str] = {}
        for term in terms:
            for rowid, claim_id, tf in self._postings(term, spec):
                freqs.setdefault(rowid, {})[term] = tf
                names[rowid] = claim_id
        if not freqs:
            return []
        corpus = spec.corpus if spec is not None else None
        if spec is not None and corpus is not None:
            df = {t: self._df(t, corpus, spec.corpus_params) for t in terms}
            docs, avg = self._corpus_size(corpus, spec.corpus_params)
        else:  # the slice is the corpus
            df = {t: sum(t in f for f in freqs.values()) for t in terms}
            docs, avg = self._slice_size()
        lengths = self._lengths(list(freqs))
        scores = (
            Scored(names[rowid], sum(bm25(tf, df[t], docs, lengths.get(rowid, 0), avg)
                                     for t, tf in sorted(held.items())))
            for rowid, held in freqs.items()
        )  # fmt: skip
        return top_k(scores, k)

    def _postings(self, term: str, spec: SliceSQL | None) -> list[tuple[int, str, int]]:
        """``(rowid, claim_id, term frequency)`` of the eligible documents holding ``term``."""
        ix = self._index
        if spec is not None:
            sql = (
                f"SELECT v.claim_rowid, v.claim_id, COUNT(*) FROM temp.{ix}_instance AS i "
                f"JOIN {spec.source} AS v ON v.claim_rowid = i.doc "
                f"WHERE i.term = ? AND {spec.where} GROUP BY v.claim_rowid"
            )
            params: list[object] = [*spec.source_params, term, *spec.params]
        elif ix == "claims_fts":
            sql = (
                "SELECT c.claim_rowid, c.claim_id, COUNT(*) FROM temp.claims_fts_instance AS i "
                "JOIN claims AS c ON c.claim_rowid = i.doc "
                f"JOIN {ELIGIBLE_TABLE} AS e ON e.claim_id = c.claim_id "
                "WHERE i.term = ? GROUP BY c.claim_rowid"
            )
            params = [term]
        else:
            sql = (
                "SELECT f.rowid, f.claim_id, COUNT(*) FROM temp.read_fts_instance AS i "
                "JOIN read_fts AS f ON f.rowid = i.doc "
                f"JOIN {ELIGIBLE_TABLE} AS e ON e.claim_id = f.claim_id "
                "WHERE i.term = ? AND i.col = 'content' GROUP BY f.rowid"
            )
            params = [term]
        return [(int(r), str(c), int(n)) for r, c, n in self._db.execute(sql, params)]

    def _df(self, term: str, corpus: str, params: tuple[object, ...]) -> int:
        (n,) = self._db.execute(
            "SELECT COUNT(DISTINCT i.doc) FROM temp.claims_fts_instance AS i "
            f"JOIN claims AS c ON c.claim_rowid = i.doc WHERE i.term = ? AND ({corpus})",
            [term, *params],
        ).fetchone()
        return int(n)

    def _corpus_size(self, corpus: str, params: tuple[object, ...]) -> tuple[int, float]:
        """How many documents the corpus has and their average length, kept while the index is
        unchanged (its averages and structure records change with every write)."""
        state = tuple(
            r[0] for r in self._db.execute(
                "SELECT block FROM claims_fts_data WHERE id IN (1, 10) ORDER BY id")
        )  # fmt: skip
        key = (corpus, params, state)
        if key not in self._corpora:
            rows = self._db.execute(
                "SELECT d.sz FROM claims AS c JOIN claims_fts_docsize AS d "
                f"ON d.id = c.claim_rowid WHERE ({corpus})",
                params,
            ).fetchall()
            total = sum(_varint(bytes(r[0])) for r in rows)
            if len(self._corpora) >= 16:
                self._corpora.clear()
            self._corpora[key] = (len(rows), total / len(rows) if rows else 0.0)
        return self._corpora[key]

    def _slice_size(self) -> tuple[int, float]:
        if self._index == "claims_fts":
            sql = (
                "SELECT d.sz FROM claims AS c JOIN claims_fts_docsize AS d "
                f"ON d.id = c.claim_rowid JOIN {ELIGIBLE_TABLE} AS e ON e.claim_id = c.claim_id"
            )
        else:
            sql = (
                "SELECT d.sz FROM read_fts AS f JOIN read_fts_docsize AS d ON d.id = f.rowid "
                f"JOIN {ELIGIBLE_TABLE} AS e ON e.claim_id = f.claim_id"
            )
        sizes = [_varint(bytes(r[0])) for r in self._db.execute(sql)]
        return len(sizes), (sum(sizes) / len(sizes) if sizes else 0.0)

    def _lengths(self, rowids: list[int]) -> dict[int, int]:
        out: dict[int, int] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = self._db.execute(
                f"SELECT id, sz FROM {self._index}_docsize WHERE id IN ({marks})", chunk
            )
            out.update({int(i): _varint(bytes(sz)) for i, sz in rows})
        return out


class HybridRanker:
    """Reciprocal-rank fusion: ``sum 1 / (RRF_K + rank)`` over the rankers, ties on claim id.

    Each ranker contributes its top ``depth`` (default ``4 k``), so an item ranked well by one
    ranker and absent from the other still surfaces.
    """

    def __init__(self, rankers: Sequence[Ranker], *, depth: int | None = None) -> None:
        if not rankers:
            raise ValueError("HybridRanker needs at least one ranker")
        self._rankers = tuple(rankers)
        self._depth = depth

    @property
    def name(self) -> str:
        return "rrf(" + ",".join(r.name for r in self._rankers) + ")"

    def rank(self, query: str, eligible: EligibleSlice, k: int) -> list[Scored]:
        depth = self._depth or 4 * k
        fused: dict[str, float] = {}
        for ranker in self._rankers:
            for position, hit in enumerate(ranker.rank(query, eligible, depth), start=1):
                fused[hit.claim_id] = fused.get(hit.claim_id, 0.0) + 1.0 / (RRF_K + position)
        return top_k((Scored(c, s) for c, s in fused.items()), k)
