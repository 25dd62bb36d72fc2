"""pytest plugin: fixtures for testing code that uses memory-candidate-extractor offline.

Registered through the ``pytest11`` entry point, so it loads in every pytest session of an
environment where the package is installed; it must import cheaply and never fail to import.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "mock_llm_faults(*faults): fault modes for the mock LLM server fixture"
    )
