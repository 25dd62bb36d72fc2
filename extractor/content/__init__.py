"""Checks of what a candidate *says*: its text folded for comparison, certification claims,
secrets, and whether a proposition is faithful to its quote.

These are pure functions of the candidate's text and its source; :mod:`extractor.validation`
calls them and turns each problem into a rejection code.
"""

from __future__ import annotations

from .masking import MASK, Redaction, mask_text, masked_conversation
from .secrets import Secret, find_secrets, redact
from .unicode import fold

__all__ = [
    "MASK",
    "Redaction",
    "Secret",
    "find_secrets",
    "fold",
    "mask_text",
    "masked_conversation",
    "redact",
]
