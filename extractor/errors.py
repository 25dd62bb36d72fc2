"""One exception hierarchy for everything a caller can catch.

::

    ExtractorError                      base: catch this to catch everything below
    ├── InputError                      a conversation could not be loaded
    │   └── LimitExceeded               a configured size limit was exceeded
    ├── ExtractionOutputError           the model's output could not be read at all
    ├── ModelClientError                the model could not be reached or would not answer
    │   ├── RateLimited                 429 after the configured retries (carries retry_after)
    │   ├── ModelTimeout                the request timed out
    │   ├── ModelRefused                the model refused to answer
    │   ├── OutputTruncated             the output was cut off at the token limit
    │   ├── ModeUnsupported             the server does not support the --mode asked for
    │   └── PromptNotDelivered          the server did not read the prompt sent (a chat
    │                                   template that drops the system prompt)
    ├── PolicyError                     an admission policy file is invalid (names the rule)
    ├── LedgerError                     the SQLite ledger could not be written or read
    ├── StoreError                      the memory store could not be used (or a bad request)
    │   ├── UnknownMemory               no such memory, claim or source (carries ref)
    │   ├── ErasureIncomplete           erased content is still readable (carries locations)
    │   └── ReadDenied                  the caller may not read for the purpose (carries both)
    ├── KeyStoreError                   the HTTP service's API key store refused an operation
    ├── OutputWriteError                a result or failures file could not be written
    └── PipelineError                   a pipeline stage failed unexpectedly (carries the stage)

Every error carries the data a caller needs to report it (input file, line, conversation id,
field; for a model error the attempts made, the tokens they spent and the last raw output) and
renders it in ``str(error)``, so a CLI can print it as is.
"""

from __future__ import annotations

from dataclasses import dataclass

from .usage import Usage


@dataclass(frozen=True)
class InputLocation:
    """Where an input came from: a file (or ``<stdin>``), its 1-based line, and the conversation."""

    source: str | None = None
    line: int | None = None
    conversation_id: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        parts = []
        if self.source is not None:
            parts.append(self.source if self.line is None else f"{self.source}:{self.line}")
        if self.conversation_id is not None:
            parts.append(f"conversation {self.conversation_id!r}")
        if self.field is not None:
            parts.append(f"field {self.field}")
        return ", ".join(parts) or "<input>"


class ExtractorError(Exception):
    """Base class of every error raised by this package."""

    code: str = "EXTRACTOR_ERROR"


class InputError(ExtractorError):
    """A conversation could not be loaded; ``location`` says which one and where."""

    code = "INPUT_INVALID"

    def __init__(self, message: str, location: InputLocation | None = None) -> None:
        self.message = message
        self.location = location or InputLocation()
        super().__init__(f"{self.location}: {message}")


class LimitExceeded(InputError):
    """A configured limit (message size, message count, candidate count) was exceeded."""

    code = "LIMIT_EXCEEDED"


class ExtractionOutputError(ExtractorError):
    """The model's output is not an extraction at all (not JSON, no ``candidates`` list)."""

    code = "OUTPUT_UNREADABLE"

    def __init__(self, message: str, raw_output: str | None = None) -> None:
        self.raw_output = raw_output
        #: Set by the pipeline: the model answers asked for, and the tokens they spent.
        self.attempts = 0
        self.usage = Usage()
        super().__init__(message)


class ModelClientError(ExtractorError):
    """The model could not be reached or would not produce an answer.

    ``attempts`` counts the model answers asked for, ``usage`` the tokens every answer received
    spent (a failed call still costs them), ``raw_output`` is the last answer's text.
    """

    code = "MODEL_ERROR"

    def __init__(
        self,
        message: str,
        *,
        attempts: int = 1,
        raw_output: str | None = None,
        usage: Usage | None = None,
    ) -> None:
        self.attempts = attempts
        self.raw_output = raw_output
        self.usage = usage or Usage()
        super().__init__(message)


