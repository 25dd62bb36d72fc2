"""Fast case-insensitive search: ASCII text is lowercased and searched case-sensitively.

Python's ``re.IGNORECASE`` folds case at every step of the match, which makes a large
alternation of words several times slower than the same pattern without the flag. For ASCII
text, lowercasing first gives exactly the same answer: lowercasing keeps every offset, and a
pattern written in lowercase matches the lowercased text wherever the case-insensitive pattern
matches the original.

That equivalence needs the pattern to be written in lowercase and to hold nothing that folds
onto an ASCII letter from outside ASCII (``ſ``, ``ı``, ``İ``, the Kelvin sign) or that
changes flags inline. :func:`twin` checks this once per pattern and falls back to the original
pattern when it cannot be sure; non-ASCII text always uses the original pattern.
"""

from __future__ import annotations

import re

#: Characters outside ASCII that ``re.IGNORECASE`` matches with an ASCII letter.
_FOLDS_TO_ASCII = frozenset("\u0130\u0131\u017f\u212a")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_SAFE_ESCAPES = frozenset("bBsSwWdDntrfv")
_INLINE_FLAGS = re.compile(r"\(\?[aiLmsux-]")
_NON_ASCII_RANGE = re.compile(r"[^\x00-\x7f]-|-[^\x00-\x7f]")

_twins: dict[re.Pattern[str], re.Pattern[str] | None] = {}


def _foldable(source: str) -> bool:
    """Whether lowercased ASCII text matched case-sensitively behaves like IGNORECASE."""
    for m in _ESCAPE.finditer(source):
        char = m.group(1)
        if char.isalnum() and char not in _SAFE_ESCAPES:  # \u, \x, \N, \1 ...: not checked
            return False
    plain = _ESCAPE.sub("", source)
    if any(c.isupper() for c in plain) or _INLINE_FLAGS.search(plain):
        return False
    return not (_FOLDS_TO_ASCII.intersection(plain) or _NON_ASCII_RANGE.search(plain))


def twin(pattern: re.Pattern[str]) -> re.Pattern[str] | None:
    """The case-sensitive twin of an IGNORECASE ``pattern`` for lowercased ASCII text, or
    ``None`` when the pattern cannot have one (then the original is used)."""
    if pattern in _twins:
        return _twins[pattern]
    found = None
    if pattern.flags & re.IGNORECASE and _foldable(pattern.pattern):
        found = re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)
    _twins[pattern] = found
    return found


def search(pattern: re.Pattern[str], text: str) -> bool:
    """``pattern.search(text) is not None``, faster for IGNORECASE patterns on ASCII text."""
    if text.isascii():
        fast = _twins[pattern] if pattern in _twins else twin(pattern)
        if fast is not None:
            return fast.search(text.lower()) is not None
    return pattern.search(text) is not None


def match(pattern: re.Pattern[str], text: str) -> bool:
    """``pattern.match(text) is not None``, faster for IGNORECASE patterns on ASCII text."""
    if text.isascii():
        fast = _twins[pattern] if pattern in _twins else twin(pattern)
        if fast is not None:
            return fast.match(text.lower()) is not None
    return pattern.match(text) is not None


__all__ = ["match", "search", "twin"]
