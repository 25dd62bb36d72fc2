"""The batch runner: stream conversations through an :class:`~extractor.pipeline.Extractor` and
write one line per conversation, losing nothing.

Guarantees (documented in ``docs/pipeline.md``):

* **Streaming.** Inputs are read lazily; at most ``2 × concurrency`` conversations are held at
  once, whatever the archive size. Only the small resume keys of finished conversations are
  kept.
* **Bounded concurrency.** At most ``concurrency`` extractions are in flight.
* **Ordering.** Lines are written in input order (a bounded reorder window), so the output does
  not depend on ``concurrency``; a slow conversation delays the lines after it, never reorders.
* **Exactly once.** Every input ends as exactly one line: a :class:`ConversationResult` in the
  results file or a :class:`FailureRecord` in the failures file. Each line is written whole with
  one ``write`` on an ``O_APPEND`` descriptor; a run killed at any moment (even ``kill -9``)
  leaves at most a trailing partial line, which the next run truncates away before it resumes.
* **Resume.** Re-running with the same ``out`` skips every input already recorded in either file
  (matched by conversation id and content hash; load failures by file, line and error).
* **Once per conversation.** An input that is the same conversation (id and content hash) as an
  earlier one -- the same chat in two files -- is counted as a duplicate in the summary and not
  processed again, so no memory id is written twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import os
import sys
import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from .bounded import bounded_output
from .conversation import INPUT_SUFFIXES, Conversation, Limits, Owner, iter_inputs
from .errors import ExtractorError, InputError, OutputWriteError
from .pipeline import Extractor, input_ref, stage_of
from .resultline import dump_line
from .results import ConversationResult, FailureRecord, InputRef
from .summary import RunSummary
from .usage import Usage

if TYPE_CHECKING:
    from .ledger import Ledger

DEFAULT_CONCURRENCY = 4
T = TypeVar("T")


def reorder_window(concurrency: int) -> int:
    """How many conversations may be in progress or finished-but-unwritten at once.

    Lines are written in input order, so a conversation that is slow (a long answer, a
    rate-limit wait, a timeout and its retry) holds back every line after it; the others keep
    running only while they fit in this window. At 2 x concurrency (the first design) one
    stalled conversation idled every other slot after a couple of calls each; 8 x concurrency
    lets a batch go on for several model latencies around a stalled one, and memory stays
    bounded: a window of finished results (~10-40 KB each; a few hundred KB for a long chat).
    """
    return 8 * max(1, concurrency)


FAILURES_SUFFIX = ".failures.jsonl"

Outcome = ConversationResult | FailureRecord
Key = tuple[str | int | None, ...]


@dataclass(frozen=True)
class BatchConfig:
    """Where and how a batch writes.

    ``out=None`` writes results to stdout (no resume). ``failures`` defaults to
    ``<out>.failures.jsonl``; with neither, failures are reported on stderr as one line each.
    ``retry_failed`` removes earlier failure records before the run, so those conversations are
    attempted again; without it, only transient model failures (:data:`TRANSIENT_CODES`: the
    server was unreachable, refused the key, rate-limited or timed out) are removed and retried.
    ``check_endpoint`` makes one small extraction with an LLM client before the batch and stops
    with :class:`ModelClientError` when the server cannot be used at all.
    ``fsync`` syncs each line to disk (survives power loss; slower); without it
    each line is still handed to the OS whole, which survives the process being killed.
    ``shard=(k, n)`` processes only the inputs at positions k-1, k-1+n, k-1+2n, ... of the input
    stream (1 <= k <= n): n processes given the same inputs and k = 1..n split the batch between
    them, each with its own ``out``, for more than one core. ``owner`` (tenant and subject)
    wins over each conversation's ``metadata.tenant`` / ``metadata.user_id`` when set.
    ``input_format`` is the format of every input (:mod:`extractor.formats`; ``auto`` detects).
    """

    out: Path | None = None
    failures: Path | None = None
    concurrency: int = DEFAULT_CONCURRENCY
    limits: Limits = field(default_factory=Limits)
    retry_failed: bool = False
    fsync: bool = False
    shard: tuple[int, int] | None = None
    owner: Owner = field(default_factory=Owner)
    input_format: str = "auto"
    check_endpoint: bool = True

    def __post_init__(self) -> None:
        if self.shard is not None:
            k, n = self.shard
            if not 1 <= k <= n:
                raise ValueError(f"shard {k}/{n}: need 1 <= k <= n")

    @property
    def failures_path(self) -> Path | None:
        if self.failures is not None:
            return self.failures
        if self.out is None:
            return None
        return self.out.with_name(self.out.name + FAILURES_SUFFIX)


class BatchObserver:
    """Hooks a batch calls for every conversation (the ledger and the progress bar use them).

    ``on_result`` and ``on_failure`` run before the line is written, so anything an observer
    records is never missing for a line in the output; an observer must therefore tolerate
    seeing the same conversation again when a killed run is resumed. An exception from an
    observer stops the run.
    """

    def on_result(self, result: ConversationResult, conversation: Conversation) -> None:
        """Called for each conversation processed."""

    def on_failure(self, failure: FailureRecord) -> None:
        """Called for each conversation that could not be processed."""

    def on_progress(self, summary: RunSummary) -> None:
        """Called after each conversation is accounted for (skipped ones included)."""


class LedgerObserver(BatchObserver):
    """Records every result (with its transcript) and failure of a run in a SQLite ledger.

    The ledger ignores a result it already holds, so a resumed run records nothing twice."""

    def __init__(self, ledger: Ledger, run_id: str) -> None:
        self.ledger = ledger
        self.run_id = run_id

    def on_result(self, result: ConversationResult, conversation: Conversation) -> None:
        self.ledger.record_result(self.run_id, result, conversation=conversation)

    def on_failure(self, failure: FailureRecord) -> None:
        self.ledger.record_failure(self.run_id, failure)


# ---------------------------------------------------------------------------------------------
# Resume keys


def result_key(conversation_id: str | None, conversation_hash: str | None) -> Key:
    return ("conversation", conversation_id, conversation_hash)


def load_failure_key(
    source: str | None, line: int | None, conversation_id: str | None, error: str
) -> Key:
    return ("load", source, line, conversation_id, error)


def key_of_line(data: Any) -> Key:
    """The resume key of one line already written (a result or a failure record)."""
    if data.get("conversation_hash") is None:
        ref = data.get("input") or {}
        return load_failure_key(
            ref.get("source"), ref.get("line"), data.get("conversation_id"), data.get("error", "")
        )
    return result_key(data.get("conversation_id"), data.get("conversation_hash"))


def key_of_item(item: Conversation | InputError) -> Key:
    if isinstance(item, InputError):
        loc = item.location
        return load_failure_key(loc.source, loc.line, loc.conversation_id, str(item))
    return result_key(item.id, item.content_hash())


def read_done(path: Path) -> Counter[Key]:
    """Keys of the complete lines in ``path``; a trailing partial line is truncated away.

    Raises :class:`OutputWriteError` when a complete line is not a record this tool wrote, rather
    than appending to a file it does not understand.
    """
    done: Counter[Key] = Counter()
    if not path.is_file():  # nothing to resume in a device or a pipe (/dev/full reads forever)
        return done
    try:
        with open(path, "rb+") as f:
            offset = 0
            for number, raw in enumerate(f, start=1):
                if not raw.endswith(b"\n"):
                    f.truncate(offset)
                    break
                offset += len(raw)
                if not raw.strip():
                    continue
                try:
                    data = json.loads(raw)
                    done[key_of_line(data)] += 1
                except (ValueError, AttributeError):
                    raise OutputWriteError(
                        f"{path}:{number}: not a line written by 'extractor run'; refusing to "
                        "append to it (choose another --out)"
                    ) from None
    except OSError as exc:
        raise OutputWriteError(f"{path}: cannot read for resume: {exc.strerror}") from None
    return done


#: Failures that say nothing about the conversation, only about the model server at that moment
#: (unreachable, no or a wrong key, rate limits, time-outs): a later run attempts them again.
TRANSIENT_CODES = frozenset({"MODEL_ERROR", "MODEL_RATE_LIMITED", "MODEL_TIMEOUT"})


def is_transient(record: Any) -> bool:
    """Whether a failures-file line is a transient model failure (see :data:`TRANSIENT_CODES`)."""
    return record.get("stage") == "extract" and record.get("error_code") in TRANSIENT_CODES


def drop_failures(path: Path, *, only_transient: bool = False) -> int:
    """Remove the records of a failures file -- every one (for ``retry_failed``), or only the
    transient ones -- atomically, so those conversations are attempted again. Returns how many
    were removed."""
    if not path.is_file():  # never replace a device or a pipe with a regular file
        return 0
    tmp = path.with_name(path.name + ".tmp")
    try:
        kept, dropped = [], 0
        if only_transient:
            read_done(path)  # truncates a torn last line first
            for raw in path.read_bytes().splitlines(keepends=True):
                if raw.strip() and is_transient(json.loads(raw)):
                    dropped += 1
                else:
                    kept.append(raw)
            if not dropped:
                return 0
        else:
            dropped = len([r for r in path.read_bytes().splitlines() if r.strip()])
        tmp.write_bytes(b"".join(kept))
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputWriteError(f"{path}: cannot reset for retry: {exc.strerror}") from None
    return dropped


# ---------------------------------------------------------------------------------------------
# Writers


class LineWriter:
    """Appends JSON lines to a file: one ``write`` per line, no half-written line left behind."""

    def __init__(self, path: Path, *, fsync: bool = False) -> None:
        self.path = path
        self._fsync = fsync
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputWriteError(f"{path}: cannot open for writing: {exc.strerror}") from None

    def write(self, record: BaseModel) -> None:
        data = (dump_line(record) + "\n").encode("utf-8")
        size = os.fstat(self._fd).st_size
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
            if self._fsync:
                os.fsync(self._fd)
        except OSError as exc:
            self._undo(size)
            raise OutputWriteError(f"{self.path}: cannot write: {exc.strerror}") from None

    def _undo(self, size: int) -> None:
        # Best effort: should it fail too, the next run's resume truncates the partial line.
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, size)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.fsync(self._fd)
        os.close(self._fd)


class StreamWriter:
    """Writes JSON lines to a binary stream (stdout), flushing each line."""

    def __init__(self, stream: IO[bytes], name: str = "<stdout>") -> None:
        self._stream = stream
        self.name = name

    def write(self, record: BaseModel) -> None:
        try:
            self._stream.write((dump_line(record) + "\n").encode("utf-8"))
            self._stream.flush()
        except (OSError, ValueError) as exc:
            raise OutputWriteError(f"{self.name}: cannot write: {exc}") from None

    def close(self) -> None:
        """The stream belongs to the caller."""


class MessageWriter:
    """Reports failures on a text stream, one readable line each (when there is no file)."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, record: BaseModel) -> None:
        if isinstance(record, FailureRecord):
            cid = record.conversation_id
            named = cid is None or repr(cid) in record.error
            where = "" if named else f"conversation {cid!r}: "
            text = f"extractor: failed [{record.stage}] {where}{record.error}"
        else:
            text = dump_line(record)
        print(text, file=self._stream, flush=True)

    def close(self) -> None:
        """The stream belongs to the caller."""


