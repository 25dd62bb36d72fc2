"""What the offline model takes from an assistant message: its claims, as MODEL_INFERENCE.

Only declarative claims are kept, verbatim (hedges included). The model does not turn the
assistant's text into facts about the user: a sentence about the user whose content words are
mostly the user's own ("So your manager is Alice.") is an echo of what the user said -- the
user's own statement is the source -- and yields nothing. A claim about the user that the user
never made ("Your flight UA 915 departs at 9:40 AM.") is the model's own inference, and is kept
as MODEL_INFERENCE: that is exactly what must not pass for a user fact. Pleasantries, remarks on
what was just said, offers, advice, questions and the assistant talking about itself ("I can
help with that") yield nothing.
"""

from __future__ import annotations

import re
from collections.abc import Set

from ..conversation import Message
from ..vocab import CandidateKind, Capability, MemoryType, Origin
from .cues import is_certification, is_injection, non_fact
from .draft import Draft, Group, keep_uncertainty, temporal_for, uncertainty_for
from .english import finish
from .entities import entities_in
from .text import sentences, strip_opener

MIN_WORDS = 4

_SELF = re.compile(
    r"\b(?:i|me|my|mine|myself|i'm|i've|i'd|i'll|we|us|our|let's)\b|\b[Ii]['’](?:m|ve|d|ll)\b",
    re.IGNORECASE,
)
_ADDRESSED = re.compile(
    r"\b(?:you|your|yours|yourself|you're|you've|you'd|you'll|u|ur)\b", re.IGNORECASE
)
#: Advice, offers and wishes addressed to the user ("you should", "you can", "you might").
_ADVICE = re.compile(
    r"\b(?:you|u)(?:'ll|'d|\s+(?:should|could|can|might|may|will|would|need|must|want|"
    r"might\s+want|ought|could\s+try))\b|\b(?:if|when|unless)\s+you\b|\bfor\s+you\b|"
    r"\b(?:help|let|make|allow|get)\s+(?:you|u)\b|"
    r"\bon\s+your\s+(?:move|new|promotion|wedding|birthday|success)|\byour\s+(?:call|choice)\b",
    re.IGNORECASE,
)
_CONTENT_WORD = re.compile(r"[A-Za-z0-9][\w'’.-]*")
_FUNCTION_WORDS = frozenset(
    re.findall(
        r"\S+",
        """a an the and or but so of to in on at for with from by as is are was were be been has
        have had do does did you your yours you're you've u ur it its it's that this these those
        there here very just also still really so too not no""",
    )
)
#: Common English words: a sentence with none of them is not English, and the rules are English.
_ENGLISH = re.compile(
    r"\b(?:the|a|an|is|are|was|were|of|to|in|on|and|for|with|at|has|have|it|that|this|can|will|"
    r"be|by|from|your|you)\b",
    re.IGNORECASE,
)
ECHO_SHARE = 0.6
_PLEASANTRY = re.compile(
    r"^(?:(?:that|this|it|what|how)(?:'s|\s+is|\s+was|\s+sounds|\s+seems|\s+looks)?\s+(?:\w+\s+)?"
    r"(?:great|good|nice|cool|awesome|wonderful|amazing|fun|interesting|lovely|fantastic|"
    r"exciting|terrible|awful|sad|tough|hard|rough|funny|sweet|neat|impressive|crazy|true|"
    r"fair|right|perfect|understandable|a good idea|a great idea)|"
    r"(?:thanks|thank|sure|certainly|of course|absolutely|glad|sorry|welcome|good luck|"
    r"congrat\w*|happy to|no problem|no worries|here is|here's|here are|hope|understood|noted|"
    r"got it|will do|okay|ok|great|nice|wonderful|awesome)\b|"
    # a remark on what was just said ("That would be a big change.", "Those are solid choices.")
    r"(?:that|this|those|these)(?:'s|\s+(?:is|are|was|were|would\s+be|will\s+be|sounds?|"
    r"seems?|looks?))\b)",
    re.IGNORECASE,
)
_PREDICATE = re.compile(
    r"\b(?:is|are|was|were|has|have|had|will|would|can|could|may|might|must|should|does|did|"
    r"\w+s|\w+ed|costs?|contains?|holds?|runs?|takes?)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(?:try|make|let|feel|remember|check|go|take|keep|use|consider|don't|do|be|have|see|"
    r"note|please|click|run|open|follow|avoid|ask|call|visit|look|read|enjoy|tell)\b",
    re.IGNORECASE,
)


def assistant_groups(
    message: Message, said_before: Set[str] = frozenset(), asked: str = ""
) -> list[Group]:
    """The assistant's claims; ``said_before`` holds the words of the user's and the tools'
    earlier text (:func:`words_of`), to tell an echo ("So your manager is Alice.") from a claim
    about the user that nobody made ("Your flight departs at 9:40 AM."). ``asked`` is the
    user's message before this one.

    A claim about the world bears on the user only when it answers what the user asked (a
    figure for something the question named: "What was Q3 revenue?" -> "Q3 revenue was
    approximately $46 million.") or when the application put the answer through its
    response-commitment decision (``commitment`` PERMIT or HOLD: an answer the product released
    or held back, which must never come back as a fact). Otherwise it is the assistant's
    knowledge, explanation or story ("Both the South and the North were victims of war.") and
    no memory of the user's.
    """
    if is_injection(message.text):
        return []
    decided = message.commitment is not None
    question = asked if "?" in asked or "？" in asked else ""
    groups: list[Group] = []
    for raw in sentences(message):
        piece = strip_opener(raw)
        if piece is None or not is_claim(piece.text, said_before):
            continue
        if not (decided or about_user(piece.text) or answers(piece.text, question)):
            continue
        content = keep_uncertainty(piece.text, finish(piece.text))
        draft = Draft(
            message_id=str(message.id),
            piece=piece,
            kind=CandidateKind.PROPOSITION,
            memory_type=MemoryType.MODEL_INFERENCE,
            content=content,
            origin=Origin.MODEL_OUTPUT,
            temporal=temporal_for(piece.text, message.timestamp),
            entities=entities_in(piece.text),
            requested_uses=[Capability.CONVERSATIONAL_CONTEXT],
            uncertainty=uncertainty_for(piece.text),
        )
        groups.append(Group([draft], priority=2))
    return groups


