"""Train the offline model's claim keeper (:mod:`.sensible`) on the labelled samples.

    python -m extractor.offline.train_sensible evalsets/offline-real/round{1,2,3,4,5}.jsonl
    python -m extractor.offline.train_sensible ... --check   # compares with the shipped weights
    python -m extractor.offline.train_sensible ... --sweep   # out-of-fold veto figures

The examples are the labelled candidates of ``evalsets/offline-real`` (one JSON line each, with
``quote``, ``content``, ``memory_type`` and the reader's ``label``): positive when the label is
``sensible``. Only the rounds passed are read; the newest round, drawn after the weights were
made, is the held-out measure and is never passed (``docs/evaluation.md``). The fit is
:func:`.train.fit` (logistic regression, Adagrad, L2, fixed epochs, seeded): the same files give
the same weights, byte for byte. The threshold is chosen from ``--sweep`` (five folds by
conversation, so a chat never scores its own labels) and passed in (default :data:`THRESHOLD`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from .scorer import Scorer
from .sensible import WEIGHTS_RESOURCE, claim_features
from .train import (
    EPOCHS,
    L2,
    LEARNING_RATE,
    MIN_COUNT,
    SEED,
    Example,
    fit,
    out_of_fold,
    write_or_check,
)

#: The veto threshold (a logit), chosen from the out-of-fold sweep (``--sweep``).
THRESHOLD = -2.0
FOLDS = 5


def examples(paths: Sequence[Path]) -> list[Example]:
    """One example per labelled line of ``paths``, in order; the fold key is the conversation
    (numbered by first appearance across the files)."""
    out: list[Example] = []
    conversations: dict[str, int] = {}
    for path in paths:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            label = row.get("label")
            if not isinstance(label, str):
                raise ValueError(f"{path}:{number}: no label (label every line before training)")
            key = conversations.setdefault(row["conversation_id"], len(conversations))
            feats = claim_features(row["quote"], row["content"], row["memory_type"])
            out.append(Example(tuple(feats), int(label == "sensible"), key))
    return out


def train(
    paths: Sequence[Path], *, threshold: float = THRESHOLD, seed: int = SEED, epochs: int = EPOCHS
) -> Scorer:
    """The keeper trained on the labelled files ``paths``."""
    train_set = examples(paths)
    weights, bias = fit(train_set, seed=seed, epochs=epochs)
    metadata = {
        "training_files": [p.name for p in paths],
        "training_files_sha256": [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths],
        "examples": len(train_set),
        "positives": sum(e.label for e in train_set),
        "seed": seed,
        "epochs": epochs,
        "learning_rate": LEARNING_RATE,
        "l2": L2,
        "min_count": MIN_COUNT,
        "command": "python -m extractor.offline.train_sensible <round files>",
    }
    return Scorer(weights=weights, bias=bias, threshold=threshold, metadata=metadata)


def sweep(train_set: Sequence[Example], thresholds: Iterable[float]) -> list[str]:
    """Out-of-fold figures per threshold: how many examples fall below it, how many of those a
    reader would not keep (the veto's precision) and what share of the kept ones it takes."""
    scores = out_of_fold(train_set, FOLDS)
    keepers = sum(e.label for e in train_set)
    lines = ["threshold  below  not-kept-share  keepers-lost"]
    for t in thresholds:
        below = [e for e, s in zip(train_set, scores, strict=True) if s < t]
        bad = sum(1 - e.label for e in below)
        lost = len(below) - bad
        share = bad / len(below) if below else 0.0
        lost_share = 100 * lost / keepers
        lines.append(f"{t:9.2f}  {len(below):5}  {100 * share:13.1f}%  {lost_share:11.1f}%")
    return lines


def shipped_path() -> Path:
    return Path(__file__).parent / WEIGHTS_RESOURCE


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rounds", type=Path, nargs="+", help="labelled round files (JSONL)")
    parser.add_argument("--out", type=Path, default=shipped_path(), help="weights file to write")
    parser.add_argument("--threshold", type=float, default=THRESHOLD)
    parser.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    parser.add_argument("--sweep", action="store_true", help="print out-of-fold veto figures")
    args = parser.parse_args(list(argv) if argv is not None else None)
    for path in args.rounds:
        if not path.is_file():
            parser.error(f"{path}: no such file (pass labelled files of evalsets/offline-real/)")
    try:
        if args.sweep:
            print("\n".join(sweep(examples(args.rounds), [x / 4 for x in range(-8, 5)])))
            return 0
        text = train(args.rounds, threshold=args.threshold).to_json()
    except (ValueError, KeyError) as error:
        parser.error(f"{error} (every line needs quote, content, memory_type and label)")
    return write_or_check(text, args.out, args.check)


if __name__ == "__main__":
    sys.exit(main())
