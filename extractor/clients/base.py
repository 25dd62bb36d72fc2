"""The one interface every model client implements, and what a client returns.

A client turns a rendered prompt into the model's *raw* extraction output. It does not build
memory candidates and it does not decide anything: the pipeline validates every client's output
with the same :func:`~extractor.validation.validate_extraction`, so the offline model, an LLM
behind an OpenAI-compatible server and a cassette replay all pass the same gate.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from ..content import redact
from ..conversation import Conversation
from ..hashing import writable
from ..prompts import Prompt
from ..usage import Usage
from ..validation import Rejection, ValidationOptions, ValidationReport


class AttemptRecord(BaseModel):
    """One failed attempt before the final answer: why it was re-asked."""

    model_config = ConfigDict(extra="forbid")

    attempt: int
    error: str
    rejections: list[Rejection] = Field(default_factory=list)
    rejections_omitted: dict[str, int] = Field(
        default_factory=dict,
        description="Rejections left out of 'rejections' (past the sample), by code.",
    )
    raw_output: str | None = Field(
        default=None, description="The model's text; its beginning when raw_output_chars is set."
    )
    raw_output_chars: int | None = Field(
        default=None, description="Length of the whole raw output, when it was cut."
    )
    raw_output_hash: str | None = Field(
        default=None, description="sha256 of the whole raw output, when it was cut."
    )

    @field_validator("error", "raw_output")
    @classmethod
    def _writable(cls, value: str | None) -> str | None:
        """The model's text may hold lone surrogates; keep it writable (see :func:`writable`),
        and never keep a secret it holds verbatim (:func:`~extractor.content.redact`)."""
        result: str | None = writable(value if value is None else redact(value))
        return result


class ClientResult(BaseModel):
    """The model's final raw output for one conversation (or chunk), plus accounting."""

    model_config = ConfigDict(extra="forbid")

    output: Any = Field(description="Parsed JSON the model returned: {'candidates': [...]}.")
    raw_text: str | None = Field(default=None, description="The model's text, when it had one.")
    model: str
    usage: Usage = Field(default_factory=Usage)
    attempts: int = 1
    failed_attempts: list[AttemptRecord] = Field(default_factory=list)
    cached: bool = False
    dropped_candidates: int = Field(
        default=0,
        description="Candidates the model itself left out of this answer to stay within the "
        "per-call candidate limit (the offline model does; a remote model's are not known).",
    )
    candidate_limit: int | None = Field(
        default=None,
        exclude=True,
        description="How many of output's candidates the gate may accept, when not "
        "options.max_candidates (a merge of chunks, each bounded by it).",
    )
    # The gate's report on ``output``, when the client already ran the gate on it (not
    # serialized; see ``validated_for``).
    _validated: tuple[Any, Conversation, ValidationOptions, ValidationReport] | None = PrivateAttr(
        default=None
    )

    def attach_validation(
        self, conversation: Conversation, options: ValidationOptions, report: ValidationReport
    ) -> None:
        """Record that ``report`` is :func:`~extractor.validation.validate_extraction` of this
        very ``output`` against ``conversation`` with ``options`` (a client that ran the gate)."""
        self._validated = (self.output, conversation, options, report)

    def validated_for(
        self, conversation: Conversation, options: ValidationOptions
    ) -> ValidationReport | None:
        """The attached report if it is for this ``output`` object, this ``conversation`` object
        and equal ``options``; otherwise ``None`` and the caller validates."""
        if self._validated is None:
            return None
        output, validated_conversation, validated_options, report = self._validated
        same = output is self.output and validated_conversation is conversation
        return report if same and validated_options == options else None


@runtime_checkable
class ExtractionClient(Protocol):
    """Anything that can extract: :class:`~extractor.offline.OfflineClient`,
    :class:`~extractor.clients.openai_client.OpenAIClient`, or a user's own."""

    @property
    def model_name(self) -> str:
        """The model name recorded in provenance."""
        ...

    async def extract(
        self, conversation: Conversation, prompt: Prompt, options: ValidationOptions
    ) -> ClientResult:
        """Return the model's raw extraction for ``conversation``.

        Raises :class:`~extractor.errors.ModelClientError` (or a subclass) when the model
        cannot produce an answer at all.
        """
        ...


def extract_sync(
    client: ExtractionClient,
    conversation: Conversation,
    prompt: Prompt,
    options: ValidationOptions | None = None,
) -> ClientResult:
    """Blocking wrapper around :meth:`ExtractionClient.extract` for scripts and tests."""
    return asyncio.run(client.extract(conversation, prompt, options or ValidationOptions()))


__all__ = ["AttemptRecord", "ClientResult", "ExtractionClient", "Usage", "extract_sync"]
