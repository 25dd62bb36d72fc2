"""Measuring the faithfulness check on MSC, both ways.

* **False rejections.** Every (turn, gold fact) pair of MSC is checked as a proposition whose
  quote is the whole turn, with the conversation up to the turn as context. The crowd-written
  facts paraphrase their turns, so they should pass.
* **Missed rejections.** Each accepted pair is perturbed five ways, and each perturbation must be
  rejected: the negation flipped, a number swapped, a name swapped, a hedge put into the turn's
  sentence that the fact leaves out, an unrelated clause (a fact of another conversation)
  appended.

Lines are split by position: odd lines (1, 3, ...) are the half the check's rules and thresholds
were tuned on, even lines the held-out half. Every rate comes with a 95% Wilson interval.
Perturbations are seeded, so a run is reproducible.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..content.faithfulness import (
    CONTENT_HEDGE,
    STOPWORDS,
    check_faithful,
    hedges_in,
    numbers,
    source_for,
    stem,
    words,
)
from ..errors import InputError, InputLocation

PERTURBATIONS = ("negation", "number", "name", "hedge", "clause")
DEFAULT_SEED = 17
SAMPLE_SIZE = 50


@dataclass(frozen=True)
class Pair:
    """One gold fact with the turn it was written from and the conversation before it."""

    line: int
    turn: str
    fact: str
    context: tuple[str, ...]


@dataclass(frozen=True)
class Rate:
    """``hits`` of ``total``, with a 95% Wilson score interval."""

    hits: int
    total: int

    @property
    def value(self) -> float | None:
        return self.hits / self.total if self.total else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.hits, self.total)


def wilson(hits: int, total: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion (``None`` for no trials)."""
    if total == 0:
        return None
    p = hits / total
    centre = p + z * z / (2 * total)
    spread = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total))
    denominator = 1 + z * z / total
    return (max(0.0, (centre - spread) / denominator), min(1.0, (centre + spread) / denominator))


@dataclass
class HalfReport:
    """The figures of one half of the lines."""

    name: str
    accepted: Rate = field(default_factory=lambda: Rate(0, 0))
    codes: Counter[str] = field(default_factory=Counter)
    perturbations: dict[str, Rate] = field(default_factory=dict)
    missed: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    rejected: list[tuple[Pair, str, str]] = field(default_factory=list)


@dataclass
class FaithfulnessReport:
    halves: list[HalfReport]
    sample: list[tuple[Pair, str, str]]
    seed: int


def iter_pairs(path: str | Path, limit: int | None = None) -> Iterator[Pair]:
    """The user facts of an ``msc-valid.jsonl`` file, each with its turn and context."""
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if limit is not None and number > limit:
                return
            if line.strip():
                yield from _pairs(line, InputLocation(str(path), number))


def _pairs(line: str, location: InputLocation) -> Iterator[Pair]:
    try:
        data = json.loads(line)
        texts = [str(m["content"]) for m in data["messages"]]
        facts = [
            (int(f["message_index"]), str(f["text"]))
            for f in data["gold"]["facts"]
            if f.get("role", "user") == "user"
        ]
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"not an MSC line with gold facts: {exc!r}", location) from None
    for index, fact in facts:
        if 0 <= index < len(texts):
            yield Pair(location.line or 0, texts[index], fact, tuple(texts[:index]))


def judge(pair: Pair, turn: str | None = None, fact: str | None = None) -> tuple[str, str] | None:
    """The check's finding for a pair (its turn or fact replaced), as (code, message)."""
    text = pair.turn if turn is None else turn
    finding = check_faithful(pair.fact if fact is None else fact, source_for(
        text, 0, len(text), pair.context))  # fmt: skip
    return None if finding is None else (finding.code, finding.message)


