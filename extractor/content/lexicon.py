"""When does a word of a content count as said by its source? Stems, and a little more.

The faithfulness check (:mod:`.faithfulness`) compares Snowball stems. People restate what they
said in other forms of a word and in other words; the check lets a content word be *supported*
by a source word that

* shares its **root**: the stem less an agent or derivation suffix ("teacher" / "teaching",
  "plumber" / "plumbing", "musician" / "music", "cyclist" / "cycling", "Italian" / "Italy");
* is a **compound** holding it, or is split in two ("camp" in "campgrounds", "sea food" for
  "seafood");
* is spelled a **letter or so apart** ("racoon" / "raccoon", "ocassionally"), for words of
  five letters or more;
* is a **synonym, abbreviation or kind** of it in :data:`LEXICON` ("kids" for "children",
  "wife" for "married", "cali" for "California", "husky" for "dog").

No package on PyPI ships an English synonym resource that installs with its data and runs
offline (WordNet packages download their data at run time, see ``docs/evaluation.md``), so
:data:`LEXICON` is the project's own: small, general, and directional (a kind supports the
word for its class, not the reverse: "my husky" supports "I have a dog"; "my dog" does not
support "I have a husky").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

#: Each line: words said to be the same thing (a synonym, spelling or abbreviation of each
#: other), then after ``<`` the words of kinds of it, which support it but not the reverse.
_GROUPS = """
kid child children kiddo < son daughter boy girl baby toddler teen teenager
kid child children < stepson stepdaughter
son < boy stepson
daughter < girl stepdaughter
grandkid grandchild grandchildren < grandson granddaughter grandbaby grandbabies
mother mom mum mommy mama momma < stepmom stepmother
father dad daddy papa pops < stepdad stepfather
parent < mother mom mum father dad stepmom stepdad
sibling < brother sister bro sis
brother bro
sister sis
grandmother grandma granny nana gran
grandfather grandpa granddad
married marriage spouse wed < wife husband hubby wedding
wife < married
husband hubby < married
fiance fiancee engaged engagement < wedding
partner < boyfriend girlfriend wife husband spouse fiance fiancee
relationship dating < boyfriend girlfriend partner
pet < dog cat puppy kitten hamster rabbit bunny parrot bird fish horse pony lizard
pet < snake turtle
dog doggy < puppy pup husky retriever terrier poodle labrador lab beagle bulldog corgi pug
dog < collie shepherd dachshund chihuahua rottweiler pitbull
cat < kitten kitty
horse < pony mare stallion
job work career employ occupation profession < boss coworker employer office
school < college university uni highschool class
college university uni
student < school college university class study
teacher teach < classroom
doctor physician doc
car vehicle automobile < truck suv
house home
apartment apt
vacation holiday trip travel
exercise workout fitness gym
movie film flick cinema
tv television
music < song band album concert
book novel < read
sport < football soccer basketball baseball tennis golf hockey volleyball softball rugby
food meal dish cuisine < eat
photo photograph picture pic
video vid
phone cellphone smartphone
computer pc laptop
internet online web
bike bicycle cycle cycling
ocean sea
beach shore
country nation
city town
restaurant diner cafe
america usa american
britain uk england english british
california cali
york nyc ny
francisco sf
italy italian
france french
spain spanish
mexico mexican
germany german
japan japanese
china chinese
ireland irish
canada canadian
australia aussie australian
india indian
greece greek
korea korean
russia russian
brazil brazilian
sweden swedish
netherlands holland dutch
philippines filipino
vietnam vietnamese
thailand thai
"""

#: Suffixes whose removal leaves the root of a stem ("teacher" -> "teach").
_SUFFIXES = ("ation", "ician", "ness", "ment", "ship", "hood", "ism", "ist", "ian", "ery",
             "ist", "ic", "al", "er", "or", "an", "i", "y", "e")  # fmt: skip
#: A root must keep at least this many letters.
MIN_ROOT = 3


def root(stem: str) -> str:
    """The root of a Snowball stem: one derivation suffix off, a doubled last consonant made
    single ("runner" -> "run"); the stem itself when too short to take a suffix off."""
    for suffix in _SUFFIXES:
        if stem.endswith(suffix) and len(stem) - len(suffix) >= MIN_ROOT:
            stem = stem[: -len(suffix)]
            break
    if len(stem) > MIN_ROOT and stem[-1] == stem[-2] and stem[-1] not in "aeiouls":
        stem = stem[:-1]
    return stem


def _build(stemmer: Callable[[str], str]) -> dict[str, frozenset[str]]:
    supports: dict[str, set[str]] = {}
    for line in _GROUPS.strip().splitlines():
        same, _, kinds = line.partition("<")
        names = [_phrase(w, stemmer) for w in same.split()]
        below = [_phrase(w, stemmer) for w in kinds.split()]
        for name in names:
            supports.setdefault(name, set()).update([*names, *below])
    return {k: frozenset(v - {k}) for k, v in supports.items()}


def _phrase(word: str, stemmer: Callable[[str], str]) -> str:
    return stemmer(word.lower())


class Lexicon:
    """The relations above for stems made by ``stemmer``."""

    def __init__(self, stemmer: Callable[[str], str]) -> None:
        self._supports = _build(stemmer)
        self._expanded: dict[frozenset[str], frozenset[str]] = {}

    def supporters(self, stem: str) -> frozenset[str]:
        """The stems that say ``stem`` in other words (synonyms and kinds of it)."""
        return self._supports.get(stem, frozenset())

    def expanded(self, source: frozenset[str]) -> frozenset[str]:
        """``source`` with the root of each of its stems (computed once per source)."""
        found = self._expanded.get(source)
        if found is None:
            if len(self._expanded) > 4096:
                self._expanded.clear()
            found = source | {root(s) for s in source}
            self._expanded[source] = found
        return found

    def match(self, stem: str, source: frozenset[str]) -> str | None:
        """The stem of ``source`` that says ``stem`` in another form or other words, if any."""
        if stem in source:
            return stem
        wanted = {stem, *self.supporters(stem)}
        roots = {root(w) for w in wanted}
        for s in sorted(source):
            if s in wanted or root(s) in roots or s in roots:
                return s
        # a compound holding it, or the same word spelled a letter apart ("workout" for "work
        # out", "buddhist" for "buddist"): its polarity is that word's
        return next(
            (s for s in sorted(source) if _compound(stem, [s]) or spelled_alike(stem, [s])), None
        )

    def supported(self, stem: str, source: frozenset[str]) -> bool:
        """Whether ``source`` (a set of stems) says ``stem`` in some form or other words."""
        if stem in source:
            return True
        expanded = self.expanded(source)
        wanted = {stem, root(stem), *self.supporters(stem)}
        if wanted & expanded or {root(w) for w in wanted} & expanded:
            return True
        return _compound(stem, source) or spelled_alike(stem, source)


#: Parts of a compound must be at least this long ("camp" in "campgrounds").
MIN_PART = 4


def _compound(stem: str, source: Iterable[str]) -> bool:
    """Whether ``stem`` is the head or tail of a source compound ("camp" / "campground"), or
    the source holds both halves of it ("sea" and "food" for "seafood")."""
    if len(stem) < MIN_PART:
        return False
    found = set(source)
    for s in found:
        if len(s) > len(stem) + 2 and (s.startswith(stem) or s.endswith(stem)):
            return True
    return any(stem[:i] in found and stem[i:] in found for i in range(3, len(stem) - 2))


#: A word this long may be spelled a little differently in the source.
MIN_FUZZY = 5


@lru_cache(maxsize=65536)
def _close(stem: str, candidates: tuple[str, ...]) -> bool:
    return bool(difflib.get_close_matches(stem, candidates, n=1, cutoff=0.85))


def spelled_alike(stem: str, source: Iterable[str]) -> bool:
    """Whether ``source`` holds ``stem`` spelled a little differently: the same letters with
    a letter doubled or not ("flatts" / "flats", "racoon" / "raccoon"), or, both of at least
    :data:`MIN_FUZZY` letters, about one letter apart with the same first letter (``difflib``
    ratio of at least 0.85)."""
    if len(stem) < MIN_FUZZY - 1 or not re.fullmatch(r"[a-z]+", stem):
        return False
    single = _undoubled(stem)
    near = [s for s in source if s[:1] == stem[:1] and abs(len(s) - len(stem)) <= 2]
    if any(_undoubled(s) == single for s in near):
        return True
    candidates = tuple(sorted(s for s in near if len(s) >= MIN_FUZZY))
    return len(stem) >= MIN_FUZZY and bool(candidates) and _close(stem, candidates)


def _undoubled(word: str) -> str:
    return re.sub(r"(.)\1+", r"\1", word)


__all__ = ["MIN_FUZZY", "Lexicon", "root", "spelled_alike"]