class RateLimited(ModelClientError):
    code = "MODEL_RATE_LIMITED"

    def __init__(
        self,
        message: str,
        *,
        attempts: int = 1,
        retry_after: float | None = None,
        usage: Usage | None = None,
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, attempts=attempts, usage=usage)


class ModelTimeout(ModelClientError):
    code = "MODEL_TIMEOUT"


class ModelRefused(ModelClientError):
    code = "MODEL_REFUSED"


class OutputTruncated(ModelClientError):
    """The answer stopped at the token limit, whatever ``finish_reason`` the server reported."""

    code = "MODEL_OUTPUT_TRUNCATED"


class ModeUnsupported(ModelClientError):
    """The server answered that it cannot do the structured-output ``mode`` asked for; retrying
    cannot help. ``suggested`` is the mode to use instead (``None`` when there is none)."""

    code = "MODEL_MODE_UNSUPPORTED"

    def __init__(
        self, message: str, *, mode: str, suggested: str | None, attempts: int = 1
    ) -> None:
        self.mode = mode
        self.suggested = suggested
        super().__init__(message, attempts=attempts)


class PromptNotDelivered(ModelClientError):
    """The server's ``usage.prompt_tokens`` is far below what was sent: it did not show the
    model the whole prompt (typically a chat template that drops the system message)."""

    code = "MODEL_PROMPT_DROPPED"


class PolicyError(ExtractorError):
    """An admission policy is invalid. ``rule`` names the offending rule when there is one."""

    code = "POLICY_INVALID"

    def __init__(self, message: str, *, source: str | None = None, rule: str | None = None):
        self.source = source
        self.rule = rule
        where = ", ".join(p for p in (source, f"rule {rule!r}" if rule else None) if p)
        super().__init__(f"{where}: {message}" if where else message)


class LedgerError(ExtractorError):
    code = "LEDGER_ERROR"


class KeyStoreError(ExtractorError):
    """The API key store (``extractor keys``, ``extractor serve --keys``) could not be opened,
    or was asked for something it cannot do (an unknown key id, an invalid tenant name)."""

    code = "KEY_STORE_ERROR"


class OutputWriteError(ExtractorError):
    code = "OUTPUT_WRITE_FAILED"


class PipelineError(ExtractorError):
    """A pipeline stage failed in an unexpected way (a bug, or a user-supplied component raising
    something that is not an :class:`ExtractorError`). ``stage`` names the stage, so a batch can
    record the conversation as failed there and go on; the original exception is ``__cause__``."""

    code = "PIPELINE_ERROR"

    def __init__(self, message: str, *, stage: str, conversation_id: str | None = None) -> None:
        self.stage = stage
        self.conversation_id = conversation_id
        where = f"conversation {conversation_id!r}, " if conversation_id is not None else ""
        super().__init__(f"{where}stage {stage}: {message}")


class StoreError(ExtractorError):
    """The memory store could not be opened, read or written, or a request to it is invalid."""

    code = "STORE_ERROR"


class UnknownMemory(StoreError):
    """A memory, claim or source id that the store does not hold (``ref`` names it)."""

    code = "UNKNOWN_MEMORY"

    def __init__(self, ref: str, *, what: str = "memory or claim") -> None:
        self.ref = ref
        super().__init__(f"no {what} {ref!r} in this store")


class ErasureIncomplete(StoreError):
    """``verify-erasure`` found erased content still readable; ``locations`` says where."""

    code = "ERASURE_INCOMPLETE"

    def __init__(self, message: str, *, locations: list[str]) -> None:
        self.locations = locations
        super().__init__(message)


class ReadDenied(StoreError):
    """The read path refused a read: ``caller`` is not authorized for ``purpose``. Nothing was
    read, ranked or recorded."""

    code = "READ_DENIED"

    def __init__(self, message: str, *, caller: str, purpose: str) -> None:
        self.caller = caller
        self.purpose = purpose
        super().__init__(message)
