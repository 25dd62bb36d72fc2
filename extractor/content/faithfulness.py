"""Is a candidate's content supported by its quote? A deterministic faithfulness check.

The content is split into clauses; each clause is aligned with the clause of the quoted
sentence(s) it shares most content words with, and then must

* **keep the polarity** of that clause: a negation there ("I don't live in Berlin anymore")
  must be in the content (``NEGATION_DROPPED``), and a negation in the content must be there
  (``NEGATION_ADDED``); negative words count as negations on both sides ("dislike", "no
  longer", "used to" ...);
* **keep its hedges and reporters**: a hedge of the *sentence* the span is in counts, even when
  the span is a sub-span that leaves it out ("I'm not sure, but I believe the launch moved to
  Friday" quoted as "the launch moved to Friday"); reported speech must keep its attribution and
  the reporter ("My sister told me ..." needs "sister" and a reporting verb)
  (``UNCERTAINTY_DROPPED``). A negated hedge ("there is no maybe about it") is not a hedge;
* **say nothing the source does not**: every number, amount, date and proper name in the content
  must occur in the source, and a clause whose content words mostly do not occur there is a
  claim beyond the span (``CONTENT_UNSUPPORTED``).

"The source" is the quote's sentences, its whole message, and the conversation before it (for
pronouns, and for answers such as "Yes, two." that draw on the question). Words are compared as
Snowball stems of folded text (:func:`~.unicode.fold`), sentences come from the splitter the
offline model uses too (:mod:`.sentences`). The check is
measured on MSC, both ways (``extractor eval --faithfulness``, ``docs/evaluation.md``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from typing import Any

import snowballstemmer

from .lexicon import Lexicon, spelled_alike
from .sentences import sentence_spans
from .unicode import fold

# --- Words -----------------------------------------------------------------------------------


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TOKEN = re.compile(r"\d+(?:[.,]\d+)*[^\W_]*|[^\W_]+(?:['’][^\W_]+)*")

#: Function words: they carry no claim of their own.
STOPWORDS = _wordset(
    """
    a an the and or but nor so yet if then than that this these those there here i me my
    mine myself we us our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves one ones
    who whom whose which what when where why how whoever whatever am is are was were be been
    being have has had having do does did doing done will would shall should can could may
    might must ought i'm i've i'd i'll you're you've you'd you'll he's she's it's we're
    we've we'd we'll they're they've they'd they'll that's there's here's what's who's let's
    to of in on at by for with from into onto upon about above below over under between
    among through during before after since until till up down out off again further once as
    like just also too very really quite rather so such much many more most some any all
    both each every few other another own same only even still already ever yes yeah yep ok
    okay oh ah well hey hi hello wow lol um uh hmm get got gets getting go goes going went
    gone make makes made thing things lot lots s t d ll m re ve
    """
)
#: Words a content adds to frame what was said: who said it, that it was said.
FRAMING = _wordset(
    """
    user user's users speaker speaker's person assistant tool they them their theirs
    themselves he she his her stated states state said says say mentioned mentions told
    tells reported reports noted notes shared shares expressed expresses indicated indicates
    explained explains described describes wrote writes returned returns output outputs
    claim claims claimed according asked asks answered answers replied replies question
    relayed relays attempted attempt failed system others hedged
    """
)
_MONTHS_DAYS = _wordset(
    """
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    """
)


@cache
def _stemmer() -> Any:
    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball stem of a lowercased word, possessive dropped ("user's" -> "user")."""
    word = re.sub(r"['’]s$", "", word)
    result: str = _stemmer().stemWord(word)
    return result


def words(text: str) -> list[str]:
    """Folded, lowercased word tokens; apostrophes normalized to ``'``."""
    return [t.replace("’", "'") for t in _TOKEN.findall(fold(text))]


# --- Numbers ---------------------------------------------------------------------------------

_UNIT_WORDS = """zero one two three four five six seven eight nine ten eleven twelve thirteen
    fourteen fifteen sixteen seventeen eighteen nineteen"""
_UNITS = {w: i for i, w in enumerate(_UNIT_WORDS.split())}
_TEN_WORDS = "- - twenty thirty forty fifty sixty seventy eighty ninety"
_TENS = {w: 10 * i for i, w in enumerate(_TEN_WORDS.split()) if w != "-"}
_TENS |= {w[:-1] + "ies": v for w, v in _TENS.items()}  # "in my twenties"
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9}
_IMPLIED = {"a": 1, "an": 1, "single": 1, "once": 1, "couple": 2, "pair": 2, "both": 2,
            "twice": 2, "twins": 2, "dozen": 12}  # fmt: skip
_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def numbers(tokens: list[str]) -> set[float]:
    """Numeric values in a token list: digits ("46", "3.5", "1,200") and number words, a run
    of which is one number ("twenty four" -> 24, "two hundred" -> 200)."""
    values: set[float] = set()
    run: list[str] = []
    last: float | None = None  # the number just before: "15-20k" is 15,000 to 20,000
    for token in [*tokens, ""]:
        if token in _UNITS or token in _TENS or (token in _SCALES and run):
            run.append(token)
            continue
        if run:
            values.add(_words_value(run))
            run = []
        thousands = _THOUSANDS.fullmatch(token)
        if thousands:  # "8k"
            value = _digits_value(thousands.group(1))
            values.add(value * 1000)
            if last is not None and last < value:
                values.add(last * 1000)
        found = [_digits_value(m.group()) for m in _DIGITS.finditer(token)]
        if any(math.isnan(v) for v in found):  # "10.0.0.5", "1.2.3": each part
            found = [float(part) for part in re.findall(r"\d+", token)]
        values.update(found)
        last = found[-1] if found and token.isdigit() else None
    return values


_THOUSANDS = re.compile(r"(\d+(?:\.\d+)?)k")


def _words_value(run: list[str]) -> float:
    total = current = 0
    for token in run:
        if token in _SCALES:
            current = max(current, 1) * _SCALES[token]
            if _SCALES[token] > 100:
                total, current = total + current, 0
        else:
            current += _UNITS.get(token, 0) + _TENS.get(token, 0)
    return float(total + current)


def _digits_value(text: str) -> float:
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", text):  # "1,200", "12,430.55"
        text = text.replace(",", "")
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return float("nan")


def _implied(stems: frozenset[str]) -> frozenset[float]:
    """Numbers a source says in words that are not numerals ("a", "a couple", "twins")."""
    return frozenset(float(v) for t, v in _IMPLIED.items() if stem(t) in stems)


# --- Cues ------------------------------------------------------------------------------------

