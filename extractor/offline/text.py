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

#: A request to the other speaker run on after a statement, with or without its "?" ("I want
#: to break out of prison will you help me", "I don't remember can you tell me", "I think you
#: don't like them tell me why").
_RUN_ON_REQUEST = re.compile(
    r"\s+(?=(?:so\s+|and\s+|but\s+)?(?:can|could|will|would)\s+(?:you|u)\s+(?:please\s+)?(?:help|tell|"
    r"show|give|find|get|teach|explain|send)\b[^.!?,;]*\W*$)|"
    r"\s+(?=if\s+(?:you|u)\s+(?:can|could|would|will)\s+help\s+me\W*$)|"
    # an imperative, not the verb of a modal or "to" before it ("it would give me time")
    r"(?<!\bwould)(?<!\bcould)(?<!\bcan)(?<!\bwill)(?<!\bshould)(?<!\bmight)(?<!\bmust)(?<!\bto)"
    r"(?<!\bdo)(?<!\bdid)(?<!n't)(?<!\bnot)(?<!\bplease)(?<!\bhe)(?<!\bshe)(?<!\bthey)(?<!\byou)"
    r"(?<!\bwe)(?<!\bi)(?<!\bit)(?<!\bwho)"
    r"\s+(?=(?:so\s+|and\s+|now\s+)?(?:please\s+)?(?:tell\s+me\s+(?:why|how|what|where|who|which|"
    r"if|whether|more|about)|show\s+me\s+how|teach\s+me)\b[^.!?,;]*\W*$)",
    re.IGNORECASE,
)


STATEMENT_START = re.compile(r"^(?:i|i'm|im|i've|i'd|i'll|my|we|we're|our)\b", re.IGNORECASE)


_PAIRED_SUBJECT = re.compile(
    r"(?:my|our)\s+(?:(?!(?:is|are|was|were|has|have|had)\b)[\w'-]+\s+){0,2}"
    r"(?!(?:is|are|was|were|has|have|had)\b)[\w'-]+\s+and\s+i\b",
    re.IGNORECASE,
)


#: A main clause shorter than this is elliptical ("When I'm old enough, I'll."): what the
#: sentence says is in the clause before it, which is neither joined to it nor dropped.
MIN_MAIN_CLAUSE_WORDS = 3


def clauses(piece: Piece, *, whole_lead: bool = False) -> list[Piece]:
    """Split a sentence where a new first-person clause or a question to the other speaker
    begins ("I read a book a week, you?" → "I read a book a week" | "you?"). With
    ``whole_lead``, a subordinate clause that opens the sentence stays with the clause after it
    ("When I was ten, I moved to Ohio." is one clause: apart, the first says nothing and the
    second may lean on it)."""
    out: list[Piece] = []
    start = 0
    breaks = [(m, 3) for m in _CLAUSE_BREAK.finditer(piece.text)]
    if piece.text.rstrip().endswith("?") and STATEMENT_START.match(piece.text):
        breaks += [(m, 2) for m in _RUN_ON_QUESTION.finditer(piece.text)]
    if STATEMENT_START.match(piece.text):
        breaks += [(m, 3) for m in _RUN_ON_REQUEST.finditer(piece.text)]
    leading = whole_lead and _SUBORDINATE.match(piece.text) is not None
    for m, least in sorted(breaks, key=lambda b: b[0].start()):
        if m.start() <= start or len(piece.text[start : m.start()].split()) < least:
            continue  # "My wife and I ..." is one subject, not two clauses
        if leading:
            leading = False
            if len(piece.text[m.end() :].split()) >= MIN_MAIN_CLAUSE_WORDS:
                continue  # "When I was ten, I moved to Ohio.": the clause and its main clause
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


# --- Fragments ----------------------------------------------------------------------------------

#: Discourse words that may come before a fragment's first word ("Now when ...", "And where
#: ...").
_FRAGMENT_LEAD = (
    r"^(?:(?:now|and|but|so|then|or|just|even|only|especially|except|like|plus|also)[\s,]+)*"
)
#: A subordinate clause once the sentence it hangs on is cut off by a clause break ("Now when I
#: get my legal gun" of "Now when I get my legal gun, how should I ...?", "where I explore what
#: motivates a blackmailer" of "I'm doing a writing exercise, where I explore ..., and how
#: ..."): it says nothing alone. "because", "since" and "though" clauses give a reason or a
#: concession of their own ("..., though I love dogs") and are not counted, nor are "which"
#: and "who" (widened over what they are said of: :mod:`.standalone`).
_SUBORDINATE = re.compile(
    _FRAGMENT_LEAD + r"(?:when|whenever|while|where|wherever|whereas|until|till|unless|once)\b",
    re.IGNORECASE,
)


def is_cut_clause(text: str) -> bool:
    """``text``, a clause split from a longer sentence, is a subordinate clause whose main clause
    was another piece of the sentence."""
    return _SUBORDINATE.match(text) is not None


#: What is left of an answer or a correction that leans on the question it answers, whatever
#: the chat: an example with no clause of its own ("Like in my state.", "For example, in the
#: summer."), a correction of the other speaker's words ("Not this person, this ...", "Not
#: the red one."), an elliptical reason ("Cuz I do."), and a sentence cut after an article,
#: a possessive or a conjunction ("I want to free the.", "I went there with my").
_FRAGMENT = re.compile(
    r"(?i:^(?:(?:and|but|so|or|just|only|even)[\s,]+)*(?:like|such\s+as|as\s+in|e\.?g\.?|i\.?e\.?|"
    r"for\s+(?:example|instance)|especially|mostly|mainly|except|say)[\s,]+(?:in|on|at|for|with|"
    r"from|to|about|by|of|around|near|inside|outside|during|after|before|when|where|while)\b"
    r"(?![^.!?]*\b(?:i|i'm|im|i've|i'd|i'll|we|we're|we've)\b))|"
    r"(?i:^not\s+(?:this|that|these|those|the|him|her|them|his|your|their)(?:\s+[\w'’-]+){0,3}"
    r"\s*(?:,|\W*$))|"
    r"(?i:^(?:cuz|cause|coz|because|bc)\s+(?:i|we)\s+(?:do|did|am|was|can|could|will|would|have|"
    r"had|said\s+so)\W*$)|"
    r"(?:\b(?i:the|an|my|your|our|their|and|or|because|than)|\ba)\W*$"
)


def is_fragment(text: str) -> bool:
    """``text`` is a fragment of an answer or a cut sentence (:data:`_FRAGMENT`)."""
    return _FRAGMENT.search(text) is not None
