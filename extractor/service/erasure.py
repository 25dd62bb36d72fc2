"""``POST /v1/memories:erase``: privacy erasure (seed §14) of a subject, a conversation or a
memory of the key's tenant.

An erasure needs the ``erase`` scope, which no key has unless it is granted: it is not a
revocation (a claim found wrong) but the removal of personal data, from the memories, every
record derived with their content, the events, the full-text index and the response cache.

The answer is a receipt, not the store's whole :class:`~extractor.store.ErasureReport`: the
report's byte-level residue scan reads the store's *file*, which holds every tenant, so saying
whether an erased string is still readable there would tell one tenant that another stores the
same text. For the same reason there is no ``verify-erasure`` route: it is an oracle for any
string in any tenant. The proof is the operator's: ``extractor store verify-erasure`` on the
service's store (the service logs a warning, with counts only, when an erasure left residue).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from ..errors import StoreError, UnknownMemory
from ..store import ErasureReport, MemoryStore
from ..vocab import Scope
from .auth import Caller, Gate
from .body import check_body, read_json
from .errors import ApiError, error_responses
from .limits import ServiceLimits, WorkSlots
from .memories import MEMORY_ID_PATTERN, NOT_BLANK, body_of, owned

LOG = logging.getLogger("extractor.service")


class EraseRequest(BaseModel):
    """``POST /v1/memories:erase``: exactly one selector, inside the key's tenant."""

    model_config = ConfigDict(extra="forbid", title="EraseRequest",
                              json_schema_extra=lambda schema: one_selector(schema))  # fmt: skip

    subject: str | None = Field(
        default=None, min_length=1, max_length=256, pattern=NOT_BLANK,
        description="Every memory about this user.",
    )  # fmt: skip
    conversation: str | None = Field(
        default=None, min_length=1, max_length=256, pattern=NOT_BLANK,
        description="Every memory of this conversation (its id as it was ingested).",
    )  # fmt: skip
    memory_id: str | None = Field(default=None, pattern=MEMORY_ID_PATTERN,
                                  description="One memory (`mem_...`).")  # fmt: skip


def one_selector(schema: dict[str, Any]) -> None:
    """Exactly one of the properties, and it a string: absent is how a selector is not given."""
    schema.update(minProperties=1, maxProperties=1)
    for prop in schema["properties"].values():
        (string,) = [s for s in prop.pop("anyOf") if s.get("type") != "null"]
        prop.pop("default", None)
        prop.update(string)


class ErasureReceipt(BaseModel):
    """What an erasure removed, in the key's tenant (see the module docstring for what the
    store's report holds beyond it, and why it is not sent)."""

    model_config = ConfigDict(extra="forbid", title="ErasureReceipt")

    erasure_id: str = Field(description="The ERASE event's id (`era_...`), for the audit trail.")
    selector_kind: str = Field(description="`subject`, `conversation` or `memory`.")
    erased_claims: list[str] = Field(description="Claims whose content is gone (tombstones).")
    derived_claims: list[str] = Field(description="Of those, derived claims that carried it.")
    revalidated: list[str] = Field(description="Dependents that lost support and were revalidated.")
    events_redacted: int = Field(ge=0, description="Stored events rewritten without the content.")

    @classmethod
    def of(cls, report: ErasureReport) -> ErasureReceipt:
        return cls.model_validate(report.model_dump(include=set(cls.model_fields)))


def install_erase_route(
    app: FastAPI,
    *,
    store: MemoryStore,
    caps: ServiceLimits,
    gate: Gate,
    work: WorkSlots,
    cache_dir: Path | None,
) -> None:
    """Add ``POST /v1/memories:erase`` to ``app``; ``cache_dir`` is the response cache to scrub."""

    @app.post(
        "/v1/memories:erase",
        operation_id="eraseMemories",
        summary="Erase the personal data of a subject, conversation or memory of the key's tenant",
        response_model=ErasureReceipt,
        responses=error_responses(400, 401, 403, 404, 413, 415, 422, 429, 500, 503, 504),
        openapi_extra=body_of("EraseRequest"),
    )
    async def erase(
        request: Request,
        caller: Caller = Depends(gate.require(Scope.ERASE)),  # noqa: B008
    ) -> JSONResponse:
        async with work.slot():
            data = await read_json(request, caps.max_body_bytes)
            check_body(data, EraseRequest)
            report = erase_for(store, caller, EraseRequest.model_validate(data), cache_dir)
        return JSONResponse(ErasureReceipt.of(report).model_dump(mode="json"))


def erase_for(
    store: MemoryStore, caller: Caller, body: EraseRequest, cache_dir: Path | None
) -> ErasureReport:
    """One erasure in the caller's tenant; 404 when the selector matches nothing of it."""
    selector: dict[str, Any] = body.model_dump(exclude_none=True)
    ((field, value),) = selector.items()
    if field == "memory_id":
        owned(store, caller, selector[field])  # the store looks a memory id up in every tenant
    elif field == "conversation":
        selector[field] = f"{caller.tenant}/{selector[field]}"  # as ingest stored it
    try:
        report = store.erase(**selector, tenant=caller.tenant, cache_dir=cache_dir,
                             actor=caller.caller)  # fmt: skip
    except UnknownMemory:
        what = "memory" if field == "memory_id" else field
        raise ApiError(404, "NOT_FOUND", f"no {what} {value!r} with stored (unerased) memories",
                       field=field) from None  # fmt: skip
    except StoreError as exc:
        raise ApiError(422, exc.code, str(exc), field=field) from None
    if report.residue:
        LOG.warning("erasure %s left erased content readable in %d place(s): run 'extractor "
                    "store verify-erasure'", report.erasure_id, len(report.residue))  # fmt: skip
    return report


__all__ = ["EraseRequest", "ErasureReceipt", "install_erase_route"]
