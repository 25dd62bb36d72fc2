"""Text handling for the offline model: sentence and clause spans, and discourse openers.

Every span here is a pair of code-point offsets into :attr:`Message.text`, and only text that
lies outside the message's placeholders (``[image]`` and the like) is ever segmented, so a span
built from these pieces is always quotable. Nothing in this module guesses: a sentence is either
kept with exact offsets or dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..content.sentences import quotable_ranges, split
from ..conversation import Message


@dataclass(frozen=True)
class Piece:
    """A sentence (or line) of a message: ``text == message.text[start:end]``."""

    start: int
    end: int
    text: str


_EDGE_PUNCT = " \t\r\n\"'“”‘’*_-–—•·>#([{"
_TRAIL_STRIP = " \t\r\n,;:-–—"
#: Lines (tool output) lose only surrounding whitespace: a JSON object keeps its leading '{"'.
_SPACE = " \t\r\n"


def text_ranges(message: Message) -> list[tuple[int, int]]:
    """The parts of ``message.text`` that may be quoted (everything but placeholders)."""
    return quotable_ranges(len(message.text), message.placeholder_ranges)


def sentences(message: Message) -> list[Piece]:
    """The sentences of a message's quotable text, trimmed, with exact offsets."""
    text = message.text
    out: list[Piece] = []
    for lo, hi in text_ranges(message):
        out.extend(_split(text, lo, hi))
    return out


def lines(message: Message) -> list[Piece]:
    """Non-blank lines of a message's quotable text (tool output is line-oriented)."""
    text = message.text
    out: list[Piece] = []
    for lo, hi in text_ranges(message):
        start = lo
        for m in re.finditer(r"\n", text[lo:hi]):
            piece = trim(text, start, lo + m.start(), _SPACE, _SPACE)
            if piece is not None:
                out.append(piece)
            start = lo + m.end()
        piece = trim(text, start, hi, _SPACE, _SPACE)
        if piece is not None:
            out.append(piece)
    return out


def _split(text: str, lo: int, hi: int) -> list[Piece]:
    """The trimmed sentences of ``text[lo:hi]``, cut where the gate cuts them
    (:func:`~extractor.content.sentences.split`)."""
    pieces = (trim(text, start, end) for start, end in split(text, lo, hi))
    return [piece for piece in pieces if piece is not None]


def trim(
    text: str, start: int, end: int, lead: str = _EDGE_PUNCT, trail: str = _TRAIL_STRIP
) -> Piece | None:
    """Strip surrounding whitespace and stray punctuation; ``None`` if nothing is left."""
    while start < end and text[start] in lead:
        start += 1
    while end > start and text[end - 1] in trail:
        end -= 1
    if end <= start or not any(ch.isalnum() for ch in text[start:end]):
        return None
    return Piece(start, end, text[start:end])


def sub_piece(piece: Piece, start: int, end: int | None = None) -> Piece | None:
    """A trimmed part of ``piece``; offsets are relative to the piece's own text."""
    stop = len(piece.text) if end is None else end
    inner = trim(piece.text, start, stop)
    if inner is None:
        return None
    return Piece(piece.start + inner.start, piece.start + inner.end, inner.text)


_CLAUSE_BREAK = re.compile(
    r"(?:[,;:]|\s+-+|\s+–|\s+—)\s+(?=(?:(?:and|but|so|plus|though|although|because)\s+)?"
    r"(?:i|i'm|im|i've|i'd|i'll|my|we|we're|what|how|how's|do you|did you|are you|have you|"
    r"is it|is that|you|where|who|why|when|which|would you|does|can you|could you|any)\b)|"
    r"\s+(?=(?:but|so|although|though|whereas|while|and)\s+(?:i|i'm|my|we)\b)|"
    r",\s+(?=so\b)",
    re.IGNORECASE,
)
#: An unpunctuated question to the other speaker after a statement ("I'm 19 how old are you?").
_RUN_ON_QUESTION = re.compile(
    r"\s+(?=(?:how|what|where|why|when|which|who)\b[^.!?,;]*\b(?:you|u|your)\b[^.!?]*\?\W*$)|"
    r"\s+(?=(?:do|did|are|have|would|can|could|will|were)\s+(?:you|u)\b[^.!?]*\?\W*$)",
    re.IGNORECASE,
)


STATEMENT_START = re.compile(r"^(?:i|i'm|im|i've|i'd|i'll|my|we|we're|our)\b", re.IGNORECASE)


_PAIRED_SUBJECT = re.compile(
    r"(?:my|our)\s+(?:(?!(?:is|are|was|were|has|have|had)\b)[\w'-]+\s+){0,2}"
    r"(?!(?:is|are|was|were|has|have|had)\b)[\w'-]+\s+and\s+i\b",
    re.IGNORECASE,
)