_HEDGE = re.compile(
    r"\b(i think(?! about| of)|i believe|i guess|i suppose|i assume|i'm not (?:sure|certain)|"
    r"not sure|unsure|i doubt|i suspect|maybe|perhaps|probably|possibly|likely|unlikely|might|"
    r"may be|may have|could be|seems?|seemed|apparently|supposedly|allegedly|presumably|i reckon|"
    r"if i recall|i'm pretty sure|pretty sure|i feel like|not certain|uncertain|i'd say|"
    r"chances are)\b"
)
#: Hedge words in a content: the hedge kept, in any wording.
CONTENT_HEDGE = re.compile(
    r"\b(think|thinks|thought|believes?|believed|guess(?:es)?|supposes?|assumes?|not sure|"
    r"unsure|uncertain|not certain|doubts?|suspects?|maybe|perhaps|probably|possibly|possible|"
    r"likely|unlikely|might|may|could|seems?|seemed|apparently|supposedly|allegedly|"
    r"presumably|reckons?|recalls?|feels? like|pretty sure|hopes?|hopefully|wonders?|"
    r"imagines?|kind of|sort of|would say|i'd say|thinking|chances|hedged?|possibility|"
    r"considering|unclear)\b"
)
#: Adverbs and adjectives whose negation ("no maybe about it") takes the hedge away.
_NEGATABLE_HEDGE = frozenset({"maybe", "perhaps", "probably", "possibly", "possible", "likely"})
_HEDGE_NEGATOR = re.compile(r"\b(?:no|not|without|never|zero)\s+(?:\w+\s+)?$")
_APPROX = re.compile(
    r"(\b(?:approximately|approx\.?|roughly|about|around|nearly|almost|circa|some|"
    r"an estimated|estimated|more or less|give or take|ish)\s*[$€£¥]?\s*\d|"
    r"~\s*[$€£¥]?\d|\bor so\b)"
)
_CONTENT_APPROX = re.compile(
    r"(\b(approximately|approx|roughly|about|around|nearly|almost|circa|some|estimated|or so|"
    r"more or less|give or take)\b|~)"
)
_REPORTED = re.compile(
    r"\b(told me(?! about)|tells me(?! about)|told us(?! about)|said that|says that|says|"
    r"(?<!being )(?<!that )(?<!having )said|according to|claims?|claimed|"
    r"reportedly|i heard|heard that|they say|people say|rumou?red|rumou?r has it)\b"
)
_CONTENT_REPORTED = re.compile(
    r"\b(told|tells|said|says|say|according|claims?|claimed|reportedly|reported|heard|hears|"
    r"rumou?r\w*|stated|states|mentioned|relayed|informed|learned|learnt)\b"
)
#: Attributions that never name their source: "The CEO reportedly resigned", "last week
#: reportedly ...", "Yesterday I heard ..." (the word before is no reporter).
_UNNAMING = frozenset(
    {"reportedly", "i heard", "they say", "people say", "rumored", "rumoured", "rumor has it",
     "rumour has it"}
)  # fmt: skip
#: Reporters that name nobody in particular: only the attribution itself must be kept.
_VAGUE_REPORTERS = _wordset(
    """
    i you he she it we they someone somebody everyone everybody people person
    """
)


def hedges_in(text: str, pattern: re.Pattern[str] = _HEDGE) -> list[str]:
    """The hedges of ``text`` (folded), leaving out negated ones ("there is no maybe about
    it", "not probably")."""
    folded = fold(text).replace("’", "'")
    found = []
    for m in pattern.finditer(folded):
        if m.group(1) in _NEGATABLE_HEDGE and _HEDGE_NEGATOR.search(folded[: m.start()]):
            continue
        found.append(m.group(1))
    return found


# --- Scopes ----------------------------------------------------------------------------------

#: True negations, and negative words ("I dislike cats" = "I don't like cats").
NEGATORS = _wordset(
    """
    not no never none nobody nothing nowhere neither nor without cannot nope nah ain't
    dislike dislikes disliked hate hates hated unable lack lacks lacked refuse refuses
    refused avoid avoids avoided forbid forbids forbade forbidden prevent prevents prevented
    """
)
#: Words that say "no longer": they negate the present ("I used to live in Berlin").
PAST_NEGATORS = _wordset("anymore formerly former previously stopped quit ex")
#: ... and "for the first time": not before ("my dog's first time in the ocean" = "my dog had
#: not been in the ocean"), a negation of the past that does not deny the present.
_PAST_PHRASES = re.compile(
    r"\b(?:no longer|(?<!\bam )(?<!\bis )(?<!\bare )(?<!\bget )(?<!\bgot )(?<!\bgetting )"
    r"(?<!\bi'm )used to|(?<=\bi )use to|not any ?more|first time)\b"
)
#: Phrases that negate what follows ("I have yet to hear it" = "I haven't heard it"; "I can
#: barely stand my job" = "I can't stand my job", though "I barely passed" says I passed).
_NEGATING_PHRASES = re.compile(
    r"\b(?:yet to|far from|by no means|no way|(?:can|could) (?:barely|hardly|scarcely))\b"
)
#: A negation that ends where it starts: "not really", "no problem", a bare "No," answer.
_BARE_NEGATION = re.compile(
    r"\b(?:not (?:much|really|yet|at all|quite|exactly|right now|now)"
    r"(?=\s*(?:[,.!?;]|$|but\b|though\b))|"
    r"not (?:that i know|sure|certain|too|as)|not like(?= (?:i|it|we|you|he|she|they|that|this)\b)|"
    r"(?:didn't|did not|don't|do not|doesn't|does not) (?:know|realize|think so)(?: that)?"
    r"(?=\s*[,.!?]|\s*$)|"
    r"no (?:problem|worries|way|doubt|wonder|idea|matter|offense|kidding|big deal)|"
    r"nothing (?:much|special|new|wrong|more|better|beats|like|compares)|never mind|"
    r"(?:can't|cannot|couldn't|could not|can not) (?:stop|wait|help|imagine|believe|complain)|"
    r"(?:can|could) never (?:give up|get enough|say no)|couldn't (?:be|have)|"
    r"(?:can't|cannot|can not|couldn't|could not) resist|what (?:\w+ ){1,2}wouldn't give|"
    # idioms that say yes: "I don't mind trying", "I can never get sick of zombies", "you'll
    # never believe this", "I didn't know you live in Oahu" (it holds), "I didn't think I would
    # like running" (a past expectation), "I wish I wasn't single" (I am)
    r"(?:don't|do not|doesn't|does not|didn't|did not|wouldn't|would not) mind|"
    r"(?:can|could)?\s?never get (?:sick|tired|bored) of|"
    r"(?:can't|cannot) get (?:sick|tired|bored) of|"
    r"(?:won't|will never|would never|wouldn't|never) believe|"
    r"(?:didn't|did not) (?:know|realize)(?= (?:that|you|he|she|they|it|there|my|your)\b)|"
    r"(?:didn't|did not|never) (?:think|thought|expect|expected|imagine|imagined)"
    r"(?= (?:i|i'd|i would|that i|it would|they|they'd|they would|he|she|we|you|the user|user)\b)|"
    r"wish (?:i|we) (?:wasn't|weren't|didn't|hadn't|was not|were not|did not|had not)|"
    r"(?:^|[.!?:\x22“]\s*)(?:isn't|aren't|wasn't|don't|doesn't|didn't|wouldn't|won't|haven't|"
    r"hasn't|can't|shouldn't)\b[^.!?]*\?)|"
    r"(?:^|[.!?,:\x22“]\s*)(?:no|nope|nah)\b(?=\s*[,.!?]|\s*$)"
)
#: A negative answer to a question: what follows may restate the question positively.
_ANSWER_NEGATION = re.compile(
    r"(?:^|[.!?:\x22“]\s*)(?:no|nope|nah|not really|not yet|not much|not at all|never)\b"
    r"(?=\s*[,.!?]|"
    r"\s+(?:i|i'm|i've|i have|i haven't|i don't|i didn't|i do|not|but|just|he|she|they|we|it's)"
    r"\b|\s*$)" + r"|\bi (?:did not|didn't) (?:know|realize) that\b(?=\s*[,.!?]|\s*$)"
)
#: Content words a negation reaches: the rest of its clause, at most this many.
NEGATION_REACH = 3
#: Words that end the reach of a negation: a new clause starts.
_SCOPE_ENDS = _wordset("but because since so when if while although though unless")
_SENTENCE_ENDS = frozenset(".!?;")
_CONTRASTS = _wordset("but although though whereas")
_PIECE = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|[,;:.!?()\"]")
_STOPS = frozenset(',;:.!?()"')


