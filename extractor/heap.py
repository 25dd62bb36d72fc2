"""The garbage-collector setting of the long-running commands (``run``, ``serve``, ``mock-server``).

Why: after start-up a process holds objects that live until it exits (modules, Pydantic and SDK
types, the policy, the prompt, the offline model's tables): ~33,000 with the offline model,
~220,000 once the ``openai`` SDK and instructor are loaded. CPython's oldest-generation
collection walks all of them each time it runs: measured in the client path at C = 32
(``benchmarks/llm_efficiency.py``), twice per 512 calls, 135 ms each, while every reply that
arrived waited for the event loop and the calls then moved in one clump. Moving the start-up
heap to the permanent generation (:func:`gc.freeze`) takes it out of every later collection;
only what the run itself allocates is walked.

It is a process-wide setting, so the library never does it on its own: the CLI commands do, and
an application embedding the library can call :func:`freeze_startup_heap` once it has built its
:class:`~extractor.pipeline.Extractor` (see ``docs/llm-path.md``).
"""

from __future__ import annotations

import gc


def freeze_startup_heap() -> int:
    """Collect once, then exclude every object alive now from future collections.

    Returns how many objects were frozen. Objects frozen here are never collected while the
    process runs, even if they later become unreachable cycles; call it after start-up, not
    in a loop.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
