"""Text folded for comparison: compatibility forms, invisible characters and confusables.

A check that looks for a word ("verified") must find it however it is written: in
mathematical bold or full-width letters (NFKC folds those), with a zero-width space or a soft
hyphen inside (format characters are dropped), with a Cyrillic ``Е`` or a Greek ``ο`` in place
of a Latin letter (the Unicode confusables data, via :mod:`confusable_homoglyphs`, maps each
such character to the Latin letter it imitates), or with combining accents (dropped after
decomposition). The result is for *matching* only; nothing folded is ever stored.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from confusable_homoglyphs import confusables

#: Unicode general categories removed before matching: format characters (zero-width space,
#: joiners, soft hyphen, bidi controls, tag characters) and non-spacing marks (combining
#: accents, variation selectors), which do not change what a reader sees a word as.
_INVISIBLE = frozenset({"Cf", "Mn", "Me"})


def fold(text: str) -> str:
    """``text`` lowercased, in NFKC, without invisible characters or accents, and with every
    character that imitates a Latin letter replaced by that letter. ASCII text is only
    lowercased (nothing else in it can change)."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text)
    text = "".join(_latin(c) for c in text)
    text = unicodedata.normalize("NFKD", text)
    kept = (c for c in text if unicodedata.category(c) not in _INVISIBLE)
    return unicodedata.normalize("NFKC", "".join(kept)).lower()


@lru_cache(maxsize=4096)
def _latin(char: str) -> str:
    """The Latin letter ``char`` is confusable with, or ``char`` itself."""
    if char.isascii():
        return char
    found = confusables.is_confusable(char, greedy=True)
    if not found:
        return char
    for glyph in found[0]["homoglyphs"]:
        candidate: str = glyph["c"]
        if candidate.isascii():
            return candidate
    return char


__all__ = ["fold"]
