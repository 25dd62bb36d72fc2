"""Garbage-collector settings for the long-running commands (`run`, `serve`, `mock-server`).

Why: after start-up a process holds objects that live until it exits (modules, Pydantic and SDK
types, the policy, the prompt, the offline model's tables): ~33,000 with the offline model,
~220,000 once the ``openai`` SDK and instructor are loaded. CPython's oldest-generation
collection walks all of them each time it runs: measured in the client path at C = 32
(``benchmarks/llm_efficiency.py``), twice per 512 calls, 135 ms each, while every reply that
arrived waited for the event loop and the calls then moved in one clump. Moving the start-up
heap to the permanent generation (:func:`gc.freeze`) takes it out of every later collection.

Then the young generation: each conversation allocates thousands of short-lived containers
(parsed JSON, Pydantic models, decisions), so at the default threshold of 700 the collector ran
~800 young and ~70 middle collections per 2,048 pipeline calls (~5% of the CPU, pauses up to
5 ms). At 10,000 most of those objects are freed by reference counting before a collection is
due: ~10 collections, and the whole pipeline at C = 32 went from 84-92% to 92% of C/L.

Both are process-wide settings, so the library never applies them on its own: the CLI commands
do, and an application embedding the library can call :func:`tune_collector` once it has built
its :class:`~extractor.pipeline.Extractor` (see ``docs/llm-path.md``).
"""

from __future__ import annotations

import gc

#: Young-generation threshold set by :func:`tune_collector` (CPython's default is 700).
YOUNG_THRESHOLD = 10_000


def tune_collector() -> int:
    """Collect once, exclude every object alive now from future collections, and raise the
    young-generation threshold to :data:`YOUNG_THRESHOLD` (older thresholds unchanged).

    Returns how many objects were frozen. Objects frozen here are never collected while the
    process runs, even if they later become unreachable cycles: call it once after start-up,
    not in a loop.
    """
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, oldest)
    return gc.get_freeze_count()
