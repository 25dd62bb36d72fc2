"""What a user's reply leans on in the other speaker's message: the sentence a ``Told "...",
User replied: "..."`` content quotes, or nothing when no sentence holds it.

A reply whose pro-form has no referent in its own message ("I've always loved them.") is kept
with the other speaker's words quoted, but only when the quotation makes it whole:

* the reply is a whole sentence, never a clause cut out of one ("so it's my way of helping
  out.", "I couldn't figure it out on my own so a group of friends");
* the reply is about the user: a remark on what both speakers share or on people in general,
  in the first person plural with no first person singular ("It's tough when our health holds
  us back.", "It looks like we both have things we enjoy doing."), is not;
* the reply points at nothing shown ("moments like these");
* the words its pro-form needs are not in the user's own message before it (there the
  pro-form leans on the user's own words, which no quotation of the other speaker gives);
* the sentence quoted holds something the pro-form can stand for: a thing for "it" ("Does the
  car belong to you?"), things or a name for "they" ("I love horses."), a person for "her"
  ("Is that the woman from Canada?"); not a sentence that leans on the same pro-form itself
  ("What gave you the idea to paint it?", "They're so beautiful.") nor a pointer of theirs
  ("those hikes", "this wonderful car", "a look"); a sentence leaning on the reply's own
  pro-form ("It has adventures ...") is where the quotation starts only when no other sentence
  holds the referent -- the other speaker's
  sentences are read back from the last, up to :data:`LOOK_BACK`, and the quotation runs from
  the one that holds the referent to the end of the message ("I love horses. They're so
  beautiful and majestic."), preferring one that shares a word with the reply ("... the
  shampoo bottle prank ..." for "I want it to be an epic prank.").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..conversation import Message
from .cues import is_certification
from .text import Piece, sentences

#: How many of the other speaker's sentences, from the last, may hold what a reply leans on.
LOOK_BACK = 3
#: The longest quotation of the other speaker.
MAX_QUOTED_WORDS = 30
#: The longest reply quoted whole; a longer one is quoted up to the comma that ends its clause.
MAX_REPLY_WORDS = 40


@dataclass(frozen=True)
class Replied:
    """The other speaker's message a user message replies to: its text and sentence spans, and
    the default quotation (the last sentence, or the last two when the last is short; ``None``
    when that cannot be quoted: too long, a quotation of its own, a certification word)."""

    text: str
    spans: tuple[tuple[int, int], ...]
    last: str | None

    @property
    def sentences(self) -> tuple[str, ...]:
        return tuple(self.text[lo:hi] for lo, hi in self.spans)

    def since(self, index: int) -> str:
        """The other speaker's words from sentence ``index`` to the end, verbatim."""
        return self.text[self.spans[index][0] : self.spans[-1][1]]


