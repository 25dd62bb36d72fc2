"""The ledger's compact storage (migration ``m007_compact_storage``): logical rows in, stored rows
out. No I/O but the ``texts`` lookups of an :class:`Interner`.

A *logical* row is what :mod:`extractor.ledger.rows` builds and what the ``conversations``,
``candidates``, ``decisions`` and ``rejections`` views give back, column for column. It is stored
as a *packed* row of ``results``, ``memories`` (a candidate and its decision in one row) or
``rejection_rows``:

* a ``sha256:<64 hex>`` hash is its 32 bytes (a BLOB; any other value is kept as text);
* a value that repeats across rows (run id, model, prompt hash, enum values, lists of uses,
  flags, fired rules, times) is an integer key of ``texts``, where it is stored once;
* what the row's result already holds (run, conversation hash, tenant and subject, the
  conversation id and recording time when they are the result's, the conversation hash at the
  head of ``evidence_ref``) is not stored again;
* a decision's fired rules are split into the rules without their details (shared: ``texts``)
  and the details (``rule_details``, a JSON list, NULL when every detail is null).

The views (:data:`VIEWS`) undo each step in SQL, so a logical row read back is the row written.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Mapping
from typing import Any

Row = dict[str, Any]

_HASH = re.compile(r"sha256:[0-9a-f]{64}")


def packed_hash(value: Any) -> Any:
    """A ``sha256:<hex>`` hash as its 32 bytes; any other value (a test's ``sha256:prompt``,
    ``None``) as it is."""
    if isinstance(value, str) and _HASH.fullmatch(value):
        return bytes.fromhex(value[7:])
    return value


def unpacked_hash(value: Any) -> Any:
    """The inverse of :func:`packed_hash`."""
    return "sha256:" + value.hex() if isinstance(value, bytes) else value


class Interner:
    """Integer keys of ``texts`` for values, inserting the new ones. Keys found or made in the
    current transaction are kept in ``pending`` until :meth:`commit` moves them to the cache
    shared by the ledger's transactions (a rolled-back key is never cached)."""

    def __init__(self, db: sqlite3.Connection, known: dict[str, int]) -> None:
        self.db, self.known, self.pending = db, known, dict[str, int]()

    def __call__(self, value: str | None) -> int | None:
        if value is None:
            return None
        key = self.known.get(value) or self.pending.get(value)
        if key is None:
            self.db.execute("INSERT INTO texts (value) VALUES (?) ON CONFLICT DO NOTHING", (value,))
            found = self.db.execute("SELECT id FROM texts WHERE value = ?", (value,)).fetchone()
            key = self.pending[value] = int(found[0])
        return key

    def commit(self) -> None:
        self.known.update(self.pending)
        self.pending.clear()


#: Columns of each packed table stored as a key of ``texts``.
RESULT_TEXTS = ("run_id", "source", "model", "prompt_hash", "schema_version", "policy_id",
                "policy_version", "tenant", "subject")  # fmt: skip
CANDIDATE_TEXTS = (
    "memory_type", "kind", "origin_kind", "verification_state", "lifecycle_state",
    "temporal_kind", "valid_from", "valid_to", "observed_at", "requested_uses", "evidence_ids",
    "hedges", "model", "prompt_hash", "memory_schema_version",
)  # fmt: skip
DECISION_TEXTS = ("lifecycle_state", "allowed_uses", "forbidden_uses", "denied_requested_uses",
                  "flags", "evidence_as_of", "policy_id", "policy_version", "as_of")  # fmt: skip


def pack_result(row: Mapping[str, Any], intern: Interner) -> Row:
    """A ``conversations`` row as a ``results`` row."""
    packed = dict(row)
    packed["result_key"] = packed_hash(row["result_key"])
    packed["conversation_hash"] = packed_hash(row["conversation_hash"])
    for name in RESULT_TEXTS:
        packed[name] = intern(row[name])
    packed["run"] = packed.pop("run_id")
    return packed


