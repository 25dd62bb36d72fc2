"""Where a message's sentences begin and end: the one sentence splitter of the project.

The offline model quotes sentences (or parts of them) and the gate judges hedges, negations
and reporters by the *sentence* a quote is in (:mod:`.faithfulness`). Both must cut a message
at the same places: with two splitters, a cue the gate sees in "its" sentence can lie outside
the sentence the model quoted, and the model's own output is rejected (``UNCERTAINTY_DROPPED``
for a reporter the model never saw). So both call :func:`sentence_spans`.

A sentence ends at terminal punctuation followed by whitespace (closing quotes and brackets
stay with it), after a CJK terminal, at a line break, and at the edge of every quotable range
(a message's placeholders such as ``[image]`` are never inside a sentence). Not at the full
stop of a common abbreviation ("Dr. Who", "e.g. tea"), nor inside inline code (`` `make
deploy. now` ``). Deterministic regular expressions, about 50 µs per message: pySBD, which the
gate used before, cut differently from the model and took 30 times as long (1.5 ms per message
on MSC).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

#: Sentence ends: terminal punctuation followed by whitespace, CJK terminals, or a line break.
_BOUNDARY = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|(?<=[。！？])|\n+")
_ABBREVIATIONS = re.compile(
    r"\b(?:mr|mrs|ms|dr|st|prof|sr|jr|vs|etc|e\.g|i\.e|approx|no|inc|ltd|co|u\.s|a\.m|p\.m)\.$",
    re.IGNORECASE,
)
_CODE = re.compile(r"`[^`\n]*`")


def split(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """The sentences of ``text[lo:hi]`` as ``(start, end)`` offsets into ``text``, untrimmed;
    what lies between two of them (the whitespace after a full stop) belongs to neither."""
    stop = len(text) if hi is None else hi
    protected = [(m.start() + lo, m.end() + lo) for m in _CODE.finditer(text[lo:stop])]
    spans: list[tuple[int, int]] = []
    start = lo
    for m in _BOUNDARY.finditer(text, lo, stop):
        cut = m.start()
        if any(a < cut < b for a, b in protected):
            continue
        if "\n" not in m.group(0) and _ABBREVIATIONS.search(text[max(start, cut - 6) : cut]):
            continue
        if cut > start:
            spans.append((start, cut))
        start = m.end()
    if stop > start:
        spans.append((start, stop))
    return spans


def sentence_spans(
    text: str, quotable: Sequence[tuple[int, int]] | None = None
) -> list[tuple[int, int]]:
    """The sentences of ``text``, within each of its ``quotable`` ranges (default: all of it)."""
    ranges = [(0, len(text))] if quotable is None else quotable
    return [span for lo, hi in ranges for span in split(text, lo, hi)]


def quotable_ranges(length: int, placeholders: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of a text of ``length`` code points outside its ``placeholders``."""
    ranges: list[tuple[int, int]] = []
    cursor = 0
    for lo, hi in placeholders:
        if lo > cursor:
            ranges.append((cursor, lo))
        cursor = max(cursor, hi)
    if cursor < length:
        ranges.append((cursor, length))
    return ranges


__all__ = ["quotable_ranges", "sentence_spans", "split"]
