"""Rewriting a first-person English sentence in the third person about "User".

"I think my manager is Alice" becomes "User thinks their manager is Alice." Every word of the
sentence other than pronouns and the verb agreeing with them is kept as written, so hedges,
negations, numbers and time expressions survive the rewrite: the content says what the quote
says, about the user instead of by the user.

A "we" is the user and whom the chat says they are with, when only one group can be meant
(:func:`we_are`): "My wife and I ..." in the sentence, "How are you and your wife?" asked just
before, or the user's earlier messages of the session ("User and their wife love hiking.");
with no one named, "User and others".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..content.faithfulness import check_faithful, source_for


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")

_SUBJECT_FORMS = {
    "i": ("User", None),
    "i'm": ("User is", None),
    "im": ("User is", None),
    "i've": ("User has", None),
    "ive": ("User has", None),
    "i'd": ("User would", None),
    "i'll": ("User will", None),
    "me": ("User", None),
    "myself": ("themselves", None),
    "mine": ("User's", None),
}
#: Forms for the user after the first mention: "they", which takes a plural verb.
_LATER_FORMS = {
    "i": "they", "i'm": "they are", "im": "they are", "i've": "they have", "ive": "they have",
    "i'd": "they would", "i'll": "they will", "me": "them", "myself": "themselves",
    "mine": "theirs",
}  # fmt: skip
_PLURAL_VERB = {"am": "are", "was": "were", "wasn't": "weren't", "'m": "are"}
_IRREGULAR = {
    "am": "is", "have": "has", "do": "does", "go": "goes", "don't": "doesn't",
    "dont": "doesn't", "haven't": "hasn't", "havent": "hasn't", "ain't": "isn't",
    "are": "is", "were": "was", "aren't": "isn't", "weren't": "wasn't",
}  # fmt: skip
_KEEP = _words(
    "can could will would shall should may might must used had did was got can't cannot "
    "couldn't won't wouldn't shouldn't mustn't didn't hadn't wasn't cant couldnt wont wouldnt "
    "didnt wasnt ought"
)
_ADVERBS = _words(
    "really just also still usually always never often sometimes actually definitely totally "
    "absolutely recently currently mostly only even already finally generally now too "
    "honestly truly kind sort of basically literally seriously probably maybe certainly "
    "rarely seldom hardly barely mainly primarily especially obviously clearly personally "
    "simply occasionally frequently normally typically constantly regularly no longer not "
    "again once first then soon rather pretty quite very so all both each further"
)
#: Words that are never the verb after "I" (so they are never conjugated).
_NOT_VERBS = _words(
    "a an the and or but to in on at of for with from by as if because so that this these "
    "those there here too either neither my your his her its our their it he she they we you "
    "me him them us myself yourself who what when where why how which not no yes"
)
PAST_IRREGULAR = _words(
    "was were had did went got took made saw came became began bought brought built caught "
    "chose drove ate fell felt found flew forgot gave grew heard held kept knew left lost met "
    "paid ran said sat sent slept spent spoke stood taught told thought understood woke won "
    "wore wrote broke sold swam sang drank fought meant stole threw rode hid led lay "
    "drew shook swore tore bit dug fled hung lent rang sought shot sank stuck struck swept swung "
    "wept bent crept dealt froze slid spun "
    # with a prefix ("I retook the test" is not "User retooks the test")
    "retook rewrote rebuilt reran resold remade redid overtook overcame overslept overate "
    "overheard undertook mistook misunderstood outgrew outran withdrew withheld foresaw forgave "
    "upheld"
)
#: Present-tense verbs that end in "ed" like a past tense ("I need a car" is neither past nor
#: "User need a car").
PRESENT_ED = _words(
    "need feed bleed breed speed proceed succeed exceed seed weed heed shred embed plead"
)
_AMBIGUOUS_PAST = _words("read put quit hurt cut set let hit cost shut spread")
_PAST_MARKER = re.compile(
    r"\b(yesterday|ago|last|when i was|in \d{4}|once|earlier|already|before)\b", re.IGNORECASE
)


def third_person(text: str, group: str | None = None) -> str:
    """Rewrite ``text`` about "User"; the result starts with a capital and ends with a stop.

    ``group`` is whom a "we" takes in besides the user, when the chat says it (:func:`we_are`:
    "their wife"): "We love hiking." is then "User and their wife love hiking.", else "User and
    others love hiking.". A "we" whose sentence says whom the user was with ("We went to the
    park with my kids.") is the user: "User went to the park with their kids."
    """
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    if _WITH_MINE.search(first) and _WE_FIRST.match(first):
        text = _we_as_i(text)
    if group is None and _WE_FIRST.match(text) and len(pairs := own_groups(text)) == 1:
        group = pairs.pop()  # "We need a floor for me & my students": the students
    text = _pair_subject(text)  # "User and their wife ...": the user is named there
    mentioned = False
    group_named = False  # the group, not the user alone, was named before: "they" is the group
    who = f"User and {group}" if group else "User and others"
    out: list[str] = []
    cursor = 0
    conjugate_next = False
    plural_next = False
    past = bool(_PAST_MARKER.search(text))
    for m in _WORD.finditer(text):
        word = m.group(0)
        low = word.lower().replace("’", "'")
        replacement = word
        if conjugate_next or plural_next:
            if low in _ADVERBS or low in ("longer", "no") or _is_adverb(low):
                pass
            elif conjugate_next:
                replacement = _conjugate(word, low, past)
                conjugate_next = False
            else:
                replacement = _PLURAL_VERB.get(low, word)
                plural_next = False
        if text.startswith("User and their", m.start()):  # named by the pairing
            mentioned = group_named = True
        elif low in ("my",):
            replacement = "their" if mentioned else "User's"
            mentioned = True
        elif low in _SUBJECT_FORMS and (low != "i" or word in ("I", "i")):
            # the user is named once; after that they are "they" ("User thinks they might...")
            replacement = _LATER_FORMS[low] if mentioned else _SUBJECT_FORMS[low][0]
            conjugate_next = low == "i" and not mentioned
            plural_next = low == "i" and mentioned
            mentioned = True
        elif low in ("we", "we're", "we've", "we'd", "we'll", "our", "us", "ours"):
            # after the user is named, a "we" is still more than the user: "they and others"
            # ("User thinks they and others should ..."), never a "they" read as the user alone
            if not mentioned or (word[0] == "W" and low != "our"):  # a sentence's first word
                replacement = _plural(low, who)
                group_named = True
            elif low in ("our", "us", "ours") or group_named:
                replacement = _plural(low, None)  # "they": the group named before
            else:  # the user alone was named: "they" would read as the user
                replacement = _plural(low, "they" + who.removeprefix("User"))
            mentioned = True
        out.append(text[cursor : m.start()])
        out.append(replacement)
        cursor = m.end()
    out.append(text[cursor:])
    return finish("".join(out))


def _is_adverb(low: str) -> bool:
    """ "-ly" words between "I" and its verb are adverbs ("I immediately thought")."""
    return len(low) > 4 and low.endswith("ly") and low not in _LY_VERBS


_LY_VERBS = _words("apply reply supply rely multiply comply imply ally bully rally tally")


#: A word of a noun phrase ("my husband Marco"), not a verb ("my job is great and I ...").
_NOUNISH = (
    r"(?!(?:is|are|was|were|has|have|had|does|did|do|will|would|can|could|got|gets|loves|likes|"
    r"went|goes|works|lives|said|says|thinks|and|but)\b)"
)


#: "my house and I" after a preposition is its object and the next clause's subject ("a lake
#: near my house and I swim there"), no pair.
_NOT_AFTER_PREPOSITION = "".join(
    rf"(?<!\b{p} )"
    for p in ("near", "at", "in", "to", "from", "of", "by", "for", "on", "into", "behind")
)


def _pair_subject(text: str) -> str:
    """``my wife and I`` → ``User and their wife`` (before the word-by-word rewrite)."""
    text = re.sub(
        rf"{_NOT_AFTER_PREPOSITION}\b[Mm]y ((?:{_NOUNISH}\w+ ){{0,2}}?{_NOUNISH}\w+)"
        r" (?:and|&) (?:I|i|me)\b"
        r"(?: (am|have|was|do|go))?",
        lambda m: (
            f"User and their {m.group(1)}" + (f" {_plural_verb(m.group(2))}" if m.group(2) else "")
        ),
        text,
    )
    # "Me and my kids went ..." (a group noun: "me and my friends", not "me and my job")
    return re.sub(
        rf"\b(?:[Mm]e|I) (?:and|&) my {_GROUP_PHRASE}\b(?: (am|have|was|do|go))?",
        lambda m: (
            f"User and their {m.group(1)}" + (f" {_plural_verb(m.group(2))}" if m.group(2) else "")
        ),
        text,
    )


def _plural_verb(verb: str) -> str:
    return {"am": "are", "was": "were"}.get(verb, verb)


def _plural(low: str, who: str | None) -> str:
    """A "we" form: ``who`` at the first mention of anyone ("User and their wife"), else
    "they". "our" first is the user's ("Our house is small." -> "User's house is small."),
    or the group's when the chat names it ("User and their wife's house")."""
    if who is None:
        forms = {"our": "their", "us": "them", "ours": "theirs"}
        subject = "they"
    else:
        owner = "User" if who == "User and others" else who
        # "us" with no one named stays "them" ("a few of them"), as it read before
        forms = {"our": f"{owner}'s", "us": "them" if owner == "User" else who}
        forms["ours"] = forms["our"]
        subject = who
    return (
        forms.get(low)
        or {
            "we": subject,
            "we're": f"{subject} are",
            "we've": f"{subject} have",
            "we'd": f"{subject} would",
            "we'll": f"{subject} will",
        }[low]
    )


