"""The OpenAPI links between the memory routes: how one answer feeds the next request.

A client generated from the document (and schemathesis' stateful phase) follows them to chain
``ingest -> read -> revoke -> read``: an ingest names the memories it stored and their subject,
a read names the memories it returned, a revocation names the memory it revoked::

    ingestMemories ─▶ readMemories (subject), getMemory / explainMemory / revokeMemory /
                      eraseMemories (stored memory ids)
    readMemories   ─▶ readMemories (same subject), revokeMemory / explainMemory /
                      getMemoryLineage (returned memory ids)
    revokeMemory   ─▶ getMemory / explainMemory / getMemoryLineage (the revoked memory)

Every expression names a field the answer's schema requires; one that finds nothing (an ingest
that stored nothing) is simply not followed.
"""

from __future__ import annotations

from typing import Any

STORED = "$response.body#/stored/0"
ALREADY_STORED = "$response.body#/already_stored/0"
READ_ITEM = "$response.body#/items/0/memory_id"
REVOKED = "$request.path.memory_id"


def _to(operation: str, memory_id: str) -> dict[str, Any]:
    return {"operationId": operation, "parameters": {"memory_id": memory_id}}


def _read(subject: str, query: str | None = None) -> dict[str, Any]:
    """A read of ``subject``'s memories (for ``query``); the rest of the body is the client's."""
    body = {"subject": subject} if query is None else {"subject": subject, "query": query}
    return {"operationId": "readMemories", "requestBody": body}


#: operationId -> the links of its 200 answer.
LINKS: dict[str, dict[str, Any]] = {
    "ingestMemories": {
        "ReadIngestedSubject": _read(
            "$response.body#/subject", "$request.body#/messages/0/content"
        ),
        "GetStoredMemory": _to("getMemory", STORED),
        "GetKnownMemory": _to("getMemory", ALREADY_STORED),
        "ExplainStoredMemory": _to("explainMemory", STORED),
        "RevokeStoredMemory": _to("revokeMemory", STORED),
        "EraseStoredMemory": {
            "operationId": "eraseMemories",
            "requestBody": {"memory_id": STORED},
            # the erase body holds exactly one selector: replace it, do not merge into it
            "x-schemathesis": {"merge_body": False},
        },
    },
    "readMemories": {
        "ReadAgain": _read("$request.body#/subject", "$request.body#/query"),
        "RevokeReadMemory": _to("revokeMemory", READ_ITEM),
        "ExplainReadMemory": _to("explainMemory", READ_ITEM),
        "GetReadMemoryLineage": _to("getMemoryLineage", READ_ITEM),
    },
    "revokeMemory": {
        "GetRevokedMemory": _to("getMemory", REVOKED),
        "ExplainRevokedMemory": _to("explainMemory", REVOKED),
        "GetRevokedMemoryLineage": _to("getMemoryLineage", REVOKED),
    },
}


def add_links(operation: dict[str, Any]) -> None:
    """Add the links of ``operation`` (a path item's operation object) to its 200 answer."""
    links = LINKS.get(operation.get("operationId", ""))
    if links:
        operation["responses"]["200"]["links"] = links


__all__ = ["LINKS", "add_links"]
