"""The checks ``extractor doctor`` makes against a server (the I/O half of the package).

In order: reach and authenticate (``GET /models``), whether the system prompt reaches the model
(the same one-line request with and without a system prompt: the difference in
``usage.prompt_tokens`` must be about the system prompt's size), which structured-output modes
really work (a small extraction in each), how fast the server reads a prompt and generates, and
whether it answers two requests at once. Every request carries a small ``max_tokens``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import openai

from ..chunking import DEFAULT_MAX_CHUNK_CHARS
from ..clients.compat import DEFAULT_PROBE_TIMEOUT, estimate_tokens, is_local
from ..clients.openai_client import OpenAIClient
from ..clients.tls import tls_context
from ..conversation import Conversation, conversation_from_data
from ..errors import (
    ExtractorError,
    ModelClientError,
    ModelRefused,
    ModelTimeout,
    ModeUnsupported,
    OutputTruncated,
    RateLimited,
)
from ..prompts import Prompt, load_prompt
from ..validation import ValidationOptions
from .models import DoctorReport, ModeCheck, ModeOutcome, Speeds
from .recommend import PREFERENCE, recommend

#: A small conversation every mode is tried on.
PROBE_CONVERSATION = {
    "id": "doctor-probe",
    "messages": [
        {"role": "user", "content": "I live in Lisbon and I work at a bakery."},
        {"role": "assistant", "content": "Nice! How long have you been there?"},
    ],
}
PROBE_MAX_TOKENS = 512
#: The system prompt of the delivery check: ~100 tokens of plain English.
PROBE_SYSTEM = " ".join(["You are a careful assistant and you answer in one word."] * 9)
#: The prompt of the prompt-speed check: ~1,000 tokens.
LONG_PROMPT = " ".join(["The quick brown fox jumps over the lazy dog near the river bank."] * 64)
GENERATION_PROMPT = "Count from 1 to 500, numbers separated by spaces, nothing else."
GENERATION_TOKENS = 64
#: A system prompt counted as delivered when the server counts at least this share of it.
DELIVERED_SHARE = 0.5
#: Timings below this are too short to tell a speed from noise (a mock answers at once).
MIN_TIMED = 0.05


async def check_server(
    *,
    base_url: str,
    model: str,
    api_key: str | None = None,
    timeout: float = DEFAULT_PROBE_TIMEOUT,
    chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    clock: Callable[[], float] = time.perf_counter,
) -> DoctorReport:
    """Check the server at ``base_url`` for ``model`` and recommend ``extractor run`` options.

    Never raises for what the server does: every problem is in ``report.problems``. ``clock``
    (seconds) times every request; a test passes a virtual one its server moves.
    """
    report = DoctorReport(base_url=base_url, model=model, local=is_local(base_url), reachable=False)
    sdk = openai.AsyncOpenAI(
        api_key=api_key or "no-key-needed",
        base_url=base_url,
        timeout=timeout,
        max_retries=0,
        http_client=openai.DefaultAsyncHttpxClient(verify=tls_context()),
    )
    async with sdk:
        if not await _reach(sdk, report):
            return report
        probe = _Probe(sdk, model, clock)
        report.system_prompt_delivered = await probe.system_prompt_delivered(report)
        system_as_user = report.system_prompt_delivered is False
        options = {"base_url": base_url, "api_key": api_key, "timeout": timeout}
        for mode in PREFERENCE:
            report.modes.append(await _try_mode(model, mode, system_as_user, options, clock))
        report.speeds = await probe.speeds(report)
    report.recommendation = recommend(
        report.modes,
        report.speeds,
        local=report.local,
        chunk_chars=chunk_chars,
        system_dropped=system_as_user,
    )
    if report.recommendation.mode is None:
        report.problems.append("no mode answered with a readable extraction")
    return report


async def _reach(sdk: openai.AsyncOpenAI, report: DoctorReport) -> bool:
    """``GET /models``: reachable and authenticated (a server without the route is fine)."""
    try:
        listed = await sdk.models.list()
    except openai.AuthenticationError as exc:
        report.reachable, report.authenticated = True, False
        report.problems.append(f"the server refused the key (HTTP {exc.status_code}): pass "
                               "--api-key or set OPENAI_API_KEY")  # fmt: skip
        return False
    except openai.APIStatusError as exc:
        report.reachable = True
        if exc.status_code in (401, 403):
            report.authenticated = False
            report.problems.append("the server refused the key: pass --api-key")
            return False
        return True
    except openai.APIError as exc:
        report.problems.append(f"cannot reach {report.base_url}: {exc}")
        return False
    report.reachable = report.authenticated = True
    report.listed_models = [m.id for m in listed.data]
    if report.listed_models and report.model not in report.listed_models:
        report.problems.append(
            f"model {report.model!r} is not among the server's models "
            f"({', '.join(report.listed_models[:5])}): check --model"
        )
    return True


async def _try_mode(
    model: str,
    mode: str,
    system_as_user: bool,
    options: dict[str, Any],
    clock: Callable[[], float],
) -> ModeCheck:
    """A small extraction in ``mode``: supported when the answer is a readable extraction."""
    client = OpenAIClient(
        model=model, mode=mode, max_attempts=1, max_tokens=PROBE_MAX_TOKENS,
        system_as_user=system_as_user, timeout_retries=0, max_rate_limit_retries=1, **options,
    )  # fmt: skip
    conversation = conversation_from_data(PROBE_CONVERSATION)
    started = clock()
    outcome: ModeOutcome
    try:
        async with client:
            result = await client.extract(conversation, load_prompt(), ValidationOptions())
    except ModeUnsupported as exc:
        return ModeCheck(mode=mode, outcome="unsupported", detail=str(exc))
    except OutputTruncated:
        outcome, detail = "supported", "answer cut off at the probe's max_tokens"
    except ExtractorError as exc:
        return ModeCheck(mode=mode, outcome="error", detail=str(exc))
    else:
        outcome, detail = _readable(result.output)
    seconds = round(clock() - started, 3)
    return ModeCheck(mode=mode, outcome=outcome, detail=detail, seconds=seconds)


def _readable(output: Any) -> tuple[ModeOutcome, str]:
    if isinstance(output, dict) and isinstance(output.get("candidates"), list):
        return "supported", f"{len(output['candidates'])} candidate(s)"
    return "unreadable", "the answer is not a JSON extraction"


class _Probe:
    """Raw chat requests (no instructor) with timings."""

    def __init__(self, sdk: openai.AsyncOpenAI, model: str, clock: Callable[[], float]) -> None:
        self.sdk = sdk
        self.model = model
        self.clock = clock

    async def chat(self, messages: list[dict[str, str]], max_tokens: int) -> tuple[Any, float]:
        started = self.clock()
        response = await self.sdk.chat.completions.create(
            model=self.model,
            messages=messages,  # type: ignore[arg-type]
            max_tokens=max_tokens,
            temperature=0.0,
        )
        return response, self.clock() - started

    async def system_prompt_delivered(self, report: DoctorReport) -> bool | None:
        """The same request with and without a system prompt: is the difference counted?"""
        user = {"role": "user", "content": "Say OK."}
        system = {"role": "system", "content": PROBE_SYSTEM}
        try:
            with_system, _ = await self.chat([system, user], 1)
            without, _ = await self.chat([user], 1)
        except openai.APIError as exc:
            report.problems.append(f"a one-token chat request failed: {exc}")
            return None
        if with_system.usage is None or without.usage is None:
            return None
        added = _tokens(with_system, "prompt") - _tokens(without, "prompt")
        delivered = added >= DELIVERED_SHARE * estimate_tokens([system])
        if not delivered:
            report.problems.append(
                f"the system prompt does not reach the model (it added {added} prompt tokens, "
                f"~{estimate_tokens([system])} expected): the chat template drops it; "
                "use --system-as-user"
            )
        return delivered

    async def speeds(self, report: DoctorReport) -> Speeds:
        try:
            return await self._speeds()
        except openai.APIError as exc:
            report.problems.append(f"the speed checks failed: {exc}")
            return Speeds()

    async def _speeds(self) -> Speeds:
        short, base = await self.chat([{"role": "user", "content": "Say OK."}], 1)
        long, read = await self.chat([{"role": "user", "content": LONG_PROMPT}], 1)
        counting = [{"role": "user", "content": GENERATION_PROMPT}]
        generated, alone = await self.chat(counting, GENERATION_TOKENS)
        started = self.clock()
        await asyncio.gather(
            self.chat(counting, GENERATION_TOKENS), self.chat(counting, GENERATION_TOKENS)
        )
        together = self.clock() - started
        prompt_tokens = _tokens(long, "prompt") - _tokens(short, "prompt")
        produced = _tokens(generated, "completion")
        return Speeds(
            prompt_tokens_per_s=_rate(prompt_tokens, read - base),
            generation_tokens_per_s=_rate(produced, alone - base),
            round_trip_s=round(base, 3),
            single_slot=None if alone < MIN_TIMED else together > 1.6 * alone,
        )


def _tokens(response: Any, kind: str) -> int:
    usage = response.usage
    return int(getattr(usage, f"{kind}_tokens", 0) or 0) if usage is not None else 0


def _rate(tokens: int, seconds: float) -> float | None:
    if tokens <= 0 or seconds < MIN_TIMED:
        return None
    return round(tokens / seconds, 1)


async def preflight(
    client: OpenAIClient,
    *,
    prompt: Prompt | None = None,
    options: ValidationOptions | None = None,
) -> None:
    """One small extraction with ``client``'s own settings (one attempt, a small
    ``max_tokens``), before a batch: raises the typed :class:`ModelClientError` a whole run
    would otherwise fail with conversation by conversation (no key, unreachable server, unknown
    model, unsupported mode, dropped system prompt). A server that answers at all -- rate
    limited, slow, refusing, with a cut-off or unreadable answer -- passes: it works.

    The one implementation of this check: ``extractor run`` makes it once before a batch
    (:func:`extractor.batch.check_endpoint`, with the run's ``prompt`` and validation
    ``options``); ``extractor doctor`` makes it in every mode and measures the rest.
    """
    probe = OpenAIClient(
        model=client.model, base_url=client.base_url, api_key=client.api_key,
        mode=client.mode, timeout=client.timeout, max_attempts=1,
        max_tokens=PROBE_MAX_TOKENS, timeout_retries=client.timeout_retries,
        system_as_user=client.system_as_user, extra_headers=client.extra_headers,
    )  # fmt: skip
    conversation: Conversation = conversation_from_data(PROBE_CONVERSATION)
    try:
        async with probe:
            await probe.extract(
                conversation, prompt or load_prompt(), options or ValidationOptions()
            )
    except (RateLimited, ModelTimeout, ModelRefused, OutputTruncated):
        return  # the server answered
    except ModelClientError:
        raise
    except ExtractorError:
        return  # an answer the gate cannot read: still an answer


__all__ = ["PROBE_CONVERSATION", "check_server", "preflight"]