#: Whom a "we" may take in besides the user: people of theirs (and pets).
_GROUP_NOUN = (
    r"(?:mom|mum|mother|dad|father|parent|sister|brother|sibling|wife|husband|spouse|hubby|"
    r"girlfriend|boyfriend|partner|fianc[eé]e?|friend|daughter|son|kid|child|children|family|"
    r"grandma|grandpa|grandparent|grandkid|grandchildren|aunt|uncle|cousin|niece|nephew|"
    r"roommate|coworker|colleague|team|band|class|student|dog|cat|boy|girl|twins|"
    r"(?:band|team|class|room|house|flat)mate)s?"
)
#: Up to two words before the noun ("best friend", "two kids", "office team"), not a verb.
_GROUP_PHRASE = rf"((?:{_NOUNISH}[a-z]+ ){{0,2}}?{_GROUP_NOUN})"
#: The user's own words pairing them with the group: "my wife and I", "me and my kids".
_OWN_GROUP = (
    # (not "one of my coworkers and I": one of them)
    re.compile(rf"(?<!\bof )\bmy {_GROUP_PHRASE} (?:and|&) (?:I|me)\b", re.IGNORECASE),
    re.compile(rf"\b(?:me|I) (?:and|&) my {_GROUP_PHRASE}\b", re.IGNORECASE),
)
#: The other speaker's question about the user and the group: "How are you and your wife?",
#: "Did you go with your sons?", "Are your kids and you ready?".
_ASKED_GROUP = (
    re.compile(rf"\byou (?:and|&) your {_GROUP_PHRASE}\b", re.IGNORECASE),
    re.compile(rf"\byour {_GROUP_PHRASE} (?:and|&) you\b", re.IGNORECASE),
    re.compile(rf"\byou\b[^.?!]*?\bwith your {_GROUP_PHRASE}\b", re.IGNORECASE),
)
_WE_FORM = r"(?:we|we're|we’re|we've|we’ve|we'd|we’d|we'll|we’ll)"
#: A "we" first, before any "I" ("We went ... with my kids"; not "I said we ...").
_WE_FIRST = re.compile(rf"^(?:(?!\b(?:I|me|my)\b)[^.?!])*?\b{_WE_FORM}\b", re.IGNORECASE)
#: "we should ...": people at large as often as the user's own.
_GENERIC = re.compile(rf"\b{_WE_FORM}\s+(?:\w+\s+)?(?:should|shold|must|ought)\b", re.I)
_WE_SUBJECT = re.compile(rf"\b{_WE_FORM}\b", re.IGNORECASE)
_WITH_MINE = re.compile(rf"\bwith my {_GROUP_PHRASE}\b", re.IGNORECASE)
#: A "we" that may take in the listener ("we can meet you there"), everyone around ("we have
#: big deer here") or more than one group ("we all").
_OPEN_WE = re.compile(
    r"\b(?:you|your|yours|yourself|u|all|here|everyone|everybody)\b(?<!thank you)", re.I
)
#: "we both" is the pair a question asks about, but may be the speakers when nothing does.
_BOTH = re.compile(r"\bboth\b", re.IGNORECASE)


