"""Turn the pipeline's records into ledger rows: one function per table, no I/O.

Row keys are content hashes, which is what makes writes idempotent: recording the same result
twice produces the same keys, and the second insert is a no-op. ``result_key`` is the hash of
the run id and the whole result line, so one run's record of a conversation never collides with
another run's, and a result recorded again (a resumed batch, a retried write) adds nothing.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from ..candidates import MemoryCandidate
from ..content import masked_conversation
from ..conversation import Conversation
from ..decisions import AdmissionDecision
from ..hashing import canonical_json, text_hash
from ..results import ConversationResult, FailureRecord, RunProvenance
from ..validation import Rejection

Row = dict[str, Any]


def _json(value: Any) -> str:
    """Canonical JSON; a model's stray ``NaN`` (which ``json.loads`` accepts) is kept, not fatal."""
    try:
        return str(canonical_json(value))
    except ValueError:
        plain = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
        text: str = json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return text


def _json_list(items: list[Any]) -> str:
    return _json([item.model_dump(mode="json") for item in items])


def _hash(value: Any) -> str:
    return "sha256:" + hashlib.sha256(_json(value).encode("utf-8")).hexdigest()


def _iso(value: Any) -> str | None:
    return None if value is None else value.isoformat()


def _uses(values: list[Any]) -> str:
    return json.dumps([str(v) for v in values])


def result_key(run_id: str, result: ConversationResult) -> str:
    return _hash({"run_id": run_id, "result": result.model_dump(mode="json")})


def failure_key(run_id: str, failure: FailureRecord) -> str:
    return _hash({"run_id": run_id, "failure": failure.model_dump(mode="json")})


def run_row(
    run_id: str, provenance: RunProvenance, settings: Any, started_at: str, status: str
) -> Row:
    return {
        "run_id": run_id,
        "started_at": started_at,
        "status": status,
        **provenance.model_dump(mode="json"),
        "settings_json": _json(settings),
    }


def conversation_row(
    run_id: str, key: str, result: ConversationResult, run: RunProvenance | None = None
) -> Row:
    """The ``conversations`` row; ``run`` is the provenance its run was started with (its
    ``result_json`` then leaves out a provenance that is the run's)."""
    prov = result.provenance
    row: Row = {
        "result_key": key,
        "run_id": run_id,
        "conversation_id": result.conversation_id,
        "conversation_hash": result.conversation_hash,
        "source": result.input.source,
        "line": result.input.line,
        "field": result.input.field,
        "model": prov.model,
        "prompt_hash": prov.prompt_hash,
        "schema_version": prov.schema_version,
        "policy_id": prov.policy_id,
        "policy_version": prov.policy_version,
        "candidate_count": len(result.candidates),
        "rejection_count": len(result.rejections),
        "attempts": result.attempts,
        "chunks": result.chunks,
        "cached": int(result.cached),
        "prompt_tokens": result.usage.prompt_tokens,
        "completion_tokens": result.usage.completion_tokens,
        "total_ms": result.timings.total_ms,
        "recorded_at": result.recorded_at.isoformat(),
        "tenant": result.tenant,
        "subject": result.subject,
    }
    row["result_json"] = _json(skeleton(result, row, run))
    return row


#: Result fields a ``conversations`` row holds in columns of the same name.
RESULT_COLUMNS = ("conversation_id", "conversation_hash", "tenant", "subject", "attempts",
                  "chunks", "cached")  # fmt: skip
#: Provenance fields ``conversations`` has no column for (``runs`` has).
RUN_ONLY_PROVENANCE = ("prompt_id", "prompt_version", "extractor_version")


def skeleton(
    result: ConversationResult, row: Row | None = None, run: RunProvenance | None = None
) -> dict[str, Any]:
    """What ``conversations.result_json`` stores: the result without its candidates, decisions
    and rejections (rows of their own tables, in their order: the candidates' memory ids are
    kept only when one is listed twice), without fields at their default, and, given its
    ``row``, without what the row's columns hold (its ``input``, ``usage`` when its total is the
    sum, ``provenance`` when the rest of it is the ``run``'s) -- :meth:`Ledger.results` rebuilds
    the line."""
    data: dict[str, Any] = result.model_dump(mode="json", exclude_defaults=True)
    data["schema_version"] = result.schema_version  # explicit: the default is the reader's
    for name in ("candidates", "decisions", "rejections"):
        data.pop(name, None)
    ids = [c.memory_id for c in result.candidates]
    if len(set(ids)) != len(ids):
        data["candidates"] = ids
    if row is None:
        return data
    full = result.model_dump(mode="json", include={"input", "usage", "provenance", "recorded_at"})
    for name in RESULT_COLUMNS:
        data.pop(name, None)
    if _same("recorded_at", row["recorded_at"], full["recorded_at"]):
        data.pop("recorded_at", None)
    if full["input"] == {k: row[k] for k in ("source", "line", "field")}:
        data.pop("input", None)
    if full["usage"] == usage_of(row):
        data.pop("usage", None)
    if run is not None and full["provenance"] == provenance_of(row, run.model_dump(mode="json")):
        data.pop("provenance", None)
    return data


