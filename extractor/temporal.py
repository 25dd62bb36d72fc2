"""Temporal scope: ISO 8601 checks and resolution of time expressions against a timestamp.

Resolved bounds are ISO dates (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``), as precise as the
expression is: "in 2019" gives ``2019``, "since March" (said on 2024-05-10) gives
``valid_from="2024-03"``, "yesterday" gives the day. Relative expressions need an anchor (the
message timestamp); without one they are left unresolved rather than guessed.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from .vocab import TemporalKind

MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
MONTHS.pop("may", None)  # "may" is far more often a modal verb; "May" is matched case-sensitively
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_MONTH_RE = "|".join(sorted((m for m in MONTHS), key=len, reverse=True)) + "|May"
_NUM_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2,
    "few": 3, "a few": 3, "several": 3,
}  # fmt: skip

_PARTIAL = re.compile(r"^\d{4}(-\d{2}(-\d{2})?)?$")


@dataclass(frozen=True)
class Resolution:
    kind: TemporalKind
    valid_from: str | None = None
    valid_to: str | None = None


def is_iso(value: str) -> bool:
    """True for ISO 8601 dates and datetimes, partial dates (``2024``, ``2024-03``) included."""
    return interval(value) is not None


def interval(value: str) -> tuple[datetime, datetime] | None:
    """The span of time an ISO value denotes: ``2024-03`` is all of March 2024."""
    if _PARTIAL.match(value):
        parts = [int(p) for p in value.split("-")]
        try:
            if len(parts) == 1:
                return datetime(parts[0], 1, 1), datetime(parts[0], 12, 31, 23, 59, 59)
            if len(parts) == 2:
                last = calendar.monthrange(parts[0], parts[1])[1]
                return datetime(parts[0], parts[1], 1), datetime(
                    parts[0], parts[1], last, 23, 59, 59
                )
            day = datetime(parts[0], parts[1], parts[2])
        except ValueError:
            return None
        return day, day.replace(hour=23, minute=59, second=59)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    moment = moment.replace(tzinfo=None)
    return moment, moment


def ordered(valid_from: str, valid_to: str) -> bool:
    """``valid_from <= valid_to``, comparing the earliest start with the latest end."""
    lo, hi = interval(valid_from), interval(valid_to)
    return lo is not None and hi is not None and lo[0] <= hi[1]


def _month(value: int, year: int) -> str:
    return f"{year:04d}-{value:02d}"


def _day(d: date) -> str:
    return d.isoformat()


def _shift_month(d: date, months: int) -> tuple[int, int]:
    total = d.year * 12 + d.month - 1 + months
    return total // 12, total % 12 + 1


def _amount(word: str) -> int | None:
    word = word.lower().strip()
    if word.isdigit():
        return int(word)
    return _NUM_WORDS.get(word)


def _month_number(word: str) -> int | None:
    if word == "May":
        return 5
    return MONTHS.get(word.lower().rstrip("."))


def _last_occurrence(anchor: date, month: int) -> int:
    """Year of the most recent ``month`` not after the anchor's month."""
    return anchor.year if month <= anchor.month else anchor.year - 1


def _next_occurrence(anchor: date, month: int) -> int:
    return anchor.year if month > anchor.month else anchor.year + 1


_SIMPLE_DAYS = {"today": 0, "tonight": 0, "this morning": 0, "this evening": 0,
                "this afternoon": 0, "yesterday": -1, "tomorrow": 1, "last night": -1}  # fmt: skip


def resolve(expression: str, anchor: datetime | date | None) -> Resolution | None:
    """Resolve a time expression; ``None`` when it is not one this resolver understands.

    Absolute expressions ("in 2019", "on 5 March 2023") resolve without an anchor; relative ones
    ("yesterday", "last week", "since March", "three years ago") need it.
    """
    text = " ".join(expression.strip().split())
    low = text.lower()
    day = anchor.date() if isinstance(anchor, datetime) else anchor
    for resolver in (_absolute, _relative):
        result = resolver(text, low, day)
        if result is not None:
            return result
    return None


def _absolute(text: str, low: str, anchor: date | None) -> Resolution | None:
    m = re.fullmatch(r"(?:(since|from|until|till|by|in|on|during)\s+)?(\d{4})-(\d{2})-(\d{2})", low)
    if m:
        return _bounded(m.group(1), f"{m.group(2)}-{m.group(3)}-{m.group(4)}", anchor)
    m = re.fullmatch(
        rf"(?:(since|from|until|till|by|in|on|during)\s+)?(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+)?"
        rf"({_MONTH_RE})\.?(?:\s+(\d{{1,2}})(?:st|nd|rd|th)?)?,?\s+(\d{{4}})",
        text, flags=re.IGNORECASE,
    )  # fmt: skip
    if m and (month := _month_number(m.group(3))):
        day_text = m.group(2) or m.group(4)
        year = int(m.group(5))
        value = _month(month, year)
        if day_text:
            try:
                value = _day(date(year, month, int(day_text)))
            except ValueError:
                return None
        return _bounded((m.group(1) or "").lower() or None, value, anchor)
    m = re.fullmatch(r"(?:(since|from|until|till|by|in|during)\s+)?(\d{4})", low)
    if m and 1000 <= int(m.group(2)) <= 2999:
        return _bounded(m.group(1), m.group(2), anchor)
    m = re.fullmatch(r"(?:(?:from|between)\s+)?(\d{4})\s*(?:-|–|to|and|until)\s*(\d{4})", low)
    if m:
        kind = _kind_of_interval(m.group(1), m.group(2), anchor)
        return Resolution(kind, m.group(1), m.group(2))
    return None


