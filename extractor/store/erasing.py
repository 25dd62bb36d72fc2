"""Privacy erasure as a store operation (:meth:`MemoryStore.erase`, :meth:`verify_erasure`);
what it reaches and why is in :mod:`extractor.store.erasure`."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import StoreError, UnknownMemory
from ..hashing import canonical_json
from .apply import apply_event
from .backend import ledger_texts, scrub_sqlite
from .core import StoreCore
from .erasure import cache_files, files_of, redact_payload, scan, scannable, scrub_cache
from .erasure import forms as erasure_forms
from .models import (
    ErasureReport,
    ErasureVerification,
)


class Erasing(StoreCore):
    """``erase`` and ``verify_erasure``."""

    # -- privacy erasure -------------------------------------------------------------------------

    def erase(
        self,
        *,
        subject: str | None = None,
        conversation: str | None = None,
        memory_id: str | None = None,
        source: str | None = None,
        tenant: str | None = None,
        ledger: str | Path | None = None,
        cache_dir: str | Path | None = None,
        actor: str | None = None,
    ) -> ErasureReport:
        """Erase personal data (seed §14): exactly one selector -- a ``subject``, a
        ``conversation`` id, a ``memory_id`` (or claim id) or a ``source`` -- optionally within
        one ``tenant``. Removes the content from the selected claims and every claim derived
        with their content, from the events, the FTS index, free pages and the WAL; with
        ``ledger`` and ``cache_dir``, from the ledger's transcripts and JSON and the response
        cache. Dependents that only relied on the erased claims are revalidated. Then scans
        every file for the erased strings (:class:`ErasureReport.residue`, empty when clean).
        The read path's vectors of the erased claims (``claim_embeddings``) are deleted too, and
        a reader drops its in-memory copies at its next read (it watches :meth:`erasure_epoch`).
        """
        kind, value = _selector(subject, conversation, memory_id, source)
        with self.backend.transaction():
            roots, sources, detached = self._erasure_roots(kind, value, tenant)
            claims = self._content_closure(roots)
            rows = self.backend.select_in("claims", "claim_id", claims)
            strings = [t for r in rows for t in (r["content"], r["quote"] or "")]
            strings += [e["quote"] or "" for e in self.backend.select_in(
                "evidence", "claim_id", claims)]  # fmt: skip
            memories = self._whole_memories(rows)
            whole = self.backend.select_in("memories", "memory_id", memories)
            hashes = sorted({m["conversation_hash"] for m in whole if m["conversation_hash"]})
            dependents = self._dependents(claims) - set(claims)
            redacted = self._redact_events(set(claims))
            # Without a structural key no projection input but content changed in the redacted
            # events, so the ERASE applier alone reaches the replayed state. So it is for a claim
            # alone under its key: no other claim ever shared the key while it was there (a
            # claim leaves a key only by erasure, which replays whenever it had company), so it
            # took part in no supersession or conflict. A keyed claim with neighbours changed
            # their supersession history, which only a replay redoes.
            incremental = all(r["key_relation"] is None or self._alone(r) for r in rows)
            seq, _ = self._record("ERASE", {
                "erasure_id": "", "selector_kind": kind, "claims": sorted(claims),
                "memories": memories, "sources": sources,
                "counts": {"claims": len(claims), "derived": len(set(claims) - set(roots)),
                           "memories": len(memories), "sources": len(sources),
                           "events_redacted": redacted},
                **({"detached": detached} if detached else {}),
            }, tenant=tenant, actor=actor, apply=incremental)  # fmt: skip
            assert seq is not None
            erasure_id = self._name_erasure(seq)
            if not incremental:
                self._replay()
            # Vectors the read path computed from the content go with it (claim_embeddings).
            self.backend.delete_vectors(claims)
        self.backend.compact()
        for hook in self._erase_hooks:
            hook(sorted(claims))
        report = self._after_erasure(
            erasure_id, seq, kind, claims, roots, dependents, redacted, strings,
            hashes if kind in ("subject", "conversation") else [], ledger, cache_dir,
        )  # fmt: skip
        report.projection = "incremental" if incremental else "replayed"
        return report

    def on_erase(self, hook: Callable[[list[str]], None]) -> None:
        """Call ``hook(claim_ids)`` after every erasure, with the erased claims' ids, once the
        store has committed and compacted it: what a reader caches about them (vectors, ranked
        lists) must go too. The read path registers its caches here (the store never reaches
        into them)."""
        self._erase_hooks.append(hook)

    def _alone(self, claim: Mapping[str, Any]) -> bool:
        """Whether ``claim`` is the only claim under its structural key."""
        where = {name: claim[name] for name in ("tenant", "key_subject", "key_relation",
                                                "key_scope")}  # fmt: skip
        return [r["claim_id"] for r in self.backend.select("claims", where)] == [claim["claim_id"]]

    def _name_erasure(self, seq: int) -> str:
        """Give the ERASE event its id (a hash of its position, never of content)."""
        (row,) = self.backend.select("memory_events", {"seq": seq})
        payload = json.loads(row["payload_json"])
        payload["erasure_id"] = (
            "era_" + hashlib.sha256(f"{seq}\n{row['at']}".encode()).hexdigest()[:20]
        )
        self.backend.update(
            "memory_events", {"seq": seq}, {"payload_json": canonical_json(payload)}
        )
        self.backend.update("erasures", {"cause_seq": seq}, {"erasure_id": payload["erasure_id"]})
        return str(payload["erasure_id"])

    def _replay(self) -> None:
        self.backend.clear_projection()
        for row in self.backend.events():
            apply_event(self._projector, row)

    def _erasure_roots(
        self, kind: str, value: str, tenant: str | None
    ) -> tuple[list[str], list[str], dict[str, list[str]]]:
        """The claims a selector erases, the sources it marks ERASED, and (within a tenant)
        the claims it detaches from a source another tenant still uses: ``{source: claims}``.

        Sources are store-wide (two tenants that stored the same conversation share its message
        sources), so with a ``tenant`` only that tenant's claims are looked at, and a source
        another tenant's claims rest on stays ACTIVE for them: the tenant's claims lose its
        evidence and support instead (``detached``), as they would lose it to an ERASED source.
        """
        scope = {} if tenant is None else {"tenant": tenant}
        sources: list[str] = []
        detached: dict[str, list[str]] = {}
        if kind == "subject":
            rows = self.backend.select("claims", {"subject": value, **scope})
        elif kind == "conversation":
            mids = [m["memory_id"] for m in self.backend.select(
                "memories", {"conversation_id": value, **scope})]  # fmt: skip
            rows = self.backend.select_in("claims", "memory_id", mids)
            hashes = {m["conversation_hash"] for m in self.backend.select_in(
                "memories", "memory_id", mids)}  # fmt: skip
            prefixes = tuple(f"msg:{h}#" for h in sorted(hashes))
            sources = sorted(
                s["source_id"] for s in self.backend.select("sources")
                if s["source_id"].startswith(prefixes)
            )  # fmt: skip
            if tenant is not None:
                sources = [s for s in sources if not self._used_elsewhere(s, tenant)]
        elif kind == "memory":
            value = self.resolve(value, tenant=tenant)
            if ":c" in value:
                rows = [self._one_claim(value, tenant=tenant)]
            else:
                rows = self.backend.select("claims", {"memory_id": value, **scope})
        else:
            found = self.backend.select("sources", {"source_id": value})
            cited = self.backend.select("evidence", {"source_id": value})
            held = {r["claim_id"] for r in self.backend.select_in(
                "claims", "claim_id", [e["claim_id"] for e in cited], where=scope)}  # fmt: skip
            if not found or (tenant is not None and not held and found[0]["tenant"] != tenant):
                raise UnknownMemory(value, what="source")  # another tenant's: not in the store
            other = {e["claim_id"] for e in self.backend.select_in("evidence", "claim_id", held)
                     if e["source_id"] != value}  # fmt: skip
            rows = self.backend.select_in("claims", "claim_id", held - other)
            if tenant is not None and self._used_elsewhere(value, tenant):
                kept = sorted(held & other)
                detached = {value: kept} if kept else {}
            else:
                sources = [value]
        rows = [r for r in rows if not r["erased"]]
        if not rows and not sources and not detached:
            raise UnknownMemory(value, what=f"{kind} with stored (unerased) memories")
        return sorted(r["claim_id"] for r in rows), sources, detached

    def _used_elsewhere(self, source_id: str, tenant: str) -> bool:
        """Whether a claim of another tenant cites ``source_id`` or rests on it."""
        justs = self.backend.select(
            "justification_antecedents", {"antecedent_kind": "source", "antecedent_id": source_id}
        )
        users = {j["claim_id"] for j in self.backend.select_in(
            "justifications", "just_id", [a["just_id"] for a in justs])}  # fmt: skip
        users |= {e["claim_id"] for e in self.backend.select("evidence", {"source_id": source_id})}
        rows = self.backend.select_in("claims", "claim_id", users)
        return any(c["tenant"] != tenant for c in rows)

    def _content_closure(self, roots: Sequence[str]) -> list[str]:
        """The roots and every claim derived from them with their content, transitively."""
        seen = set(roots)
        frontier = list(roots)
        while frontier:
            edges = self.backend.select_in("derivations", "parent_claim_id", frontier)
            frontier = sorted({e["child_claim_id"] for e in edges if e["carries_content"]} - seen)
            seen.update(frontier)
        return sorted(seen)

    def _whole_memories(self, rows: Sequence[Mapping[str, Any]]) -> list[str]:
        erased = {r["claim_id"] for r in rows}
        mids = sorted({r["memory_id"] for r in rows})
        claims = self.backend.select_in("claims", "memory_id", mids)
        partial = {c["memory_id"] for c in claims if c["claim_id"] not in erased}
        return [m for m in mids if m not in partial]

    def _redact_events(self, claims: set[str]) -> int:
        count = 0
        for row in self.backend.events():
            if row["kind"] not in ("INGEST", "DERIVE", "EVIDENCE"):
                continue
            payload = json.loads(row["payload_json"])
            redacted = redact_payload(row["kind"], payload, claims)
            if redacted != payload:
                self.backend.redact_event(int(row["seq"]), canonical_json(redacted))
                count += 1
        return count

    def _after_erasure(
        self,
        erasure_id: str,
        seq: int,
        kind: str,
        claims: Sequence[str],
        roots: Sequence[str],
        dependents: set[str],
        redacted: int,
        strings: list[str],
        hashes: Sequence[str],
        ledger: str | Path | None,
        cache_dir: str | Path | None,
    ) -> ErasureReport:
        files = self.backend.files()
        unreachable: list[str] = []
        scrubbed = 0
        if ledger is not None:
            texts, unreachable = ledger_texts(Path(ledger), hashes)
            strings = strings + texts
            forms_ = [f for s in scannable(strings) for f in erasure_forms(s)]
            scrubbed = scrub_sqlite(Path(ledger), forms_)
            files += files_of(Path(ledger))
        cache = None if cache_dir is None else Path(cache_dir)
        removed = scrub_cache(cache, strings)
        files += cache_files(cache)
        return ErasureReport(
            erasure_id=erasure_id, event_seq=seq, selector_kind=kind, erased_claims=list(claims),
            derived_claims=sorted(set(claims) - set(roots)), revalidated=sorted(dependents),
            events_redacted=redacted, ledger_rows_scrubbed=scrubbed,
            cache_entries_removed=removed, files_scanned=[str(f) for f in files],
            residue=scan(files, strings), unreachable=unreachable,
        )  # fmt: skip

    def verify_erasure(
        self,
        strings: Sequence[str],
        *,
        ledger: str | Path | None = None,
        cache_dir: str | Path | None = None,
    ) -> ErasureVerification:
        """Look for each string (at least 6 characters), byte for byte, as UTF-8 and as escaped
        in JSON, in the store's file, WAL and shared memory, the ledger's and the cache's files;
        and check that the FTS index holds exactly the current content and that no vector of an
        erased claim is left in ``claim_embeddings``."""
        files = self.backend.files()
        if ledger is not None:
            files += files_of(Path(ledger))
        files += cache_files(None if cache_dir is None else Path(cache_dir))
        residue = scan(files, strings)
        consistent = self.backend.index_consistent()
        vectors = self.backend.erased_vectors()
        residue += [f"claim_embeddings: a vector of erased claim {c!r}" for c in vectors]
        return ErasureVerification(
            strings=len(scannable(strings)), files_scanned=[str(f) for f in files],
            residue=residue, index_consistent=consistent, embeddings_clean=not vectors,
            clean=not residue and consistent,
        )  # fmt: skip


def _selector(
    subject: str | None, conversation: str | None, memory_id: str | None, source: str | None
) -> tuple[str, str]:
    pairs = (("subject", subject), ("conversation", conversation), ("memory", memory_id),
             ("source", source))  # fmt: skip
    given = [(k, v) for k, v in pairs if v is not None]
    if len(given) != 1:
        raise StoreError(
            "erase needs exactly one selector: subject=, conversation=, memory_id= or source="
        )
    kind, value = given[0]
    if not value.strip():
        raise StoreError(f"erase: the {kind} selector is empty")
    return kind, value
