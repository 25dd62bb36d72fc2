"""Stage 4, the context serializer: the minimum decision-relevant metadata, in the seed's form.

Each usable memory becomes one line (seed §9)::

    Q2 revenue was $43.8M. [source: filing_q2]
    <memory origin="USER" verification="UNVERIFIED" use="PERSONALIZATION">User stated that \
their manager is Alice.</memory>
    <memory state="CONFLICTING" use="CONTEXT_ONLY">Sources disagree about the current CEO.</memory>

The plain form is only for a VERIFIED memory admitted for the requested purpose with a named
source; a conflict shows its state; everything else shows its origin and verification. The full
record stays outside the prompt and is dereferenced by ``claim_id`` from the read result.

Memory text is untrusted: ``& < > [ ]`` and every line-breaking or control character are written as
character references, so no content can close its element, open another, forge a ``[source: ...]``
or start a new line. :func:`parse_context` reads the text back; a property test holds that it
always returns the same restrictions that were serialized.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..vocab import VerificationState
from .models import CONTEXT_ONLY, MemoryView, UseDecision

SERIALIZER_VERSION = "memory-context-1"

TokenCounter = Callable[[str], int]

_UNSAFE = re.compile(r"[&<>\[\]\x00-\x1f\x7f-\x9f\u2028\u2029]")
_UNSAFE_ATTRIBUTE = re.compile(r"[&<>\[\]\"\x00-\x1f\x7f-\x9f\u2028\u2029]")
_TAGGED = re.compile(r'<memory((?: [a-z]+="[^"<>]*")+)>([^<>\n]*)</memory>')
_ATTRIBUTE = re.compile(r' ([a-z]+)="([^"<>]*)"')
_PLAIN = re.compile(r"([^<>\[\]\n]*) \[source: ([^<>\[\]\n]*)\]")


_REFERENCE = re.compile(r"&#([0-9]+);")


def unescape(text: str) -> str:
    """Inverse of :func:`escape` (only the numeric references it writes are read)."""
    return _REFERENCE.sub(_character, text)


def _character(m: re.Match[str]) -> str:
    try:
        return chr(int(m.group(1)))
    except (ValueError, OverflowError):  # not a reference escape() writes: keep it as text
        return m.group()


def estimate_tokens(text: str) -> int:
    """A deterministic, tokenizer-free estimate: one token per 4 UTF-8 bytes, rounded up."""
    return math.ceil(len(text.encode("utf-8")) / 4)


def escape(text: str, *, attribute: bool = False) -> str:
    """``text`` with every character that could end or forge a wrapper written as a reference
    (in an attribute value, the double quote too)."""
    pattern = _UNSAFE_ATTRIBUTE if attribute else _UNSAFE
    return pattern.sub(lambda m: f"&#{ord(m.group())};", text)


@dataclass(frozen=True)
class Restrictions:
    """What one serialized line tells the model: the text and how it may be used."""

    content: str
    use: str
    origin: str | None = None
    verification: str | None = None
    state: str | None = None
    source: str | None = None


def restrictions(view: MemoryView, decision: UseDecision) -> Restrictions:
    """The restrictions a line must carry for ``view`` admitted under ``decision``."""
    use = decision.use
    if use is None:
        raise ValueError(f"memory {view.claim_id} is not admissible; it cannot be serialized")
    conflicting = view.conflicting or view.verification_state is VerificationState.CONFLICTING
    if conflicting:
        return Restrictions(view.content, use, state="CONFLICTING")
    plain = view.verification_state is VerificationState.VERIFIED and use != CONTEXT_ONLY
    if plain and view.source_label:
        return Restrictions(view.content, use, source=view.source_label)
    return Restrictions(
        view.content, use, origin=view.origin_kind.value, verification=view.verification_state.value
    )


def render_line(r: Restrictions) -> str:
    if r.source is not None:
        return f"{escape(r.content)} [source: {escape(r.source)}]"
    attributes = (("origin", r.origin), ("verification", r.verification), ("state", r.state))
    shown = "".join(f' {k}="{escape(v, attribute=True)}"' for k, v in attributes if v is not None)
    return f'<memory{shown} use="{escape(r.use, attribute=True)}">{escape(r.content)}</memory>'


def parse_context(text: str, *, purpose: str) -> list[Restrictions]:
    """Read serialized context back into its restrictions; ``purpose`` is the plain form's use.

    Raises ``ValueError`` naming the line when a line is in neither form.
    """
    out = []
    for number, line in enumerate(text.split("\n") if text else [], start=1):
        tagged, plain = _TAGGED.fullmatch(line), _PLAIN.fullmatch(line)
        if tagged:
            attrs = {k: unescape(v) for k, v in _ATTRIBUTE.findall(tagged.group(1))}
            content = unescape(tagged.group(2))
            out.append(
                Restrictions(
                    content,
                    attrs["use"],
                    origin=attrs.get("origin"),
                    verification=attrs.get("verification"),
                    state=attrs.get("state"),
                )
            )
        elif plain:
            content, source = (unescape(g) for g in plain.groups())
            out.append(Restrictions(content, purpose, source=source))
        else:
            raise ValueError(f"line {number} is not a serialized memory: {line[:80]!r}")
    return out


@dataclass(frozen=True)
class Serialized:
    text: str
    tokens: int
    included: tuple[str, ...]
    over_budget: tuple[str, ...]


def serialize(
    admitted: Sequence[tuple[MemoryView, UseDecision]],
    *,
    token_budget: int | None = None,
    count_tokens: TokenCounter = estimate_tokens,
) -> Serialized:
    """One line per admitted memory, in rank order, while the token budget lasts.

    A memory whose line does not fit is left out (and reported), never truncated: half a memory
    could drop the words that restrict it. Later, shorter lines may still fit.
    """
    lines: list[str] = []
    included: list[str] = []
    over: list[str] = []
    used = 0
    for view, decision in admitted:
        line = render_line(restrictions(view, decision))
        cost = count_tokens(line if not lines else "\n" + line)
        if token_budget is not None and used + cost > token_budget:
            over.append(view.claim_id)
            continue
        lines.append(line)
        included.append(view.claim_id)
        used += cost
    return Serialized("\n".join(lines), used, tuple(included), tuple(over))
