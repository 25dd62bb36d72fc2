"""The two time axes as the store writes them (seed §12; Snodgrass; SQL:2011).

* Valid time -- when a proposition holds in the world -- is a half-open interval
  ``[valid_from, valid_to)`` of naive ISO datetimes (``YYYY-MM-DDTHH:MM:SS``), the calendar time
  of the speaker, as :func:`extractor.temporal.interval` reads it: ``valid_to = "2024-03"`` ends
  at ``2024-04-01T00:00:00``. ``None`` is unbounded.
* System time -- when the store learned something -- is a UTC ISO datetime with microseconds
  (``2026-07-05T09:00:00.000000+00:00``) from the store's clock, written only by the store.

Both forms sort as text in time order, so SQL compares them directly.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ..errors import StoreError
from ..temporal import interval

VALID_FORMAT = "%Y-%m-%dT%H:%M:%S"


def valid_bounds(valid_from: str | None, valid_to: str | None) -> tuple[str | None, str | None]:
    """The stated validity of a candidate as a half-open interval of naive ISO text."""
    lo = interval(valid_from) if valid_from else None
    hi = interval(valid_to) if valid_to else None
    start = lo[0].strftime(VALID_FORMAT) if lo else None
    end = (hi[1] + timedelta(seconds=1)).strftime(VALID_FORMAT) if hi else None
    return start, end


def valid_point(value: datetime | str, *, option: str = "as_of") -> str:
    """A valid-time instant (``as_of``) as naive ISO text; a timezone is dropped, not converted
    (validity bounds are the speaker's calendar time)."""
    if isinstance(value, str):
        span = interval(value)
        if span is None:
            raise StoreError(f"{option} {value!r} is not an ISO 8601 date or datetime")
        return span[0].strftime(VALID_FORMAT)
    return value.replace(tzinfo=None).strftime(VALID_FORMAT)


def system_time(value: datetime | str, *, option: str = "known_at") -> str:
    """A system-time instant as UTC ISO text; naive datetimes are taken to be UTC."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise StoreError(f"{option} {value!r} is not an ISO 8601 datetime") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def utc_now() -> datetime:
    return datetime.now(UTC)