Writer = LineWriter | StreamWriter | MessageWriter


# ---------------------------------------------------------------------------------------------
# The run


def failure_record(
    item: Conversation | InputError,
    error: BaseException,
    extractor: Extractor,
    owner: Owner | None = None,
) -> FailureRecord:
    """The failures-file line for ``item``, which failed with ``error``; ``owner`` as given to
    the run (a conversation that loaded fills its gaps from its metadata)."""
    code = getattr(error, "code", "PIPELINE_ERROR")
    owner = owner or Owner()
    if isinstance(item, InputError):
        loc = item.location
        return FailureRecord(
            conversation_id=loc.conversation_id,
            tenant=owner.tenant,
            subject=owner.subject,
            input=InputRef(source=loc.source, line=loc.line, field=loc.field),
            stage="load",
            error_code=item.code,
            error=str(item),
            recorded_at=extractor.clock(),
        )
    text = str(error) if isinstance(error, ExtractorError) else f"{type(error).__name__}: {error}"
    owner = owner.of(item)
    return FailureRecord(
        conversation_id=item.id,
        conversation_hash=item.content_hash(),
        tenant=owner.tenant,
        subject=owner.subject,
        input=input_ref(item),
        stage=stage_of(error),
        error_code=code,
        error=text,
        attempts=getattr(error, "attempts", 0),
        usage=getattr(error, "usage", None) or Usage(),
        **bounded_output(getattr(error, "raw_output", None)),
        recorded_at=extractor.clock(),
    )