#: What both speakers, or people in general, share ("we both", "our health", "us all").
_SHARED = re.compile(
    r"\b(?:we\s+both|both\s+of\s+us|we\s+all|all\s+of\s+us|us\s+all|each\s+other)\b|"
    r"\bour\s+(?:lives|life|hearts?|health|bodies|body|minds?|souls?|loved\s+ones)\b",
    re.IGNORECASE,
)
_SINGULAR = re.compile(r"\b(?:i|me|my|mine|myself)\b|\bI['’](?:m|ve|d|ll)\b", re.IGNORECASE)
_LIKE_SHOWN = re.compile(r"\b(?:like|such\s+as)\s+(?:these|this)\b", re.IGNORECASE)
#: "it" with a clause after it stands for that clause, not for a thing ("It's so nice to meet
#: someone who ...", "It's knowing that ...").
_EXPLETIVE_IT = re.compile(
    r"\bit(?:['’]s|\s+is|\s+was|\s+feels|\s+seems)\s+(?:[\w-]+\s+){0,3}?"
    r"(?:to|when|that|if|how|because|knowing|seeing|having)\b",
    re.IGNORECASE,
)
#: A pro-form that stands for a thing, things or a person.
_PRO_FORM = re.compile(
    r"\b(?:it|its)\b(?!['’]s\s)|\bit(?=['’]s\s)|^\W*(?:this|that)\b|\b(?:this|that)\W*$|"
    r"\bthat['’]s\b|\b(?:they|them|their|theirs|these|those|both|he|him|his|she|her|hers)\b",
    re.IGNORECASE,
)
#: Nouns that stand for nothing said in words: a picture, a time, a stand-in.
_NOT_A_REFERENT = (
    r"(?:pic|pics|picture|pictures|photo|photos|image|images|shot|shots|snap|one|ones|thing|"
    r"things|stuff|idea|ideas|way|ways|time|times|lot|bit|chance|moment|moments|point|same|rest|"
    r"day|days|others|other|everyone|everything|something|anything|kind|sort)\b"
)
#: Words that name nothing.
_FUNCTION = (
    r"(?:the|a|an|it|its|them|they|that|this|these|those|me|you|your|him|her|us|my|our|their|"
    r"his|what|which|who|how|when|where|why|there|here|then|now|all|any|some|one|ones|mind|"
    r"general|particular|fact|case|order|time|least|most|first|last|any\w*|every\w*|some\w*|"
    r"no\w*)\b"
)
_DETERMINER = (
    r"\b(?:a|an|the|my|your|his|her|our|their|its|some|any|one|two|three|four|five|six|seven|"
    r"eight|nine|ten|\d+|many|several|much|more|few|other|another|every|each|all|these|those|"
    r"that|this|no)\s+(?!" + _NOT_A_REFERENT + r")"
    r"(?:(?!(?:to|of|and|or|in|on|at|with|for|is|was|are|were|be)\b)[\w-]+\s+){0,2}?"
)
#: The noun of a noun phrase: not a stand-in, nor an adjective before one ("a gorgeous pic").
_NOUN = r"(?!" + _NOT_A_REFERENT + r")[a-z][\w-]+(?![\w-])(?!\s+" + _NOT_A_REFERENT + r")"
_NAME = re.compile(r"(?<=\S\s)(?-i:(?!(?:I|I'm|I've|I'd|I'll)\b)[A-Z][\w'-]+)")
#: Words before a name that make it whom the sentence addresses ("Wow Caroline, ...").
_CALLING = re.compile(
    r"(?:hey|hi|hello|wow|thanks|thank\s+you|oh|yes|yeah|congrats|nice\s+one|sorry|well)"
    r"[\s,!]*$",
    re.IGNORECASE,
)
_REFERENTS = (
    # a thing, or what the speaker does ("I do love watching classics.")
    re.compile(
        _DETERMINER + _NOUN + r"|"
        r"\b(?:love|like|enjoy|hate|about|of|for|tried|try|started|go|went|keep|not|quit|stop)"
        r"\s+(?:[a-z]+\s+)?"
        r"(?!(?:being|going|doing|nothing|something|anything|everything)\b)[a-z]{2,}ing\b|"
        # an activity that ends the sentence ("I actually don't paint.", "I love to dance!")
        r"\b(?:don'?t|never|love\s+to|like\s+to|learned\s+to|learning\s+to)\s+"
        r"(?!(?:know|think|have|get|go|see|mind|want|need|like|care|understand|remember|"
        r"believe|really|even|do)\b)[a-z]{4,}\W*$|"
        # a bare noun after a preposition or a verb of taste ("in china", "drink soda")
        r"\b(?:in|with|about|from|at|into|drink|eat|enjoying|play|playing|watch|watching|seen|saw|"
        r"met|heard|love|like|hate)\s+"
        r"(?!" + _FUNCTION + r")[a-z]{3,}\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"(?:" + _DETERMINER + r"|\b(?:love|like|enjoy|play|have|watch|read|see|about|of|"
        r"with|for|and)\s+|^\W*(?!(?:was|has|does|is|thus|always|perhaps|sometimes|"
        r"guess|less|unless)\b))(?!" + _NOT_A_REFERENT + r")[a-z][\w-]*[^siu\W]s\b"
        r"(?!\s+" + _NOT_A_REFERENT + r")",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:mom|mum|mother|dad|father|sister|brother|wife|husband|girlfriend|boyfriend|"
        r"friend|daughter|son|woman|man|lady|guy|girl|boy|partner|boss|teacher|neighbou?r|"
        r"kid|child|baby|aunt|uncle|cousin|grandma|grandpa|doctor|coworker|colleague)\b|"
        # a pet, a ship: "her" for "your cow"
        + _DETERMINER
        + _NOUN,
        re.IGNORECASE,
    ),
)
_WORD = re.compile(r"[a-z][a-z'-]{3,}", re.IGNORECASE)
_COMMON = frozenset(
    re.findall(
        r"\S+",
        "that this them they their there then than with have what when where which would could "
        "should about really just like love much more some very been from your mine also well "
        "always never into make made want know think does even here those these will",
    )
)


def replied_quote(piece: Piece, message: Message, replied: Replied) -> tuple[Piece, str] | None:
    """The whole sentence of ``piece`` and the other speaker's words it is quoted with, or
    ``None`` when no quotation makes the reply whole (see the module docstring)."""
    whole = _whole_sentence(piece, message)
    if whole is not None and len(whole.text.split()) > MAX_REPLY_WORDS:
        # a long sentence: the clause, when it ends where the sentence has a comma or a dash
        whole = piece if message.text[piece.end : piece.end + 1] in ",;:-–—" else None
    if whole is None:
        return None
    text = whole.text
    if _SHARED.search(text) and not _SINGULAR.search(text):
        return None  # "It's tough when our health holds us back.": a remark on all of us
    if _LIKE_SHOWN.search(text):
        return None
    plain = _EXPLETIVE_IT.sub(lambda m: " " * len(m.group()), text)
    pro_form = _PRO_FORM.search(plain)
    if pro_form is None or holds_referent(text[: pro_form.start()]):
        # nothing to resolve, or resolved in the reply itself ("I love music and play it")
        return None if replied.last is None else (whole, replied.last)
    quoted = _quoted(text, replied, pro_form.group())
    return None if quoted is None else (whole, quoted)


def _whole_sentence(piece: Piece, message: Message) -> Piece | None:
    """The sentence ``piece`` is in, with its opener: a reply is quoted whole."""
    for sentence in sentences(message):
        if sentence.start <= piece.start and piece.end <= sentence.end:
            return sentence
    return None


def holds_referent(text: str) -> bool:
    """Whether ``text`` names something a pro-form may stand for: a noun phrase with a
    determiner or a number ("the car", "your cow", "six lottery numbers"), a bare plural after
    a verb or a preposition ("I love horses."), what someone does ("watching classics"), a
    person ("my mom") or a name ("Nirvana"), not whom the sentence addresses ("Nice one,
    Joanna!") nor a stand-in ("the idea", "this pic", "those things")."""
    if any(pattern.search(text) for pattern in _REFERENTS):
        return True
    return any(not _addressed(text, m) for m in _NAME.finditer(text))


#: A demonstrative noun phrase ("those hikes", "this wonderful car", "from that day"): it
#: points at a picture or at words said before, so it is no referent a quotation can give.
_POINTED = re.compile(
    r"\b(?:this|these|those|(?<=\s)(?<!\bso\s)(?<!\bsaid\s)(?<!\bthink\s)(?<!\bknow\s)"
    r"(?<!\bsure\s)(?<!\bhope\s)(?<!\bglad\s)that)"
    r"(?!\s+(?:far|much|many|long|little|big|bad|good|way|kind|sort|type|one|ones|is|was|"
    r"'s|’s)\b)"
    r"(?:\s+(?!(?:and|or|but|is|was|are|were|to|of|in|on|at|for|with|without|from|about|into|"
    r"through|over|after|before|by|as|than|so|too|very|really|just|that|which|who|i|you|me|"
    r"him|her|us|them|we|they|it|must|can|could|would|will|should|have|has|had|do|does|did)\b)"
    r"[\w'-]+){1,3}",
    re.IGNORECASE,
)
#: A light verb's noun ("Take a look at ...", "give it a try"): no thing of the chat.
_LIGHT = re.compile(
    r"\b(?:take|took|taking|have|had|having|give|gave|get|got|make|made)\s+(?:it\s+)?a\s+(?:quick\s+|closer\s+)?"
    r"(?:look|try|shot|go|break|chance|minute|second|guess|blast)\b",
    re.IGNORECASE,
)
#: A pronoun of the other speaker's own, which needs a referent before it in their sentence.
_OWN_PRONOUN = re.compile(
    r"\b(?:it|its|they|them|their|theirs|he|him|his|she|her|hers)\b(?!['’]s\s)|\bit(?=['’]s\s)",
    re.IGNORECASE,
)


#: Pro-forms that stand for the same kind of referent.
_GROUP = {
    **dict.fromkeys(("it", "its", "this", "that"), "it"),
    **dict.fromkeys(("they", "them", "their", "theirs", "these", "those", "both"), "they"),
    **dict.fromkeys(("he", "him", "his"), "he"),
    **dict.fromkeys(("she", "her", "hers"), "she"),
}


def _holds_for_reply(said: str, pro_form: str = "") -> bool:
    """Whether the other speaker's sentence ``said`` holds, in words, what a reply's pro-form
    stands for: a referent (:func:`holds_referent`) that is not itself a pointer ("those
    hikes", "this wonderful car", "a look"), in a sentence that does not lean on a pronoun of
    its own with nothing before it ("It has adventures, magic, and great characters", "I bet
    they all had a blast!", "What are their names?") when that is the reply's ``pro_form``
    ("it" for "it", "they" for "them")."""
    plain = _EXPLETIVE_IT.sub(lambda m: " " * len(m.group()), said)
    for pointer in (_POINTED, _LIGHT):  # a stop, so no word reads across the gap
        plain = pointer.sub(lambda m: "." + " " * (len(m.group()) - 1), plain)
    group = _GROUP.get(pro_form.lower().split("'")[0].split("’")[0])
    for own in _OWN_PRONOUN.finditer(plain):
        same = group is not None and _GROUP.get(own.group().lower()) == group
        if same and not holds_referent(plain[: own.start()]):
            return False
    return holds_referent(plain)


def _addressed(text: str, name: re.Match[str]) -> bool:
    """Whether the name is whom the sentence addresses ("Nice one, Joanna!", "Wow Caroline,")."""
    if _CALLING.search(text[: name.start()]):
        return True
    return text[: name.start()].rstrip().endswith(",") and not text[name.end() :].strip(" !.?")


def _quoted(reply: str, replied: Replied, pro_form: str = "") -> str | None:
    """The other speaker's words from the sentence that holds the referent to the end."""
    said = replied.sentences
    recent = list(range(len(said)))[-LOOK_BACK:]
    # a sentence leaning on the same pro-form itself is quoted only when no other holds it
    holding = [i for i in reversed(recent) if _holds_for_reply(said[i], pro_form)] or [
        i for i in reversed(recent) if _holds_for_reply(said[i])
    ]
    if not holding:
        return None
    words = {w.lower() for w in _WORD.findall(reply)} - _COMMON
    sharing = [i for i in holding if words & {w.lower() for w in _WORD.findall(said[i])}]
    first = (sharing or holding)[0]
    for quoted in (replied.since(first), said[first]):
        if 2 <= len(quoted.split()) <= MAX_QUOTED_WORDS and '"' not in quoted:
            if is_certification(quoted):
                return None
            return quoted
    return None


#: An answer that leaves out what it is about: "my favorite is country", "Mine is blue.".
_ELIDED = re.compile(
    r"^(?:(?:but|and|so|well)\s+)?(?:my\s+(?:favou?rite|fave)(?:\s+ones?)?|mine)\s+"
    r"(?P<verb>is|are|was|would\s+be|has\s+to\s+be)\s+(?P<rest>\S.*?)\W*$",
    re.IGNORECASE,
)
#: What a question asks about: "What's your favorite color?", "What kind of music do you like?".
_TOPIC = re.compile(
    r"^(?:(?:what|which)(?:['’]s|\s+is|\s+are|\s+was)|whats)\s+(?:your|ur)\s+"
    r"(?P<named>(?:(?:favou?rite|fave)\s+)?[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)\s*\?+\W*$|"
    r"^(?:what|which)\s+(?P<kind>(?:(?:kinds?|types?|sorts?|genres?)\s+of\s+)?[a-z][\w'-]*)\s+"
    r"(?:do|did|would)\s+(?:you|u)\s+(?:like|love|enjoy|prefer|listen\s+to|play|watch|read|eat|"
    r"drink)\b[^?]*\?+\W*$",
    re.IGNORECASE,
)
_FIRST = re.compile(r"\b(?:i|me|my|mine|myself|we|our|us)\b", re.IGNORECASE)


def elides_topic(text: str) -> bool:
    """Whether ``text`` leaves out what it is about ("my favorite is country", "Mine is
    blue."): the question it answers can say what."""
    return _ELIDED.match(text.strip()) is not None


def with_topic(text: str, question: str | None) -> str | None:
    """The content of an answer that leaves out its topic, with the question's noun phrase
    carried in ("What kind of music do you like?" -- "my favorite is country" -> "User's
    favorite kind of music is country."), or ``None`` when the question does not say it
    deterministically or there is no question (the claim is then read as any other)."""
    m = _ELIDED.match(text.strip())
    topic = _TOPIC.match(question.strip()) if question else None
    if m is None or topic is None or _FIRST.search(m.group("rest")):
        return None
    noun = " ".join((topic.group("named") or topic.group("kind")).lower().split())
    if not noun.startswith(("favorite", "favourite", "fave")) and (
        topic.group("kind") or re.match(r"\W*(?:but\s+|and\s+)?my\b", text, re.IGNORECASE)
    ):
        noun = "favorite " + noun  # "my favorite is ..." after "What kind of music ...?"
    return f"User's {noun} {m.group('verb').lower()} {m.group('rest')}."