def is_claim(text: str, user_words: Set[str] = frozenset()) -> bool:
    """A declarative statement about the world ("Q3 revenue was approximately $46 million."),
    or about the user that the user never made ("Your flight UA 915 departs at 9:40 AM."): the
    model's inference, which must never pass for a fact. A generality or a rating with nothing
    specific in it ("Museums are very interesting places.") is not worth a memory.

    Not chit-chat, not the assistant talking about itself, not advice or offers, not an echo
    of what the user said, not an evaluative remark on it ("The mountains are great.").
    """
    if len(text.split()) < MIN_WORDS or non_fact(text) or is_certification(text):
        return False
    if _SELF.search(text) or _PLEASANTRY.match(text) or _IMPERATIVE.match(text):
        return False
    if not _ENGLISH.search(text) or _EVALUATIVE.match(text):
        return False
    if _ADDRESSED.search(text) and (_ADVICE.search(text) or _is_echo(text, user_words)):
        return False  # advice, or what the user said: no new claim
    if _ABOUT_EXCHANGE.search(text) or _RATING.search(text):
        return False
    if not _ADDRESSED.search(text) and not _SPECIFIC.search(text):
        return False  # a generality ("Traveling is a way to relax"): nothing to remember
    return bool(_PREDICATE.search(text)) and not text.rstrip().endswith("!")


def about_user(text: str) -> bool:
    """A claim whose subject is the user or the user's things ("Your flight UA 915 departs at
    9:40 AM.", "You have a dentist appointment at 15:30."), with something specific in it."""
    return bool(_ABOUT_USER.match(text)) and bool(_SPECIFIC.search(text))


def answers(text: str, question: str) -> bool:
    """A figure ("$46 million", "28°C") given for something the user's question named: what the
    user asked for. A name alone is a topic ("How do I buy Xanax?" -> "To buy Xanax, ..."),
    not an answer about the user's world."""
    if not question or not re.search(r"\d", text):
        return False
    wanted = {w.lower() for w in _NAMED.findall(question)}
    return any(w.lower() in wanted for w in _NAMED.findall(text))


_ABOUT_USER = re.compile(
    r"^(?:(?:based\s+on|according\s+to)\s+[^,]+,\s*)?(?:your|(?:the\s+)?user(?:'s)?|"
    r"you(?:'re|\s+are|\s+have|'ve|"
    r"\s+had|\s+were|\s+accrue|\s+owe|\s+paid|\s+booked|\s+ordered))\b",
    re.IGNORECASE,
)
#: A number or a capitalized word (not the sentence's first): what names something.
_NAMED = re.compile(r"\b\w*\d[\w.,]*|(?<=\s)(?-i:[A-Z][\w'’-]+)")


#: The assistant talking about the conversation ("You mentioned Tokyo lit you up"), or its
#: impression of the user ("Seems like you are quite the sports enthusiast").
_ABOUT_EXCHANGE = re.compile(
    r"\b(?:you|u)\s+(?:mentioned|said|told|asked|shared|wrote|described|brought up)\b|"
    r"^(?:so\s+)?(?:glad|happy|sorry|seems|sounds|looks|it\s+seems|it\s+sounds)\b|"
    r"^[A-Z][a-z]+,\s",
    re.IGNORECASE,
)
#: A rating ("Your enthusiasm for it is awesome", "Museums are very interesting places").
_RATING = re.compile(
    r"\b(?:awesome|amazing|great|wonderful|impressive|admirable|inspiring|cool|lovely|"
    r"beautiful|fantastic|brave|kind|sweet|talented|interesting|important|fun|exciting|"
    r"relaxing|useful|valuable|meaningful|special|perfect|excellent|incredible|good\s+idea|"
    r"good\s+thing|good\s+way|best\s+way|great\s+way)\b",
    re.IGNORECASE,
)
#: Something specific enough to be a claim rather than a generality: a number, or a name
#: (a capitalized word after the first).
_SPECIFIC = re.compile(r"\d|(?<=\s)(?:[\"“(]?)[A-Z][\w'’.-]*")


#: A short remark that only rates something ("The mountains are great.").
_EVALUATIVE = re.compile(
    r"^(?:the\s+|your\s+)?(?:\w+\s+){0,2}(?:is|are|was|were|looks?|seems?|sounds?)\s+"
    r"(?:so\s+|really\s+|very\s+)?"
    r"(?:great|nice|lovely|beautiful|amazing|awesome|wonderful|fun|cool|fantastic|gorgeous|"
    r"stunning|the best|healthy|good|fine|delicious|tasty|cute|perfect|impressive)\W*$",
    re.IGNORECASE,
)


def words_of(text: str) -> frozenset[str]:
    """The lower-cased words of ``text``, as echo detection compares them."""
    return frozenset(w.lower().strip(".'’") for w in _CONTENT_WORD.findall(text))


def _is_echo(text: str, user_words: Set[str]) -> bool:
    """Most of the sentence's content words were said before (by the user or a tool): an echo
    or a relay, not a new claim."""
    words = [w for w in words_of(text) if w not in _FUNCTION_WORDS]
    if not words:
        return True
    return sum(w in user_words for w in words) >= ECHO_SHARE * len(words)
