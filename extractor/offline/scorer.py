"""A learned sentence scorer: does this user sentence state a lasting fact about the speaker?

The rules in :mod:`.statements` decide what a sentence *says*; this scorer only judges whether it
is worth a memory at all. It is a logistic regression over the words and word pairs of the
sentence (plus a few cues of its place in the exchange), trained on the dev half of MSC
(:mod:`.train`, ``python -m extractor.offline.train``) and shipped as
``extractor/offline/data/scorer.json``: a vocabulary of feature weights, a bias, the veto
threshold chosen on the dev half, and the provenance of the training data.

Inference is pure Python and deterministic: the score of a sentence is the bias plus the sum of
the weights of its features (a logit; 0 is even odds). The model's one use
(:func:`drop_chatter`) is a veto *within* a user message: of the claims the rules took from one
message, those whose sentence scores below the threshold are dropped as chatter ("User is sure
you both will get on great.", "User guesses that means they have to go now."), but the
best-scored claim of the message is always kept. Whether a message yields a user fact at all is
left to the rules: on MSC even the lowest-scored turns the rules take are annotated with a fact
more often than not (``docs/offline-model.md``), so a veto of whole messages only loses facts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import pairwise
from typing import Any

from ..conversation import Message
from ..vocab import MemoryType, Origin
from .draft import Group
from .text import sentences

#: Tokens: runs of letters, digits and apostrophes, lower-cased (curly apostrophes folded).
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*")
_DIGIT = re.compile(r"[0-9]")

WEIGHTS_RESOURCE = "data/scorer.json"
FORMAT = "offline-scorer-1"


def features(sentence: str, *, after_question: bool = False) -> list[str]:
    """The features of ``sentence``: its words and word pairs (``<s>`` marks the start and
    ``</s>`` the end, so "i love" at the start differs from one mid-sentence), its first two
    words together, a bucket of its length, and whether it answers a question
    (``after_question``: the other speaker's last message ended with one). Numbers are folded to
    ``0`` ("2019" -> "0000"). The list is sorted and has no repeats, so the score never depends
    on the order the words came in."""
    words = [_DIGIT.sub("0", w) for w in _TOKEN.findall(sentence.lower().replace("\u2019", "'"))]
    padded = ["<s>", *words, "</s>"]
    out = {f"w:{w}" for w in words}
    out.update(f"b:{a} {b}" for a, b in pairwise(padded))
    out.add("h:" + " ".join(words[:2]))
    out.add(f"n:{min(len(words), 20) // 4}")
    if sentence.rstrip().endswith("?"):
        out.add("c:question")
    if after_question:
        out.add("c:after_question")
    return sorted(out)


@dataclass(frozen=True)
class Scorer:
    """A linear model over :func:`features`: ``bias + sum(weights[f])`` is a logit."""

    weights: dict[str, float]
    bias: float
    threshold: float
    metadata: dict[str, Any]

    def score(self, sentence: str, *, after_question: bool = False) -> float:
        """The logit that ``sentence`` states a lasting fact about its speaker."""
        feats = features(sentence, after_question=after_question)
        return self.bias + sum(self.weights.get(f, 0.0) for f in feats)

    def is_fact_free(self, sentence: str, *, after_question: bool = False) -> bool:
        """True when the sentence scores below the veto threshold."""
        return self.score(sentence, after_question=after_question) < self.threshold

    def to_json(self) -> str:
        """The weights file: keys sorted, weights in sorted order, one line per weight, so the
        same model always gives the same bytes."""
        lines = [
            "{",
            f'  "format": {json.dumps(FORMAT)},',
            f'  "metadata": {json.dumps(self.metadata, sort_keys=True)},',
            f'  "threshold": {_number(self.threshold)},',
            f'  "bias": {_number(self.bias)},',
            '  "weights": {',
        ]
        items = sorted(self.weights.items())
        lines += [
            f"    {json.dumps(k)}: {_number(v)}{',' if i < len(items) - 1 else ''}"
            for i, (k, v) in enumerate(items)
        ]
        lines += ["  }", "}"]
        return "\n".join(lines) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Scorer:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise ValueError(f"not an {FORMAT} weights file (format {data.get('format')!r})")
        return cls(
            weights={str(k): float(v) for k, v in data["weights"].items()},
            bias=float(data["bias"]),
            threshold=float(data["threshold"]),
            metadata=dict(data["metadata"]),
        )


def _number(value: float) -> str:
    """A weight written with 4 decimals: enough for the score, and stable across platforms."""
    text = f"{value:.4f}"
    return "0.0000" if text == "-0.0000" else text


@cache
def shipped_scorer() -> Scorer:
    """The scorer shipped with the package (``extractor/offline/data/scorer.json``)."""
    text = resources.files(__package__).joinpath(WEIGHTS_RESOURCE).read_text(encoding="utf-8")
    return Scorer.from_json(text)


#: The claims the scorer judges: the ones MSC's turn-level measure counts as user facts.
JUDGED_TYPES = frozenset({MemoryType.WORLD_PROPOSITION, MemoryType.PREFERENCE})


def drop_chatter(
    groups: list[Group], message: Message, *, after_question: bool, scorer: Scorer | None = None
) -> list[Group]:
    """``groups`` (from one user message) without the claims whose sentence the scorer judges
    fact-free, keeping at least the best-scored one. A group's score is the highest score of
    the message's sentences its claim quotes. Groups the scorer does not judge (procedures,
    failures, system text) are kept."""
    model = scorer if scorer is not None else shipped_scorer()
    pieces = sentences(message)
    scored: list[tuple[float, int]] = []
    for position, group in enumerate(groups):
        claim = group.drafts[-1]
        if claim.origin is Origin.USER and claim.memory_type in JUDGED_TYPES:
            span = claim.piece
            scores = [
                model.score(p.text, after_question=after_question)
                for p in pieces
                if p.start < span.end and p.end > span.start
            ]
            scored.append((max(scores, default=model.threshold), position))
    if len(scored) < 2:
        return groups
    best = max(scored, key=lambda s: (s[0], -s[1]))
    dropped = {pos for score, pos in scored if score < model.threshold and pos != best[1]}
    return [g for pos, g in enumerate(groups) if pos not in dropped]
