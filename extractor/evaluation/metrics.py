"""Small numeric models shared by the scorers: a ratio and a precision/recall/F1 counter."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, computed_field


class Ratio(BaseModel):
    """``numerator / denominator``; ``value`` is ``None`` when nothing was eligible."""

    model_config = ConfigDict(extra="forbid")

    numerator: int = 0
    denominator: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def value(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None

    def add(self, hit: bool) -> None:
        self.denominator += 1
        self.numerator += int(hit)

    def __add__(self, other: Ratio) -> Ratio:
        return Ratio(
            numerator=self.numerator + other.numerator,
            denominator=self.denominator + other.denominator,
        )


class PRF(BaseModel):
    """Precision over predictions, recall over gold items, and their F1."""

    model_config = ConfigDict(extra="forbid")

    correct_predictions: int = 0
    predictions: int = 0
    found: int = 0
    gold: int = 0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def precision(self) -> float | None:
        return self.correct_predictions / self.predictions if self.predictions else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def recall(self) -> float | None:
        return self.found / self.gold if self.gold else None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def f1(self) -> float | None:
        return f1(self.precision, self.recall)

    def __add__(self, other: PRF) -> PRF:
        return PRF(
            correct_predictions=self.correct_predictions + other.correct_predictions,
            predictions=self.predictions + other.predictions,
            found=self.found + other.found,
            gold=self.gold + other.gold,
        )


def f1(precision: float | None, recall: float | None) -> float | None:
    if precision is None or recall is None:
        return None
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