async def _process(
    item: Conversation | InputError, extractor: Extractor, gate: asyncio.Semaphore, owner: Owner
) -> Outcome:
    if isinstance(item, InputError):
        return failure_record(item, item, extractor, owner)
    async with gate:
        try:
            return await extractor.aprocess(item, tenant=owner.tenant, subject=owner.subject)
        except Exception as exc:  # every failure of one conversation becomes its record
            return failure_record(item, exc, extractor, owner)


class _Run:
    """One batch run's state: writers, resume keys, the summary and observers."""

    def __init__(
        self,
        extractor: Extractor,
        config: BatchConfig,
        out: Writer,
        failures: Writer,
        done: Counter[Key],
        observers: Sequence[BatchObserver],
    ) -> None:
        self.extractor = extractor
        self.config = config
        self.out = out
        self.failures = failures
        self.done = done
        #: conversation key -> where it was first seen (an earlier run's file, or an input)
        self.seen: dict[Key, str] = {k: "an earlier run" for k in done if k[0] == "conversation"}
        self.observers = observers
        fpath = config.failures_path
        self.summary = RunSummary(
            model=extractor.client.model_name,
            policy_id=extractor.policy.id,
            policy_version=extractor.policy.version,
            out=str(config.out) if config.out is not None else None,
            failures_file=str(fpath) if fpath is not None else None,
            candidate_limit=extractor.validation.max_candidates,
        )

    def already_done(self, item: Conversation | InputError) -> bool:
        """Skip ``item`` when an earlier run recorded it, or when it is a duplicate: the same
        conversation (id and content hash) as an input before it, in this run or an earlier
        one -- it would only be written again under the same memory ids."""
        key = key_of_item(item)
        if self.done[key] > 0:
            self.done[key] -= 1
            self.summary.add_skipped()
        elif key in self.seen and isinstance(item, Conversation):
            self.summary.add_duplicate(_where(item), self.seen[key])
        else:
            if isinstance(item, Conversation):
                self.seen[key] = _where(item)
            return False
        self._progress()
        return True

    def record(self, item: Conversation | InputError, outcome: Outcome) -> None:
        if isinstance(outcome, ConversationResult):
            assert isinstance(item, Conversation), "only a loaded conversation has a result"
            for o in self.observers:
                o.on_result(outcome, item)
            self.out.write(outcome)
            self.summary.add_result(outcome)
        else:
            for o in self.observers:
                o.on_failure(outcome)
            self.failures.write(outcome)
            self.summary.add_failure(outcome)
        self._progress()

    def _progress(self) -> None:
        for o in self.observers:
            o.on_progress(self.summary)

    async def consume(self, items: Iterable[Conversation | InputError]) -> None:
        """Process ``items`` with bounded concurrency, writing outcomes in input order."""
        gate = asyncio.Semaphore(max(1, self.config.concurrency))
        window = reorder_window(self.config.concurrency)
        pending: deque[tuple[Conversation | InputError, asyncio.Task[Outcome]]] = deque()
        try:
            for item in items:
                if self.already_done(item):
                    continue
                work = _process(item, self.extractor, gate, self.config.owner)
                task = asyncio.ensure_future(work)
                pending.append((item, task))
                while len(pending) >= window or (pending and pending[0][1].done()):
                    await self._write_head(pending)
            while pending:
                await self._write_head(pending)
        finally:
            for _, task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*(t for _, t in pending), return_exceptions=True)

    async def _write_head(
        self, pending: deque[tuple[Conversation | InputError, asyncio.Task[Outcome]]]
    ) -> None:
        item, task = pending[0]
        outcome = await task
        pending.popleft()
        self.record(item, outcome)


