"""The offline model's old import path, kept working: it lives in :mod:`extractor.offline`."""

from __future__ import annotations

from ..offline import MODEL_NAME, OfflineClient, estimate_usage, offline_extract

__all__ = ["MODEL_NAME", "OfflineClient", "estimate_usage", "offline_extract"]
