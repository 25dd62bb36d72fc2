"""What a tenant is shown of the store's records: nothing that speaks of the store as a whole.

The store numbers its events across every tenant (``memory_events.seq``), so a report's
``event_seq`` or a claim version's ``cause_seq`` tells whoever sees it how many events *all*
tenants caused in between: with two ingests a minute apart, tenant A could count tenant B's
writes. A readmission (an admission policy change, which an ingest can trigger) re-decides the
claims of every tenant, so its report is the store's, not a tenant's. The service answers with
*tenant views* of these records: the same record without :data:`STORE_WIDE` fields, at every
depth, with the same names in the OpenAPI document.
"""

from __future__ import annotations

import operator
import types
from collections.abc import Mapping
from functools import cache, reduce
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, create_model

from ..store import IngestReport, RevocationReport
from ..store.models import ClaimVersion

#: Per record type, the fields a tenant is not shown: store-wide event numbers, and the
#: store-wide readmission an ingest may have triggered (the tenant's own claims show it in
#: their history, as versions caused by a ``READMIT`` event).
STORE_WIDE: Mapping[type[BaseModel], frozenset[str]] = {
    IngestReport: frozenset({"event_seq", "readmit"}),
    RevocationReport: frozenset({"event_seq"}),
    ClaimVersion: frozenset({"cause_seq"}),
}


@cache
def tenant_model(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` without its :data:`STORE_WIDE` fields, nor those of any record it holds;
    ``model`` itself when there is nothing to leave out."""
    drop = STORE_WIDE.get(model, frozenset())
    fields: dict[str, Any] = {}
    changed = bool(drop)
    for name, info in model.model_fields.items():
        if name in drop:
            continue
        annotation = _viewed(info.annotation)
        changed = changed or annotation != info.annotation
        fields[name] = (annotation, info)
    if not changed:
        return model
    config = ConfigDict(
        extra="ignore",  # built from the full record: what it leaves out is dropped
        title=model.__name__,
        json_schema_extra={"additionalProperties": False},
    )
    view: type[BaseModel] = create_model(
        model.__name__, __config__=config, __doc__=model.__doc__, **fields
    )
    return view


def tenant_json(record: BaseModel) -> dict[str, Any]:
    """``record`` as a tenant is shown it (JSON-ready)."""
    view = tenant_model(type(record))
    shown: dict[str, Any] = view.model_validate(record.model_dump()).model_dump(mode="json")
    return shown


def _viewed(annotation: Any) -> Any:
    """``annotation`` with every record type in it replaced by its tenant view."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return tenant_model(annotation)
    origin, args = get_origin(annotation), get_args(annotation)
    if not args:
        return annotation
    mapped = tuple(_viewed(a) for a in args)
    if mapped == args:
        return annotation
    if origin in (Union, types.UnionType):
        return reduce(operator.or_, mapped)
    return types.GenericAlias(origin, mapped)


__all__ = ["STORE_WIDE", "tenant_json", "tenant_model"]
