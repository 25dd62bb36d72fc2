"""MSC turn-level evaluation: does this user turn yield a first-person user fact?

Multi-Session Chat (``msc-valid.jsonl``) annotates every user turn of sessions 1-4 with the
first-person fact it contains, or none. The question scored here is binary per annotated turn:

* a turn is *gold-positive* when ``gold.facts`` has an entry with its ``message_index``;
* a turn is *predicted-positive* when it yields a *user fact*: an accepted candidate with
  ``origin_kind`` USER and memory type ``WORLD_PROPOSITION`` or ``PREFERENCE`` quoting it.

Two baselines run through the same scorer: every annotated turn is positive, and a turn is
positive when it contains a first-person pronoun. Most annotated turns carry a fact, so recall
and F1 alone flatter the first baseline; precision is the figure that separates them.

How clear a margin is: :func:`bootstrap_margins` resamples *conversations* (the turns of one
chat are not independent) with replacement, recomputes the model's and each baseline's
precision and F1 on the same resample, and reports the 2.5th and 97.5th percentiles of the
differences -- a paired bootstrap, seeded, so the interval is reproducible.

For true-positive turns, *token overlap* compares what was extracted (the candidates' contents,
or the turn's text for the baselines) with the gold fact: the token F1 after lower-casing,
dropping punctuation and the words in :data:`OVERLAP_STOPWORDS` (pronouns, "user", articles,
forms of be/have), so "User has a son." and "I have a son." agree.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..clients.base import ExtractionClient
from ..conversation import Conversation, conversation_from_data
from ..errors import ExtractorError, InputError, InputLocation
from ..results import ConversationResult
from ..vocab import MemoryType, Origin
from .metrics import f1
from .runner import DEFAULT_CONCURRENCY, run_closing

USER_FACT_TYPES = frozenset({MemoryType.WORLD_PROPOSITION, MemoryType.PREFERENCE})
FIRST_PERSON = re.compile(r"\b(i|me|my|mine|myself|im|ive)\b", re.IGNORECASE)
_STOPWORDS = """i me my mine myself user user's users their theirs they them a an the is am are was
were be been being has have had do does did to of and that this s m"""
OVERLAP_STOPWORDS = frozenset(_STOPWORDS.split())

#: Message index -> what was extracted there (empty or absent: no user fact predicted).
TurnPredictions = dict[int, list[str]]


@dataclass(frozen=True)
class MscCase:
    conversation: Conversation
    facts: dict[int, str]
    annotated: tuple[int, ...]


class TurnScore(BaseModel):
    """Binary turn-level counts plus the token overlap of the true positives."""

    model_config = ConfigDict(extra="forbid")

    name: str
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    overlap_sum: float = 0.0

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        return f1(self.precision, self.recall)

    @property
    def overlap(self) -> float | None:
        """Mean token F1 between extracted content and the gold fact, over true positives."""
        return self.overlap_sum / self.tp if self.tp else None


class Margin(BaseModel):
    """The model minus one baseline, in points, with a 95% paired-bootstrap interval."""

    model_config = ConfigDict(extra="forbid")

    baseline: str
    precision: float
    precision_low: float
    precision_high: float
    f1: float
    f1_low: float
    f1_high: float
    resamples: int
    seed: int


class MscReport(BaseModel):
    model_config = ConfigDict(extra="forbid")

    conversations: int
    annotated_turns: int
    positive_turns: int
    failures: list[str]
    rows: list[TurnScore]
    margins: list[Margin] = []

    def row(self, name: str) -> TurnScore:
        return next(r for r in self.rows if r.name == name)


# --- loading --------------------------------------------------------------------------------


def iter_msc(path: str | Path, limit: int | None = None) -> Iterator[MscCase]:
    """Read MSC conversations with turn-level gold; raises :class:`InputError` on a bad line."""
    source = str(path)
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if limit is not None and number > limit:
                return
            if line.strip():
                yield _msc_case(line, InputLocation(source, number))


def _msc_case(line: str, location: InputLocation) -> MscCase:
    try:
        data = json.loads(line)
        gold = data["gold"]
        facts: dict[int, list[str]] = {}
        for fact in gold["facts"]:
            if fact.get("role", "user") == "user":
                facts.setdefault(int(fact["message_index"]), []).append(str(fact["text"]))
        annotated = tuple(int(i) for i in gold["annotated_user_message_indices"])
    except (ValueError, KeyError, TypeError) as exc:
        raise InputError(f"not an MSC line with turn-level gold: {exc!r}", location) from None
    conversation = conversation_from_data(data, location=location)
    return MscCase(conversation, {i: " ".join(t) for i, t in facts.items()}, annotated)


# --- predictions ----------------------------------------------------------------------------


def user_fact_turns(
    conversation: Conversation, result: ConversationResult | None
) -> TurnPredictions:
    """Message index -> contents of the user facts accepted from that message."""
    index = {m.id: i for i, m in enumerate(conversation.messages)}
    turns: TurnPredictions = {}
    for c in result.candidates if result is not None else []:
        if c.origin_kind is Origin.USER and c.memory_type in USER_FACT_TYPES:
            i = index.get(c.source_span.message_id)
            if i is not None:
                turns.setdefault(i, []).append(c.content)
    return turns


def baseline_every_turn(case: MscCase) -> TurnPredictions:
    return {i: [case.conversation.messages[i].text] for i in case.annotated}


def baseline_first_person(case: MscCase) -> TurnPredictions:
    return {
        i: [text]
        for i in case.annotated
        if FIRST_PERSON.search(text := case.conversation.messages[i].text)
    }


# --- scoring --------------------------------------------------------------------------------


def tokens(text: str) -> list[str]:
    words = re.findall(r"[\w']+", text.lower())
    return [w.strip("'") for w in words if w.strip("'") not in OVERLAP_STOPWORDS]


def token_f1(predicted: str, gold: str) -> float:
    p, g = Counter(tokens(predicted)), Counter(tokens(gold))
    common = sum((p & g).values())
    if not common:
        return 0.0
    precision, recall = common / sum(p.values()), common / sum(g.values())
    return 2 * precision * recall / (precision + recall)


def score_turns(name: str, cases: list[MscCase], predictions: list[TurnPredictions]) -> TurnScore:
    score = TurnScore(name=name)
    for case, predicted in zip(cases, predictions, strict=True):
        for i in case.annotated:
            said = predicted.get(i)
            gold = case.facts.get(i)
            if said and gold is not None:
                score.tp += 1
                score.overlap_sum += token_f1(" ".join(said), gold)
            elif said:
                score.fp += 1
            elif gold is not None:
                score.fn += 1
            else:
                score.tn += 1
    return score


#: Resamples and seed of :func:`bootstrap_margins` as ``extractor eval --msc`` runs it.
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_SEED = 20261130


def bootstrap_margins(
    cases: list[MscCase],
    model: list[TurnPredictions],
    baselines: dict[str, list[TurnPredictions]],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> list[Margin]:
    """Model minus each baseline (precision and F1, in points) with 95% intervals from a paired
    bootstrap over conversations. Deterministic for a given ``seed``."""
    per_model = [score_turns("", [c], [p]) for c, p in zip(cases, model, strict=True)]
    margins = []
    for name, predictions in baselines.items():
        per_base = [score_turns("", [c], [p]) for c, p in zip(cases, predictions, strict=True)]
        rng = random.Random(seed)
        p_diffs, f_diffs = [], []
        for _ in range(resamples):
            picks = [rng.randrange(len(cases)) for _ in cases]
            m, b = _pooled(per_model, picks), _pooled(per_base, picks)
            p_diffs.append(_points(m.precision) - _points(b.precision))
            f_diffs.append(_points(m.f1) - _points(b.f1))
        whole_m, whole_b = (
            _pooled(per_model, range(len(cases))),
            _pooled(per_base, range(len(cases))),
        )
        margins.append(
            Margin(
                baseline=name,
                precision=_points(whole_m.precision) - _points(whole_b.precision),
                precision_low=_percentile(p_diffs, 2.5),
                precision_high=_percentile(p_diffs, 97.5),
                f1=_points(whole_m.f1) - _points(whole_b.f1),
                f1_low=_percentile(f_diffs, 2.5),
                f1_high=_percentile(f_diffs, 97.5),
                resamples=resamples,
                seed=seed,
            )
        )
    return margins


def _pooled(scores: list[TurnScore], picks: Any) -> TurnScore:
    total = TurnScore(name="")
    for i in picks:
        s = scores[i]
        total.tp += s.tp
        total.fp += s.fp
        total.fn += s.fn
        total.tn += s.tn
    return total


def _points(value: float | None) -> float:
    return 100 * (value or 0.0)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[rank]


BASELINES: dict[str, Callable[[MscCase], TurnPredictions]] = {
    "baseline: every user turn has a fact": baseline_every_turn,
    "baseline: turn has a first-person pronoun": baseline_first_person,
}


async def aevaluate_msc(
    cases: list[MscCase],
    client: ExtractionClient | None = None,
    *,
    policy: Any = None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> MscReport:
    """Run the model over ``cases`` and score it next to the two baselines."""
    from ..pipeline import Extractor

    extractor = Extractor(client, policy=policy)
    gate = asyncio.Semaphore(max(1, concurrency))
    failures: list[str] = []

    async def one(case: MscCase) -> TurnPredictions:
        async with gate:
            try:
                result = await extractor.aprocess(case.conversation)
            except ExtractorError as exc:
                failures.append(f"{case.conversation.id}: {exc}")
                return {}
        return user_fact_turns(case.conversation, result)

    predicted = list(await asyncio.gather(*(one(c) for c in cases)))
    baselines = {name: [b(c) for c in cases] for name, b in BASELINES.items()}
    rows = [score_turns(f"model: {extractor.client.model_name}", cases, predicted)]
    rows += [score_turns(name, cases, p) for name, p in baselines.items()]
    return MscReport(
        conversations=len(cases),
        annotated_turns=sum(len(c.annotated) for c in cases),
        positive_turns=sum(len(set(c.facts) & set(c.annotated)) for c in cases),
        failures=failures,
        rows=rows,
        margins=bootstrap_margins(cases, predicted, baselines) if cases else [],
    )


def evaluate_msc(
    cases: list[MscCase], client: ExtractionClient | None = None, **kw: Any
) -> MscReport:
    """Blocking :func:`aevaluate_msc`. Closes the client's connections of the loop it ran."""
    report: MscReport = run_closing(aevaluate_msc(cases, client, **kw), client)
    return report