def usage_of(row: Any) -> dict[str, int]:
    """A result's ``usage`` from its row's token columns (the total their sum)."""
    prompt, completion = int(row["prompt_tokens"]), int(row["completion_tokens"])
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}  # fmt: skip


def provenance_of(row: Any, run: Any) -> dict[str, Any]:
    """A result's ``provenance`` from its row's columns and its run's (``runs`` row)."""
    names = ("model", "prompt_hash", "schema_version", "policy_id", "policy_version")
    return {k: row[k] for k in names} | {k: run[k] for k in RUN_ONLY_PROVENANCE}


#: Columns holding JSON text that mirror a field of the same name.
JSON_FIELDS = frozenset(
    {"parent_memory_ids", "requested_uses", "evidence_ids", "allowed_uses", "forbidden_uses",
     "denied_requested_uses", "flags", "rules_fired", "inherited_from", "hedges"}
)  # fmt: skip


#: Columns holding a date-time (written ``+00:00``; the records write ``Z``: the same time).
TIME_FIELDS = frozenset({"recorded_at", "observed_at", "as_of"})


def column_value(name: str, value: Any) -> Any:
    """A column's value as the field of the same name holds it (JSON text decoded)."""
    return json.loads(value) if name in JSON_FIELDS and isinstance(value, str) else value


def _same(name: str, column: Any, field: Any) -> bool:
    if name in TIME_FIELDS and isinstance(column, str) and isinstance(field, str):
        try:
            return datetime.fromisoformat(column) == datetime.fromisoformat(field)
        except ValueError:
            return False
    return bool(column_value(name, column) == field)


def beside_columns(model: BaseModel, row: Row, **full: Any) -> str:
    """``candidate_json`` / ``decision_json``: the record's canonical JSON without the fields a
    column of ``row`` already holds (same name, same value) and without fields at their
    default -- :func:`rebuild` restores both, so the record is stored once. ``full`` overrides
    a field's value as the columns hold it (e.g. ``rules_fired`` without reasons)."""
    full = model.model_dump(mode="json") | full
    data = model.model_dump(mode="json", exclude_defaults=True)
    rest = {k: v for k, v in data.items() if not (k in row and _same(k, row[k], full[k]))}
    return _json(rest)


def rebuild(fields: Any, stored: str, row: Any) -> dict[str, Any]:
    """The record's fields from its ``*_json`` text and its row's columns (see
    :func:`beside_columns`); rows written before hold the whole record in the text."""
    data: dict[str, Any] = json.loads(stored)
    columns = set(row.keys())
    for name in fields:
        if name not in data and name in columns:
            data[name] = column_value(name, row[name])
    return data


def evidence_ref(conversation_hash: str, candidate: MemoryCandidate) -> str:
    """``<conversation hash>#<message id>[<start>:<end>]``: where the quote can be found again."""
    span = candidate.source_span
    return f"{conversation_hash}#{span.message_id}[{span.start}:{span.end}]"


def candidate_row(
    run_id: str, key: str, result: ConversationResult, candidate: MemoryCandidate
) -> Row:
    c = candidate
    conversation_hash = result.conversation_hash
    row = {
        "result_key": key,
        "memory_id": c.memory_id,
        "run_id": run_id,
        "conversation_id": c.conversation_id,
        "conversation_hash": conversation_hash,
        "candidate_id": c.candidate_id,
        "candidate_hash": _hash(c),
        "content": c.content,
        "memory_type": c.memory_type.value,
        "kind": c.kind.value,
        "origin_kind": c.origin_kind.value,
        "verification_state": c.verification_state.value,
        "lifecycle_state": c.lifecycle_state.value,
        "temporal_kind": c.temporal.kind.value,
        "temporal_expression": c.temporal.expression,
        "valid_from": c.temporal.valid_from,
        "valid_to": c.temporal.valid_to,
        "observed_at": _iso(c.observed_at),
        "recorded_at": c.recorded_at.isoformat(),
        "parent_memory_ids": json.dumps(c.parent_memory_ids),
        "requested_uses": _uses(c.requested_uses),
        "evidence_ids": json.dumps(c.evidence_ids),
        "evidence_ref": evidence_ref(conversation_hash, c),
        "evidence_hash": text_hash(c.source_span.quote),
        "quote": c.source_span.quote,
        "span_corrected": int(c.span_corrected),
        "hedges": json.dumps(c.uncertainty.hedges, ensure_ascii=False),
        "model": c.provenance.model,
        "prompt_hash": c.provenance.prompt_hash,
        "memory_schema_version": c.provenance.schema_version,
        "tenant": result.tenant,
        "subject": result.subject,
    }
    data = json.loads(beside_columns(c, row))
    line = {k: v for k, v in result.provenance.model_dump(mode="json").items()
            if k in type(c.provenance).model_fields}  # fmt: skip
    if data.get("provenance") == line:
        del data["provenance"]  # the result's own: conversations.result_json holds it
    span = data.get("source_span")
    if isinstance(span, dict) and span.get("quote") == row["quote"]:
        del span["quote"]  # the quote column holds it
        if span_of(str(row["evidence_ref"])) == span:
            del data["source_span"]  # and evidence_ref the rest
    if data.get("temporal", {}) == temporal_of(row):
        data.pop("temporal", None)  # the temporal_* columns hold it
    if data.get("uncertainty", {}) == uncertainty_of(row):
        data.pop("uncertainty", None)  # the hedges column holds it
    row["candidate_json"] = _json(data)
    return row


