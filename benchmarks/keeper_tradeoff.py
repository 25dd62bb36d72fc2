"""What the claim keeper would cost if it also vetoed a message's only claim.

The offline model's claim keeper (``extractor/offline/sensible.py``) drops claims a reader would
not keep only *within* a message, so it never costs a turn. This prints, per threshold, the
trade it was not allowed to make: applied to every claim (a message's only one too),

* the sensible rate it would leave among the labelled candidates of the tuning rounds (scores
  out of fold: five folds by conversation, as ``python -m extractor.offline.train_sensible
  --sweep``), and the share of sensible candidates it would drop;
* MSC turn-level precision and recall on the file given (the pipeline as shipped, then every
  user fact scored below the threshold removed; a turn left with none is predicted negative).

    awk 'NR % 2 == 1' ../shared/data/msc-valid.jsonl > /tmp/msc-dev.jsonl
    python benchmarks/keeper_tradeoff.py /tmp/msc-dev.jsonl evalsets/offline-real/round{1,2,3,4,5}.jsonl
"""

from __future__ import annotations

import argparse
from pathlib import Path

from extractor.evaluation.msc import USER_FACT_TYPES, iter_msc, score_turns
from extractor.offline.sensible import score, shipped_model
from extractor.offline.train import out_of_fold
from extractor.offline.train_sensible import FOLDS, examples
from extractor.pipeline import Extractor
from extractor.vocab import Origin

THRESHOLDS = (None, -3.0, -2.0, -1.5, -1.0, -0.5, 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("msc", type=Path, help="an msc-valid.jsonl file (the dev half)")
    parser.add_argument("rounds", type=Path, nargs="+", help="labelled round files")
    args = parser.parse_args()
    labelled = examples(args.rounds)
    oof = out_of_fold(labelled, FOLDS)
    keepers = sum(e.label for e in labelled)
    model = shipped_model()
    extractor = Extractor()
    cases = list(iter_msc(args.msc))
    scored: list[dict[int, list[float]]] = []
    for case in cases:
        result = extractor.process(case.conversation)
        index = {m.id: i for i, m in enumerate(case.conversation.messages)}
        turns: dict[int, list[float]] = {}
        for c in result.candidates:
            i = index.get(c.source_span.message_id)
            if c.origin_kind is Origin.USER and c.memory_type in USER_FACT_TYPES and i is not None:
                value = score(model, c.source_span.quote, c.content, c.memory_type.value)
                turns.setdefault(i, []).append(value)
        scored.append(turns)
    print(f"{len(labelled)} labelled candidates ({keepers} sensible); MSC: {len(cases)} chats")
    print("threshold  labelled: rate   sensible lost   MSC: precision  recall    TP")
    for t in THRESHOLDS:
        kept = [e for e, s in zip(labelled, oof, strict=True) if t is None or s >= t]
        good = sum(e.label for e in kept)
        rate = 100 * good / len(kept) if kept else 0.0
        lost = 100 * (keepers - good) / keepers
        predicted = [
            {i: ["fact"] for i, values in turns.items() if t is None or max(values) >= t}
            for turns in scored
        ]
        turn = score_turns("model", cases, predicted)
        p = 100 * turn.tp / (turn.tp + turn.fp) if turn.tp + turn.fp else 0.0
        r = 100 * turn.tp / (turn.tp + turn.fn) if turn.tp + turn.fn else 0.0
        name = "shipped" if t is None else f"{t:.1f}"
        print(f"{name:>9}  {rate:14.1f}%  {lost:12.1f}%  {p:15.1f}%  {r:5.1f}%  {turn.tp:5}")


if __name__ == "__main__":
    main()