def _kind_of_interval(start: str, end: str, anchor: date | None) -> TemporalKind:
    if anchor is None:
        return TemporalKind.PAST if int(end[:4]) < 1900 else TemporalKind.UNKNOWN
    bounds = interval(end)
    if bounds and bounds[1].date() < anchor:
        return TemporalKind.PAST
    lo = interval(start)
    if lo and lo[0].date() > anchor:
        return TemporalKind.FUTURE
    return TemporalKind.CURRENT


def _bounded(prep: str | None, value: str, anchor: date | None) -> Resolution:
    if prep == "since" or prep == "from":
        return Resolution(TemporalKind.CURRENT, valid_from=value)
    if prep in ("until", "till", "by"):
        return Resolution(TemporalKind.CURRENT, valid_to=value)
    if anchor is not None:
        bounds = interval(value)
        assert bounds is not None
        if bounds[1].date() < anchor:
            kind = TemporalKind.PAST
        elif bounds[0].date() > anchor:
            kind = TemporalKind.FUTURE
        else:
            kind = TemporalKind.CURRENT
        if len(value) == 10:
            kind = TemporalKind.POINT_IN_TIME if kind is not TemporalKind.FUTURE else kind
    else:
        kind = TemporalKind.POINT_IN_TIME if len(value) == 10 else TemporalKind.UNKNOWN
    return Resolution(kind, value, value)


def _relative(text: str, low: str, anchor: date | None) -> Resolution | None:
    if anchor is None:
        return None
    if low in _SIMPLE_DAYS:
        d = anchor + timedelta(days=_SIMPLE_DAYS[low])
        kind = TemporalKind.FUTURE if _SIMPLE_DAYS[low] > 0 else TemporalKind.POINT_IN_TIME
        return Resolution(kind, _day(d), _day(d))
    m = re.fullmatch(r"(last|this|next)\s+(week|month|year|weekend)", low)
    if m:
        return _calendar_unit(m.group(1), m.group(2), anchor)
    m = re.fullmatch(r"(last|this|next|on)\s+(" + "|".join(WEEKDAYS) + ")", low)
    if m:
        return _weekday(m.group(1), WEEKDAYS[m.group(2)], anchor)
    m = re.fullmatch(
        r"(?:about\s+|around\s+)?(\w+(?: of)?|a few)\s+(day|week|month|year)s?\s+ago", low
    )
    if m and (n := _amount(m.group(1))) is not None:
        return _ago(n, m.group(2), anchor)
    m = re.fullmatch(r"in\s+(\w+(?: of)?|a few)\s+(day|week|month|year)s?", low)
    if m and (n := _amount(m.group(1))) is not None:
        return _ago(-n, m.group(2), anchor)
    m = re.fullmatch(
        rf"(since|from|until|till|by|in|last|next|this|during)\s+({_MONTH_RE})\.?",
        text, flags=re.IGNORECASE,
    )  # fmt: skip
    if m and (month := _month_number(m.group(2))):
        return _named_month(m.group(1).lower(), month, anchor)
    return None


def _weekday(which: str, target: int, anchor: date) -> Resolution:
    """ "last/this/next/on <weekday>": the coming one for this/next, else the one before."""
    if which in ("next", "this") and target != anchor.weekday():
        d = anchor + timedelta(days=(target - anchor.weekday()) % 7)
        return Resolution(TemporalKind.FUTURE, _day(d), _day(d))
    if which == "next":
        d = anchor + timedelta(days=7)
        return Resolution(TemporalKind.FUTURE, _day(d), _day(d))
    d = anchor - timedelta(days=(anchor.weekday() - target) % 7 or 7)
    return Resolution(TemporalKind.POINT_IN_TIME, _day(d), _day(d))


def _named_month(prep: str, month: int, anchor: date) -> Resolution:
    """ "<prep> <month name>": the occurrence of the month the preposition points at."""
    if prep in ("since", "from", "last"):
        year = _last_occurrence(anchor, month)
        if prep == "last" and month == anchor.month:
            year -= 1
    elif prep == "next":
        year = _next_occurrence(anchor, month)
    elif prep in ("until", "till", "by"):
        year = anchor.year if month >= anchor.month else anchor.year + 1
    else:
        year = anchor.year
    value = _month(month, year)
    return _bounded("in" if prep in ("last", "next") else prep, value, anchor)