def evaluate_faithfulness(
    path: str | Path, *, limit: int | None = None, seed: int = DEFAULT_SEED
) -> FaithfulnessReport:
    """Both halves' figures, and a seeded sample of :data:`SAMPLE_SIZE` rejected held-out pairs
    (for classifying by hand)."""
    pairs = list(iter_pairs(path, limit))
    rng = random.Random(seed)
    halves = [HalfReport("odd lines (tuned on)"), HalfReport("even lines (held out)")]
    counts = {h.name: {k: [0, 0] for k in PERTURBATIONS} for h in halves}
    accepted = {h.name: [0, 0] for h in halves}
    for pair in pairs:
        half = halves[0] if pair.line % 2 else halves[1]
        finding = judge(pair)
        accepted[half.name][1] += 1
        if finding is not None:
            half.codes[finding[0]] += 1
            half.rejected.append((pair, *finding))
            continue
        accepted[half.name][0] += 1
        others = [p.fact for p in rng.sample(pairs, 3) if p.line != pair.line]
        for kind, (turn, fact) in perturb(pair, rng, others).items():
            tally = counts[half.name][kind]
            tally[1] += 1
            if judge(pair, turn, fact) is not None:
                tally[0] += 1
            else:
                half.missed.setdefault(kind, []).append((turn, fact))
    for half in halves:
        half.accepted = Rate(*accepted[half.name])
        half.perturbations = {k: Rate(*v) for k, v in counts[half.name].items()}
    held_out = halves[1].rejected
    sample = random.Random(seed).sample(held_out, min(SAMPLE_SIZE, len(held_out)))
    return FaithfulnessReport(halves, sample, seed)


# --- perturbations ---------------------------------------------------------------------------


def _words_list(text: str) -> list[str]:
    return text.split()


_NEGATED = re.compile(
    r"\bno longer\b|\bused to\b|"
    r"\b(?:do|does|did|is|are|was|were|have|has|can|could|will|would)n't\b|"
    r"\b(?:don't|doesn't|didn't|can't|won't|cannot)\b|\bnot\b(?! (?:sure|certain)\b)|\bnever\b|"
    # written without the apostrophe: "I dont have a pet" (else the flip says "I don't dont")
    r"\b(?:dont|doesnt|didnt|cant|wont|isnt|arent|wasnt|werent|havent|hasnt|hadnt|couldnt|"
    r"wouldnt|shouldnt)\b|"
    r"\bno\b(?= \w)",
    re.IGNORECASE,
)
#: An auxiliary the flip negates: one a word follows ("as much as I can" ends the clause, and
#: "... as I can not" negates nothing the fact says).
_AUXILIARY = re.compile(
    r"\b(am|is|are|was|were|will|can|could|would|should|must)\b(?=\s+[^\W\d_])", re.I
)
#: A subject and its verb ("My wife and I want ...": the subject goes on, "and" is no verb).
_SUBJECT_VERB = re.compile(r"^((?:I|We|They|My \w+|Our \w+)\s+)(?!(?:and|or)\b)(\w+)", re.I)
_NUMBER_WORDS = _words_list(
    "one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty "
    "hundred"
)
_REPLACEMENT_NUMBERS = [3, 4, 5, 6, 7, 8, 9, 11, 13, 14, 17, 19, 23, 27, 35, 42, 58, 64, 77, 91]
NAMES = _words_list(
    "Amsterdam Brisbane Cairo Denver Edinburgh Fresno Glasgow Houston Istanbul Jakarta Kyoto "
    "Lagos Madrid Nairobi Oslo Prague Quito Rotterdam Seoul Toronto Utrecht Valencia Warsaw "
    "Yokohama Zurich Abigail Bartholomew Cornelius Delphine Ezekiel Fiona Gwendolyn Horatio "
    "Imogen Jasper Kendrick Lucinda Maximilian Nadia Octavia Percival Quentin Rosalind Sebastian "
    "Thaddeus Ursula Valentina Winifred Xavier Yolanda Zebulon"
)
HEDGE_PREFIX = "I'm not sure, but "
#: A fact that says only what the user has: a hedge of the sentence does not reach a possession
#: it presupposes ("my cow").
_POSSESSION = re.compile(r"^\s*(?:I|User)(?: also)? (?:have|has|own|owns)\b", re.I)
_POSITIVE = {"don't": "do", "doesn't": "does", "didn't": "did", "can't": "can", "won't": "will",
             "cannot": "can", "dont": "do", "doesnt": "does", "didnt": "did", "cant": "can",
             "wont": "will"}  # fmt: skip


