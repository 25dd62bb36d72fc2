"""MSC turn-level precision, recall and F1 of the offline model with 95% bootstrap intervals.

``extractor eval --msc`` prints the model's figures and its margins over the baselines with
intervals; this prints an interval on the model's own figures: a bootstrap over conversations
(the turns of one chat are not independent, so chats are what is resampled), with the resamples
and seed ``extractor eval --msc`` uses. The turns are scored exactly as there
(:func:`extractor.evaluation.msc.score_turns`).

It also prints what the learned scorer (``extractor/offline/scorer.py``) does to the claims: how
many user facts the model gave on annotated turns, and the share of those on gold-positive turns
whose quoted sentence shares a content word with the gold fact (*on-fact claims*; the scorer's
training label). ``--no-scorer`` runs the rules alone (the scorer's veto switched off), for the
before/after comparison.

    awk 'NR % 2 == 0' ../shared/data/msc-valid.jsonl > /tmp/msc-held.jsonl
    python benchmarks/msc_interval.py /tmp/msc-held.jsonl
    python benchmarks/msc_interval.py /tmp/msc-held.jsonl --no-scorer
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from extractor.evaluation.msc import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    USER_FACT_TYPES,
    MscCase,
    TurnScore,
    iter_msc,
    score_turns,
    tokens,
    user_fact_turns,
)
from extractor.offline import model as offline_model
from extractor.offline.draft import Group
from extractor.pipeline import Extractor
from extractor.results import ConversationResult
from extractor.vocab import Origin


def _figures(score: TurnScore) -> tuple[float, float, float]:
    p = score.tp / (score.tp + score.fp) if score.tp + score.fp else 0.0
    r = score.tp / (score.tp + score.fn) if score.tp + score.fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def _claims(case: MscCase, result: ConversationResult | None) -> tuple[int, int, int]:
    """User facts on annotated turns; those on gold-positive turns; those sharing a word with
    the gold fact."""
    index = {m.id: i for i, m in enumerate(case.conversation.messages)}
    annotated = set(case.annotated)
    total = on_gold = on_fact = 0
    for c in result.candidates if result is not None else []:
        i = index.get(c.source_span.message_id)
        if c.origin_kind is not Origin.USER or c.memory_type not in USER_FACT_TYPES:
            continue
        if i not in annotated:
            continue
        total += 1
        gold = case.facts.get(i) if i is not None else None
        if gold is not None:
            on_gold += 1
            on_fact += bool(set(tokens(gold)) & set(tokens(c.source_span.quote)))
    return total, on_gold, on_fact


def _keep_all(groups: list[Group], *_: object, **__: object) -> list[Group]:
    return groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("msc", type=Path, help="an msc-valid.jsonl file (or one half of it)")
    parser.add_argument(
        "--no-scorer", action="store_true", help="the rules alone: switch the scorer's veto off"
    )
    args = parser.parse_args()
    if args.no_scorer:
        offline_model.drop_chatter = _keep_all  # type: ignore[assignment]
    extractor = Extractor()
    cases = list(iter_msc(args.msc))
    results = [extractor.process(c.conversation) for c in cases]
    predicted = [user_fact_turns(c.conversation, r) for c, r in zip(cases, results, strict=True)]
    per_chat = [score_turns("chat", [c], [p]) for c, p in zip(cases, predicted, strict=True)]
    whole = score_turns("model", cases, predicted)
    rng = random.Random(BOOTSTRAP_SEED)
    samples: list[tuple[float, float, float]] = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        pooled = TurnScore(name="resample")
        for chat in rng.choices(per_chat, k=len(per_chat)):
            pooled.tp += chat.tp
            pooled.fp += chat.fp
            pooled.fn += chat.fn
        samples.append(_figures(pooled))
    scorer = "off (rules alone)" if args.no_scorer else "on"
    print(f"{extractor.client.model_name} on {args.msc} ({len(cases)} chats), scorer {scorer}")
    print(f"TP {whole.tp}  FP {whole.fp}  FN {whole.fn}  TN {whole.tn}")
    for i, name in enumerate(("precision", "recall", "F1")):
        values = sorted(s[i] for s in samples)
        low, high = values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]
        print(f"{name:9} {100 * _figures(whole)[i]:5.1f}%  (95% {100 * low:.1f}-{100 * high:.1f})")
    counts = [_claims(c, r) for c, r in zip(cases, results, strict=True)]
    total, on_gold, on_fact = (sum(x[k] for x in counts) for k in range(3))
    share = 100 * on_fact / on_gold if on_gold else 0.0
    print(
        f"user facts on annotated turns {total}; on gold-positive turns {on_gold}, "
        f"on-fact {on_fact} ({share:.1f}%)"
    )


if __name__ == "__main__":
    main()