def _we_as_i(text: str) -> str:
    """The "we" forms of ``text`` as the user's own ("we" -> "I", "our" -> "my")."""
    forms = {"we": "I", "we're": "I'm", "we've": "I've", "we'd": "I'd", "we'll": "I'll",
             "our": "my", "us": "me", "ours": "mine"}  # fmt: skip

    def one(m: re.Match[str]) -> str:
        word = m.group(0)
        mine = forms[word.lower().replace("’", "'")]
        return mine if mine.startswith("I") or word.islower() else mine.capitalize()

    return re.sub(r"\b(?:we|we['’](?:re|ve|d|ll)|our|us|ours)\b", one, text, flags=re.I)


def own_groups(text: str) -> set[str]:
    """The groups the user pairs themselves with in ``text`` ("my wife and I" -> "their
    wife")."""
    return {f"their {_group_words(m.group(1))}" for r in _OWN_GROUP for m in r.finditer(text)}


def asked_group(sentences: Iterable[str | None]) -> str | None:
    """The one group the other speaker's questions (of ``sentences``, those that end with a
    question mark) ask about with the user ("How are you and your wife?" -> "their wife"), or
    ``None``."""
    found = {
        _group_words(m.group(1))
        for text in sentences
        if text and text.rstrip().endswith("?")
        for rule in _ASKED_GROUP
        for m in rule.finditer(text)
    }
    return f"their {found.pop()}" if len(found) == 1 else None