def _calendar_unit(which: str, unit: str, anchor: date) -> Resolution:
    step = {"last": -1, "this": 0, "next": 1}[which]
    kind = {-1: TemporalKind.PAST, 0: TemporalKind.CURRENT, 1: TemporalKind.FUTURE}[step]
    if unit == "year":
        y = str(anchor.year + step)
        return Resolution(kind, y, y)
    if unit == "month":
        year, month = _shift_month(anchor, step)
        value = _month(month, year)
        return Resolution(kind, value, value)
    if unit == "weekend":
        saturday = anchor + timedelta(days=(5 - anchor.weekday()) % 7 + 7 * step)
        if step == -1:
            saturday = anchor - timedelta(days=(anchor.weekday() - 5) % 7 or 7)
        return Resolution(kind, _day(saturday), _day(saturday + timedelta(days=1)))
    monday = anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=step)
    return Resolution(kind, _day(monday), _day(monday + timedelta(days=6)))


def _ago(n: int, unit: str, anchor: date) -> Resolution:
    kind = TemporalKind.PAST if n > 0 else TemporalKind.FUTURE
    if unit == "day":
        d = anchor - timedelta(days=n)
        return Resolution(TemporalKind.POINT_IN_TIME if n > 0 else kind, _day(d), _day(d))
    if unit == "week":
        d = anchor - timedelta(weeks=n)
        monday = d - timedelta(days=d.weekday())
        return Resolution(kind, _day(monday), _day(monday + timedelta(days=6)))
    if unit == "month":
        year, month = _shift_month(anchor, -n)
        value = _month(month, year)
        return Resolution(kind, value, value)
    y = str(anchor.year - n)
    return Resolution(kind, y, y)


# --- Finding time expressions in text ---------------------------------------------------------

_PREP = r"(?:since|from|until|till|by|in|on|during)"
_WEEKDAY_RE = "|".join(WEEKDAYS)
_AMOUNT_RE = r"(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|" \
    r"couple of|a couple of|few|a few|several)"  # fmt: skip
_MONTH_CI = "|".join(sorted((m for m in MONTHS), key=len, reverse=True))
#: Patterns in order of preference; each match is kept only if :func:`resolve` understands it
#: (or, without an anchor, if it is a relative expression that an anchor would resolve).
_FINDERS = [
    re.compile(rf"\b(?:{_PREP}\s+)?\d{{4}}-\d{{2}}-\d{{2}}\b", re.IGNORECASE),
    re.compile(
        rf"\b(?:{_PREP}\s+)?(?:\d{{1,2}}(?:st|nd|rd|th)?\s+)?(?:(?i:{_MONTH_CI})|May)\.?"
        rf"(?:\s+\d{{1,2}}(?:st|nd|rd|th)?)?,?\s+\d{{4}}\b"
    ),
    re.compile(r"\b(?:(?:from|between)\s+)?\d{4}\s*(?:-|–|to|and|until)\s*\d{4}\b", re.IGNORECASE),
    re.compile(r"\b(?:since|from|until|till|by|in|during)\s+\d{4}\b", re.IGNORECASE),
    re.compile(
        r"\b(?:yesterday|today|tomorrow|tonight|this morning|this evening|this afternoon|"
        r"last night)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:last|this|next)\s+(?:week|month|year|weekend)\b", re.IGNORECASE),
    re.compile(rf"\b(?:last|this|next|on)\s+(?:{_WEEKDAY_RE})\b", re.IGNORECASE),
    re.compile(
        rf"\b(?:(?:about|around)\s+)?{_AMOUNT_RE}\s+(?:day|week|month|year)s?\s+ago\b",
        re.IGNORECASE,
    ),
    re.compile(rf"\bin\s+{_AMOUNT_RE}\s+(?:day|week|month|year)s?\b", re.IGNORECASE),
    re.compile(
        rf"\b(?:(?i:since|from|until|till|by|in|last|next|this|during))\s+"
        rf"(?:(?i:{_MONTH_CI})|May)\b(?!\s*\d)"
    ),
]


#: Any date will do to tell a relative expression from a non-expression; a fixed one keeps
#: :func:`find_expressions` deterministic.
_PROBE = date(2000, 1, 15)


@dataclass(frozen=True)
class Found:
    """A time expression found in text: where it is, and what it resolves to (if anything)."""

    start: int
    end: int
    expression: str
    resolution: Resolution | None


def find_expressions(text: str, anchor: datetime | date | None) -> list[Found]:
    """Time expressions in ``text``, left to right, without overlaps.

    Each is resolved exactly as the validation gate resolves it (against ``anchor`` when there
    is one), so a caller that copies ``resolution`` into a temporal scope can never be told it
    misresolved. A relative expression with no anchor is returned with ``resolution=None``.
    """
    taken: list[Found] = []
    for pattern in _FINDERS:
        for m in pattern.finditer(text):
            if any(m.start() < f.end and f.start < m.end() for f in taken):
                continue
            expression = m.group(0)
            resolution = resolve(expression, anchor)
            if resolution is None and (anchor is not None or resolve(expression, _PROBE) is None):
                continue
            taken.append(Found(m.start(), m.end(), expression, resolution))
    return sorted(taken, key=lambda f: f.start)
