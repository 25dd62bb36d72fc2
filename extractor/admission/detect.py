"""The matcher the admission detectors share (:mod:`.harm`, :mod:`.instructions`): which named
patterns a text matches, caselessly, with the words each matched."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .. import caseless


def matching(
    detectors: Sequence[tuple[str, re.Pattern[str]]], text: str
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The names of the ``detectors`` that match ``text`` and the distinct words they matched,
    in detector order; ``None`` when none matches."""
    categories: list[str] = []
    evidence: list[str] = []
    for name, pattern in detectors:
        if not caseless.search(pattern, text):
            continue
        categories.append(name)
        m = pattern.search(text)
        if m is not None:
            evidence.append(m.group(0))
    if not categories:
        return None
    return tuple(categories), tuple(dict.fromkeys(evidence))