def _group_words(phrase: str) -> str:
    return " ".join(phrase.split())


def we_are(text: str, sentence: str, asked: str | None, earlier: str | None) -> str | None:
    """Whom a "we" of ``sentence`` (in the user's message ``text``) takes in besides the user,
    when the chat says it and only one group can be meant: the group the other speaker's
    question ``asked`` about ("How are you and your wife?" -- "We're great."), else the one the
    user's earlier messages of the session paired them with (``earlier``: "My wife and I ...").
    ``None`` when the message names a group of its own (its sentence is quoted with it, or not
    resolved), or the "we" may take in the listener or everyone around ("we both", "here")."""
    if own_groups(text) or _WITH_MINE.search(text) or _OPEN_WE.search(sentence):
        return None
    if asked:
        return asked
    if _BOTH.search(sentence) or _GENERIC.search(sentence) or not _WE_SUBJECT.search(sentence):
        return None  # ("Who needs the hassle at our age?", "We should ...": anyone)
    return earlier


def with_group(
    text: str, group: str | None, quote: tuple[str, int, int], before: Sequence[str]
) -> str:
    """:func:`third_person` of ``text`` with ``group`` named, when the gate's content check
    accepts it for ``quote`` (message text, start, end) after the messages ``before`` it (the
    group's words may be far back, out of the gate's reach: "while User and their partner are
    there" shares no word with its quote); else with "User and others"."""
    plain = third_person(text)
    if group is None:
        return plain
    named = third_person(text, group)
    if named == plain:
        return plain
    message, start, end = quote
    # the group's words are in the conversation, not near the quote: first, out of reach
    source = source_for(message, start, end, [group, "", *before[-1:]])
    return named if check_faithful(named, source) is None else plain


def session_group(groups: set[str]) -> str | None:
    """The group of the user's earlier messages of a session (:func:`own_groups` of each), when
    they named only one."""
    return next(iter(groups)) if len(groups) == 1 else None


def _conjugate(word: str, low: str, past: bool) -> str:
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _KEEP or low in _NOT_VERBS or low in PAST_IRREGULAR or not low.isalpha():
        return word
    if word[:1].isupper():  # a name or a title after "I" ("I Dr. Who"), not a verb
        return word
    if (low.endswith("ed") and low not in PRESENT_ED) or low.endswith("ing") or "'" in low:
        return word
    if low in _AMBIGUOUS_PAST and past:
        return word
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return word + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


_LEADING_PARTICLE = re.compile(
    r"^(?:(?:also|and|but|so(?!\s+(?:far|much|many|long)\b)|well|plus|anyway|though),?\s+)+", re.I
)
_TRAILING_PARTICLE = re.compile(
    r"(?:[\s,]+(?:though|too|as well|lol|haha+|hehe|lmao|tho|either|anyway|ha))+(?=[\s.!?…]*$)",
    re.IGNORECASE,
)


def tidy(text: str) -> str:
    """Drop discourse particles that carry nothing of the claim ("Also ...", "... though",
    "... lol"): "Also I like hiking too" says what "I like hiking" says."""
    body = _LEADING_PARTICLE.sub("", text)
    body = _TRAILING_PARTICLE.sub("", body)
    return body if body.strip(" .!?…") else text


def finish(text: str) -> str:
    """Capitalize, collapse whitespace, and end with exactly one sentence stop."""
    text = " ".join(text.split()).strip(" ,;:-")
    if not text:
        return text
    text = text[0].upper() + text[1:]
    if text[-1] not in ".!?…":
        text += "."
    elif text[-1] == "!":
        text = text.rstrip("!") + "."
    return text
