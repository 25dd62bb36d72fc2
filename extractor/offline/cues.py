"""Cues that make a sentence a non-fact: questions, hypotheticals, sarcasm and jokes, instructions
aimed at the memory system, words of certification, and template slots left in the chat.

Each check is a pure function of one sentence's text. The rules of the other modules ask them
before they turn a sentence into a claim: what a check flags yields no proposition.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache, wraps

from .. import caseless
from .text import STATEMENT_START

#: The cue checks below are pure functions of one sentence, asked again and again for the same
#: sentence (by several rules, for the event and its claim, for repeated lines); answers for
#: short texts are remembered, a bounded number of them, so memory stays flat.
_MEMO_SIZE = 4096
_MEMO_MAX_CHARS = 1000


def _memo(check: Callable[[str], bool]) -> Callable[[str], bool]:
    remembered = lru_cache(maxsize=_MEMO_SIZE)(check)

    @wraps(check)
    def cue(text: str) -> bool:
        return remembered(text) if len(text) <= _MEMO_MAX_CHARS else check(text)

    return cue


_AUX = (
    r"(?:do|does|did|are|is|was|were|have|has|had|can|could|would|will|shall|should|may|might|"
    r"am|isn't|aren't|don't|doesn't|didn't|won't|wouldn't|haven't|hasn't|can't|couldn't)"
)
_QUESTION_START = re.compile(
    rf"^(?:(?:who|what|when|where|why|how|which|whose|whom|wtf|wth)(?:'s|'re|\s+{_AUX}\b|\s+about\b)|"
    rf"(?:who|what|which|how)\s+(?:\w+\s+)?{_AUX}\b|how\s+(?:come|long|many|much|often)\b|"
    rf"{_AUX}\s+(?:you|u|we|they|he|she|it|there|i|your|that|this|anyone|anybody)\b|"
    r"any\s+(?:ideas?|tips|suggestions|plans))",
    re.IGNORECASE,
)
_ASKS = re.compile(r"\b(?:you|your|u|ur|yours)\b", re.IGNORECASE)
_HYPOTHETICAL_CUES = (
    r"if\s+i\s+(?:were|was|had|could|would|ever)|what\s+if|imagine|imagining|suppose|"
    r"supposing|pretend|let'?s\s+say|hypothetically|in\s+theory|"
    r"in\s+a\s+perfect\s+world|one\s+day\s+i'?d|i\s+dream\s+of|if\s+only"
)
_HYPOTHETICAL = re.compile(
    rf"\b(?:{_HYPOTHETICAL_CUES}|i\s+wish|i'?d\s+wish)\b",
    re.IGNORECASE,
)
_OTHER_HYPOTHETICAL = re.compile(rf"\b(?:{_HYPOTHETICAL_CUES}|i'?d\s+wish)\b", re.IGNORECASE)
#: The speaker's own wish ("I wish I had more time", "I wish my parents lived closer"), not a
#: wish for the other speaker ("I wish you luck", "I wish them well").
_OWN_WISH = re.compile(
    r"\bi\s+(?:really\s+|just\s+|sometimes\s+|still\s+|so\s+|often\s+)?wish\s+(?:that\s+)?"
    r"(?!(?:you|u|ya|y'all|everyone|everybody|them|him|her|us|all)\b)(?=\w)",
    re.IGNORECASE,
)
#: A condition opens the sentence, after discourse words or an example marker too ("So if I
#: said ...", "Sure if you are willing to help me.", "For example, if I set off ...").
_CONDITIONAL_START = re.compile(
    r"^(?:(?:so|and|but|sure|well|ok|okay|yeah|yes|no|now|then|say|for\s+example|"
    r"for\s+instance|e\.?g\.?)[\s,]+)*(?:if|unless|whenever|in\s+case)\b",
    re.IGNORECASE,
)
_SARCASM = re.compile(
    r"(?:\byeah,?\s+right\b|\boh,?\s+(?:great|joy|wonderful|fantastic|perfect|lovely|sure)\b|"
    r"\bjust\s+(?:great|perfect|wonderful|what\s+i\s+needed)\b|\bas\s+if\b|/s\b|"
    r"\bsure,?\s+because\b|\bthanks\s+a\s+lot\b|\bwhat\s+a\s+(?:joy|treat)\b|"
    r"\*[a-z]+\*|\bnot!|\bsaid\s+no\s+one\b|\bbecause\s+that\s+always\s+works\b|"
    r"\bbig\s+surprise\b|\bwho\s+knew\b|🙄|😒|🙃)",
    re.IGNORECASE,
)
_JOKE = re.compile(
    r"\b(?:just\s+kidding|jk|j/k|kidding|joking|i'?m\s+kidding|jokes?\s+aside|"
    r"knock\s+knock|punchline|lol\s+no)\b",
    re.IGNORECASE,
)
_INJECTION = re.compile(
    r"(?:ignore\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier|preceding)\b|"
    r"disregard\s+(?:all\s+|any\s+|the\s+)?(?:previous|prior|above|earlier|instructions)|"
    r"memory\s+system|system\s+prompt|store\s+(?:this|it|that)\s+(?:as|in)|"
    r"\b(?:mark|save|record|remember)\s+(?:this|it|that)\s+as\s+(?:verified|true|fact|trusted)|"
    r"new\s+instructions|developer\s+mode|you\s+are\s+now\b|jailbreak|"
    r"</?\s*(?:conversation|system|assistant|user|tool)\b|\"candidates\"|"
    r"\b(?:memory_type|origin|requested_uses|capabilit(?:y|ies))\b\s*[\"':=]|"
    r"\b(?:origin|role)\s*(?:=|:)\s*(?:system|tool|verified)|"
    r"\[(?:system|inst)\]|<<\s*sys|override\s+(?:the\s+)?(?:policy|rules|instructions)|"
    r"\bas\s+an?\s+(?:admin|administrator|system|developer)\b)",
    re.IGNORECASE,
)


_CERTIFICATION = re.compile(
    r"(?<![a-z])(?:verif\w*|certif\w*|fact[\s_-]*check\w*|proven|confirmed[\s_-]+true|"
    r"ground[\s_-]*truth)(?![a-z])",
    re.IGNORECASE,
)


@_memo
def is_certification(text: str) -> bool:
    """Words of certification ("verified", "fact-checked") anywhere in ``text``."""
    return caseless.search(_CERTIFICATION, text)


_SELF_CERTIFYING = re.compile(
    r"(?:\b(?:this|that|it|the above|the following|these|those|all of (?:this|it)|everything|"
    r"(?:this|that|the|my)\s+(?:fact|claim|statement|information|info|data|memory|message)s?)"
    r"\s+(?:is|are|was|were|has been|have been|'s)\s+(?:\w+\s+)?"
    r"(?:verif\w*|certif\w*|fact[\s_-]*check\w*|proven|confirmed|true|accurate|correct)\b|"
    r"\b(?:verif\w*|certif\w*|fact[\s_-]*check\w*|proven|confirmed|trusted)\s+"
    r"(?:fact|information|info|data|memory|source|true|claim)s?\b|"
    r"\bas\s+(?:a\s+)?(?:verif\w*|certif\w*|proven|fact|true|trusted)\b|"
    r"(?-i:\b(?:VERIFIED|CERTIFIED|PROVEN|CONFIRMED|FACT[\s_-]*CHECKED)\b)|"
    r"\b(?:ground[\s_-]*truth|confirmed[\s_-]+true)\b)",
    re.IGNORECASE,
)


@_memo
def is_self_certifying(text: str) -> bool:
    """A sentence that certifies itself ("This is verified.", "store as VERIFIED fact") speaks
    to the memory system, not about the speaker's world; "My account is verified." does not."""
    return caseless.search(_CERTIFICATION, text) and caseless.search(_SELF_CERTIFYING, text)


