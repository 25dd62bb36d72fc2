"""Schemathesis hooks for tests/test_service_contract.py (loaded through SCHEMATHESIS_HOOKS).

One rule of a conversation cannot be said in JSON Schema: message ids are unique within it (a
message without an id gets ``m<index>``). The published schema says so in words; this hook
tells the generator, so that "schema-valid" means valid.

One more, for the stateful phase only in effect: a generated conversation almost never holds a
statement the offline model extracts, so an ingest would store nothing and the links that follow
it (read what was stored, revoke it, explain it) would have no memory to name. Every conversation
sent to ``POST /v1/memories:ingest`` therefore starts with one plain user statement, and one
sent as an object says whose it is (``metadata.user_id``, when the generated metadata is an
object without one): the generated messages follow the statement unchanged, so the body stays
as schema-valid, or as invalid, as it was generated. Nothing else is changed.
"""

from __future__ import annotations

from typing import Any

import schemathesis

INGEST_PATH = "/v1/memories:ingest"
STATEMENT = {"role": "user", "content": "My manager is Alice and I like green tea."}
SUBJECT = "user-42"


@schemathesis.hook
def map_body(context: Any, body: Any) -> Any:
    messages = body.get("messages") if isinstance(body, dict) else body
    if not isinstance(messages, list):
        return body
    operation = getattr(context, "operation", None)
    if operation is not None and operation.path == INGEST_PATH:
        messages.insert(0, dict(STATEMENT))
        if isinstance(body, dict):
            metadata = body.setdefault("metadata", {})
            if isinstance(metadata, dict):
                metadata.setdefault("user_id", SUBJECT)
    seen: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            continue
        given = message.get("id")
        effective = given if given is not None else f"m{index}"
        if not isinstance(effective, str):
            continue
        unique = effective
        while unique in seen:
            unique += f"~{index}"
        if unique != effective:
            message["id"] = unique
        seen.add(unique)
    return body
