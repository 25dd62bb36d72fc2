"""MSC turn-level precision, recall and F1 of the offline model with 95% bootstrap intervals.

``extractor eval --msc`` prints the model's figures and its margins over the baselines with
intervals; this prints an interval on the model's own figures: a bootstrap over conversations
(the turns of one chat are not independent, so chats are what is resampled), with the resamples
and seed ``extractor eval --msc`` uses. The turns are scored exactly as there
(:func:`extractor.evaluation.msc.score_turns`).

    awk 'NR % 2 == 0' ../shared/data/msc-valid.jsonl > /tmp/msc-held.jsonl
    python benchmarks/msc_interval.py /tmp/msc-held.jsonl
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from extractor.evaluation.msc import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    TurnScore,
    iter_msc,
    score_turns,
    user_fact_turns,
)
from extractor.pipeline import Extractor


def _figures(score: TurnScore) -> tuple[float, float, float]:
    p = score.tp / (score.tp + score.fp) if score.tp + score.fp else 0.0
    r = score.tp / (score.tp + score.fn) if score.tp + score.fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("msc", type=Path, help="an msc-valid.jsonl file (or one half of it)")
    args = parser.parse_args()
    extractor = Extractor()
    cases = list(iter_msc(args.msc))
    predicted = [user_fact_turns(c.conversation, extractor.process(c.conversation)) for c in cases]
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
    print(f"{extractor.client.model_name} on {args.msc} ({len(cases)} chats)")
    print(f"TP {whole.tp}  FP {whole.fp}  FN {whole.fn}  TN {whole.tn}")
    for i, name in enumerate(("precision", "recall", "F1")):
        values = sorted(s[i] for s in samples)
        low, high = values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1]
        print(f"{name:9} {100 * _figures(whole)[i]:5.1f}%  (95% {100 * low:.1f}-{100 * high:.1f})")


if __name__ == "__main__":
    main()