def pack_memory(
    candidate: Mapping[str, Any],
    decision: Mapping[str, Any] | None,
    result: Mapping[str, Any],
    *,
    result_id: int,
    seq: int,
    decided: int | None,
    intern: Interner,
) -> Row:
    """A ``candidates`` row and its ``decisions`` row (or none) as one ``memories`` row, under
    the result (``conversations`` row) stored as ``results.id = result_id``."""
    c = candidate
    same = {k: c[k] == result[k] for k in ("run_id", "conversation_hash", "tenant", "subject")}
    if not all(same.values()):
        differ = ", ".join(k for k, ok in same.items() if not ok)
        raise ValueError(f"candidate {c['memory_id']!r}: {differ} is not its result's")
    packed: Row = {
        "result": result_id,
        "seq": seq,
        "memory_id": c["memory_id"],
        "conversation_id": None
        if c["conversation_id"] == result["conversation_id"]
        else c["conversation_id"],
        "candidate_id": c["candidate_id"],
        "candidate_hash": packed_hash(c["candidate_hash"]),
        "content": c["content"],
        "temporal_expression": c["temporal_expression"],
        "recorded_at": None if c["recorded_at"] == result["recorded_at"] else c["recorded_at"],
        "parent_memory_ids": c["parent_memory_ids"],
        "evidence_ref": _relative_ref(c["evidence_ref"], result["conversation_hash"]),
        "evidence_hash": packed_hash(c["evidence_hash"]),
        "quote": c["quote"],
        "span_corrected": c["span_corrected"],
        "candidate_json": c["candidate_json"],
    }
    for name in CANDIDATE_TEXTS:
        packed[name] = intern(c[name])
    packed["decided"] = decided
    if decision is None:
        return packed
    d = decision
    if d["run_id"] != c["run_id"]:
        raise ValueError(f"decision {d['memory_id']!r}: run_id is not its candidate's")
    rules, details = split_rules(d["rules_fired"])
    packed |= {
        "input_hash": packed_hash(d["input_hash"]),
        "persist": d["persist"],
        "eligible_for_admission": d["eligible_for_admission"],
        "rules": intern(rules),
        "rule_details": details,
        "inherited_from": d["inherited_from"],
        "decision_json": None if d["decision_json"] == "{}" else d["decision_json"],
    }
    for name in DECISION_TEXTS:
        packed["d_" + name] = intern(d[name])
    return packed


def pack_rejection(row: Mapping[str, Any], result_id: int, intern: Interner) -> Row:
    """A ``rejections`` row as a ``rejection_rows`` row."""
    return {
        "result": result_id,
        "seq": row["seq"],
        "candidate_index": row["candidate_index"],
        "candidate_id": row["candidate_id"],
        "code": intern(row["code"]),
        "field": row["field"],
        "message": row["message"],
        "raw_json": row["raw_json"],
    }


def _relative_ref(ref: str, conversation_hash: str) -> str:
    """``evidence_ref`` without its result's conversation hash in front (``#m0[0:9]``)."""
    head = conversation_hash + "#"
    return ref[len(head) - 1 :] if ref.startswith(head) else ref


