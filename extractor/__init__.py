"""memory-candidate-extractor: a write gate for LLM memory.

Extract candidate memory units from a conversation, validate every candidate against the
transcript, and admit it under a deterministic, versioned policy. The extractor proposes; it
never certifies.

The public API is the names in ``__all__``; everything else is private and may change. Names are
imported on first use, so ``import extractor`` stays cheap (the pytest plugin imports it in every
test session) and the ``openai``/``instructor`` stack loads only when an LLM client is used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ._version import SCHEMA_VERSION, __version__

if TYPE_CHECKING:
    from .admission import Policy, admit, iter_results, load_policy, with_reasons
    from .admission.replay import ReplayReport, replay
    from .batch import BatchConfig, arun_batch, run_batch
    from .candidates import MemoryCandidate, Provenance
    from .clients.base import ClientResult, ExtractionClient, Usage
    from .clients.openai_client import OpenAIClient
    from .conversation import Conversation, Limits, Message, conversation_from_data, iter_inputs
    from .decisions import AdmissionDecision
    from .errors import (
        ExtractionOutputError,
        ExtractorError,
        InputError,
        LedgerError,
        LimitExceeded,
        ModelClientError,
        ModelRefused,
        ModelTimeout,
        OutputTruncated,
        OutputWriteError,
        PolicyError,
        RateLimited,
        ReadDenied,
        StoreError,
        UnknownMemory,
    )
    from .extraction import CandidateUnit, ExtractionOutput
    from .ledger import Ledger
    from .mockserver import MockServer
    from .models import get_client
    from .offline import OfflineClient
    from .pipeline import Extractor, aextract_and_admit, extract_and_admit
    from .prompts import Prompt, load_prompt
    from .read import Caller, MemoryReader, ReadResult
    from .resultline import dump_line, load_result
    from .results import ConversationResult, FailureRecord
    from .store import MemoryStore
    from .validation import ValidationOptions, ValidationReport, validate_extraction

_LAZY: dict[str, str] = {
    # the hook
    "Extractor": "pipeline",
    "extract_and_admit": "pipeline",
    "aextract_and_admit": "pipeline",
    # batches
    "BatchConfig": "batch",
    "run_batch": "batch",
    "arun_batch": "batch",
    # input
    "Conversation": "conversation",
    "Message": "conversation",
    "Limits": "conversation",
    "conversation_from_data": "conversation",
    "iter_inputs": "conversation",
    # extraction and validation
    "CandidateUnit": "extraction",
    "ExtractionOutput": "extraction",
    "ValidationOptions": "validation",
    "ValidationReport": "validation",
    "validate_extraction": "validation",
    "Prompt": "prompts",
    "load_prompt": "prompts",
    # records
    "MemoryCandidate": "candidates",
    "Provenance": "candidates",
    "AdmissionDecision": "decisions",
    "ConversationResult": "results",
    "FailureRecord": "results",
    "load_result": "resultline",
    "dump_line": "resultline",
    "iter_results": "admission",
    "with_reasons": "admission",
    # admission
    "Policy": "admission",
    "ReplayReport": "admission",
    "admit": "admission",
    "load_policy": "admission",
    "replay": "admission",
    # clients
    "ExtractionClient": "clients.base",
    "ClientResult": "clients.base",
    "Usage": "clients.base",
    "OfflineClient": "offline",
    "OpenAIClient": "clients.openai_client",
    "get_client": "models",
    "MockServer": "mockserver",
    "Ledger": "ledger",
    "MemoryStore": "store",
    "MemoryReader": "read",
    "Caller": "read",
    "ReadResult": "read",
    # errors
    "ExtractorError": "errors",
    "InputError": "errors",
    "LimitExceeded": "errors",
    "ExtractionOutputError": "errors",
    "ModelClientError": "errors",
    "RateLimited": "errors",
    "ModelTimeout": "errors",
    "ModelRefused": "errors",
    "OutputTruncated": "errors",
    "PolicyError": "errors",
    "LedgerError": "errors",
    "OutputWriteError": "errors",
    "StoreError": "errors",
    "UnknownMemory": "errors",
    "ReadDenied": "errors",
}

__all__ = [
    "SCHEMA_VERSION",
    "AdmissionDecision",
    "BatchConfig",
    "Caller",
    "CandidateUnit",
    "ClientResult",
    "Conversation",
    "ConversationResult",
    "ExtractionClient",
    "ExtractionOutput",
    "ExtractionOutputError",
    "Extractor",
    "ExtractorError",
    "FailureRecord",
    "InputError",
    "Ledger",
    "LedgerError",
    "LimitExceeded",
    "Limits",
    "MemoryCandidate",
    "MemoryReader",
    "MemoryStore",
    "Message",
    "MockServer",
    "ModelClientError",
    "ModelRefused",
    "ModelTimeout",
    "OfflineClient",
    "OpenAIClient",
    "OutputTruncated",
    "OutputWriteError",
    "Policy",
    "PolicyError",
    "Prompt",
    "Provenance",
    "RateLimited",
    "ReadDenied",
    "ReadResult",
    "ReplayReport",
    "StoreError",
    "UnknownMemory",
    "Usage",
    "ValidationOptions",
    "ValidationReport",
    "__version__",
    "admit",
    "aextract_and_admit",
    "arun_batch",
    "conversation_from_data",
    "dump_line",
    "extract_and_admit",
    "get_client",
    "iter_inputs",
    "iter_results",
    "load_policy",
    "load_prompt",
    "load_result",
    "replay",
    "run_batch",
    "validate_extraction",
    "with_reasons",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'extractor' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
