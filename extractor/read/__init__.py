"""The read path: ``Use(memory, purpose, caller)`` -- access before relevance, admissibility after.

Seed §8 in four stages, each its own function:

1. **eligibility** (in SQL, before any ranking): tenant and subject, caller authorization,
   lifecycle, the memory's own allowed and forbidden uses, third-party personal data, erasure
   and supersession -- an ineligible memory never reaches a ranker, a log or a reranker;
2. **relevance** over the eligible slice only (:mod:`.rank`, :mod:`.embed`): FTS5 BM25 by
   default, exact cosine with an :class:`Embedder`, or their reciprocal-rank fusion;
3. **admissibility** after relevance (:func:`judge`): a versioned, declarative read policy
   (``extractor/policies/read-default.toml``); for high-risk purposes the hit is dereferenced
   to its original evidence before it counts (seed §10);
4. **serialization** (:func:`serialize`): the seed's §9 forms under a token budget, escaped so
   memory text can never close or forge its wrapper.

Every read is recorded; :func:`replay` judges a recorded read's candidates again under another
read policy and reports which uses change.
"""

from .embed import Embedder, HashingEmbedder, SentenceTransformerEmbedder, VectorRanker
from .evidence import TranscriptSource, check_evidence
from .judge import judge, temporal_status
from .models import (
    CONTEXT_ONLY,
    Caller,
    EvidenceRef,
    EvidenceStatus,
    ExcludedItem,
    MemoryView,
    ReadItem,
    ReadRequest,
    ReadResult,
    Risk,
    Stage,
    UseDecision,
)
from .policy import ReadPolicy, ReadPolicyDocument, load_read_policy, parse_read_policy
from .rank import EligibleSlice, HybridRanker, LexicalRanker, Ranker, Scored
from .reader import MemoryReader, read, replay
from .replay import ItemOutcome, PolicyRef, ReplayedItem, ReplayReport
from .serialize import SERIALIZER_VERSION, Restrictions, parse_context, serialize

__all__ = [
    "CONTEXT_ONLY",
    "SERIALIZER_VERSION",
    "Caller",
    "EligibleSlice",
    "Embedder",
    "EvidenceRef",
    "EvidenceStatus",
    "ExcludedItem",
    "HashingEmbedder",
    "HybridRanker",
    "ItemOutcome",
    "LexicalRanker",
    "MemoryReader",
    "MemoryView",
    "PolicyRef",
    "Ranker",
    "ReadItem",
    "ReadPolicy",
    "ReadPolicyDocument",
    "ReadRequest",
    "ReadResult",
    "ReplayReport",
    "ReplayedItem",
    "Restrictions",
    "Risk",
    "Scored",
    "SentenceTransformerEmbedder",
    "Stage",
    "TranscriptSource",
    "UseDecision",
    "VectorRanker",
    "check_evidence",
    "judge",
    "load_read_policy",
    "parse_context",
    "parse_read_policy",
    "read",
    "replay",
    "serialize",
    "temporal_status",
]
