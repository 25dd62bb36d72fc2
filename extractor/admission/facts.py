"""What the engine derives from a candidate before evaluating rules: the facts rules match on.

Facts are pure functions of the candidate, the as-of time and which parents have a decision, so
a decision never depends on anything else (no clock, no environment, no network).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from ..candidates import MemoryCandidate
from ..temporal import interval
from ..vocab import TemporalKind
from .environment import Environment, environment_of
from .harm import Harm, harmful_content
from .instructions import Instruction, instruction_in
from .personal import PersonalData, third_party_personal_data
from .policy import TemporalStatus


@dataclass
class Facts:
    """Computed on first use: the text detectors run only when a rule asks about them."""

    candidate: MemoryCandidate
    as_of: datetime
    missing_parents: tuple[str, ...]

    @cached_property
    def temporal_status(self) -> TemporalStatus:
        return temporal_status(self.candidate, self.as_of)

    @cached_property
    def personal_data(self) -> PersonalData | None:
        return third_party_personal_data(self.candidate)

    @cached_property
    def harm(self) -> Harm | None:
        return harmful_content(self.candidate)

    @cached_property
    def instruction(self) -> Instruction | None:
        return instruction_in(self.candidate)

    @cached_property
    def environment(self) -> Environment:
        return environment_of(self.candidate)


def default_as_of(candidate: MemoryCandidate) -> datetime:
    """``as_of=None`` judges a candidate at the time it was said: ``observed_at``, or
    ``recorded_at`` when the message had no timestamp."""
    moment: datetime = candidate.observed_at or candidate.recorded_at
    return moment


def naive(moment: datetime) -> datetime:
    """Drop the timezone without converting, as :func:`extractor.temporal.interval` does:
    validity bounds are calendar dates in the speaker's own time."""
    return moment.replace(tzinfo=None)


def temporal_status(candidate: MemoryCandidate, as_of: datetime) -> TemporalStatus:
    scope = candidate.temporal
    when = naive(as_of)
    lo = interval(scope.valid_from) if scope.valid_from else None
    hi = interval(scope.valid_to) if scope.valid_to else None
    if (scope.valid_from and lo is None) or (scope.valid_to and hi is None):
        return TemporalStatus.UNKNOWN
    if hi is not None and hi[1] < when:
        return TemporalStatus.EXPIRED
    if lo is not None and lo[0] > when:
        return TemporalStatus.NOT_YET_VALID
    if hi is None and scope.kind is TemporalKind.PAST:
        return TemporalStatus.EXPIRED
    if lo is None and hi is None:
        return TemporalStatus.UNBOUNDED
    return TemporalStatus.CURRENT


def facts_for(candidate: MemoryCandidate, as_of: datetime, missing: tuple[str, ...]) -> Facts:
    return Facts(candidate, as_of, missing)