def split_rules(rules_fired: str) -> tuple[str, str | None]:
    """``rules_fired`` JSON text as (the rules with every ``detail`` null, the details as a
    JSON list -- ``None`` when each is null or a rule has no ``detail`` key)."""
    rules = json.loads(rules_fired)
    if not isinstance(rules, list) or not all(isinstance(r, dict) and "detail" in r for r in rules):
        return rules_fired, None
    details = [r["detail"] for r in rules]
    if all(d is None for d in details):
        return rules_fired, None
    template = [{**r, "detail": None} for r in rules]
    text = json.dumps(template, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text, json.dumps(details, separators=(",", ":"), ensure_ascii=False)


# -- the views: packed rows read back as logical rows ----------------------------------------------


def _h(column: str) -> str:
    return f"CASE WHEN typeof({column}) = 'blob' THEN 'sha256:' || lower(hex({column})) ELSE {column} END"  # noqa: E501


def _t(column: str) -> str:
    return f"(SELECT value FROM texts WHERE id = {column})"


#: ``SELECT`` bodies of the views (without ``ORDER BY``), for readers to filter on the packed
#: tables' indexed columns: ``m`` is ``memories``, ``r`` its ``results`` row, ``j`` a
#: ``rejection_rows`` row.
CONVERSATIONS_SELECT = f"""SELECT
    {_h("r.result_key")} AS result_key, {_t("r.run")} AS run_id, r.conversation_id,
    {_h("r.conversation_hash")} AS conversation_hash, {_t("r.source")} AS source, r.line, r.field,
    {_t("r.model")} AS model, {_t("r.prompt_hash")} AS prompt_hash,
    {_t("r.schema_version")} AS schema_version, {_t("r.policy_id")} AS policy_id,
    {_t("r.policy_version")} AS policy_version, r.candidate_count, r.rejection_count, r.attempts,
    r.chunks, r.cached, r.prompt_tokens, r.completion_tokens, r.total_ms, r.recorded_at,
    r.result_json, {_t("r.tenant")} AS tenant, {_t("r.subject")} AS subject
FROM results AS r"""

CANDIDATES_SELECT = f"""SELECT
    {_h("r.result_key")} AS result_key, m.memory_id, {_t("r.run")} AS run_id,
    COALESCE(m.conversation_id, r.conversation_id) AS conversation_id,
    {_h("r.conversation_hash")} AS conversation_hash, m.candidate_id,
    {_h("m.candidate_hash")} AS candidate_hash, m.content, {_t("m.memory_type")} AS memory_type,
    {_t("m.kind")} AS kind, {_t("m.origin_kind")} AS origin_kind,
    {_t("m.verification_state")} AS verification_state,
    {_t("m.lifecycle_state")} AS lifecycle_state, {_t("m.temporal_kind")} AS temporal_kind,
    m.temporal_expression, {_t("m.valid_from")} AS valid_from, {_t("m.valid_to")} AS valid_to,
    {_t("m.observed_at")} AS observed_at, COALESCE(m.recorded_at, r.recorded_at) AS recorded_at,
    m.parent_memory_ids, {_t("m.requested_uses")} AS requested_uses,
    {_t("m.evidence_ids")} AS evidence_ids,
    CASE WHEN substr(m.evidence_ref, 1, 1) = '#' THEN {_h("r.conversation_hash")} || m.evidence_ref
         ELSE m.evidence_ref END AS evidence_ref,
    {_h("m.evidence_hash")} AS evidence_hash, m.quote, m.span_corrected,
    {_t("m.hedges")} AS hedges, {_t("m.model")} AS model, {_t("m.prompt_hash")} AS prompt_hash,
    {_t("m.memory_schema_version")} AS memory_schema_version, m.candidate_json,
    {_t("r.tenant")} AS tenant, {_t("r.subject")} AS subject
FROM memories AS m JOIN results AS r ON r.id = m.result"""

_RULES_FIRED = f"""CASE WHEN m.rule_details IS NULL THEN {_t("m.rules")} ELSE (
        SELECT json_group_array(json_set(f.value, '$.detail',
                                         json_extract(m.rule_details, '$[' || f.key || ']')))
        FROM json_each({_t("m.rules")}) AS f) END"""

DECISIONS_SELECT = f"""SELECT
    {_h("r.result_key")} AS result_key, m.memory_id, {_t("r.run")} AS run_id,
    {_h("m.input_hash")} AS input_hash, m.persist, {_t("m.d_lifecycle_state")} AS lifecycle_state,
    {_t("m.d_allowed_uses")} AS allowed_uses, {_t("m.d_forbidden_uses")} AS forbidden_uses,
    {_t("m.d_denied_requested_uses")} AS denied_requested_uses, m.eligible_for_admission,
    {_t("m.d_flags")} AS flags, {_RULES_FIRED} AS rules_fired, m.inherited_from,
    {_t("m.d_evidence_as_of")} AS evidence_as_of, {_t("m.d_policy_id")} AS policy_id,
    {_t("m.d_policy_version")} AS policy_version, {_t("m.d_as_of")} AS as_of,
    COALESCE(m.decision_json, '{{}}') AS decision_json
FROM memories AS m JOIN results AS r ON r.id = m.result"""

REJECTIONS_SELECT = f"""SELECT
    {_h("r.result_key")} AS result_key, j.seq, {_t("r.run")} AS run_id, r.conversation_id,
    j.candidate_index, j.candidate_id, {_t("j.code")} AS code, j.field, j.message, j.raw_json
FROM rejection_rows AS j JOIN results AS r ON r.id = j.result"""

MEMORY_LEDGER_SELECT = f"""SELECT
    m.memory_id, m.content, {_t("m.memory_type")} AS memory_type,
    {_t("m.origin_kind")} AS origin_kind, {_t("m.verification_state")} AS verification_state,
    {_t("m.valid_from")} AS valid_from, {_t("m.valid_to")} AS valid_to,
    {_t("m.observed_at")} AS observed_at, COALESCE(m.recorded_at, r.recorded_at) AS recorded_at,
    {_t("COALESCE(m.d_lifecycle_state, m.lifecycle_state)")} AS lifecycle_state,
    m.parent_memory_ids, {_t("m.d_allowed_uses")} AS allowed_uses,
    {_t("m.d_forbidden_uses")} AS forbidden_uses, m.persist,
    {_t("m.d_policy_id")} AS admission_policy_id,
    {_t("m.d_policy_version")} AS admission_policy_version,
    {_t("m.memory_schema_version")} AS memory_schema_version,
    {_t("m.prompt_hash")} AS normalizer_version,
    CASE WHEN substr(m.evidence_ref, 1, 1) = '#' THEN {_h("r.conversation_hash")} || m.evidence_ref
         ELSE m.evidence_ref END AS evidence_ref,
    {_h("m.evidence_hash")} AS evidence_hash, {_h("m.input_hash")} AS decision_input_hash,
    COALESCE(m.conversation_id, r.conversation_id) AS conversation_id, {_t("r.run")} AS run_id,
    {_h("r.result_key")} AS result_key, {_t("r.tenant")} AS tenant, {_t("r.subject")} AS subject
FROM memories AS m JOIN results AS r ON r.id = m.result"""

#: The views m007 creates, by name: each the body above in its table's insertion order.
VIEWS = {
    "conversations": CONVERSATIONS_SELECT + "\nORDER BY r.id",
    "candidates": CANDIDATES_SELECT + "\nORDER BY m.id",
    "decisions": DECISIONS_SELECT + "\nWHERE m.decided IS NOT NULL\nORDER BY m.result, m.decided",
    "rejections": REJECTIONS_SELECT + "\nORDER BY j.id",
    "memory_ledger": MEMORY_LEDGER_SELECT,
}
