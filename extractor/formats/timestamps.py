"""Message timestamps as the formats give them, made ISO 8601.

* Unix epoch numbers (``int`` / ``float``): seconds, or milliseconds when
  the value is past year 5138 as seconds (``>= 1e11``; every millisecond time after 1973 is).
  They are UTC by definition and become ``...+00:00``.
* ISO 8601 strings are kept as they are. One **without a zone** is kept zone-less: it is the
  wall-clock time of the conversation, days ("yesterday") are resolved in its own calendar, and
  where it must be compared with a zoned time (``--as-of``) it is read as UTC.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

#: At or above this an epoch number is in milliseconds (1e11 s is in year 5138).
MS_THRESHOLD = 100_000_000_000


def normalize_timestamp(value: Any) -> Any:
    """An ISO 8601 string for an epoch number; anything else unchanged (the loader judges it)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        seconds = value / 1000 if abs(value) >= MS_THRESHOLD else value
        try:
            return datetime.fromtimestamp(seconds, UTC).isoformat()
        except (OverflowError, OSError, ValueError):
            return value
    return value