async def arun_batch(
    paths: Iterable[str | Path],
    extractor: Extractor,
    config: BatchConfig | None = None,
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
    stderr: IO[str] | None = None,
    observers: Sequence[BatchObserver] = (),
    ledger: Ledger | None = None,
) -> RunSummary:
    """Run every conversation in ``paths`` (files, directories, ``-``) through ``extractor``.

    Returns the :class:`RunSummary`; per-conversation failures are recorded, not raised. Raises
    :class:`OutputWriteError` when an output file cannot be written (nothing half-written is
    left behind) -- the run stops there and can be resumed. With ``ledger``, the run, every
    result and every failure are also recorded there, and the run is closed with the summary
    (status ``completed``, or ``failed``/``interrupted`` when the run stops early).
    """
    config = config or BatchConfig()
    started = time.perf_counter()
    if config.check_endpoint:
        await check_endpoint(extractor)
    out, failures, done = _open_outputs(config, stdout, stderr)
    observers = list(observers)
    run_id = None
    if ledger is not None:
        run_id = ledger.start_run(extractor.provenance(), _settings(config, extractor))
        observers.insert(0, LedgerObserver(ledger, run_id))
    run = _Run(extractor, config, out, failures, done, observers)
    status = "failed"
    try:
        items = iter_inputs(
            paths, limits=config.limits, stdin=stdin, input_format=config.input_format
        )
        await run.consume(_shard(items, config))
        status = "completed"
    except (KeyboardInterrupt, asyncio.CancelledError):
        status = "interrupted"
        raise
    finally:
        out.close()
        failures.close()
        run.summary.wall_time_s = round(time.perf_counter() - started, 3)
        if ledger is not None and run_id is not None:
            ledger.finish_run(run_id, run.summary, status=status)
    return run.summary


