"""Bare answers: what a user's reply means given the question it answers.

"I do." or "Yes, two of them." says nothing on its own; after "Do you have kids?" it says the
user has kids. When the other speaker's message ends with a question put to the user and the
user's reply opens with an answer that yields nothing by itself, the offline model reads the
answer against the question:

* a yes/no question ("Do you / Are you / Have you / Did you ...?") answered yes or no becomes a
  proposition in the third person, negated for a "no" ("User doesn't have kids."), with any
  detail after the yes kept ("User has kids: two of them.");
* any other question answered with a bare phrase ("What do you drive?" -- "A red Mustang.")
  becomes the question and the answer together: ``Asked "What do you drive?", User answered: "A
  red Mustang."``; the answer quoted is always the whole sentence, never a clause cut out of
  it ("Unfortunately, allergies make it" of "... make it so I don't want any" is no answer).

Nothing is made of an answer that needs more than the question to be read: a yes to an
either-or question ("Do you want X, or Y?"), a question with a pro-form of its own ("Have you
had any before this?", "Do you like his songs?"), a question about the exchange ("What do you
mean by ...?"), one whose noun is a stand-in ("What kind of things are you getting?"), an
answer that opens on a pro-form ("they are hypocrites ...") or turns to the asker ("The less
you know, the better.").

The span is always the user's own answer (the question is someone else's text), so the
assertion event and the proposition quote what the user said. Questions that are invitations
or requests ("Would you like to come?", "Can you send it?"), greetings ("How are you?") and
questions that carry an instruction to the memory system are never used.
"""

from __future__ import annotations

import re

from ..conversation import Message
from ..vocab import MemoryType, Origin, Role
from .cues import (
    is_certification,
    is_hypothetical,
    is_injection,
    is_question,
    is_sarcastic_or_joke,
)
from .draft import Group
from .english import finish
from .replies import Replied, holds_referent
from .statements import proposition, stated
from .text import Piece, clauses, sentences, strip_opener

MAX_ANSWER_WORDS = 12