def _is_negator(token: str) -> bool:
    return token in NEGATORS or token.endswith("n't") or token in _CONTRACTED_NEGATIONS


_CONTRACTED_NEGATIONS = _wordset(
    """
    dont doesnt didnt isnt arent wasnt werent wont wouldnt shouldnt couldnt havent hasnt
    hadnt cant
    """
)


@dataclass(frozen=True)
class Marked:
    """The content-word stems of a text, each with the scopes it occurs in."""

    stems: list[str]
    negated: list[bool]  # in the reach of a negation (true or "no longer")
    truly_negated: list[bool]  # in the reach of a true negation
    hedged: list[bool]  # after a hedge in its sentence
    reported: list[bool]  # in the reach of a reporting verb
    bare_negation: bool
    #: the clause each stem is in (clauses end at sentence ends, "but", "because" ...)
    unit: list[int] = field(default_factory=list)
    #: per clause: whether it holds a negation of any kind (true, "no longer", a bare "No")
    unit_negated: list[bool] = field(default_factory=list)
    #: after "my" / "our": a possession the sentence presupposes, whatever hedges it
    possessed: list[bool] = field(default_factory=list)
    #: the clauses of questions
    questions: set[int] = field(default_factory=set)
    #: per clause: the sentence it is in
    unit_sentence: list[int] = field(default_factory=list)
    #: per clause: whether it refers back with a pro-form ("... but I will not be taking those")
    unit_refers: list[bool] = field(default_factory=list)
    #: per clause: whether it is a negation with no word of its own, which says "not" of the
    #: clause before it ("my parents were into sports but I wasn't so much")
    unit_elliptic: list[bool] = field(default_factory=list)


def mark(text: str, hedge: re.Pattern[str] = _HEDGE) -> Marked:
    """Content words of ``text`` with their negation, hedge and report scopes.

    A negation reaches the next :data:`NEGATION_REACH` content words of its clause; a hedge
    reaches the end of its clause, and the rest of the sentence when it hedged nothing of its
    own before a "but" ("I'm not sure, but the launch moved, I think"); reported speech reaches
    the rest of its sentence, up to a "but" or "so".
    """
    # quotation marks are left out: `User stated: "I did not know"` reads as its quote does
    folded = re.sub(r"[\x22“”]", " ", fold(text).replace("’", "'"))
    bare = [m.span() for m in _BARE_NEGATION.finditer(folded)]
    bare += [m.span() for m in _ANSWER_NEGATION.finditer(folded)]
    past = [m.span() for m in _PAST_PHRASES.finditer(folded)]
    negating = [m.span() for m in _NEGATING_PHRASES.finditer(folded)]
    hedges = [m.span() for m in hedge.finditer(folded) if not _negated_hedge(folded, m)]
    report_spans = _report_spans(folded)
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(folded)]
    out = Marked([], [], [], [], [], bool(_ANSWER_NEGATION.search(folded)), [], [False])
    out.unit_sentence.append(0)
    out.unit_refers.append(False)
    sentence = 0
    negator_seen = False
    reach = true_reach = 0
    hedging = carried = False  # in a hedge's reach; the hedge clause has no content word yet
    whole = False  # the hedge reaches the end of the sentence
    pieces = list(_PIECE.finditer(folded))
    previous = last = ""
    sentence_start, opening = 0, ""  # the current sentence's first clause and first word
    for n, m in enumerate(pieces):
        piece, at = m.group(), m.start()
        following = pieces[n + 1].group() if n + 1 < len(pieces) else ""
        after, previous = previous, piece
        opening = opening or (piece if piece not in _STOPS else "")
        if any(lo <= at < hi for lo, hi in hedges):
            hedging = carried = True
            continue
        if piece in _STOPS or piece in _SCOPE_ENDS or any(at == b for b in breaks):
            if piece != '"':
                reach = true_reach = 0
                # a hedge that hedged nothing yet, followed by a "but" ("I'm not sure, but ..."),
                # hedges the rest of the sentence
                contrast = piece in _CONTRASTS or following in _CONTRASTS
                whole = whole or (hedging and carried and contrast)
                if piece in _SENTENCE_ENDS:
                    # a hedge that hedged nothing but an answer ("I'm not sure, but yes; I had
                    # to ...", "... but oh wow, yes I do...The entire series") hedges what the
                    # answer goes on to say
                    hedging = whole = hedging and whole and carried
                else:
                    hedging = hedging and (whole or (carried and contrast))
            if piece == "?" and opening in _QUESTION_OPENINGS:  # it asserts nothing, not even
                asked = range(sentence_start, len(out.unit_negated))  # a negation
                out.questions.update(asked)
                for i in range(len(out.stems) - 1, -1, -1):
                    if out.unit[i] < sentence_start:
                        break
                    out.negated[i] = out.truly_negated[i] = False
            if piece in _SENTENCE_ENDS or piece in _SCOPE_ENDS or any(at == b for b in breaks):
                out.unit_negated.append(False)  # a new clause starts
                if piece in _SENTENCE_ENDS:
                    sentence_start, opening = len(out.unit_negated) - 1, ""
                    sentence += 1
                out.unit_sentence.append(sentence)
                out.unit_refers.append(False)
            if piece in _STOPS or piece in _SCOPE_ENDS:
                continue
        if any(lo <= at < hi for lo, hi in bare):
            negator_seen = True
            continue
        if piece in PAST_NEGATORS or any(lo <= at < hi for lo, hi in past):
            reach = NEGATION_REACH
            out.unit_negated[-1] = True
            continue
        if _is_negator(piece) or any(lo <= at < hi for lo, hi in negating):
            reach = true_reach = NEGATION_REACH
            negator_seen = True
            out.unit_negated[-1] = True
            continue
        value = _number_stem(piece)
        if value is None and not _content_word(piece):
            if piece in _PRO_FORMS:
                out.unit_refers[-1] = True
            continue
        out.stems.append(value or stem(piece))
        out.negated.append(reach > 0)
        out.truly_negated.append(true_reach > 0)
        out.hedged.append(hedging)
        out.reported.append(any(lo <= at < hi for lo, hi in report_spans))
        out.unit.append(len(out.unit_negated) - 1)
        owned = bool(out.possessed) and out.possessed[-1] and after == last
        out.possessed.append(after in _POSSESSIVES or owned)  # "my new camera": new, camera
        last = piece
        reach, true_reach = max(reach - 1, 0), max(true_reach - 1, 0)
        carried = False
    # a clause refers back with its pro-form only when it says little of its own ("but I will
    # not be taking those"; not "but didn't make it to the music section")
    own = Counter(u for u, s in zip(out.unit, out.stems, strict=True) if s not in _weak())
    for unit in range(len(out.unit_refers)):
        if own[unit] > _REFERRING_WORDS:
            out.unit_refers[unit] = False
    said = Counter(out.unit)
    out.unit_elliptic.extend(n and not said[u] for u, n in enumerate(out.unit_negated))
    if negator_seen and not out.stems:  # "I do not.", "I haven't.": an answer, nothing more
        out = Marked([], [], [], [], [], True, [], [True], unit_sentence=[0], unit_refers=[False])
    return out