async def check_endpoint(extractor: Extractor) -> None:
    """:func:`extractor.doctor.preflight` with the extractor's LLM client (never from the
    cache), its prompt and validation options, before a batch: a server that is unreachable,
    rejects the key, does not know the model, refuses the mode or drops the system prompt
    raises :class:`ModelClientError` naming the options to check; a server that answers at all
    passes. Other clients are not checked."""
    from .cache import CachingClient
    from .errors import ModelClientError

    client = extractor.client
    while isinstance(client, CachingClient):
        client = client.inner
    # No OpenAIClient exists unless its module was imported; importing it here just to find
    # that out would cost every offline run the openai SDK's import (about a second of CPU).
    openai_client = sys.modules.get(f"{__package__}.clients.openai_client")
    if openai_client is None or not isinstance(client, openai_client.OpenAIClient):
        return
    from .doctor import preflight

    try:
        await preflight(client, prompt=extractor.prompt, options=extractor.validation)
    except ModelClientError as exc:
        raise ModelClientError(
            f"the model endpoint failed a first check, nothing was processed: {exc}. "
            "Check --model, --base-url and --api-key (env EXTRACTOR_API_KEY / OPENAI_API_KEY)."
        ) from exc


def _where(item: Conversation) -> str:
    loc = item.location
    place = f"{loc.source}:{loc.line}" if loc.line is not None else str(loc.source)
    return place + (loc.field or "")


