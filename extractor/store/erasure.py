"""Privacy erasure (seed §14): content removed everywhere it was copied, and a check that proves
it at the byte level. Erasure is not revocation: revocation keeps the record and changes what it
may be used for; erasure removes the content and keeps only a content-free tombstone.

What an erasure reaches, from a selector (a subject, a conversation, a memory, a source):

* the selected claims, and every claim that *carries their content* -- derived along
  ``derivations`` with ``carries_content = 1`` (a summary that states the erased data),
  transitively;
  sibling claims of the same summary whose lineage avoids the erased claims survive;
* the content, quote, hedges, structural-key value, content hash and subject of those claims, in
  the projection *and* in the payloads of the events that recorded them (the one documented
  exception to an immutable log), evidence quotes, and the FTS index;
* claims that merely *relied* on erased ones lose that support and are revalidated as after a
  revocation (NEEDS_REVALIDATION, then restored or quarantined);
* when given, the ledger (transcripts, result and candidate JSON, rejections, failures) and the
  LLM response cache.

The strings to check are the erased contents and quotes (and, with a ledger, the text of every
message of an erased conversation). :func:`scan` looks for each of them, as UTF-8 and as it
appears escaped inside JSON, in every file of the store (the database, its ``-wal`` and
``-shm``), the ledger and the cache.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: The store's erasure epoch: it changes with every erasure (the last ERASE event's seq), so a
#: cache of anything derived from content (the read path's vectors) can tell when to look for
#: erased claims, on any connection, without a callback.
ERASURE_EPOCH_SQL = "SELECT COALESCE(MAX(cause_seq), 0) FROM erasures"
#: Every erased claim (content gone, kept as a tombstone).
ERASED_CLAIMS_SQL = "SELECT claim_id FROM claims WHERE erased != 0"
#: The vectors of claim content (the read path's); migration ``s006_claim_embeddings``.
EMBEDDINGS_DDL = """CREATE TABLE IF NOT EXISTS claim_embeddings (
    claim_id TEXT NOT NULL,
    model_id TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (claim_id, model_id)
)"""

#: Payload fields that hold content, blanked in the events of erased claims.
CONTENT_FIELDS = (
    "content",
    "quote",
    "content_hash",
    "hedges",
    "key",
    "candidate",
    "parent_decisions",
)

#: Strings shorter than this are not scanned for (they occur by chance in any file).
MIN_SCAN_LENGTH = 6


def redact_memory(m: Mapping[str, Any]) -> dict[str, Any]:
    """An INGEST or DERIVE payload entry with its content removed."""
    out = dict(m)
    for name in CONTENT_FIELDS:
        if name in out:
            out[name] = (
                []
                if name == "hedges"
                else (
                    None if name in ("key", "content_hash", "candidate", "parent_decisions") else ""
                )
            )
    return out


def redact_payload(kind: str, payload: Mapping[str, Any], claims: set[str]) -> dict[str, Any]:
    """``payload`` with the content of ``claims`` removed (unchanged if none is in it)."""
    out = dict(payload)
    if kind == "INGEST":
        entries = []
        for m in payload["memories"]:
            hit = f"{m['memory_id']}:c1" in claims
            entries.append(redact_memory(m) if hit else m)
        out["memories"] = entries
        if all(f"{m['memory_id']}:c1" in claims for m in payload["memories"]):
            out["subject"] = None
    elif kind == "DERIVE":
        out["claims"] = [redact_memory(c) if c["claim_id"] in claims else c
                         for c in payload["claims"]]  # fmt: skip
        if all(c["claim_id"] in claims for c in payload["claims"]):
            out["subject"] = None
    elif kind == "EVIDENCE" and payload["claim_id"] in claims:
        out["quote"] = None
    return out


def forms(text: str) -> list[bytes]:
    """The byte forms a string takes in the files: UTF-8, and escaped inside JSON."""
    raw = text.encode("utf-8")
    escaped = json.dumps(text)[1:-1].encode("utf-8")
    ascii_escaped = json.dumps(text, ensure_ascii=True)[1:-1].encode("ascii")
    return list(dict.fromkeys([raw, escaped, ascii_escaped]))


def scannable(strings: Iterable[str]) -> list[str]:
    return sorted({s for s in strings if len(s.strip()) >= MIN_SCAN_LENGTH})


def files_of(database: Path) -> list[Path]:
    """A SQLite file and its WAL and shared-memory files, those that exist."""
    return [p for p in (database, Path(f"{database}-wal"), Path(f"{database}-shm")) if p.exists()]


def scan(paths: Sequence[Path], strings: Iterable[str]) -> list[str]:
    """``path: string`` for every erased string still readable in a file, byte for byte."""
    targets = scannable(strings)
    found: list[str] = []
    for path in paths:
        data = path.read_bytes()
        for s in targets:
            if any(form in data for form in forms(s)):
                found.append(f"{path}: {s[:12]!r}...")
    return found


def cache_files(directory: Path | None) -> list[Path]:
    if directory is None or not directory.is_dir():
        return []
    return sorted(p for p in directory.rglob("*") if p.is_file())


def scrub_cache(directory: Path | None, strings: Iterable[str]) -> int:
    """Delete every cache entry that holds an erased string (a cache entry is recomputable)."""
    targets = scannable(strings)
    removed = 0
    for path in cache_files(directory):
        data = path.read_bytes()
        if any(form in data for s in targets for form in forms(s)):
            path.unlink()
            removed += 1
    return removed