_POSSESSIVES = _wordset("my our")
#: A clause with more content words than this (beyond :data:`WEAK` ones: "this year") says
#: something of its own, and does not refer back to another clause with its pro-form.
_REFERRING_WORDS = 1
#: Words by which a clause refers back to what another clause of its sentence says.
_PRO_FORMS = _wordset("it that those these them one ones")
#: First words of a sentence ending in "?" that make it a question (not "I hate it, you know?").
_QUESTION_OPENINGS = _wordset(
    """
    how what why who where when which do does did is are was were have has can could would will
    should not don't doesn't didn't isn't aren't won't wouldn't can't haven't hasn't shouldn't
    """
)


def _number_stem(token: str) -> str | None:
    """A number as one stem whatever its spelling ("3", "three" -> "#3"), else ``None``."""
    values = numbers([token])
    if len(values) != 1:
        return None
    return f"#{next(iter(values)):g}"


def _negated_hedge(folded: str, m: re.Match[str]) -> bool:
    return m.group(1) in _NEGATABLE_HEDGE and bool(_HEDGE_NEGATOR.search(folded[: m.start()]))


def _report_spans(folded: str) -> list[tuple[int, int]]:
    """Where reported speech reaches: after its verb, or before it when the verb ends the
    sentence ("..., she said.")."""
    spans = []
    for m in _REPORTED.finditer(folded):
        after = folded[m.end() :]
        if words(after):
            stop = re.search(r"[,;]?\s+(?:but|although|though|whereas|so|and then)\b", after)
            spans.append((m.end(), m.end() + stop.start() if stop else len(folded)))
        else:
            spans.append((0, m.start()))
    return spans


# --- Clauses ---------------------------------------------------------------------------------

_CLAUSE_BREAK = re.compile(
    r"(?<=;)[\"'”’)]*\s+|\s+-+\s+|,\s*(?=(?:and|but|so|while|though|although|whereas|"
    r"because)\b)|\s+(?=(?:but|whereas|although|though)\b)|\s+(?=and\s+(?:i|i'm|i've|he|she|"
    r"they|we|it|user|the user|my|his|her|their|our)\b)",
    re.IGNORECASE,
)


def clauses(text: str) -> list[str]:
    """A content split into clauses (sentences, and clauses joined by "but", ", and" ...)."""
    return [part for part in _CLAUSE_BREAK.split(text) if part and part.strip()]


def sentences_around(
    text: str, start: int, end: int, quotable: Sequence[tuple[int, int]] | None = None
) -> list[str]:
    """The sentences of ``text`` that the span ``[start:end]`` overlaps (whole sentences), cut
    by the splitter the offline model uses too (:mod:`.sentences`); ``quotable``: the ranges of
    the message outside its placeholders."""
    hit = [
        text[lo:hi]
        for lo, hi in sentence_spans(text, quotable)
        if lo < max(end, start + 1) and start < hi
    ]
    return hit or [text[start:end]]