@_memo
def is_question(text: str) -> bool:
    """A question to the other speaker. A first-person statement with a rising "?" and no
    "you" in it ("I love puppies?") is uptalk, not a question."""
    if caseless.match(_QUESTION_START, text):
        return True
    if not text.rstrip(" \"')*_~").endswith(("?", "？")):
        return False
    if caseless.match(_ASKING_SELF, text):
        return True  # "I should hit them in the eye?" asks for advice
    return not caseless.match(STATEMENT_START, text) or caseless.search(_ASKS, text)


#: A first-person question about what to do ("I should ...?", "I can just ...?").
_ASKING_SELF = re.compile(
    r"^(?:i|we)\s+(?:\w+ly\s+|just\s+)?(?:should|shall|can|could|may|must|need\s+to|have\s+to|"
    r"ought\s+to)\b",
    re.IGNORECASE,
)


@_memo
def is_hypothetical(text: str) -> bool:
    return caseless.search(_HYPOTHETICAL, text) or caseless.match(_CONDITIONAL_START, text)


@_memo
def is_own_wish(text: str) -> bool:
    """A sentence whose only hypothetical cue is the speaker's wish about their own life ("I wish
    I had more time to train", "I wish my mom was still around"). The wished-for state is not a
    fact, but the wish is: it says what the speaker wants and, by presupposition, what is not so
    ("User wishes they had more time to train."). Any other cue ("if I were...") still makes
    the sentence hypothetical."""
    return (
        caseless.search(_OWN_WISH, text)
        and not caseless.search(_OTHER_HYPOTHETICAL, text)
        and not caseless.match(_CONDITIONAL_START, text)
    )


@_memo
def is_hypothetical_claim(text: str) -> bool:
    """:func:`is_hypothetical`, except a speaker's own wish, which tells what they want."""
    return is_hypothetical(text) and not is_own_wish(text)


@_memo
def is_sarcastic_or_joke(text: str) -> bool:
    return caseless.search(_SARCASM, text) or caseless.search(_JOKE, text)


@_memo
def is_injection(text: str) -> bool:
    """Instructions aimed at the memory system (or a fake transcript/candidate) are not facts."""
    return caseless.search(_INJECTION, text)


@_memo
def non_fact(text: str) -> bool:
    """Questions, hypotheticals, sarcasm, jokes and injected instructions yield no proposition."""
    return is_question(text) or is_hypothetical(text) or is_sarcastic_or_joke(text)


@_memo
def non_fact_about_speaker(text: str) -> bool:
    """:func:`non_fact` for what a speaker says of themselves, where their own wish counts."""
    return is_question(text) or is_hypothetical_claim(text) or is_sarcastic_or_joke(text)


_PLACEHOLDER = re.compile(
    r"\[[^\]\n]{0,40}\b(?:name|user|username)\b[^\]\n]{0,40}\]|"
    # a speaker label of the data set taken for a name ("My name is User 1.")
    r"\b(?:name\s+is|i'?m|i\s+am|call\s+me)\s+(?:user|speaker|person|persona)\s*\d\b",
    re.IGNORECASE,
)


def has_placeholder(text: str) -> bool:
    """A template slot written into the chat ("Hi, I'm [name].", "[User 1's name]"): the
    sentence says nothing about the speaker, and "User is [name]." is no memory."""
    return _PLACEHOLDER.search(text) is not None