def clauses(piece: Piece) -> list[Piece]:
    """Split a sentence where a new first-person clause or a question to the other speaker
    begins ("I read a book a week, you?" → "I read a book a week" | "you?")."""
    out: list[Piece] = []
    start = 0
    breaks = [(m, 3) for m in _CLAUSE_BREAK.finditer(piece.text)]
    if piece.text.rstrip().endswith("?") and STATEMENT_START.match(piece.text):
        breaks += [(m, 2) for m in _RUN_ON_QUESTION.finditer(piece.text)]
    for m, least in sorted(breaks, key=lambda b: b[0].start()):
        if m.start() <= start or len(piece.text[start : m.start()].split()) < least:
            continue  # "My wife and I ..." is one subject, not two clauses
        paired = _PAIRED_SUBJECT.match(piece.text, start)
        if paired and m.end() <= paired.end():
            continue  # nor is "My husband Marco and I ..."
        part = sub_piece(piece, start, m.start())
        if part is not None:
            out.append(part)
        start = m.end()
    part = sub_piece(piece, start)
    if part is not None:
        out.append(part)
    return out


# --- Discourse openers --------------------------------------------------------------------------

_STRONG_OPENERS = (
    r"yes|yeah|yea|yep|yup|nope|nah|oh+|ahh*|aw+|wow|ha(?:ha)+|he(?:he)+|lol|lmao|hmm+|um+|uh+|"
    r"ok|okay|hi|hello|hey|thanks|thank you|omg|ugh|gosh|whoa|yikes|hehe|hah|"
    r"congrats|congratulations|kudos|bravo|way to go|"
    r"good (?:morning|afternoon|evening|night|day)(?=\s*[,!.]|\s*$)"
)
_WEAK_OPENERS = (
    r"no|well|so|and|but|also|anyway|sure|cool|nice|great|awesome|neat|actually|honestly|true|"
    r"right|same|me too|same here|agreed|indeed|of course|definitely|absolutely|totally|really|"
    r"man|dude|alright|all right|interesting|good|fine|exactly|haha"
)
_OPENER = re.compile(
    rf"^(?:(?:(?:{_STRONG_OPENERS})(?:[\s,!.…:;~-]+|$)|"
    rf"(?:{_WEAK_OPENERS})(?:[\s]*[,!.…:;~-]+\s*|\s+(?=(?:i|my|we|our)\b)|$)))+",
    re.IGNORECASE,
)


_GREETING = re.compile(
    r"\b(?:hi|hello|hey|thanks|thank you|good (?:morning|afternoon|evening|night|day))\b",
    re.IGNORECASE,
)
#: Whom a greeting is addressed to ("Hi there,", "Hello, my friend.", "Hey Gina,"), which says
#: nothing about the speaker: "Hello, my friend." is not "User's friend."
_VOCATIVE = re.compile(
    r"^(?:(?i:my\s+(?:friend|dear|love)|there|friend|buddy|pal|guys|everyone|all|man|dude|bro|"
    r"mate|dear|sweetie|honey|ai\s+companion)|(?!I\b)[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
    r"(?:[\s]*[,!.…:;~-]+\s*|\s*$)"
)
#: A pleasantry or a question tag after the statement ("I'm Susan, nice to meet you.", "I like
#: bad words do you"): not part of the claim.
_TAIL = re.compile(
    r"(?:,?\s+(?:(?:it'?s\s+)?(?:nice|good|great|pleased|glad)\s+to\s+(?:meet|see|hear from)\s+"
    r"(?:you|u|ya)(?:\s+too)?|(?:do|and|how\s+about|what\s+about)\s+(?:you|u)))\W*$",
    re.IGNORECASE,
)


def strip_opener(piece: Piece) -> Piece | None:
    """Drop interjections at the start ("Yeah, wow! I live in Porto" → "I live in Porto"), whom
    a greeting addresses ("Hey Gina, I moved" → "I moved"), and a closing pleasantry or question
    tag ("I'm Susan, nice to meet you." → "I'm Susan")."""
    m = _OPENER.match(piece.text)
    out: Piece | None = piece
    if m and m.end():
        out = sub_piece(piece, m.end())
        if out is not None and _GREETING.search(m.group(0)):
            vocative = _VOCATIVE.match(out.text)
            if vocative:
                out = sub_piece(out, vocative.end())
    if out is not None and (tail := _TAIL.search(out.text)) and tail.start() > 0:
        out = sub_piece(out, 0, tail.start())
    return out
