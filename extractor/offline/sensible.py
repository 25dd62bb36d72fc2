"""A second learned veto: would a careful reader keep this claim as a memory?

The rubric of ``evalsets/offline-real/README.md`` asks of every candidate that it be about the
user, self-contained, faithful, right in time and lasting. The rules of :mod:`.standalone` and
:mod:`.statements` catch the phrasings they name; this model catches the long tail the readers of
the labelled samples found ("User wants something more exciting.", "User even found a place with
great natural light."). It is a logistic regression over :func:`claim_features` -- the words and
word pairs of the quote (:func:`.scorer.features`), the words of the content, the memory type and
whether the content quotes the other speaker -- trained on the labelled rounds
(:mod:`.train_sensible`, ``python -m extractor.offline.train_sensible``) and shipped as
``extractor/offline/data/sensible.json`` in the scorer's weights format.

Its one use (:func:`drop_unkept`) is, like :func:`.scorer.drop_chatter`, a veto *within* a user
message: of the user-fact claims one message yields, those scored below the threshold are
dropped when another claim of the message scores higher, and the best-scored claim is always
kept. So it never decides whether a message yields a fact at all, and the turn-level measures
(MSC turn recall, LoCoMo fact recall) do not move: on those data sets the annotators wrote a
fact for most turns whose only claim a reader would not keep, resolved from other messages,
which the rules cannot do (``docs/evaluation.md``).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from ..vocab import Origin
from .draft import Group
from .scorer import JUDGED_TYPES, Scorer, features

WEIGHTS_RESOURCE = "data/sensible.json"


def claim_features(quote: str, content: str, memory_type: str) -> list[str]:
    """The features of a claim: :func:`.scorer.features` of its quote, the words of its
    content (``k:`` prefixed), its memory type, and whether the content quotes the other speaker
    (``Told "..."``). Sorted, no repeats."""
    out = set(features(quote))
    out.update("k:" + f[2:] for f in features(content) if f.startswith("w:"))
    out.add("t:" + memory_type)
    if content.startswith(("Told ", "Asked ")):
        out.add("c:quoted")
    return sorted(out)


def score(model: Scorer, quote: str, content: str, memory_type: str) -> float:
    """The logit that a reader would keep the claim."""
    return model.bias + sum(
        model.weights.get(f, 0.0) for f in claim_features(quote, content, memory_type)
    )


@cache
def shipped_model() -> Scorer:
    """The model shipped with the package (``extractor/offline/data/sensible.json``)."""
    text = resources.files(__package__).joinpath(WEIGHTS_RESOURCE).read_text(encoding="utf-8")
    return Scorer.from_json(text)


def drop_unkept(groups: list[Group], *, model: Scorer | None = None) -> list[Group]:
    """``groups`` (from one user message) without the user-fact claims scored below the
    threshold, keeping at least the best-scored one and every span the rules widened over
    another claim's sentence. Groups the model does not judge (procedures, failures, system
    text) are kept."""
    judge = model if model is not None else shipped_model()
    claims = [
        (position, group.drafts[-1])
        for position, group in enumerate(groups)
        if group.drafts[-1].origin is Origin.USER and group.drafts[-1].memory_type in JUDGED_TYPES
    ]
    if len(claims) < 2:
        return groups
    scored = [
        (score(judge, c.piece.text, c.content, c.memory_type.value), position)
        for position, c in claims
    ]
    best = max(scored, key=lambda s: (s[0], -s[1]))
    # a span widened over the sentence that holds its referent is the rules' resolution of a
    # claim, not chatter: it is kept (it covers another claim of the message)
    widened = {
        position
        for position, c in claims
        if any(
            o is not c and c.piece.start <= o.piece.start and o.piece.end <= c.piece.end
            for _, o in claims
        )
    }
    dropped = {
        pos
        for value, pos in scored
        if value < judge.threshold and pos != best[1] and pos not in widened
    }
    return [g for pos, g in enumerate(groups) if pos not in dropped]
