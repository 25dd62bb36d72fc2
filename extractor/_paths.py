"""Where the project's top-level data directories are found at run time."""

from __future__ import annotations

import sys
from pathlib import Path

DATA_NAME = "memory-candidate-extractor"


def shipped_dir(name: str) -> Path:
    """A top-level project directory (``prompts/``, ``schemas/``): the checkout's own in a source
    or editable install, else the copy a wheel installs under ``<prefix>/share``."""
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir():
        return checkout
    return Path(sys.prefix) / "share" / DATA_NAME / name
