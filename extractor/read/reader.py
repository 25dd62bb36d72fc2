"""``read()``: the four stages in order, and the audit record of every read.

::

    from extractor.read import Caller, MemoryReader

    with MemoryReader("memory.db") as reader:
        result = reader.read("Who is my manager?", tenant="acme", subject="user-42",
                             caller=Caller(id="agent:support"), purpose="PERSONALIZATION")
        result.text        # serialized context, for the prompt
        result.items       # usable items, each with the UseDecision that admitted it
        result.excluded    # audit only: every excluded candidate with its stage and rule

Every read writes one ``reads`` row and one ``read_items`` row per claim and stage reached
(``RETRIEVED``, ``ADMITTED``, ``SERIALIZED``) in the store file, in one transaction, which is
what the store's revocation impact report reads (exposure before containment).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from ..errors import ReadDenied, StoreError
from ..hashing import text_hash
from ..sqlitedb import connect
from ..store.migrations import migration_names
from ..vocab import Capability
from .eligibility import (
    RULES,
    Scope,
    excluded_matches,
    exclusions_of,
    known_at_text,
    select_eligible,
    source_sql,
)
from .embed import Embedder, VectorRanker
from .evidence import TranscriptCache, TranscriptSource, check_evidence
from .judge import judge
from .models import (
    Caller,
    EvidenceStatus,
    ExcludedItem,
    ReadItem,
    ReadRequest,
    ReadResult,
    Stage,
    UseDecision,
)
from .policy import ReadPolicy, load_read_policy
from .rank import EligibleSlice, HybridRanker, LexicalRanker, Ranker
from .replay import ReplayReport, replay_read
from .serialize import SERIALIZER_VERSION, Serialized, TokenCounter, estimate_tokens, serialize
from .views import Hit, load_hits

#: How many ineligible lexical matches a result lists for audit at most.
DEFAULT_AUDIT_LIMIT = 100
#: Stage 2 hands ``OVERFETCH * k`` hits to stage 3 first, more while too few are admissible.
OVERFETCH = 4
BUDGET_RULE = "token-budget"
BELOW_K_RULE = "below-top-k"
BUDGET_REASON = "Admissible, but its line did not fit the token budget."

#: Eligible slices a reader keeps (ids only), per scope, policy and store state.
SLICE_CACHE = 8
#: Page cache of the reader's connection (KiB) and how much of the file it may map.
CACHE_KIB = 65536
MMAP_BYTES = 1 << 30

Clock = Callable[[], datetime]


class MemoryReader:
    """The read path over one memory-store file.

    ``store`` is a :class:`~extractor.store.MemoryStore` on a SQLite file, or the file's path;
    the reader opens its own connection to it. ``policy`` is a :class:`ReadPolicy` (``None``:
    the shipped one). ``embedder`` adds exact-cosine ranking fused with BM25 (vectors kept in
    the store's ``claim_embeddings``, dropped on erasure); ``ranker`` replaces ranking
    altogether (called with the reader's connection). ``transcripts`` (e.g. an
    :class:`extractor.ledger.Ledger`) lets high-risk reads dereference evidence.
    """

    def __init__(
        self,
        store: Any,
        *,
        policy: ReadPolicy | None = None,
        embedder: Embedder | None = None,
        ranker: Callable[[sqlite3.Connection], Ranker] | None = None,
        transcripts: TranscriptSource | None = None,
        clock: Clock | None = None,
        count_tokens: TokenCounter = estimate_tokens,
    ) -> None:
        path = _store_path(store)
        try:
            # Stage 1 and BM25 touch claims, memories and versions at random: keep the pages in
            # memory (SQLite's default page cache is 2 MB; a 100k-claim store is ~450 MB).
            self._db = connect(
                path,
                wal=False,  # the store's writer chose the journal mode; a reader keeps it
                check_same_thread=True,
                pragmas={"cache_size": -CACHE_KIB, "mmap_size": MMAP_BYTES},
            )
            self._db.execute("SELECT 1 FROM memory_current LIMIT 0")
            done = {r[0] for r in self._db.execute("SELECT name FROM store_migrations")}
        except sqlite3.Error as exc:
            raise StoreError(f"{path}: not a readable memory store ({exc})") from None
        pending = [name for name in migration_names() if name not in done]
        if pending:
            self._db.close()
            raise StoreError(
                f"{path}: the memory store lacks migration {pending[0]}; open it once with "
                "MemoryStore (or any extractor store command) to migrate it"
            )
        self.policy = policy or load_read_policy()
        self._ranker = _ranker(self._db, embedder, ranker)
        self._transcripts = transcripts
        self._clock = clock or (lambda: datetime.now(UTC))
        self._count = count_tokens
        self._slices: OrderedDict[tuple[object, ...], tuple[str, ...]] = OrderedDict()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> MemoryReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def ranker(self) -> Ranker:
        return self._ranker

    def read(
        self,
        query: str,
        *,
        tenant: str,
        subject: str,
        caller: Caller | str,
        purpose: Capability | str,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
        k: int = 8,
        token_budget: int | None = None,
    ) -> ReadResult:
        """Read up to ``k`` usable memories for ``purpose``; see the module docstring."""
        request = _request(
            query, tenant, subject, caller, purpose, as_of, known_at, k, token_budget
        )
        if not request.caller.may_read_for(request.purpose):
            raise ReadDenied(
                f"caller {request.caller.id!r} is not authorized to read for "
                f"{request.purpose.value}",
                caller=request.caller.id,
                purpose=request.purpose.value,
            )
        now = self._clock()
        scope = Scope(tenant, subject, request.caller, request.purpose, as_of, known_at)
        return self._read(request, scope, judged_at(as_of, now), now)

    def _read(
        self, request: ReadRequest, scope: Scope, as_of: datetime, now: datetime
    ) -> ReadResult:
        db, policy = self._db, self.policy
        db.execute("BEGIN")
        try:
            (seq,) = db.execute("SELECT COALESCE(MAX(seq), 0) FROM memory_events").fetchone()
            (version,) = db.execute("PRAGMA data_version").fetchone()
            key = _slice_key(scope, policy, int(version), int(seq))
            eligible = select_eligible(db, scope, policy, ids=self._slices.get(key))  # stage 1
            judged, ranked = self._rank_and_judge(request, scope, eligible, as_of)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        admitted = [(h, d) for h, d in judged if d.admissible]
        top, below = admitted[: request.k], admitted[request.k :]
        context = serialize(
            [(h.view, d) for h, d in top],
            token_budget=request.token_budget,
            count_tokens=self._count,
        )
        result = _result(request, policy, self._ranker.name, context, ranked, judged, top, below)
        result.excluded.extend(self._ineligible(scope, request.query))
        order = list(Stage)
        result.excluded.sort(key=lambda e: (order.index(e.stage), e.rank or 0, e.claim_id))
        result.eligible_count = len(eligible) if eligible.materialized else None
        if eligible.materialized:
            self._slices[key] = eligible.claim_ids
            self._slices.move_to_end(key)
            while len(self._slices) > SLICE_CACHE:
                self._slices.popitem(last=False)
        self._record(result, now, int(seq), ranked, judged, top, context.included)
        return result

    def decide(
        self,
        claim_ids: Sequence[str],
        *,
        tenant: str,
        subject: str,
        caller: Caller | str,
        purpose: Capability | str,
        as_of: datetime | None = None,
        known_at: datetime | None = None,
    ) -> dict[str, UseDecision | ExcludedItem]:
        """What the read path would decide for these claims if they were retrieved: stage 1,
        then stage 3 for the eligible ones. Nothing is ranked, serialized or recorded; claims
        of other tenants or subjects are left out. For audit, replay and evaluation."""
        who = caller if isinstance(caller, Caller) else Caller(id=caller)
        use = Capability(purpose)
        scope = Scope(tenant, subject, who, use, as_of, known_at)
        at = judged_at(as_of, self._clock())
        rules = exclusions_of(self._db, scope, self.policy, claim_ids)
        source, params = source_sql(scope)
        eligible = [c for c, rule in rules.items() if rule is None]
        hits = load_hits(self._db, source, params, eligible, known_at=known_at_text(scope))
        request = ReadRequest(query="", tenant=tenant, subject=subject, caller=who, purpose=use)
        out: dict[str, UseDecision | ExcludedItem] = {}
        for claim_id, rule in rules.items():
            if rule is None:
                out[claim_id] = self._judge(hits[claim_id], request, at, self._cache())
            else:
                memory_id = claim_id.rsplit(":", 1)[0]
                out[claim_id] = ExcludedItem(claim_id=claim_id, memory_id=memory_id,
                                             stage=Stage.ELIGIBILITY, rule_id=rule,
                                             reason=RULES[rule])  # fmt: skip
        return out

    def replay(self, read_id: str, *, policy: ReadPolicy | None = None) -> ReplayReport:
        """Judge the candidates of recorded read ``read_id`` again under ``policy`` (``None``:
        the reader's own) and report which uses change (:mod:`.replay`). Nothing is ranked or
        recorded; the claim versions judged are the recorded ones."""
        return replay_read(self._db, read_id, policy or self.policy, transcripts=self._cache())

    def _rank_and_judge(
        self, request: ReadRequest, scope: Scope, eligible: EligibleSlice, as_of: datetime
    ) -> tuple[list[tuple[Hit, UseDecision]], dict[str, tuple[int, float]]]:
        """Stage 2 over the slice, stage 3 on each hit; fetch deeper while too few pass."""
        source, params = source_sql(scope)
        judged: list[tuple[Hit, UseDecision]] = []
        ranked: dict[str, tuple[int, float]] = {}
        depth, cache = OVERFETCH * request.k, self._cache()
        while True:
            hits = self._ranker.rank(request.query, eligible, depth)
            fresh = [h for h in hits if h.claim_id not in ranked]
            for position, h in enumerate(hits, start=1):
                ranked.setdefault(h.claim_id, (position, h.score))
            views = load_hits(
                self._db, source, params, [h.claim_id for h in fresh], known_at=known_at_text(scope)
            )
            for h in fresh:
                judged.append(
                    (views[h.claim_id], self._judge(views[h.claim_id], request, as_of, cache))
                )
            enough = sum(d.admissible for _, d in judged) >= request.k
            if enough or len(hits) < depth:
                return judged, ranked
            depth *= OVERFETCH

    def _cache(self) -> TranscriptCache | None:
        """A transcript cache for one read (transcripts can change between reads)."""
        return None if self._transcripts is None else TranscriptCache(self._transcripts)

    def _judge(
        self, hit: Hit, request: ReadRequest, as_of: datetime, cache: TranscriptCache | None
    ) -> UseDecision:
        evidence = EvidenceStatus.NOT_CHECKED
        if self.policy.purpose(request.purpose).dereference:
            evidence = check_evidence(
                hit.evidence_ref, hit.quote_hash, transcripts=cache,
                sources_admissible=hit.sources_admissible,
            )  # fmt: skip
        return judge(hit.view, purpose=request.purpose, policy=self.policy, as_of=as_of,
                     evidence=evidence)  # fmt: skip

    def _ineligible(self, scope: Scope, query: str) -> list[ExcludedItem]:
        found = excluded_matches(self._db, scope, self.policy, query, limit=DEFAULT_AUDIT_LIMIT)
        return [
            ExcludedItem(
                claim_id=c, memory_id=m, stage=Stage.ELIGIBILITY, rule_id=rule, reason=RULES[rule]
            )
            for c, m, rule in found
        ]

    def _record(
        self,
        result: ReadResult,
        now: datetime,
        seq: int,
        ranked: dict[str, tuple[int, float]],
        judged: list[tuple[Hit, UseDecision]],
        top: list[tuple[Hit, UseDecision]],
        serialized: tuple[str, ...],
    ) -> None:
        """One ``reads`` row; one ``read_items`` row per claim and stage it reached, each with
        the version judged and the decision, so the read can be replayed (:mod:`.replay`)."""
        facts = {
            d.claim_id: (
                json.dumps([f.rule_id for f in d.rules_fired]), h.version, int(d.admissible),
                d.use, d.excluded_by, d.evidence.value, h.view.independent_families,
            )
            for h, d in judged
        }  # fmt: skip
        rid = result.read_id
        rows = [(rid, c, "RETRIEVED", n, score, *facts[c]) for c, (n, score) in ranked.items()]
        order = {h.view.claim_id: n for n, (h, _) in enumerate(top, start=1)}
        rows += [(rid, c, "ADMITTED", n, ranked[c][1], *facts[c]) for c, n in order.items()]
        rows += [(rid, c, "SERIALIZED", order[c], ranked[c][1], *facts[c]) for c in serialized]
        r, db = result.request, self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT INTO reads (read_id, at, tenant, caller, purpose, query_hash, as_of, "
                "known_at, read_policy_id, read_policy_version, subject, acting_for, k, "
                "store_seq, read_policy_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (rid, _iso(now), r.tenant, r.caller.id, r.purpose.value, text_hash(r.query),
                 _naive(r.as_of), _iso(r.known_at), result.policy_id,
                 result.policy_version, r.subject, r.caller.acting_for, r.k, seq,
                 self.policy.hash),
            )  # fmt: skip
            db.executemany(
                "INSERT INTO read_items (read_id, claim_id, stage, rank, score, rules_fired, "
                "version, admissible, use, excluded_by, evidence, families) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise


def _request(
    query: str,
    tenant: str,
    subject: str,
    caller: Caller | str,
    purpose: Capability | str,
    as_of: datetime | None,
    known_at: datetime | None,
    k: int,
    token_budget: int | None,
) -> ReadRequest:
    """The validated request; a bad argument is a :class:`StoreError` naming it."""
    if purpose not in set(Capability):
        known = ", ".join(c.value for c in Capability)
        raise StoreError(f"purpose {purpose!r} is not one of {known}")
    try:
        return ReadRequest(
            query=query, tenant=tenant, subject=subject,
            caller=caller if isinstance(caller, Caller) else Caller(id=caller),
            purpose=Capability(purpose), as_of=as_of, known_at=known_at, k=k,
            token_budget=token_budget,
        )  # fmt: skip
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise StoreError(f"invalid read request: {problems}") from None


def _item(hit: Hit, d: UseDecision, ranked: dict[str, tuple[int, float]]) -> ReadItem:
    v = hit.view
    rank, score = ranked[v.claim_id]
    return ReadItem(
        claim_id=v.claim_id,
        memory_id=v.memory_id,
        rank=rank,
        score=score,
        content=v.content,
        use=d.use or "",
        origin_kind=v.origin_kind,
        verification_state=v.verification_state,
        lifecycle_state=v.lifecycle_state,
        source_label=v.source_label,
        decision=d,
    )


def _excluded(d: UseDecision, stage: Stage, rule: str, reason: str, rank: int) -> ExcludedItem:
    return ExcludedItem(
        claim_id=d.claim_id,
        memory_id=d.memory_id,
        stage=stage,
        rule_id=rule,
        reason=reason,
        rank=rank,
    )


def _result(
    request: ReadRequest,
    policy: ReadPolicy,
    ranker: str,
    context: Serialized,
    ranked: dict[str, tuple[int, float]],
    judged: list[tuple[Hit, UseDecision]],
    top: list[tuple[Hit, UseDecision]],
    below: list[tuple[Hit, UseDecision]],
) -> ReadResult:
    over = set(context.over_budget)
    items = [_item(h, d, ranked) for h, d in top if d.claim_id not in over]
    excluded = [
        _excluded(d, Stage.SERIALIZATION, BUDGET_RULE, BUDGET_REASON, ranked[d.claim_id][0])
        for _, d in top
        if d.claim_id in over
    ]
    for _, d in judged:
        if not d.admissible:
            why = next((f.reason for f in d.rules_fired if f.rule_id == d.excluded_by), "")
            rule = d.excluded_by or ""
            excluded.append(_excluded(d, Stage.ADMISSIBILITY, rule, why, ranked[d.claim_id][0]))
    below_reason = f"Admissible, but below the top {request.k}."
    excluded += [
        _excluded(d, Stage.RELEVANCE, BELOW_K_RULE, below_reason, ranked[d.claim_id][0])
        for _, d in below
    ]
    return ReadResult(
        read_id="read_" + uuid.uuid4().hex[:24],
        request=request,
        policy_id=policy.id,
        policy_version=policy.version,
        serializer_version=SERIALIZER_VERSION,
        ranker=ranker,
        text=context.text,
        tokens=context.tokens,
        items=items,
        excluded=excluded,
        eligible_count=None,
    )


def _ranker(
    db: sqlite3.Connection,
    embedder: Embedder | None,
    factory: Callable[[sqlite3.Connection], Ranker] | None,
) -> Ranker:
    if factory is not None:
        return factory(db)
    lexical = LexicalRanker(db, index="claims_fts")
    if embedder is None:
        return lexical
    return HybridRanker([lexical, VectorRanker(embedder, db=db)])


def _store_path(store: Any) -> str:
    if isinstance(store, str | Path):
        return str(store)
    location = getattr(getattr(store, "backend", None), "location", None)
    if not isinstance(location, str) or location == ":memory:":
        raise StoreError(
            "the read path needs a memory store on a SQLite file (MemoryStore('memory.db')); "
            "an in-memory or non-SQLite store cannot be opened by a second connection"
        )
    return location


def _iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


def _slice_key(scope: Scope, policy: ReadPolicy, version: int, seq: int) -> tuple[object, ...]:
    """What stage 1's result depends on: the scope as the SQL sees it, the policy, and the
    store's state (``PRAGMA data_version`` moves with every other connection's commit; the
    reader's own writes -- the audit, vectors -- never change eligibility)."""
    acting = scope.caller.acting_for == scope.subject
    return (scope.tenant, scope.subject, acting, scope.purpose, scope.as_of, scope.known_at,
            policy.hash, version, seq)  # fmt: skip


def judged_at(as_of: datetime | None, now: datetime) -> datetime:
    """The valid time stage 3 judges at: ``as_of`` to the second (the store's valid-time
    precision, as ``reads.as_of`` records it), else the read's own time in UTC (``reads.at``),
    naive -- so a recorded read can be judged again at exactly the same instant."""
    if as_of is not None:
        return as_of.replace(tzinfo=None, microsecond=0)
    aware = now if now.tzinfo else now.replace(tzinfo=UTC)
    return aware.astimezone(UTC).replace(tzinfo=None)


def _naive(moment: datetime | None) -> str | None:
    return None if moment is None else moment.replace(tzinfo=None).isoformat(timespec="seconds")


def replay(
    store: Any,
    read_id: str,
    *,
    policy: ReadPolicy | None = None,
    transcripts: TranscriptSource | None = None,
) -> ReplayReport:
    """Replay one recorded read under ``policy`` (``None``: the shipped one); see
    :meth:`MemoryReader.replay`."""
    with MemoryReader(store, transcripts=transcripts) as reader:
        return reader.replay(read_id, policy=policy)


def read(store: Any, query: str, **options: Any) -> ReadResult:
    """One read with a :class:`MemoryReader` opened and closed around it (options as
    :meth:`MemoryReader.read`, plus ``policy``, ``embedder``, ``transcripts``)."""
    setup = {k: options.pop(k) for k in ("policy", "embedder", "ranker", "transcripts", "clock")
             if k in options}  # fmt: skip
    with MemoryReader(store, **setup) as reader:
        return reader.read(query, **options)
