"""How the offline model's veto threshold was chosen: a sweep on the MSC dev half only.

    python benchmarks/msc_scorer.py ../shared/data/msc-valid.jsonl

Reads only the dev half (conversations 0, 2, 4, ...), like ``python -m extractor.offline.train``.
Each dev sentence gets an *out-of-fold* score (:func:`extractor.offline.train.out_of_fold`: a
model fitted on the other four fifths of the dev chats), so the sweep does not flatter the
scorer with sentences it was trained on. The rules run alone (the veto switched off). For each
threshold it prints:

* the veto as shipped (within a message, the best-scored claim kept): claims dropped, and the
  share of them on gold-positive turns whose sentence shares a content word with the gold fact
  (*on-fact*; all the rules' claims: about 64%);
* a veto of whole messages (every claim of a turn whose best sentence scores below the
  threshold): the turn-level P / R / F1 it would give.

Then the gold-fact rate of the rule-positive turns the scorer likes least (what a veto of whole
messages would drop) and of the rule-negative turns it likes best (what letting the scorer admit
turns the rules skipped would add), by the turn's best sentence score.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from extractor.evaluation.msc import USER_FACT_TYPES, tokens
from extractor.offline import model as offline_model
from extractor.offline.draft import Group
from extractor.offline.text import sentences
from extractor.offline.train import dev_cases, examples, out_of_fold
from extractor.pipeline import Extractor
from extractor.vocab import Origin

THRESHOLDS = (-3.0, -2.5, -2.0, -1.5, -1.0, -0.5, 0.0)


def _keep_all(groups: list[Group], *_: object, **__: object) -> list[Group]:
    return groups


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("msc", type=Path, help="msc-valid.jsonl (only its dev half is read)")
    args = parser.parse_args()
    offline_model.drop_chatter = _keep_all  # type: ignore[assignment]
    cases = dev_cases(args.msc)
    scores = iter(out_of_fold(examples(cases)))
    extractor = Extractor()
    claims = []  # (turn, score of its sentence, on-fact)
    turns = {}  # turn -> gold-positive
    best_sentence = {}  # turn -> its best sentence score
    for n, case in enumerate(cases):
        conv = case.conversation
        sentence_scores = {
            i: [(p.start, p.end, next(scores)) for p in sentences(conv.messages[i])]
            for i in case.annotated
        }
        index = {m.id: i for i, m in enumerate(conv.messages)}
        result = extractor.process(conv)
        for i in case.annotated:
            turns[(n, i)] = i in case.facts
            best_sentence[(n, i)] = max((x for _, _, x in sentence_scores[i]), default=0.0)
        for c in result.candidates if result is not None else []:
            i = index.get(c.source_span.message_id, -1)
            if c.origin_kind is not Origin.USER or c.memory_type not in USER_FACT_TYPES:
                continue
            if i not in sentence_scores:
                continue
            s, e = c.source_span.start, c.source_span.end
            covered = [x for a, b, x in sentence_scores[i] if a < e and b > s]
            gold = case.facts.get(i)
            on_fact = gold is not None and bool(
                set(tokens(gold)) & set(tokens(c.source_span.quote))
            )
            claims.append(((n, i), max(covered, default=0.0), on_fact))
    by_turn = defaultdict(list)
    for claim in claims:
        by_turn[claim[0]].append(claim)
    print(
        f"dev half: {len(cases)} chats, {len(claims)} user facts on annotated turns, "
        f"{100 * sum(c[2] for c in claims) / len(claims):.1f}% on-fact"
    )
    print(
        "| threshold | claims dropped (best of each message kept) | of them on-fact | "
        "whole-message veto: P / R / F1 |"
    )
    print("|---:|---:|---:|---|")
    for t in THRESHOLDS:
        dropped = []
        tp = fp = fn = 0
        for turn, gold in turns.items():
            cs = by_turn.get(turn, [])
            if cs:
                best = max(cs, key=lambda c: c[1])
                dropped += [c for c in cs if c is not best and c[1] < t]
            kept = bool(cs) and max(c[1] for c in cs) >= t
            tp += kept and gold
            fp += kept and not gold
            fn += gold and not kept
        p, r = tp / (tp + fp), tp / (tp + fn)
        share = 100 * sum(c[2] for c in dropped) / len(dropped) if dropped else 0.0
        print(
            f"| {t:+.1f} | {len(dropped)} | {share:.0f}% | "
            f"{100 * p:.1f} / {100 * r:.1f} / {200 * p * r / (p + r):.1f} |"
        )

    _rates(turns, best_sentence, set(by_turn))


def _rates(
    turns: dict[tuple[int, int], bool],
    best: dict[tuple[int, int], float],
    claimed: set[tuple[int, int]],
) -> None:
    low = sorted((best[t], gold) for t, gold in turns.items() if t in claimed)
    high = sorted(((best[t], gold) for t, gold in turns.items() if t not in claimed), reverse=True)
    for k in (50, 100, 200):
        print(
            f"rule-positive turns scored lowest, {k}: {sum(g for _, g in low[:k])} with a gold fact; "
            f"rule-negative turns scored highest, {k}: {sum(g for _, g in high[:k])} with a gold fact"
        )


if __name__ == "__main__":
    main()
