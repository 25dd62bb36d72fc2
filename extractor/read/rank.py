"""Stage 2, relevance: rankers that only ever see the eligible slice.

A :class:`Ranker` gets the query, the :class:`EligibleSlice` that passed stage 1 and ``k``, and
returns at most ``k`` :class:`Scored` claim ids, best first. The slice holds only eligible claim
ids and reads only their text, so nothing ineligible can leak through a ranker, its logs or a
remote reranker (seed §8). Every ranker breaks ties on ``claim_id``, so a read is deterministic.

* :class:`LexicalRanker` -- SQLite FTS5 BM25, the default; needs no model. The MATCH runs inside
  SQLite joined to the eligible ids, so no ineligible row is ever returned to Python.
* :class:`VectorRanker` -- exact cosine over the eligible slice with an :class:`Embedder`
  (numpy, the ``embed`` extra). Exact, so a selective filter never loses recall: the top k is
  the top k of the slice.
* :class:`HybridRanker` -- reciprocal-rank fusion of several rankers.
"""

from __future__ import annotations

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


#: Lexical SQL over the read path's own index (``create_fts``): a ``claim_id`` column.
OWN_INDEX_SQL = (
    "SELECT f.claim_id, -bm25(read_fts) AS score FROM read_fts AS f "
    f"JOIN {ELIGIBLE_TABLE} AS e ON e.claim_id = f.claim_id "
    "WHERE read_fts MATCH ? ORDER BY score DESC, f.claim_id LIMIT ?"
)
#: Lexical SQL over the memory store's ``claims_fts`` (external content, rowid = claim_rowid).
STORE_INDEX_SQL = (
    "SELECT c.claim_id, -bm25(claims_fts) AS score FROM claims_fts AS f "
    "JOIN claims AS c ON c.claim_rowid = f.rowid "
    f"JOIN {ELIGIBLE_TABLE} AS e ON e.claim_id = c.claim_id "
    "WHERE claims_fts MATCH ? ORDER BY score DESC, c.claim_id LIMIT ?"
)


class LexicalRanker:
    """BM25 over an FTS5 index, restricted in SQL to the eligible claims of the current read.

    ``index`` is ``"read_fts"`` (the read path's own, :func:`create_fts`) or ``"claims_fts"``
    (the memory store's). Over the store's index, a slice defined by stage-1 SQL on the same
    connection is applied inside the ranking statement: only FTS matches are checked, only
    eligible ones are scored, and no ineligible row leaves SQLite. Otherwise the MATCH is
    joined to ``temp.read_eligible``. BM25's document frequencies are those of the whole index
    (statistics, never content, of other rows); scores are negated so that higher is better.
    """

    name = "fts5-bm25"

    def __init__(self, db: sqlite3.Connection, *, index: str = "read_fts") -> None:
        if index not in ("read_fts", "claims_fts"):
            raise ValueError(f"unknown lexical index {index!r}: 'read_fts' or 'claims_fts'")
        self._db = db
        self._index = index

    def rank(self, query: str, eligible: EligibleSlice, k: int) -> list[Scored]:
        match = fts_query(query)
        if match is None or not eligible:
            return []
        same = eligible.db is self._db
        if same and eligible.sql is not None and self._index == "claims_fts":
            spec = eligible.sql
            sql = (
                "SELECT v.claim_id, -bm25(claims_fts) AS score FROM claims_fts AS f "
                f"JOIN {spec.source} AS v ON v.claim_rowid = f.rowid "
                f"WHERE claims_fts MATCH ? AND {spec.where} ORDER BY score DESC, v.claim_id LIMIT ?"
            )
            params: list[object] = [*spec.source_params, match, *spec.params, k]
        else:
            fill_eligible(self._db, eligible.claim_ids)  # the ids only, selected by stage 1
            sql = OWN_INDEX_SQL if self._index == "read_fts" else STORE_INDEX_SQL
            params = [match, k]
        rows = self._db.execute(sql, params).fetchall()
        return [Scored(claim_id, float(score)) for claim_id, score in rows]


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
