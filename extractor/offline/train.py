"""Train the offline model's sentence scorer (:mod:`.scorer`) on the dev half of MSC.

    python -m extractor.offline.train ../shared/data/msc-valid.jsonl          # writes the weights
    python -m extractor.offline.train ../shared/data/msc-valid.jsonl --check  # compares them

Only the dev half is read: conversations 0, 2, 4, ... of the file (lines 1, 3, 5, ...); the odd
ones are the held-out half and are skipped unread. Every sentence of every annotated user turn is
an example. It is positive when its turn has a gold fact and the sentence shares a content word
with it (:func:`extractor.evaluation.msc.tokens`: no pronouns, articles, forms of be/have), so
"Neat!!" in "Neat!! I used to work in the human services field" is a negative.

The model is a logistic regression over :func:`.scorer.features` (features seen in at least
:data:`MIN_COUNT` training sentences), fitted by Adagrad with L2 regularisation for a fixed
number of epochs, the examples shuffled by a seeded generator: the same file always gives the
same weights, byte for byte. The veto threshold is not fitted here: it was chosen on the dev half
(``benchmarks/msc_scorer.py --sweep`` prints the sweep it was chosen from, with the rules of
the offline model and out-of-fold scores) and is passed in (default :data:`THRESHOLD`).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import random
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..conversation import Conversation
from ..evaluation.msc import MscCase, iter_msc, tokens
from .answers import asked_in
from .scorer import WEIGHTS_RESOURCE, Scorer, features
from .text import sentences

SEED = 20261201
EPOCHS = 5
LEARNING_RATE = 0.1
L2 = 1e-3
MIN_COUNT = 2
#: The veto threshold (a logit), chosen on the dev half (``benchmarks/msc_scorer.py --sweep``).
THRESHOLD = -2.0


@dataclass(frozen=True)
class Example:
    features: tuple[str, ...]
    label: int
    conversation: int  # index of the conversation in the training file (for folds)


def dev_cases(path: str | Path) -> list[MscCase]:
    """The dev half of an MSC file: conversations 0, 2, 4, ... (lines 1, 3, 5, ...)."""
    return [case for i, case in enumerate(iter_msc(path)) if i % 2 == 0]


def examples(cases: Sequence[MscCase]) -> list[Example]:
    """One example per sentence of every annotated user turn, in file order."""
    out: list[Example] = []
    for number, case in enumerate(cases):
        conversation = case.conversation
        for index in case.annotated:
            gold = case.facts.get(index)
            gold_words = set(tokens(gold)) if gold is not None else set()
            after = _after_question(conversation, index)
            for piece in sentences(conversation.messages[index]):
                label = int(bool(gold_words & set(tokens(piece.text))))
                feats = tuple(features(piece.text, after_question=after))
                out.append(Example(feats, label, number))
    return out


def _after_question(conversation: Conversation, index: int) -> bool:
    previous = conversation.messages[index - 1] if index else None
    return asked_in(previous) is not None


def fit(
    train: Sequence[Example], *, seed: int = SEED, epochs: int = EPOCHS
) -> tuple[dict[str, float], float]:
    """Weights and bias of a logistic regression over ``train`` (Adagrad, L2, fixed epochs)."""
    counts = Counter(f for e in train for f in e.features)
    vocabulary = sorted(f for f, n in counts.items() if n >= MIN_COUNT)
    column = {f: i for i, f in enumerate(vocabulary)}
    rows = [([column[f] for f in e.features if f in column], e.label) for e in train]
    weights = [0.0] * len(vocabulary)
    squares = [1e-8] * len(vocabulary)
    bias, bias_square = 0.0, 1e-8
    order = list(range(len(rows)))
    rng = random.Random(seed)
    for _ in range(epochs):
        rng.shuffle(order)
        for r in order:
            active, label = rows[r]
            z = bias + sum(weights[i] for i in active)
            error = _sigmoid(z) - label
            for i in active:
                g = error + L2 * weights[i]
                squares[i] += g * g
                weights[i] -= LEARNING_RATE * g / math.sqrt(squares[i])
            bias_square += error * error
            bias -= LEARNING_RATE * error / math.sqrt(bias_square)
    kept = {f: round(w, 4) for f, w in zip(vocabulary, weights, strict=True) if abs(w) >= 5e-4}
    return kept, round(bias, 4)


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def train(
    path: str | Path, *, threshold: float = THRESHOLD, seed: int = SEED, epochs: int = EPOCHS
) -> Scorer:
    """The scorer trained on the dev half of the MSC file at ``path``."""
    data = Path(path).read_bytes()
    cases = dev_cases(path)
    train_set = examples(cases)
    weights, bias = fit(train_set, seed=seed, epochs=epochs)
    metadata = {
        "training_file": Path(path).name,
        "training_file_sha256": hashlib.sha256(data).hexdigest(),
        "split": "dev half: conversations 0, 2, 4, ... (lines 1, 3, 5, ...)",
        "conversations": len(cases),
        "sentences": len(train_set),
        "positives": sum(e.label for e in train_set),
        "seed": seed,
        "epochs": epochs,
        "learning_rate": LEARNING_RATE,
        "l2": L2,
        "min_count": MIN_COUNT,
        "command": "python -m extractor.offline.train <msc-valid.jsonl>",
    }
    return Scorer(weights=weights, bias=bias, threshold=threshold, metadata=metadata)


def out_of_fold(train_set: Sequence[Example], folds: int = 5) -> list[float]:
    """Each example's logit from a model fitted on the other folds (by conversation)."""
    scores = [0.0] * len(train_set)
    for k in range(folds):
        weights, bias = fit([e for e in train_set if e.conversation % folds != k])
        for i, e in enumerate(train_set):
            if e.conversation % folds == k:
                scores[i] = bias + sum(weights.get(f, 0.0) for f in e.features)
    return scores


def shipped_path() -> Path:
    return Path(__file__).parent / WEIGHTS_RESOURCE


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("msc", type=Path, help="msc-valid.jsonl (only its dev half is read)")
    parser.add_argument("--out", type=Path, default=shipped_path(), help="weights file to write")
    parser.add_argument("--threshold", type=float, default=THRESHOLD)
    parser.add_argument(
        "--check", action="store_true", help="compare with --out instead of writing it"
    )
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not args.msc.is_file():
        parser.error(f"{args.msc}: no such file (pass the path of msc-valid.jsonl)")
    return write_or_check(train(args.msc, threshold=args.threshold).to_json(), args.out, args.check)


def write_or_check(text: str, out: Path, check: bool) -> int:
    """Write the weights file ``out`` (exit status 0), or with ``check`` compare it with
    ``text`` and write nothing (0 when identical, 1 when it differs)."""
    if check:
        same = out.is_file() and out.read_text(encoding="utf-8") == text
        print(f"{out}: {'identical to' if same else 'DIFFERS from'} the trained weights")
        return 0 if same else 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