def perturb(pair: Pair, rng: random.Random, others: list[str]) -> dict[str, tuple[str, str]]:
    """The perturbations of ``pair`` that apply to it: kind -> (turn, fact)."""
    out: dict[str, tuple[str, str]] = {}
    known = {stem(w) for w in words("\n".join([pair.turn, *pair.context]))}
    flipped = flip_negation(pair.fact)
    if flipped != pair.fact:
        out["negation"] = (pair.turn, flipped)
    swapped = swap_number(pair.fact, pair, rng)
    if swapped is not None:
        out["number"] = (pair.turn, swapped)
    renamed = swap_name(pair.fact, known, rng)
    if renamed is not None:
        out["name"] = (pair.turn, renamed)
    hedged = None if hedges_in(pair.fact, CONTENT_HEDGE) else hedge_turn(pair.turn, pair.fact)
    if hedged is not None:
        out["hedge"] = (hedged, pair.fact)
    if others:
        out["clause"] = (pair.turn, f"{pair.fact.rstrip()} {others[0].strip()}")
    return out


def flip_negation(fact: str) -> str:
    """Remove the first negation of ``fact``, or negate its first clause."""
    m = _NEGATED.search(fact)
    if m is not None:
        word = m.group().lower()
        if word in ("no longer", "used to"):  # "used to" says "no longer" as well
            return fact[: m.start()] + "still" + fact[m.end() :]
        if word == "no":  # "I have no pets" -> "I have some pets", not "I don't have no pets"
            return fact[: m.start()] + "some" + fact[m.end() :]
        if word in ("not", "never"):
            return fact[: m.start()] + fact[m.end() :].lstrip()
        positive = _POSITIVE.get(word, word.removesuffix("n't").removesuffix("nt"))
        return fact[: m.start()] + positive + fact[m.end() :]
    aux = _AUXILIARY.search(fact)
    if aux is not None:
        return f"{fact[: aux.end()]} not{fact[aux.end() :]}"
    sv = _SUBJECT_VERB.search(fact)
    if sv is not None:
        return f"{fact[: sv.start(2)]}don't {fact[sv.start(2) :]}"
    return f"It is not true that {fact[:1].lower()}{fact[1:]}"


def swap_number(fact: str, pair: Pair, rng: random.Random) -> str | None:
    """``fact`` with its first number replaced by one its source does not hold."""
    present = numbers(words("\n".join([pair.turn, *pair.context])))
    digits = re.search(r"\b\d+\b", fact)
    spelled = re.search(rf"\b({'|'.join(_NUMBER_WORDS)})\b", fact, re.IGNORECASE)
    found = min((m for m in (digits, spelled) if m is not None), key=lambda m: m.start(),
                default=None)  # fmt: skip
    if found is None:
        return None
    choices = [n for n in _REPLACEMENT_NUMBERS if float(n) not in present]
    return f"{fact[: found.start()]}{rng.choice(choices)}{fact[found.end() :]}"


def swap_name(fact: str, known: set[str], rng: random.Random) -> str | None:
    """``fact`` with its first proper name (a capitalized word that is not the first word or
    "I") replaced by a name its source does not hold."""
    for m in re.finditer(r"(?<=\s)[A-Z][a-z]{2,}\b", fact):
        if stem(m.group().lower()) in known:
            choices = [n for n in NAMES if stem(n.lower()) not in known]
            return f"{fact[: m.start()]}{rng.choice(choices)}{fact[m.end() :]}"
    return None


