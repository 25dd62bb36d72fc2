"""Rewriting a first-person English sentence in the third person about "User".

"I think my manager is Alice" becomes "User thinks their manager is Alice." Every word of the
sentence other than pronouns and the verb agreeing with them is kept as written, so hedges,
negations, numbers and time expressions survive the rewrite: the content says what the quote
says, about the user instead of by the user.
"""

from __future__ import annotations

import re


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


def third_person(text: str) -> str:
    """Rewrite ``text`` about "User"; the result starts with a capital and ends with a stop."""
    paired = _pair_subject(text)
    mentioned = paired != text  # "User and their wife ..." already names the user
    text = paired
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
        if low in ("my",):
            replacement = "their" if mentioned else "User's"
            mentioned = True
        elif low in _SUBJECT_FORMS and (low != "i" or word in ("I", "i")):
            # the user is named once; after that they are "they" ("User thinks they might...")
            replacement = _LATER_FORMS[low] if mentioned else _SUBJECT_FORMS[low][0]
            conjugate_next = low == "i" and not mentioned
            plural_next = low == "i" and mentioned
            mentioned = True
        elif low in ("we", "we're", "we've", "we'd", "we'll", "our", "us", "ours"):
            replacement = _plural(low, mentioned)
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
    return re.sub(
        rf"{_NOT_AFTER_PREPOSITION}\b[Mm]y ((?:{_NOUNISH}\w+ ){{0,2}}?{_NOUNISH}\w+)"
        r" and (?:I|i|me)\b"
        r"(?: (am|have|was|do|go))?",
        lambda m: (
            f"User and their {m.group(1)}" + (f" {_plural_verb(m.group(2))}" if m.group(2) else "")
        ),
        text,
    )


def _plural_verb(verb: str) -> str:
    return {"am": "are", "was": "were"}.get(verb, verb)


def _plural(low: str, mentioned: bool) -> str:
    who = "they" if mentioned else "User and others"
    return {
        "we": who,
        "we're": f"{who} are",
        "we've": f"{who} have",
        "we'd": f"{who} would",
        "we'll": f"{who} will",
        "our": "their",
        "us": "them",
        "ours": "theirs",
    }[low]


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


_LEADING_PARTICLE = re.compile(r"^(?:(?:also|and|but|so|well|plus|anyway|though),?\s+)+", re.I)
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
