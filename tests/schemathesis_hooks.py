"""Schemathesis hooks for tests/test_service_contract.py (loaded through SCHEMATHESIS_HOOKS).

One rule of a conversation cannot be said in JSON Schema: message ids are unique within it (a
message without an id gets ``m<index>``). The published schema says so in words; this hook
tells the generator, so that "schema-valid" means valid. Nothing else is changed.
"""

from __future__ import annotations

from typing import Any

import schemathesis


@schemathesis.hook
def map_body(context: Any, body: Any) -> Any:
    messages = body.get("messages") if isinstance(body, dict) else body
    if not isinstance(messages, list):
        return body
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