def span_of(ref: str) -> dict[str, Any] | None:
    """The message id and offsets of an ``evidence_ref`` (``<hash>#<message id>[<s>:<e>]``)."""
    _, hashmark, rest = ref.partition("#")
    message_id, bracket, offsets = rest.rpartition("[")
    start, colon, end = offsets.removesuffix("]").partition(":")
    if not (hashmark and bracket and colon and start.isdigit() and end.isdigit()):
        return None
    return {"end": int(end), "message_id": message_id, "start": int(start)}


def temporal_of(row: Any) -> dict[str, Any]:
    """A candidate's ``temporal`` from its row's columns (fields at their default left out)."""
    found = {"expression": row["temporal_expression"], "kind": row["temporal_kind"],
             "valid_from": row["valid_from"], "valid_to": row["valid_to"]}  # fmt: skip
    return {k: v for k, v in found.items() if v is not None and (k, v) != ("kind", "UNKNOWN")}


def uncertainty_of(row: Any) -> dict[str, Any]:
    """A candidate's ``uncertainty`` from its row's ``hedges`` (its other fields default)."""
    hedges = column_value("hedges", row["hedges"])
    return {"hedges": hedges} if hedges else {}


def decision_row(run_id: str, key: str, decision: AdmissionDecision) -> Row:
    d = decision
    row = {
        "result_key": key,
        "memory_id": d.memory_id,
        "run_id": run_id,
        "input_hash": d.input_hash,
        "persist": int(d.persist),
        "lifecycle_state": d.lifecycle_state.value,
        "allowed_uses": _uses(d.allowed_uses),
        "forbidden_uses": _uses(d.forbidden_uses),
        "denied_requested_uses": _json_list(d.denied_requested_uses),
        "eligible_for_admission": int(d.eligible_for_admission),
        "flags": json.dumps(d.flags),
        "rules_fired": _json(fired_rules(d)),
        "inherited_from": json.dumps(d.inherited_from),
        "evidence_as_of": d.evidence_as_of,
        "policy_id": d.policy_id,
        "policy_version": d.policy_version,
        "as_of": _iso(d.as_of),
    }
    row["decision_json"] = beside_columns(d, row, rules_fired=fired_rules(d))
    return row


def fired_rules(decision: AdmissionDecision) -> list[dict[str, Any]]:
    """``decisions.rules_fired``: each fired rule without its reason (``policy_rules`` has it)."""
    return [r.model_dump(mode="json", exclude={"reason"}) for r in decision.rules_fired]


def policy_rule_rows(decision: AdmissionDecision) -> list[Row]:
    """A ``policy_rules`` row for each rule of ``decision`` that fired with a reason."""
    return [
        {"policy_id": decision.policy_id, "policy_version": decision.policy_version,
         "rule_id": r.rule_id, "rule_hash": r.rule_hash or "", "reason": r.reason}
        for r in decision.rules_fired if r.reason is not None
    ]  # fmt: skip


def rejection_row(
    run_id: str, key: str, conversation_id: str, seq: int, rejection: Rejection
) -> Row:
    r = rejection
    return {
        "result_key": key,
        "seq": seq,
        "run_id": run_id,
        "conversation_id": conversation_id,
        "candidate_index": r.index,
        "candidate_id": r.candidate_id,
        "code": r.code.value,
        "field": r.field,
        "message": r.message,
        "raw_json": _json(r.raw),
    }


def failure_row(run_id: str, key: str, failure: FailureRecord) -> Row:
    f = failure
    return {
        "failure_key": key,
        "run_id": run_id,
        "conversation_id": f.conversation_id,
        "conversation_hash": f.conversation_hash,
        "source": f.input.source,
        "line": f.input.line,
        "field": f.input.field,
        "stage": f.stage,
        "error_code": f.error_code,
        "error": f.error,
        "recorded_at": f.recorded_at.isoformat(),
        "failure_json": _json(f),
        "tenant": f.tenant,
        "subject": f.subject,
    }


def transcript_row(conversation: Conversation) -> Row:
    """The transcript with its secrets masked in place (:func:`masked_conversation`), keyed by
    the content hash of the conversation as it was; ``stored_hash`` is the masked one's."""
    stored, redactions = masked_conversation(conversation)
    return {
        "conversation_hash": conversation.content_hash(),
        "conversation_id": conversation.id,
        "conversation_json": _json(stored.model_dump(mode="json", exclude_none=True)),
        "redactions": _json_list(redactions) if redactions else None,
        "stored_hash": stored.content_hash() if redactions else None,
    }
