"""What real OpenAI-compatible servers do differently, as pure functions of what they answered.

* :func:`is_local` -- a server on this machine or a private network (llama.cpp, Ollama, vLLM
  on a workstation) is assumed to have one generation slot and to keep generating an answer
  nobody waits for any more: a timed-out request is then not re-sent by default, and timeouts
  are longer (reading a long prompt on a CPU takes minutes).
* :func:`unsupported_mode` -- an HTTP error (4xx *or* 5xx: llama-cpp-python answers an unknown
  ``response_format`` with a 500) whose message says the structured-output feature of the
  requested mode is not available. It is permanent; the error names the mode to use instead.
* :func:`prompt_dropped` -- the server read far fewer prompt tokens than were sent.
* :func:`estimate_tokens` -- the project's own count of a request's prompt tokens.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

#: Seconds ``extractor doctor`` allows each probe request by default (a CPU server reading a
#: long prompt takes minutes).
DEFAULT_PROBE_TIMEOUT = 600.0

#: The mode to try when a server cannot do one (``md_json`` needs nothing of the server).
FALLBACK_MODE = {"tools": "json", "json_schema": "json", "json": "md_json"}

#: What each mode asks of the server, as its error messages name it.
_FEATURE_WORDS = {
    "tools": re.compile(r"\btools?\b|tool_choice|tool.call|function", re.IGNORECASE),
    "json_schema": re.compile(r"json_schema|response_format|schema", re.IGNORECASE),
    "json": re.compile(r"json_object|response_format", re.IGNORECASE),
}
_UNSUPPORTED = re.compile(
    r"not supported|unsupported|does not support|doesn't support|not implemented|"
    r"input should be|not allowed|not permitted|unknown (?:parameter|field|value)|"
    r"unrecognized|invalid (?:value|type|parameter)|must be one of|is not one of",
    re.IGNORECASE,
)

#: Characters per token of the project's own prompt count: a deliberate over-estimate of the
#: tokens a real tokenizer makes of English and JSON (3.5-4.5 characters a token), so that a
#: prompt the server really read is never counted short.
CHARS_PER_TOKEN = 4
#: A server that reports fewer prompt tokens than this share of the estimate did not read the
#: prompt: tokenizers differ, but none makes 3x fewer tokens of the same text.
MIN_PROMPT_SHARE = 1 / 3
#: Below this many estimated tokens the check is not made (too little text to judge).
MIN_CHECKED_PROMPT = 256


def is_local(base_url: str | None) -> bool:
    """Whether ``base_url`` is this machine or a private network (an address or a bare host)."""
    if not base_url:
        return False
    host = urlsplit(base_url).hostname or ""
    if host == "localhost" or host.endswith((".localhost", ".local", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return bool(host) and "." not in host  # a bare host name: a container or a LAN machine
    return address.is_loopback or address.is_private or address.is_link_local


def unsupported_mode(mode: str, status: int, message: str) -> bool:
    """Whether an HTTP ``status`` error with ``message`` says ``mode`` is not supported."""
    words = _FEATURE_WORDS.get(mode)
    if words is None or status < 400 or status in (401, 403, 404, 429):
        return False
    return bool(words.search(message) and _UNSUPPORTED.search(message))


def estimate_tokens(messages: Sequence[Any]) -> int:
    """The project's own count of the prompt tokens of ``messages`` (their texts, see
    :data:`CHARS_PER_TOKEN`). Tool definitions are left out: some servers render them into the
    prompt, others (llama-cpp-python) turn them into a grammar, so only the messages are sure
    to be counted by every server."""
    chars = sum(len(_text(m.get("content"))) for m in messages if isinstance(m, Mapping))
    return math.ceil(chars / CHARS_PER_TOKEN)


def prompt_dropped(reported: int | None, expected: int) -> bool:
    """Whether a server that reports ``reported`` prompt tokens read much less than was sent."""
    if reported is None or reported <= 0 or expected < MIN_CHECKED_PROMPT:
        return False
    return reported < expected * MIN_PROMPT_SHARE


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


__all__ = [
    "CHARS_PER_TOKEN",
    "FALLBACK_MODE",
    "estimate_tokens",
    "is_local",
    "prompt_dropped",
    "unsupported_mode",
]