_YES = re.compile(
    r"^(?:yes|yeah|yea|yep|yup|ya|sure|of course|definitely|absolutely|certainly|indeed|"
    r"i (?:do|did|am|have|was|can)|i'm|i've|we (?:do|did|are|have))\b[\s,.!;:-]*",
    re.IGNORECASE,
)
_NO = re.compile(
    r"^(?:no|nope|nah|not really|not yet|never|sadly,? no|unfortunately,? no|"
    r"i (?:don'?t|do not|didn'?t|did not|haven'?t|have not|am not|can'?t|cannot|wasn'?t)|"
    r"i'm not|we (?:don'?t|do not|didn'?t|haven'?t|aren'?t))\b[\s,.!;:-]*",
    re.IGNORECASE,
)
_YES_NO_QUESTION = re.compile(
    r"^(?P<aux>do|did|are|were|have|is|was|has|does)\s+(?P<who>you|u|your\s+[\w'-]+(?:\s+[\w'-]+)??)"
    r"\s+(?P<rest>[^?]+?)\s*\?+\W*$",
    re.IGNORECASE,
)
#: Questions whose "yes" accepts an offer or agrees, rather than tells a fact about the user.
_NOT_ABOUT_USER = re.compile(
    r"\b(?:think|know|mind|agree|remember|want me|need me|like me|wanna|want to (?:come|join|go|"
    r"meet|hang)|would you|could you|can you|will you|shall|should|me|my|mine|i|i'm|we|us|our)\b",
    re.IGNORECASE,
)
_GREETING = re.compile(
    r"^(?:how\s+(?:are|r)\s+(?:you|u)|how\s+are\s+you\s+doing|how'?s\s+it\s+going|how\s+have\s+you"
    r"\s+been|how\s+(?:was|is)\s+your\s+(?:day|weekend|week|morning|evening|night)|what'?s\s+up|"
    r"(?:how|what)\s+about\s+(?:you|u|yours|yourself)|and\s+(?:you|u|yours|yourself)|you|u|"
    r"yours|yourself|wbu|hbu|how\s+do\s+you\s+do|what\s+do\s+you\s+(?:think|say)|"
    r"what\s+would\s+you|"
    # asking for advice: the reply is advice for the asker, not a fact about the one replying
    r"(?:do|does|can|could)\s+(?:you|u|anyone)\s+(?:have|give|suggest|recommend)\s+(?:me\s+)?"
    r"(?:any|some)\s+(?:tips|advice|suggestions|recommendations|pointers))\b",
    re.IGNORECASE,
)
_ASKING = re.compile(
    r"^(?:who|what|when|where|why|how|which|whose|do|does|did|are|is|was|were|have|has)\b",
    re.IGNORECASE,
)
#: A yes/no question that offers alternatives ("..., or his ability to choose?"): "yes" picks
#: neither.
_EITHER_OR = re.compile(r"(?:,\s*|\s)or\s+(?!not\b|so\b|anything\b|something\b)", re.IGNORECASE)
#: A pro-form in the question itself: what it stands for is in another message.
_QUESTION_PRO_FORM = re.compile(
    r"\b(?:this|these|those|he|him|his|she|her|hers)\b|\bthat\W*$", re.IGNORECASE
)
#: An open question whose noun is a stand-in ("What kind of things ...?", "What stuff ...?").
_VAGUE_TOPIC = re.compile(
    r"\bwhat\s+(?:(?:kinds?|sorts?|types?)\s+of\s+)?(?:things|stuff)\b", re.IGNORECASE
)
#: An answer that opens on a pro-form ("they are hypocrites ...", "Those, mostly."): it leans
#: on something, and only a question that names something can hold it ("Does your dog sit
#: still?" -- "He can sit still...").
_PRO_FORM_ANSWER = re.compile(
    r"^(?:they|them|their|it|its|he|him|his|she|her|those|these|this|that|both|either|"
    r"neither)\b",
    re.IGNORECASE,
)
#: An evasive retort rather than an answer ("The less you know, the better.").
_RETORT = re.compile(
    r"\b(?:the\s+less\s+(?:you|u)\s+know|none\s+of\s+(?:your|ur)\s+(?:business|concern)|"
    r"mind\s+your\s+own|(?:you|u)\s+(?:don'?t|do\s+not)\s+(?:need|want)\s+to\s+know|"
    r"wouldn'?t\s+(?:you|u)\s+like\s+to\s+know|that'?s\s+for\s+me\s+to\s+know)\b",
    re.IGNORECASE,
)
_ADDRESSED = re.compile(r"\b(?:you|your|u|ur|yourself)\b", re.IGNORECASE)
_CLARIFYING = re.compile(
    r"^(?:(?:so|and|but)\s+)?(?:do|did)\s+(?:you|u)\s+mean\b|^why\b|"
    r"\b(?:what|who|which|how)\s+(?:do|did)\s+(?:you|u)\s+mean\b|\bmean\s+by\b|"
    r"\b(?:it|them)\b(?!['’]s)|\b(?:this|that|these|those)\s*\?",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(
    r"\b(?:i|me|my|mine|myself|i'm|im|i've|ive|i'd|i'll|we|our|us)\b", re.IGNORECASE
)
#: Replies that react to the question rather than answer it.
_REACTION = re.compile(
    r"^(?:that|this|it|they|he|she|there)(?:'s|\s+is|\s+was|\s+sounds|\s+seems|\s+would)\b|"
    r"^(?:you|your|u|ur|thanks|thank|sorry|hmm|sounds|good question|great question|lol|haha|"
    r"not sure|no idea|who knows|maybe|perhaps|probably|depends|it depends|what|why|how|me too|"
    r"same|ditto|agreed|exactly|right|true|cool|nice|great|awesome|wow|oh|ok|okay|hi|hello|hey)\b",
    re.IGNORECASE,
)
_AUX_FORMS = {
    # aux: (for "you", positive, negative) -- None means "conjugate the verb that follows"
    "do": (None, "doesn't"),
    "does": (None, "doesn't"),
    "did": ("did", "didn't"),
    "are": ("is", "isn't"),
    "is": ("is", "isn't"),
    "were": ("was", "wasn't"),
    "was": ("was", "wasn't"),
    "have": ("has", "hasn't"),
    "has": ("has", "hasn't"),
}
_SWAP = {"your": "their", "yours": "theirs", "yourself": "themselves", "you": "them", "u": "them"}


def answer_groups(message: Message, previous: Message | None, covered: list[Piece]) -> list[Group]:
    """The claim a bare answer makes, read against the question before it; at most one group.

    ``covered`` are the pieces of ``message`` the ordinary rules already made claims from: an
    answer that says something by itself ("I have two kids.") needs no question.
    """
    question = _question(previous)
    if question is None or is_injection(message.text):
        return []
    found = _answer_piece(message)
    if found is None:
        return []
    clause, sentence = found
    answer, content = clause, _yes_no_content(question, clause.text)
    if content is None and sentence is not None:
        # an open answer is quoted whole: never a clause cut out of its sentence
        answer, content = sentence, _open_content(question, sentence.text)
    if content is None or any(p.start < answer.end and answer.start < p.end for p in covered):
        return []
    event = stated(answer, message, Origin.USER)
    claim = proposition(
        answer,
        message,
        Origin.USER,
        MemoryType.WORLD_PROPOSITION,
        content,
        time_text=f"{answer.text} {question}",
    )
    return [Group([event, claim], priority=0)]


def asked_in(previous: Message | None) -> str | None:
    """The question the other speaker ended ``previous`` on, when it is put to the user."""
    return _question(previous)


def replied_to(previous: Message | None) -> Replied | None:
    """The other speaker's sentences before the user's message, verbatim, with the default
    quotation of what a reply answers: the last sentence (the last two when the last is
    short). :func:`.replies.replied_quote` picks the one a reply's pro-form leans on."""
    found = _last_sentence(previous)
    if found is None or previous is None:
        return None
    pieces, last = found
    text = last.text.strip()
    if len(text.split()) < 5 and len(pieces) > 1:
        # "Cats can be tricky, can't they? But so adorable.": a short last sentence leans on
        # the one before it
        text = previous.text[pieces[-2].start : pieces[-1].end].strip()
    spans = (*((p.start, p.end) for p in pieces[:-1]), (last.start, last.end))
    if '"' in text or not 2 <= len(text.split()) <= MAX_REPLIED_WORDS or is_certification(text):
        return Replied(previous.text, spans, None)  # an earlier sentence may still hold it
    return Replied(previous.text, spans, text)


def _last_sentence(previous: Message | None) -> tuple[list[Piece], Piece] | None:
    """The other speaker's sentences and its last one without its opener, or ``None`` when
    ``previous`` is not a plain assistant message or has no sentence to answer."""
    if previous is None or previous.role is not Role.ASSISTANT or is_injection(previous.text):
        return None
    pieces = sentences(previous)
    if not pieces:
        return None
    last = strip_opener(pieces[-1])
    return None if last is None else (pieces, last)


#: The longest sentence quoted as what a reply answers.
MAX_REPLIED_WORDS = 30


def _question(previous: Message | None) -> str | None:
    """The question the other speaker ended on, when it is put to the user."""
    found = _last_sentence(previous)
    if found is None:
        return None
    _, last = found
    parts = clauses(last)
    text = parts[-1].text if parts else last.text
    text = re.sub(r"^(?:and|so|but|also|well|then)\s+", "", text, flags=re.IGNORECASE)
    if not text.rstrip().endswith("?") or not is_question(text) or not _ADDRESSED.search(text):
        return None
    if _GREETING.match(text) or is_certification(text) or len(text.split()) > 20:
        return None
    return " ".join(text.split())


def _answer_piece(message: Message) -> tuple[Piece, Piece | None] | None:
    """The first clause of the reply, when it is a short answer and not a question back, and
    its whole sentence when that is one too (what an open answer quotes)."""
    pieces = sentences(message)
    if not pieces:
        return None
    first = pieces[0]
    parts = clauses(first)
    piece = parts[0] if parts else first
    if not _short_answer(piece.text):
        return None
    whole = strip_opener(first)
    if whole is None or whole.end <= piece.end:
        return piece, piece  # the clause is the whole sentence (but for a closing pleasantry)
    if _short_answer(whole.text):
        return piece, whole
    # a clause is an answer of its own only up to a comma, a semicolon or a dash ("Thursday and
    # Friday, you can come either day!"), never cut inside a phrase ("allergies make it so ...")
    after = message.text[piece.end : piece.end + 2]
    return piece, piece if after[:1] in ",;:-–—" else None


def _short_answer(text: str) -> bool:
    if len(text.split()) > MAX_ANSWER_WORDS or is_question(text):
        return False
    return not (is_hypothetical(text) or is_sarcastic_or_joke(text) or is_certification(text))


def _yes_no_content(question: str, answer: str) -> str | None:
    m = _YES_NO_QUESTION.match(question)
    if m is None or _NOT_ABOUT_USER.search(m.group("rest")):
        return None
    if _EITHER_OR.search(m.group("rest")) or _QUESTION_PRO_FORM.search(m.group("rest")):
        return None  # "yes" to "X, or Y?" picks neither; "before this" is in another message
    yes, no = _YES.match(answer), _NO.match(answer)
    if no is not None:
        positive, detail = False, answer[no.end() :]
    elif yes is not None:
        positive, detail = True, answer[yes.end() :]
    else:
        return None
    aux, who, rest = m.group("aux").lower(), m.group("who"), _swap(m.group("rest"))
    subject = "User" if who.lower() in ("you", "u") else "User's " + who.split(None, 1)[1]
    if aux in ("do", "does"):
        verb, _, tail = rest.partition(" ")
        if positive:
            tail = re.sub(r"^any\s+", "", tail, flags=re.IGNORECASE)
            body = f"{_third(verb)} {tail}"
        else:
            body = f"doesn't {rest}"
    else:
        pos, neg = _AUX_FORMS[aux]
        if positive:
            rest = re.sub(r"^(?:ever|any)\s+", "", rest, flags=re.IGNORECASE)
            # "Have you had any beer?" -- "Yes." is "User has had beer."
            rest = re.sub(r"^(\w+\s+)any\s+", r"\1", rest, flags=re.IGNORECASE)
            body = f"{pos} {rest}"
        elif rest.lower().startswith("ever "):
            body = f"{pos} never {rest[5:]}"
        else:
            body = f"{neg} {rest}"
    detail = detail.strip(" ,.!;:-")
    said = {w.lower() for w in re.findall(r"\w+", question)}
    if {w.lower() for w in re.findall(r"\w+", detail)} <= said:
        detail = ""  # "No sidewalks." after "Do you perform on sidewalks?" adds nothing
    if detail and not _FIRST_PERSON.search(detail) and not _REACTION.match(detail):
        return finish(f"{subject} {body}: {detail}")
    return finish(f"{subject} {body}")


def _open_content(question: str, answer: str) -> str | None:
    """Question and answer together, for an answer that is a bare phrase. Not for a question
    about the exchange ("Did you mean the home address?", "Why do you say that?") or one that
    leans on the chat itself ("Do you enjoy it?"): quoting it explains nothing."""
    if not _ASKING.match(question) or _FIRST_PERSON.search(question):
        return None
    if _CLARIFYING.search(question) or _VAGUE_TOPIC.search(question):
        return None
    if _FIRST_PERSON.search(answer) or _REACTION.match(answer) or _YES.match(answer):
        return None
    if _PRO_FORM_ANSWER.match(answer) and not holds_referent(question):
        return None  # "they are hypocrites ...": whom?
    if _RETORT.search(answer):
        return None
    if _NO.match(answer) or not re.search(r"[A-Za-z0-9]", answer):
        return None
    return f'Asked "{question}", User answered: "{answer}".'


def _swap(text: str) -> str:
    return re.sub(
        r"\b(?:your|yours|yourself|you|u)\b",
        lambda m: _SWAP[m.group(0).lower()],
        text,
        flags=re.IGNORECASE,
    )


def _third(verb: str) -> str:
    low = verb.lower()
    if low == "have":
        return "has"
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"
