"""Result line format 3: a :class:`~extractor.results.ConversationResult` written once, lean.

What every candidate and decision of a conversation share is written once per line, and what
the reader rebuilds exactly is left out (see ``docs/pipeline.md``, "Result line format 3"):

* each candidate's ``conversation_id``, ``recorded_at`` and ``provenance`` are the line's own
  (``provenance`` less the policy id and version);
* each decision is written inside its candidate (``candidates[].decision``), without
  ``memory_id`` and the policy id and version (the line's ``provenance``);
* a decision's outcome -- persistence, lifecycle, allowed and forbidden uses, eligibility,
  flags and the ids of the rules that fired -- is one entry of the line's ``outcomes``, which
  decisions with the same outcome share (``decision.outcome`` is its index);
* a fired rule is its id: its definition hash is in the line's ``rules`` (rule id -> hash) and
  its reason sentence in the versioned policy (``provenance.policy_id`` / ``policy_version``);
  what made it fire for this candidate, when anything, is ``decision.rule_details``;
* a field at its default is left out; ``evidence_ids`` defaults to the span's message,
  ``inherited_from`` to the candidate's sorted parents and ``as_of`` to the time the candidate
  was said (``observed_at``, else the line's ``recorded_at``), as the engine judges it;
* format 3 (``SCHEMA_VERSION`` 3.x) adds three defaults: a candidate's ``observed_at`` is its
  first parent's (when that parent is earlier in the line), its ``temporal`` a point in time at
  its ``observed_at`` (what every event is), and a fired rule's detail
  ``inherits from <the candidate's parents>`` is named by the outcome's ``parent_details``
  instead of being written per decision.

:func:`decode` reads this format, format 2 (``schema_version`` 2.x: those three written out)
and format 1 (``schema_version`` 1.x, every record whole), so result files written before keep
working everywhere a result file is read; a line in the expanded form (a ``decisions`` list:
what the HTTP service answers) is read as it is.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from .._version import SCHEMA_VERSION
from ..proposal.events import EVENT_VERBS
from ..results import ConversationResult

FORMAT_MAJOR = SCHEMA_VERSION.split(".", 1)[0]

#: Candidate fields the line holds once for all of its candidates.
HOISTED_CANDIDATE_FIELDS = ("conversation_id", "recorded_at", "provenance")
#: Decision fields the line holds once (in ``provenance``) or the candidate holds.
HOISTED_DECISION_FIELDS = ("memory_id", "policy_id", "policy_version")
#: Decision fields that make up a shared outcome, with their defaults (left out when equal).
OUTCOME_FIELDS: dict[str, Any] = {
    "persist": None,
    "lifecycle_state": None,
    "allowed_uses": [],
    "forbidden_uses": [],
    "eligible_for_admission": True,
    "flags": [],
    "rules_fired": [],
}
#: Required candidate fields left out when empty (null, or an object with every field default):
#: in format 2 all three; in format 3 ``uncertainty`` (see :data:`DERIVED_CANDIDATE_FIELDS`).
EMPTY_CANDIDATE_FIELDS: dict[str, Any] = {"observed_at": None, "temporal": {}, "uncertainty": {}}
#: Format 3: candidate fields whose absence means a value derived from the line (not "empty").
DERIVED_CANDIDATE_FIELDS = ("observed_at", "temporal")
#: The detail the engine gives a rule that carried every parent's obligations.
INHERITS = "inherits from "
#: What the policy's fields of a result's provenance are called on a candidate's.
POLICY_FIELDS = ("policy_id", "policy_version")
#: Who an event's content names, by the candidate's origin (tools name themselves: written).
EVENT_SPEAKERS = {"USER": "User", "MODEL_OUTPUT": "Assistant", "SYSTEM": "System message"}


def event_content(item: dict[str, Any]) -> str | None:
    """The content the system builds for an event candidate (JSON data), when the candidate's
    own fields say it: ``<speaker> <verb>: "<quote>"`` (see :mod:`extractor.proposal.events`)."""
    verb = {str(t): v for t, v in EVENT_VERBS.items()}.get(str(item.get("memory_type")))
    who = EVENT_SPEAKERS.get(str(item.get("origin_kind")))
    quote = (item.get("source_span") or {}).get("quote")
    if verb is None or who is None or not isinstance(quote, str):
        return None
    return f'{who} {verb}: "{quote}"'


def line_format(data: dict[str, Any]) -> int:
    """The form of a parsed result line: 1 (every record whole -- ``schema_version`` 1.x, or a
    ``decisions`` list, as :meth:`ConversationResult.model_dump_json` and the HTTP service write
    it), 2 (the lean line of ``schema_version`` 2.x) or 3 (this module's, 3.x)."""
    version = data.get("schema_version")
    if "decisions" in data or not isinstance(version, str):
        return 1
    return {"1": 1, "2": 2}.get(version.split(".", 1)[0], 3)


def point_in_time(observed_at: Any) -> dict[str, Any]:
    """Format 3's default ``temporal`` (JSON data): a point in time at ``observed_at`` (the JSON
    text of a date-time) when the candidate has one -- every event's, written as the event
    builder writes it (``datetime.isoformat``: ``+00:00``, not ``Z``) -- else every field at
    its default."""
    if not isinstance(observed_at, str):
        return {}
    try:
        when = datetime.fromisoformat(observed_at).isoformat()
    except ValueError:
        when = observed_at
    return {"kind": "POINT_IN_TIME", "valid_from": when, "valid_to": when}


def inherits_detail(parents: list[str]) -> str | None:
    """The detail of a rule that carried the obligations of all of ``parents``, in order."""
    return INHERITS + ", ".join(parents) if parents else None


def encode(result: ConversationResult) -> dict[str, Any]:
    """``result`` as a line (JSON data) of the format of its ``schema_version`` -- format 3 for
    what this version builds; a result recorded under 2.x (the ledger's) in format 2 and under
    1.x whole -- so that :func:`decode` gives ``result`` back."""
    form = line_format({"schema_version": result.schema_version})
    if form == 1:
        whole: dict[str, Any] = result.model_dump(mode="json")
        return whole
    data: dict[str, Any] = result.model_dump(
        mode="json", exclude_defaults=True, exclude={"candidates", "decisions"}
    )
    data["schema_version"] = result.schema_version
    data["provenance"] = result.provenance.model_dump(mode="json")
    data["recorded_at"] = result.model_dump(mode="json", include={"recorded_at"})["recorded_at"]
    line_provenance = {k: v for k, v in data["provenance"].items() if k not in POLICY_FIELDS}
    if data["provenance"]["schema_version"] == data["schema_version"]:
        del data["provenance"]["schema_version"]  # absent: the line's
    decisions = {d.memory_id: d for d in result.decisions}
    rules: dict[str, str | None] = {}
    outcomes: list[dict[str, Any]] = []
    index: dict[str, int] = {}
    candidates = []
    spans: dict[str, Any] = {}
    observed: dict[str, Any] = {}
    for candidate in result.candidates:
        item = candidate.model_dump(mode="json", exclude_defaults=True)
        full = candidate.model_dump(mode="json", include=set(HOISTED_CANDIDATE_FIELDS))
        expected = {"conversation_id": result.conversation_id, "recorded_at": data["recorded_at"],
                    "provenance": line_provenance}  # fmt: skip
        for name in HOISTED_CANDIDATE_FIELDS:
            item.pop(name, None)
            if full[name] != expected[name]:
                item[name] = full[name]  # not the line's: kept (a record built elsewhere)
        if item.get("evidence_ids") == [candidate.source_span.message_id]:
            del item["evidence_ids"]
        parents = candidate.parent_memory_ids
        if form >= 3:
            _derived_defaults(item, parents, observed)
        for name, empty in EMPTY_CANDIDATE_FIELDS.items():
            derived = form >= 3 and name in DERIVED_CANDIDATE_FIELDS
            if not derived and item.get(name, empty) == empty:
                item.pop(name, None)
        if item["content"] == event_content(item):
            del item["content"]
        if parents and spans.get(parents[0]) == candidate.source_span:
            del item["source_span"]
        spans[candidate.memory_id] = candidate.source_span
        decision = decisions.pop(candidate.memory_id, None)
        if decision is not None:
            item["decision"] = _encode_decision(
                decision, candidate, data, rules, outcomes, index, parent_details=form >= 3
            )
        candidates.append(item)
    data["candidates"] = candidates
    if decisions:  # a decision of no candidate of the line (not written by this package)
        data["orphan_decisions"] = [d.model_dump(mode="json") for d in decisions.values()]
    if rules:
        data["rules"] = rules
    if outcomes:
        data["outcomes"] = outcomes
    return data


def _derived_defaults(item: dict[str, Any], parents: list[str], observed: dict[str, Any]) -> None:
    """Format 3: leave out ``observed_at`` when it is the first parent's (earlier in the line;
    else when null) and ``temporal`` when it is :func:`point_in_time` of it; write each out
    (null, ``{}``) when it is not its default."""
    when = item.get("observed_at")
    if when == (observed.get(parents[0]) if parents else None):
        item.pop("observed_at", None)
    else:
        item["observed_at"] = when
    observed[item["memory_id"]] = when
    if item.get("temporal", {}) == point_in_time(when):
        item.pop("temporal", None)
    else:
        item["temporal"] = item.get("temporal", {})


def _encode_decision(
    decision: Any,
    candidate: Any,
    line: dict[str, Any],
    rules: dict[str, str | None],
    outcomes: list[dict[str, Any]],
    index: dict[str, int],
    *,
    parent_details: bool,
) -> dict[str, Any]:
    full: dict[str, Any] = decision.model_dump(mode="json")
    fired = decision.rules_fired
    if len({r.rule_id for r in fired}) != len(fired) or any(
        rules.setdefault(r.rule_id, r.rule_hash) != r.rule_hash for r in fired
    ):
        return _whole(full)  # a rule id fired twice, or two definitions of one rule id
    if (full["policy_id"], full["policy_version"]) != tuple(
        line["provenance"][k] for k in POLICY_FIELDS
    ):
        return _whole(full)
    item: dict[str, Any] = decision.model_dump(mode="json", exclude_defaults=True)
    outcome = {}
    for name, default in OUTCOME_FIELDS.items():
        item.pop(name, None)
        if full[name] != default:
            outcome[name] = full[name]
    item.pop("rules_fired", None)
    if fired:
        outcome["rules_fired"] = [r.rule_id for r in fired]
    inherits = inherits_detail(candidate.parent_memory_ids) if parent_details else None
    details = {r.rule_id: r.detail for r in fired if r.detail not in (None, inherits)}
    if details:
        item["rule_details"] = details
    from_parents = [r.rule_id for r in fired if r.detail is not None and r.detail == inherits]
    if from_parents:
        outcome["parent_details"] = from_parents
    reasons = {r.rule_id: r.reason for r in fired}
    for denied in item.get("denied_requested_uses", []):
        if "reason" in denied and denied["reason"] == reasons.get(denied["rule_id"], False):
            del denied["reason"]  # the reason of a rule that fired: the policy's
    key = json.dumps(outcome, sort_keys=True)
    if key not in index:
        index[key] = len(outcomes)
        outcomes.append(outcome)
    item["outcome"] = index[key]
    for name in HOISTED_DECISION_FIELDS:
        item.pop(name, None)
    if item.get("inherited_from") == sorted(candidate.parent_memory_ids):
        del item["inherited_from"]
    elif "inherited_from" not in item and candidate.parent_memory_ids:
        item["inherited_from"] = []
    as_of = full["as_of"]
    default = candidate.observed_at or candidate.recorded_at
    if as_of is not None and decision.as_of == default:
        item.pop("as_of", None)
    else:
        item["as_of"] = as_of
    return item


def _whole(full: dict[str, Any]) -> dict[str, Any]:
    """A decision the shared tables cannot express, written in full (format 1's record)."""
    return {"whole": full}


def decode(data: dict[str, Any]) -> dict[str, Any]:
    """A parsed result line of either format as :class:`ConversationResult` data (format 1's).

    Raises :class:`ValueError` (``KeyError`` / ``IndexError`` / ``TypeError`` included) when a
    format-2 line's references do not resolve; callers report it as a line that is not a result.
    """
    form = line_format(data)
    if form == 1:
        return data
    out = {k: v for k, v in data.items() if k not in ("rules", "outcomes", "orphan_decisions")}
    provenance = dict(data.get("provenance") or {})
    provenance.setdefault("schema_version", data.get("schema_version"))
    out["provenance"] = provenance
    policy = {k: provenance.get(k) for k in POLICY_FIELDS}
    line_provenance = {k: v for k, v in provenance.items() if k not in POLICY_FIELDS}
    rules: dict[str, Any] = data.get("rules") or {}
    outcomes: list[dict[str, Any]] = data.get("outcomes") or []
    candidates, decisions = [], []
    spans: dict[str, Any] = {}
    observed: dict[str, Any] = {}
    for raw in data.get("candidates") or []:
        item = dict(raw)
        decision = item.pop("decision", None)
        item.setdefault("conversation_id", data.get("conversation_id"))
        item.setdefault("recorded_at", data.get("recorded_at"))
        item.setdefault("provenance", line_provenance)
        parents = item.get("parent_memory_ids") or []
        if form >= 3:
            if "observed_at" not in item:
                item["observed_at"] = observed.get(parents[0]) if parents else None
            observed[item["memory_id"]] = item["observed_at"]
            item.setdefault("temporal", point_in_time(item["observed_at"]))
        for name, empty in EMPTY_CANDIDATE_FIELDS.items():
            item.setdefault(name, empty)
        if "source_span" not in item and parents:
            item["source_span"] = spans[parents[0]]
        spans[item["memory_id"]] = item.get("source_span")
        if "content" not in item:
            item["content"] = event_content(item)
        span = item.get("source_span") or {}
        item.setdefault("evidence_ids", [span.get("message_id")])
        candidates.append(item)
        if decision is not None:
            decisions.append(_decode_decision(decision, item, policy, rules, outcomes))
    decisions += list(data.get("orphan_decisions") or [])
    out["candidates"] = candidates
    out["decisions"] = decisions
    return out


def _decode_decision(
    item: dict[str, Any],
    candidate: dict[str, Any],
    policy: dict[str, Any],
    rules: dict[str, Any],
    outcomes: list[dict[str, Any]],
) -> dict[str, Any]:
    if "whole" in item:
        whole: dict[str, Any] = item["whole"]
        return whole
    out = {k: v for k, v in item.items() if k not in ("outcome", "rule_details")}
    outcome = outcomes[int(item["outcome"])]
    for name, default in OUTCOME_FIELDS.items():
        out[name] = outcome.get(name, default)
    details: dict[str, Any] = dict(item.get("rule_details") or {})
    inherits = inherits_detail(list(candidate.get("parent_memory_ids") or []))
    for rid in outcome.get("parent_details", []):
        details[rid] = inherits
    out["rules_fired"] = [
        {"rule_id": rid, "reason": None, "detail": details.get(rid), "rule_hash": rules[rid]}
        for rid in outcome.get("rules_fired", [])
    ]
    out["memory_id"] = candidate["memory_id"]
    out.update(policy)
    out.setdefault("inherited_from", sorted(candidate.get("parent_memory_ids") or []))
    if "as_of" not in item:
        out["as_of"] = candidate.get("observed_at") or candidate.get("recorded_at")
    return out


def dump_line(record: BaseModel) -> str:
    """The JSON text of one output line: a result in its format (3 for this version's), any
    other record as it is."""
    if isinstance(record, ConversationResult):
        return json.dumps(encode(record), ensure_ascii=False, separators=(",", ":"))
    return record.model_dump_json()


def load_result(text: str | bytes) -> ConversationResult:
    """Parse one result line of either format (``pydantic.ValidationError`` when it is not)."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):  # not a JSON object: pydantic says so as for any bad line
        return ConversationResult.model_validate_json(text)
    try:
        expanded = decode(data)
    except (KeyError, IndexError, TypeError, ValueError):
        expanded = data  # validation names what is wrong with it
    return ConversationResult.model_validate(expanded)