def _shard(items: Iterable[T], config: BatchConfig) -> Iterable[T]:
    if config.shard is None:
        return items
    k, n = config.shard
    return (item for position, item in enumerate(items) if position % n == k - 1)


def _settings(config: BatchConfig, extractor: Extractor) -> dict[str, Any]:
    """What a ledger records about how the run was configured."""
    return {
        "out": str(config.out) if config.out is not None else None,
        "failures": str(config.failures_path) if config.failures_path is not None else None,
        "concurrency": config.concurrency,
        "limits": asdict(config.limits),
        "retry_failed": config.retry_failed,
        "shard": list(config.shard) if config.shard is not None else None,
        "max_chunk_chars": extractor.max_chunk_chars,
        "timeout": extractor.timeout,
        "as_of": extractor.as_of.isoformat() if extractor.as_of is not None else None,
        "allow_system_sources": extractor.validation.allow_system_sources,
        "observing_tools": list(extractor.validation.observing_tools),
        "input_format": config.input_format,
        "tenant": config.owner.tenant,
        "subject": config.owner.subject,
    }


def run_batch(
    paths: Iterable[str | Path],
    extractor: Extractor,
    config: BatchConfig | None = None,
    **kwargs: Any,
) -> RunSummary:
    """Blocking :func:`arun_batch`."""
    return asyncio.run(arun_batch(paths, extractor, config, **kwargs))


def _open_outputs(
    config: BatchConfig, stdout: IO[bytes] | None, stderr: IO[str] | None
) -> tuple[Writer, Writer, Counter[Key]]:
    done: Counter[Key] = Counter()
    fpath = config.failures_path
    if fpath is not None:
        drop_failures(fpath, only_transient=not config.retry_failed)
        done += read_done(fpath)
    if config.out is not None:
        done += read_done(config.out)
        out: Writer = LineWriter(config.out, fsync=config.fsync)
    else:
        out = StreamWriter(stdout if stdout is not None else sys.stdout.buffer)
    if fpath is not None:
        failures: Writer = LineWriter(fpath, fsync=config.fsync)
    else:
        failures = MessageWriter(stderr if stderr is not None else sys.stderr)
    return out, failures, done


# ---------------------------------------------------------------------------------------------
# Progress total


def estimate_total(paths: Iterable[str | Path], shard: tuple[int, int] | None = None) -> int | None:
    """How many conversations ``paths`` hold, cheaply: non-blank lines of JSONL files, one per
    JSON file; with ``shard``, how many of them that shard takes. ``None`` when stdin is among
    them (its size cannot be known in advance)."""
    total = 0
    for path in paths:
        if str(path) == "-":
            return None
        for file in _files(Path(path)):
            total += _count(file)
    if shard is None:
        return total
    k, n = shard  # positions k-1, k-1+n, ... as _shard takes them
    return total // n + (1 if k <= total % n else 0)


def _files(path: Path) -> Iterator[Path]:
    if path.is_dir():
        for child in sorted(path.rglob("*")):
            if child.is_file() and child.name.endswith(INPUT_SUFFIXES):
                yield child
    else:
        yield path


def _count(path: Path) -> int:
    name = path.name.removesuffix(".gz")
    if not name.endswith(".jsonl"):
        return 1
    try:
        with open(path, "rb") as raw:
            gz = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            stream: Iterable[bytes] = gzip.GzipFile(fileobj=raw) if gz else raw
            return sum(1 for line in stream if line.strip())
    except (OSError, EOFError):
        return 1


__all__ = [
    "DEFAULT_CONCURRENCY",
    "FAILURES_SUFFIX",
    "BatchConfig",
    "BatchObserver",
    "LedgerObserver",
    "LineWriter",
    "arun_batch",
    "check_endpoint",
    "estimate_total",
    "failure_record",
    "is_transient",
    "read_done",
    "run_batch",
]
