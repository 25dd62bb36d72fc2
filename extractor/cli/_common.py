"""The model and pipeline options that ``run``, ``serve``, ``eval`` and ``doctor`` share.

The options are declared once here, and :func:`build_extractor` turns them into an
:class:`~extractor.pipeline.Extractor` in one place, so the commands cannot drift apart in
names, environment variables, defaults, help or meaning. Their defaults come from the pipeline,
so this module imports it; what commands share beyond these options is in :mod:`._base`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from ..conversation import (
    DEFAULT_MAX_CANDIDATES,
    DEFAULT_MAX_MESSAGE_CHARS,
    DEFAULT_MAX_MESSAGES,
    Limits,
)
from ..errors import ExtractorError
from ..models import DEFAULT_MODEL, get_client
from ..pipeline import DEFAULT_MAX_CHUNK_CHARS, Extractor
from ..toolorigin import DEFAULT_OBSERVING_TOOLS, normalized
from ..validation import ValidationOptions
from ._base import Decorator, UnusableInput, _as_of, _stack

MODEL_HELP = "'offline' (no key, no server) or a model name at --base-url."


def model_options(model_help: str = MODEL_HELP) -> Decorator:
    """``--model``, ``--base-url`` and ``--api-key``: which model answers, where, with what key."""
    return _stack(
        click.option(
            "--model",
            default=DEFAULT_MODEL,
            show_default=True,
            envvar="EXTRACTOR_MODEL",
            help=model_help,
        ),
        click.option(
            "--base-url",
            envvar=["EXTRACTOR_BASE_URL", "OPENAI_BASE_URL"],
            help="OpenAI-compatible endpoint. Env: EXTRACTOR_BASE_URL, OPENAI_BASE_URL.",
        ),
        click.option(
            "--api-key",
            envvar=["EXTRACTOR_API_KEY", "OPENAI_API_KEY"],
            help="API key. Env: EXTRACTOR_API_KEY, OPENAI_API_KEY.",
        ),
    )


policy_option = click.option(
    "--policy",
    type=click.Path(path_type=Path, exists=True, dir_okay=False),
    help="Admission policy file. Default: the shipped policy.",
)

#: Every option :func:`build_extractor` reads: the model options, then the pipeline's own.
extractor_options = _stack(
    model_options(),
    click.option(
        "--mode",
        help="How the model is asked for structured output: tools (default), json_schema, json "
        "or md_json (LLM models only; `extractor doctor` says which a server supports).",
    ),
    click.option(
        "--max-tokens",
        type=click.IntRange(min=1),
        help="Output tokens allowed per model call. Default: chosen from each chunk's size.",
    ),
    click.option(
        "--model-timeout",
        type=click.FloatRange(min=0, min_open=True),
        help="Seconds per model request. Default: 120, or 600 for a server on this machine or "
        "a private network.",
    ),
    click.option(
        "--timeout-retries",
        type=click.IntRange(min=0),
        help="Times a timed-out request is sent again. Default: 1, or 0 for a local server "
        "(it keeps generating the abandoned request).",
    ),
    click.option(
        "--max-attempts",
        type=click.IntRange(min=1),
        help="Model answers per chunk: the first plus re-asks with the gate's rejections. "
        "Default: 3.",
    ),
    click.option(
        "--system-as-user",
        is_flag=True,
        help="Send the system prompt inside the first user message (for chat templates that "
        "drop the system role).",
    ),
    policy_option,
    click.option(
        "--as-of",
        callback=_as_of,
        help="ISO time the policy judges current state at (naive times are UTC).",
    ),
    click.option("--allow-system-sources", is_flag=True, help="Let system-prompt text be quoted."),
    click.option(
        "--observing-tools",
        metavar="NAME,...",
        help="Tools whose output is an observation (origin TOOL); every other tool relays "
        "external text (EXTERNAL_SOURCE). Default: "
        + ",".join(sorted(DEFAULT_OBSERVING_TOOLS))
        + "; '' for none. A conversation's metadata.observing_tools replaces it.",
    ),
    click.option(
        "--limit-message-chars",
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_MESSAGE_CHARS,
        show_default=True,
        help="A longer message fails its conversation (stage load).",
    ),
    click.option(
        "--limit-messages",
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_MESSAGES,
        show_default=True,
        help="A conversation with more messages fails (stage load).",
    ),
    click.option(
        "--limit-candidates",
        type=click.IntRange(min=1),
        default=DEFAULT_MAX_CANDIDATES,
        show_default=True,
        help="Candidates of one model call (one chunk) beyond this are rejected "
        "(CANDIDATE_LIMIT_EXCEEDED).",
    ),
    click.option(
        "--max-chunk-chars",
        type=click.IntRange(min=1000),
        default=DEFAULT_MAX_CHUNK_CHARS,
        show_default=True,
        help="Longer transcripts are extracted in chunks.",
    ),
    click.option(
        "--timeout",
        type=click.FloatRange(min=0, min_open=True),
        help="Seconds allowed per conversation (all chunks and retries).",
    ),
    click.option("--no-cache", is_flag=True, help="Do not read or write the response cache."),
    click.option(
        "--cache-dir",
        type=click.Path(path_type=Path, file_okay=False),
        help="Response cache directory.",
    ),
)


def observing_tools(value: str | None) -> tuple[str, ...]:
    """``--observing-tools``: comma-separated names; the default list when not given."""
    if value is None:
        return tuple(sorted(DEFAULT_OBSERVING_TOOLS))
    return tuple(sorted(normalized(value.split(","))))


def build_extractor(o: Mapping[str, Any]) -> Extractor:
    """The client and :class:`Extractor` the :data:`extractor_options` in ``o`` describe.

    A library error (an invalid policy file ...) is unusable input; a client rejecting its
    configuration (e.g. an unknown ``--mode``) is a usage error. Both exit 2.
    """
    limits = Limits(o["limit_message_chars"], o["limit_messages"], o["limit_candidates"])
    try:
        client = get_client(
            o["model"], base_url=o["base_url"], api_key=o["api_key"], mode=o["mode"],
            timeout=o["model_timeout"], max_attempts=o["max_attempts"],
            max_tokens=o["max_tokens"], timeout_retries=o["timeout_retries"],
            system_as_user=o["system_as_user"] or None,
            cache=not o["no_cache"], cache_dir=o["cache_dir"],
        )  # fmt: skip
        return Extractor(
            client,
            policy=o["policy"],
            limits=limits,
            validation=ValidationOptions(
                allow_system_sources=o["allow_system_sources"],
                max_candidates=limits.max_candidates,
                observing_tools=observing_tools(o["observing_tools"]),
            ),
            max_chunk_chars=o["max_chunk_chars"],
            timeout=o["timeout"],
            as_of=o["as_of"],
        )
    except ExtractorError as exc:
        raise UnusableInput(str(exc)) from None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
