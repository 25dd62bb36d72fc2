"""``extractor doctor``: what an OpenAI-compatible server really supports, and the
``extractor run`` options that suit it.

* :func:`check_server` -- reach and authenticate, check that the system prompt reaches the
  model, try every structured-output mode, measure prompt-reading and generation speed and
  whether two requests run at once; returns a :class:`DoctorReport` with a
  :class:`Recommendation` (mode, ``--max-tokens``, ``--model-timeout``, ``--concurrency``,
  ``--max-chunk-chars``, ``--system-as-user``), every one an option of ``extractor run``.
* :func:`preflight` -- the one-request check before a batch: one small extraction with the
  run's own client settings, raising the typed error the whole run would otherwise fail with
  conversation by conversation.
"""

from __future__ import annotations

from .models import DoctorReport, ModeCheck, Recommendation, Speeds
from .probe import check_server, preflight
from .recommend import recommend

__all__ = [
    "DoctorReport",
    "ModeCheck",
    "Recommendation",
    "Speeds",
    "check_server",
    "preflight",
    "recommend",
]