def hedge_turn(turn: str, fact: str) -> str | None:
    """``turn`` with the sentence the fact draws most words from hedged ("I'm not sure, but");
    ``None`` when no sentence holds most of the fact's words that the turn holds."""
    fact_stems = _said(fact)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", turn) if s]
    shared = [fact_stems & _said(s, every=True) for s in sentences]
    # a question asserts nothing: hedging it ("I'm not sure, but how about you?") leaves what
    # the user said as it was
    asserted = [i for i, s in enumerate(sentences) if not _QUESTION.match(s)]
    best = max(asserted, key=lambda i: len(shared[i]), default=0)
    in_turn = set().union(*(shared[i] for i in asserted))
    if not asserted or not shared[best] or 2 * len(shared[best]) <= len(in_turn):
        return None
    if sum(1 for i in asserted if len(shared[i]) == len(shared[best])) > 1:
        return None  # another sentence says it as well, unhedged
    if _POSSESSION.match(fact) and all(
        re.search(rf"\b(?:my|our)\s+(?:\w+\s+){{0,2}}{re.escape(w)}", sentences[best], re.I)
        for w in words(fact) if _content(w) and stem(w) in shared[best]
    ):  # fmt: skip
        return None  # "I'm not sure, but my cow is well" still says the user has a cow
    hedged = HEDGE_PREFIX + sentences[best][:1].lower() + sentences[best][1:]
    return " ".join([*sentences[:best], hedged, *sentences[best + 1 :]])


# --- rendering -------------------------------------------------------------------------------


def _pct(rate: Rate) -> str:
    if rate.value is None or rate.interval is None:
        return "n/a"
    lo, hi = rate.interval
    return f"{100 * rate.value:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] ({rate.hits}/{rate.total})"


def render_faithfulness(report: FaithfulnessReport) -> str:
    """The figures as text: acceptance and perturbation rejection per half, 95% intervals."""
    lines = ["Faithfulness check on MSC (turn + conversation before it as source)"]
    for half in report.halves:
        lines.append(f"\n{half.name}")
        lines.append(f"  gold facts accepted              {_pct(half.accepted)}")
        codes = ", ".join(f"{code} {n}" for code, n in half.codes.most_common())
        lines.append(f"  rejected by code                 {codes or '-'}")
        for kind in PERTURBATIONS:
            lines.append(f"  {kind + ' perturbation rejected':<33}{_pct(half.perturbations[kind])}")
    lines.append(
        f"\n{len(report.sample)} rejected held-out pairs (seed {report.seed}), to classify:"
    )
    for pair, code, message in report.sample:
        lines.append(f"- line {pair.line}: {pair.fact!r} <- {pair.turn[:160]!r}: {code}: {message}")
    return "\n".join(lines)


def faithfulness_json(report: FaithfulnessReport) -> dict[str, object]:
    def rate(r: Rate) -> dict[str, object]:
        return {"hits": r.hits, "total": r.total, "rate": r.value, "interval95": r.interval}

    return {
        "seed": report.seed,
        "halves": [
            {
                "name": h.name,
                "accepted": rate(h.accepted),
                "rejected_by_code": dict(h.codes),
                "perturbations_rejected": {k: rate(v) for k, v in h.perturbations.items()},
            }
            for h in report.halves
        ],
        "rejected_sample": [
            {"line": p.line, "turn": p.turn, "fact": p.fact, "code": c, "message": m}
            for p, c, m in report.sample
        ],
    }


def _content(word: str) -> bool:
    return word not in STOPWORDS and not word.isdigit()


def _said(text: str, every: bool = False) -> set[str]:
    """The stems of ``text``'s content words (of every word with ``every``), and its numbers
    in any spelling ("3" and "three" are one word: "We have three." is where "I have 3 dogs"
    comes from)."""
    tokens = words(text)
    return {stem(w) for w in tokens if every or _content(w)} | {
        f"#{value:g}" for value in numbers(tokens)
    }


#: A sentence that asks: it ends in "?" and opens with a question word or an auxiliary.
_QUESTION = re.compile(
    r"^\W*(?:how|what|why|who|where|when|which|do|does|did|is|are|was|were|have|has|can|could|"
    r"would|will|should|any)\b[^.!]*\?\s*$",
    re.I,
)


__all__ = [
    "PERTURBATIONS",
    "FaithfulnessReport",
    "HalfReport",
    "Pair",
    "Rate",
    "evaluate_faithfulness",
    "faithfulness_json",
    "flip_negation",
    "hedge_turn",
    "iter_pairs",
    "perturb",
    "render_faithfulness",
    "wilson",
]