# --- The check -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """What a content may draw on: the quote's sentences (where polarity, hedges and reporters
    are judged, word by word) and every word of its message and of the conversation before it."""

    quote: str
    sentences: list[str]
    message: str = field(repr=False)
    context: Sequence[str] = field(repr=False)
    marked: Marked = field(repr=False)
    near: frozenset[str] = field(repr=False)
    before: Marked = field(repr=False)
    reporters: list[tuple[frozenset[str], str]] = field(repr=False)
    approximate: frozenset[float] = field(repr=False)
    stems: frozenset[str] = field(repr=False)
    numbers: frozenset[float] = field(repr=False)


@dataclass(frozen=True)
class Finding:
    """Why a content is not faithful: a rejection code and a message naming the words."""

    code: str
    message: str


#: How many messages before the quoted one a content may draw its subject from ("Do you have
#: kids?" -- "Yes, two." -> "The user has two kids.").
NEAR_MESSAGES = 2


def source_for(message: str, start: int, end: int, context: Sequence[str] = ()) -> Source:
    """The :class:`Source` of a quote ``message[start:end]``; ``context`` holds the texts of the
    messages before it, oldest first (:class:`Transcript` does the same for many quotes)."""
    tokens = words("\n".join([message, *context]))
    stems = frozenset(stem(t) for t in tokens)
    return _source(message, start, end, context, stems, frozenset(numbers(tokens)))


def _source(
    message: str,
    start: int,
    end: int,
    context: Sequence[str],
    stems: frozenset[str],
    values: frozenset[float],
    quotable: Sequence[tuple[int, int]] | None = None,
) -> Source:
    sentences = sentences_around(message, start, end, quotable)
    before = list(context[-NEAR_MESSAGES:]) if NEAR_MESSAGES else []
    near = {stem(t) for t in words("\n".join([*sentences, *before]))}
    return Source(
        quote=message[start:end],
        sentences=sentences,
        message=message,
        context=context,
        marked=_joined([mark(s) for s in sentences]),
        near=frozenset(near),
        before=_joined([mark(text) for text in before]),
        reporters=[
            (frozenset(stem(t) for t in words(text)), who)
            for text in sentences
            if (who := _reporter(text)) is not None
        ],
        approximate=frozenset(_approximated(message[start:end])),  # the quote's own
        stems=stems,
        numbers=values | _implied(stems),
    )


def widen(source: Source, texts: Sequence[str]) -> Source:
    """``source`` whose words and numbers also include those of ``texts`` (what the system
    checked elsewhere, such as a candidate's resolved dates)."""
    tokens = words(" ".join(texts))
    return replace(
        source,
        stems=source.stems | {stem(t) for t in tokens},
        numbers=source.numbers | numbers(tokens),
    )


def _only(marked: Marked, scope: str, inside: bool = True) -> frozenset[str]:
    """Stems of ``marked`` that occur only inside ``scope`` (an attribute of :class:`Marked`),
    never outside it; or only outside it (``inside=False``)."""
    flags: list[bool] = getattr(marked, scope)
    within = {s for s, f in zip(marked.stems, flags, strict=True) if f}
    without = {s for s, f in zip(marked.stems, flags, strict=True) if not f}
    return frozenset(within - without if inside else without - within)


def _basis(said: Marked, source: Source) -> Marked | None:
    """What a content clause is judged against: the quote's sentences when it shares a word
    with them, else the messages just before (it answers them), else nothing."""
    for marked in (source.marked, source.before):
        if set(said.stems) & set(marked.stems):
            return marked
    return None


class Transcript:
    """A conversation's message texts, with the words of every prefix computed once: the
    context of each quote is "the conversation up to the turn", and many candidates cite the
    same or nearby turns."""

    def __init__(
        self,
        texts: Sequence[str],
        names: Sequence[str] = (),
        quotable: Sequence[Sequence[tuple[int, int]] | None] = (),
    ) -> None:
        """``names``: words every quote may use besides its messages' (the speakers' names,
        so "Tool search returned ..." can name the tool; the messages' dates, so a relative
        "yesterday" may be resolved to "2024-05-08"). ``quotable``: per message, its ranges
        outside placeholders (sentences never cross a placeholder); all of it when missing."""
        self.texts = list(texts)
        self.quotable = list(quotable)
        extra = words(" ".join(names))
        self._names = frozenset(stem(t) for t in extra)
        self._name_numbers = frozenset(numbers(extra))
        self._own: dict[int, tuple[frozenset[str], frozenset[float]]] = {}
        self._upto: dict[int, tuple[frozenset[str], frozenset[float]]] = {}

    def source(self, index: int, start: int, end: int) -> Source:
        """The :class:`Source` of the quote ``[start:end]`` of message ``index``."""
        stems, values = self._prefix(index)
        ranges = self.quotable[index] if index < len(self.quotable) else None
        text = self.texts[index]
        source = _source(text, start, end, self.texts[:index], stems, values, ranges)
        return replace(source, near=source.near | self._names)

    def _words_of(self, index: int) -> tuple[frozenset[str], frozenset[float]]:
        if index not in self._own:
            tokens = words(self.texts[index])
            self._own[index] = (frozenset(stem(t) for t in tokens), frozenset(numbers(tokens)))
        return self._own[index]

    def _prefix(self, index: int) -> tuple[frozenset[str], frozenset[float]]:
        if index not in self._upto:
            lower = max((i for i in self._upto if i < index), default=-1)
            stems, values = self._upto.get(lower, (self._names, self._name_numbers))
            more_stems, more_values = set(stems), set(values)
            for i in range(lower + 1, index + 1):
                own_stems, own_values = self._words_of(i)
                more_stems |= own_stems
                more_values |= own_values
            self._upto[index] = (frozenset(more_stems), frozenset(more_values))
        return self._upto[index]


def _joined(marks: list[Marked]) -> Marked:
    offsets, sentence_offsets = [0], [0]
    for m in marks:
        offsets.append(offsets[-1] + len(m.unit_negated))
        sentence_offsets.append(sentence_offsets[-1] + max(m.unit_sentence, default=0) + 1)
    return Marked(
        stems=[s for m in marks for s in m.stems],
        negated=[f for m in marks for f in m.negated],
        truly_negated=[f for m in marks for f in m.truly_negated],
        hedged=[f for m in marks for f in m.hedged],
        reported=[f for m in marks for f in m.reported],
        bare_negation=any(m.bare_negation for m in marks),
        unit=[u + offset for m, offset in zip(marks, offsets, strict=False) for u in m.unit],
        unit_negated=[f for m in marks for f in m.unit_negated],
        possessed=[f for m in marks for f in m.possessed],
        questions={u + at for m, at in zip(marks, offsets, strict=False) for u in m.questions},
        unit_sentence=[
            f + at for m, at in zip(marks, sentence_offsets, strict=False) for f in m.unit_sentence
        ],
        unit_refers=[f for m in marks for f in m.unit_refers],
        unit_elliptic=[
            f for m in marks for f in (m.unit_elliptic or [False] * len(m.unit_negated))
        ],
    )


def _approximated(text: str) -> set[float]:
    """The numbers ``text`` gives as approximations ("about 46", "~3.5")."""
    folded = fold(text)
    found = set()
    for m in _APPROX.finditer(folded):
        number = _DIGITS.search(folded, m.end() - 1)
        if number is not None:
            found.add(_digits_value(number.group()))
    return found


def _reporter(text: str) -> str | None:
    """Who a reported sentence names as its source: "sister" in "My sister told me ...",
    "bbc" in "according to the BBC"; ``None`` for nobody in particular."""
    folded = fold(text).replace("’", "'")
    m = _REPORTED.search(folded)
    if m is None:
        return None
    if m.group(1) == "according to":
        after = [t for t in words(folded[m.end() :]) if t not in STOPWORDS]
        return after[0] if after else None
    if m.group(1) in _UNNAMING:  # the word before is the claim's subject or a time, not a source
        return None
    before = [re.sub(r"'s$", "", t) for t in words(folded[: m.start()])]
    if not before or before[-1] in _VAGUE_REPORTERS or not _content_word(before[-1]):
        return None
    return before[-1]


#: A clause is beyond its source when at least this many of its content words, and more than
#: this share of them, occur nowhere in the source (tuned on MSC's odd lines).
MIN_UNSUPPORTED = 3
MAX_UNSUPPORTED_SHARE = 0.6
#: A clause with at least this many content words must share one with its quote's sentence or
#: the messages just before it.
MIN_ANCHORED = 1
#: Content words too common to anchor a clause on their own: a clause holding other content
#: words must share one of those with its quote's sentence or the messages just before it
#: ("I love shrimp" is not anchored by the "love" of "I love baking cakes").
WEAK = _wordset(
    """
    like likes liked love loves loved enjoy enjoys enjoyed want wants wanted need needs needed
    feel feels felt think know try tries tried use used work works worked working time times
    day days year years week weeks month months good great nice bad fun new old big small
    little favorite favourite best better lot people thing way really always usually often
    sometimes now currently recently today soon also well happy pretty kind sure able prefer
    prefers preferred
    """
)


@cache
def _weak() -> frozenset[str]:
    return frozenset(stem(w) for w in WEAK)


#: Stems sharing this many first letters count as the same word.
PREFIX = 6


def check_faithful(content: str, source: Source, reported_by: str | None = None) -> Finding | None:
    """The first way ``content`` is unfaithful to ``source``, or ``None``.

    A quotation of another message (``Asked "Do you have kids?", ...``) is what that message
    said, not a claim of the content: it must occur there verbatim, and is not judged further.
    ``reported_by`` (the candidate's structured reporter) may name the source's reporter.
    """
    content = _QUOTATION.sub(lambda m: _unquote(m, source), content)
    folded = fold(content)
    for sentence in _sentences(content):
        hedged = bool(hedges_in(sentence, CONTENT_HEDGE))
        # an approximation anywhere in the content keeps it ("... (approximately)")
        approximate = bool(_CONTENT_APPROX.search(folded) or _APPROX.search(folded))
        approximate = approximate or "ish" in folded
        attributed = _CONTENT_REPORTED.search(fold(sentence)) is not None
        named = {stem(t) for t in words(f"{sentence} {reported_by or ''}")}
        for part in clauses(sentence):
            finding = (
                _unsupported(part, source)
                or _polarity(part, source)
                or _uncertainty(part, source, hedged, attributed, named, approximate)
            )
            if finding is not None:
                return finding
    return None


_QUOTATION = re.compile(r'"([^"\n]{3,})"|“([^”\n]{3,})”')


def _unquote(m: re.Match[str], source: Source) -> str:
    quoted = m.group(1) or m.group(2)
    if quoted in source.message or not any(quoted in text for text in source.context):
        return m.group()
    return '""'


def _sentences(content: str) -> list[str]:
    """A content's sentences, cut where a quote's are (:mod:`.sentences`)."""
    return [content[lo:hi] for lo, hi in sentence_spans(content)]


def _unsupported(part: str, source: Source) -> Finding | None:
    tokens = words(part)
    missing_numbers = sorted(numbers(tokens) - source.numbers)
    if missing_numbers:
        shown = ", ".join(f"{n:g}" for n in missing_numbers)
        return Finding("CONTENT_UNSUPPORTED", f"number {shown} is not in the source")
    folded = fold(source.message)
    missing_names = [
        n
        for n in _names(part)
        if not all(stem(w) in source.stems or _spelled_alike(w, source) for w in words(n))
        and n not in folded
    ]
    if missing_names:
        return Finding(
            "CONTENT_UNSUPPORTED", f"name {', '.join(missing_names)} is not in the source"
        )
    content = {stem(t) for t in tokens if _content_word(t)}
    quoted = numbers(words(" ".join(source.sentences)))
    anchors = {s for s in content if s not in _weak()} or content
    anchored = _supported(anchors, source.near) or bool(numbers(tokens) & quoted)
    if len(content) >= MIN_ANCHORED and not anchored:
        return Finding(
            "CONTENT_UNSUPPORTED",
            f"{part.strip()!r} shares no word with its quote's sentence or the messages just "
            "before it",
        )
    unsupported = sorted(w for w in content if not _supported({w}, source.stems))
    if len(unsupported) >= MIN_UNSUPPORTED and len(unsupported) > MAX_UNSUPPORTED_SHARE * len(
        content
    ):
        return Finding(
            "CONTENT_UNSUPPORTED",
            f"{part.strip()!r} claims what the source does not say ({', '.join(unsupported)})",
        )
    return None


#: A name this long may be spelled one letter differently in the source ("Flatts" for
#: "flats", "Britney" for "brittney"); shorter ones must match.
MIN_FUZZY_NAME = 5


def _spelled_alike(name: str, source: Source) -> bool:
    """Whether the source holds ``name`` spelled a little differently (:func:`.lexicon.
    spelled_alike`)."""
    return len(name) >= MIN_FUZZY_NAME and spelled_alike(stem(name), source.stems)


def _supported(stems: set[str], source: frozenset[str]) -> bool:
    """Whether some stem occurs in ``source`` in some form or in other words
    (:mod:`.lexicon`: its root, a compound, a spelling a letter apart, a synonym or a kind of
    it), or shares its first :data:`PREFIX` letters with a stem there ("pregnant" /
    "pregnancy", which Snowball stems apart)."""
    if stems & source:
        return True
    prefixes = {s[:PREFIX] for s in stems if len(s) >= PREFIX}
    if any(s[:PREFIX] in prefixes for s in source if len(s) >= PREFIX):
        return True
    lexicon = _lexicon()
    return any(lexicon.supported(s, source) for s in stems)


@cache
def _lexicon() -> Lexicon:
    return Lexicon(stem)


def _content_word(token: str) -> bool:
    return not (
        token in STOPWORDS
        or token in FRAMING
        or _is_negator(token)
        or token in PAST_NEGATORS
        or token.isdigit()
    )


_NAME = re.compile(r"[^\W\d_][^\W_]*(?:['’][^\W_]+)*")


def _names(part: str) -> list[str]:
    """Capitalized words (and month and day names) that are not function or framing words."""
    found = []
    for m in _NAME.finditer(part):
        word = m.group()
        low = re.sub(r"'s$", "", fold(word).replace("’", "'"))
        if not _content_word(low) or numbers([low]) or CONTENT_HEDGE.fullmatch(low):
            continue
        if word[0].isupper() or low in _MONTHS_DAYS:
            found.append(low)
    return found


def _polarity(part: str, source: Source) -> Finding | None:
    said = _in_source_words(mark(part, CONTENT_HEDGE), source)
    basis = _basis(said, source)
    if basis is None:
        return None
    answering = basis is source.before  # the content draws on the messages before the quote
    if _restated_by_antonym(said, basis):  # "didn't lose the house" -> "kept the house"
        return None
    if _POSSESSION.search(fold(part)):  # "you wouldn't tell by my rainbow hair": it is mine
        basis = replace(basis, truly_negated=[
            n and not p for n, p in zip(basis.truly_negated, basis.possessed, strict=True)
        ])  # fmt: skip
    says_no = _says_no(part)
    only_negated = _only(basis, "truly_negated")
    dropped = [] if says_no else [s for s in said.stems if s in only_negated]
    best = _aligned(said, basis)
    if (
        not dropped
        and not says_no
        and best
        and all(_flagged(basis, unit, "truly_negated") for unit in best)
    ):  # the clause it restates negates them, though they occur plainly elsewhere
        dropped = sorted({basis.stems[i] for unit in best for i in unit})
    if not dropped and not says_no:
        dropped = _still(part, said, basis) or _denied(part, said, source)
    if dropped:
        return Finding(
            "NEGATION_DROPPED",
            f"the source negates {', '.join(dropped)}; {part.strip()!r} does not",
        )
    pairs = list(zip(said.stems, said.truly_negated, strict=True))
    answer = source.marked.bare_negation  # the turn answers "No" to the message before it
    if answering and (answer or _says_no(source.sentences[0])):
        return None  # an answer that negates the question it answers
    asked = set(source.before.stems[-_ASKED:])
    for unit in _units(said):
        if not any(said.truly_negated[i] for i in unit):
            continue
        stems = [said.stems[i] for i in unit]
        negated = {said.stems[i] for i in unit if said.truly_negated[i]}
        best = _aligned(_at(said, unit), basis)
        if (
            best
            and not any(_restated_negated(basis, u, negated) for u in best)
            and not _head_negated(said, unit, basis)
            and not (answer and asked & set(stems) and not _restates(basis, best))
            and not _negated_before(said, source)
        ):  # the sentence it restates says it plainly
            shared = sorted({basis.stems[i] for u in best for i in u})
            return Finding(
                "NEGATION_ADDED",
                f"{part.strip()!r} is negative; the source says {', '.join(shared)} plainly",
            )
    if basis.bare_negation or answer:
        return None
    if answering and _says_no(" ".join(source.sentences)):
        return None
    negated_anywhere = {s for s, neg in zip(basis.stems, basis.negated, strict=True) if neg}
    if any(neg and s in negated_anywhere for s, neg in pairs):
        return None
    spread = [  # a clause negated by another of its sentence that refers back to it
        n or (not basis.unit_negated[u] and _sentence_negated(basis, u))
        for n, u in zip(basis.negated, basis.unit, strict=True)
    ]
    only_plain = _only(replace(basis, negated=spread), "negated", inside=False)
    added = [s for s, neg in pairs if neg and s in only_plain]
    if added:
        return Finding(
            "NEGATION_ADDED", f"{part.strip()!r} negates {', '.join(added)}; the source does not"
        )
    return None


#: How many content words at the end of the messages before a quote make the question it may
#: answer ("... Have you ever owned a business?" -- "No I have not").
_ASKED = 12
#: A content clause sharing this many words with a clause of the quote restates that clause,
#: whatever "No" answered the question before ("Are you visiting there now?" -- "No, but I like
#: to go at least twice a year": "I don't visit Europe twice a year" restates the "but" clause).
RESTATES = 2


def _restates(basis: Marked, best: list[list[int]]) -> bool:
    """Whether a clause of the quote's first sentence (the one the "No" answers in) after its
    first ("No, but I like to go ...") that is no question shares at least :data:`RESTATES` of
    a content clause's words: one it is aligned with (:func:`_aligned`). "Not yet. I watched the
    Mickey Mouse Club" says its "not" of the question, and the sentence after it does not
    restate that; nor does the clause of the "No" itself ("Do you have pets?" -- "No just
    listen to some music and relax": "User doesn't have pets")."""
    return any(
        basis.unit_sentence[unit] == 0
        and unit > 0  # the "No" is the first clause's: "No just listen to some music" is its own
        and unit not in basis.questions
        and len({basis.stems[i] for i in positions}) >= RESTATES
        for positions in best
        for unit in [basis.unit[positions[0]]]
    )


def _aligned(said: Marked, basis: Marked) -> list[list[int]]:
    """The clauses of ``basis`` that a content clause restates: those sharing the most of its
    stems (each as the positions of the shared stems); none when it shares no stem."""
    wanted = set(said.stems)
    shared: dict[int, list[int]] = {}
    for i, (s, unit) in enumerate(zip(basis.stems, basis.unit, strict=True)):
        if s in wanted:
            shared.setdefault(unit, []).append(i)
    if any(u not in basis.questions for u in shared):  # a question asserts nothing
        shared = {u: p for u, p in shared.items() if u not in basis.questions}
    size = {u: len({basis.stems[i] for i in positions}) for u, positions in shared.items()}
    most = max(size.values(), default=0)
    return [shared[u] for u in sorted(shared) if size[u] == most] if most else []


def _units(marked: Marked) -> list[list[int]]:
    """The positions of the stems of each clause of ``marked``."""
    units: dict[int, list[int]] = {}
    for i, unit in enumerate(marked.unit):
        units.setdefault(unit, []).append(i)
    return list(units.values())


def _at(marked: Marked, positions: list[int]) -> Marked:
    """The stems of ``marked`` at ``positions`` (only the stems are kept)."""
    return Marked([marked.stems[i] for i in positions], [], [], [], [], False)


def _flagged(marked: Marked, positions: list[int], scope: str, share: float = 0.5) -> bool:
    """Whether more than ``share`` of the stems at ``positions`` of ``marked`` are in ``scope``
    there (most of them by default)."""
    flags: list[bool] = getattr(marked, scope)
    return sum(1 for i in positions if flags[i]) > share * len(positions)


def _in_source_words(said: Marked, source: Source) -> Marked:
    """``said`` with each stem the quote's sentences or the messages before it say in another
    form or other words replaced by theirs ("children" by "kid"), so that their polarity is
    compared."""
    known = frozenset(source.marked.stems) | frozenset(source.before.stems)
    lexicon = _lexicon()
    stems = [s if s in known else (lexicon.match(s, known) or s) for s in said.stems]
    return replace(said, stems=stems)


def _still(part: str, said: Marked, basis: Marked) -> list[str]:
    """The words a content says are "still" so that the source says are no longer ("I used
    to work in human services" -> "I still work in human services")."""
    if "still" not in words(part):
        return []
    past = _only(basis, "negated")
    return sorted({s for s in said.stems if s in past})


#: A quote that opens by denying the question before it: "No I have not", "No, I don't".
_DENIAL = re.compile(
    r"^(?:(?:no|nope|nah)\b[\s,.!]*(?:i|we)\s+(?:have not|haven't|havent|do not|don't|dont|"
    r"did not|didn't|didnt|am not|can't|cannot|never)|(?:no|nope|nah)\b[\s,.!]*never|"
    r"(?:i|we) (?:haven't|have not|don't|do not|didn't|did not)(?=\s*[.!,]))\b"
)
#: A content that says what the user would like, not what is so.
_DESIRE = re.compile(
    r"\b(?:would|want|wants|wanted|hope|hopes|plan|plans|wish|wishes|interested)\b"
)


def _denied(part: str, said: Marked, source: Source) -> list[str]:
    """The words of the question before the quote that a content says plainly while the quote
    opens by denying it ("Have you played Counter Strike?" -- "No i haven't, ..." -> "I have
    played Counter Strike")."""
    if not source.context or "?" not in source.context[-1] or _DESIRE.search(fold(part)):
        return []
    if not _DENIAL.match(fold(source.sentences[0]).replace("’", "'").strip()):
        return []
    asked = set(source.before.stems[-_ASKED:]) - set(source.marked.stems)
    return sorted({s for s in said.stems if s in asked})


def _restated_negated(marked: Marked, positions: list[int], negated: set[str]) -> bool:
    """Whether a clause of ``marked`` (``positions``: the words a content clause shares with
    it) negates what the content clause negates (``negated``): by another clause of its
    sentence (:func:`_sentence_negated`), or by its own negation, which must come before most
    of the clause's occurrences of those words ("I saw my kids for the first time in months"
    does not negate "saw my kids"). When the clause holds none of them, its negation may be
    the content's in other words ("the nursery is nowhere near done": "not ready")."""
    unit = marked.unit[positions[0]]
    if not marked.unit_negated[unit]:
        return _sentence_negated(marked, unit)
    within = [i for i, u in enumerate(marked.unit) if u == unit]
    start = next((i for i in within if marked.negated[i]), len(marked.stems))
    hits = [i for i in within if marked.stems[i] in negated]
    return not hits or 2 * sum(1 for i in hits if i >= start) > len(hits)


def _sentence_negated(marked: Marked, unit: int) -> bool:
    """Whether clause ``unit`` of ``marked`` holds a negation, or another clause of its
    sentence negates it by referring back ("There are opportunities to teach summer school
    but I will not be taking those"; not "No I do not, but I enjoy a good party"), or a later
    one says "not" of it with no word of its own ("... into sports but I wasn't so much")."""
    if marked.unit_negated[unit] or not marked.unit_sentence:
        return marked.unit_negated[unit]
    sentence = marked.unit_sentence[unit]
    elliptic = marked.unit_elliptic or [False] * len(marked.unit_negated)
    return any(
        negated and (refers or (bare and later > unit)) and at == sentence
        for later, (negated, refers, bare, at) in enumerate(
            zip(marked.unit_negated, marked.unit_refers, elliptic, marked.unit_sentence,
                strict=True)
        )
    )  # fmt: skip


def _head_negated(said: Marked, unit: list[int], basis: Marked) -> bool:
    """Whether the first word a content clause negates is negated in ``basis`` too ("My
    parents aren't excited about me going to college" <- "... I know mine aren't too
    excited")."""
    head = next((said.stems[i] for i in unit if said.truly_negated[i]), None)
    return head is not None and any(
        s == head and negated for s, negated in zip(basis.stems, basis.negated, strict=True)
    )


#: Pairs of words where not saying one says the other ("didn't lose it" = "kept it").
ANTONYMS = (
    ("lose", "keep"), ("lose", "kept"), ("leave", "stay"), ("left", "stay"), ("forget", "remember"),
    ("forgot", "remember"), ("fail", "pass"), ("stop", "continue"), ("stop", "keep"),
    ("absent", "present"), ("alone", "together"), ("single", "married"), ("miss", "attend"),
    ("ignore", "notice"), ("deny", "admit"), ("reject", "accept"), ("lose", "win"),
    ("lost", "won"), ("awake", "asleep"), ("sober", "drunk"), ("alive", "dead"),
)  # fmt: skip


@cache
def _antonyms() -> frozenset[tuple[str, str]]:
    pairs = {(stem(a), stem(b)) for a, b in ANTONYMS}
    return frozenset(pairs | {(b, a) for a, b in pairs})


def _restated_by_antonym(said: Marked, basis: Marked) -> bool:
    """Whether a content clause says with the antonym of a word what the source says with
    its negation, or the other way round ("I didn't lose it in the divorce" -> "I kept the
    house")."""
    pairs = _antonyms()
    return any(
        (s, b) in pairs and said_negated != basis_negated
        for s, said_negated in zip(said.stems, said.truly_negated, strict=True)
        for b, basis_negated in zip(basis.stems, basis.truly_negated, strict=True)
    )


def _negated_before(said: Marked, source: Source) -> bool:
    """Whether a negated stem of ``said`` is negated in the messages just before the quote
    ("You mentioned you have never been camping")."""
    before = {s for s, neg in zip(source.before.stems, source.before.negated, strict=True) if neg}
    return any(neg and s in before for s, neg in zip(said.stems, said.truly_negated, strict=True))


def _says_no(part: str) -> bool:
    """Whether a content clause negates anything (a negation, or "no longer" in any wording)."""
    tokens = words(part)
    folded = fold(part)
    return any(_is_negator(t) or t in PAST_NEGATORS for t in tokens) or bool(
        _PAST_PHRASES.search(folded) or _NEGATING_PHRASES.search(folded)
    )


def _uncertainty(
    part: str,
    source: Source,
    hedged: bool = False,
    attributed: bool = False,
    named: frozenset[str] | set[str] = frozenset(),
    approximate: bool = False,
) -> Finding | None:
    """Hedges, approximations and reporters of the source kept; ``hedged``, ``attributed`` and
    ``named`` say what the content's whole sentence keeps (a hedge or an attribution reaches the
    rest of the sentence it stands in)."""
    said = mark(part, CONTENT_HEDGE)
    basis = _basis(said, source)
    missing = []
    values = numbers(words(part)) & source.approximate
    if values and not (approximate or _CONTENT_APPROX.search(fold(part))):
        missing.append("approximation")
    # the hedges and reporters judged are the quote's sentence's, not those of the messages
    # before it (another speaker's "maybe you should come live with me")
    if basis is not source.marked:
        basis = None
    shared = [s for s in said.stems if basis is not None and s in set(basis.stems)]
    if basis is not None and not (hedged or hedges_in(part, CONTENT_HEDGE)):
        hedging, share = basis, 0.5
        if _POSSESSION.search(fold(part)):  # "maybe I'll bring my horse": "I have a horse"
            hedging = replace(basis, hedged=[
                h and not p for h, p in zip(basis.hedged, basis.possessed, strict=True)
            ])  # fmt: skip
            share = 0.0  # but nothing else of the hedged clause
        if _mostly(shared, _only(hedging, "hedged")) or any(
            (best := _aligned(_at(said, unit), hedging))
            and all(_flagged(hedging, u, "hedged", share) for u in best)
            for unit in _units(said)
        ):  # all of its words hedged there, or the clause it restates is hedged
            missing.append("hedge")
    if basis is not None and _mostly(shared, _only(basis, "reported")):
        said_so = attributed or _CONTENT_REPORTED.search(fold(part)) is not None
        stems = named | {stem(t) for t in words(part)}
        absent = [
            who
            for words_of, who in source.reporters
            if _mostly(shared, words_of) and stem(who) not in stems
        ]
        if not said_so or absent:
            missing.append(f"attribution to {absent[0]!r}" if absent else "attribution")
    if not missing:
        return None
    return Finding(
        "UNCERTAINTY_DROPPED",
        f"the source qualifies what {part.strip()!r} states as plain fact "
        f"({', '.join(missing)} dropped)",
    )


#: A content that only says what the user has: a possession "my horse" presupposes.
_POSSESSION = re.compile(r"^\W*(?:i|user|the user)(?: also)? (?:have|has|own|owns)\b")


def _mostly(shared: list[str], scoped: frozenset[str], share: float = 0.5) -> bool:
    return sum(1 for s in shared if s in scoped) > share * len(shared)


__all__ = [
    "CONTENT_HEDGE",
    "STOPWORDS",
    "Finding",
    "Source",
    "Transcript",
    "check_faithful",
    "hedges_in",
    "source_for",
    "widen",
]
