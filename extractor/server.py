"""The HTTP service moved to the package :mod:`extractor.service`; this module keeps the old
import path (``from extractor.server import create_app, serve_in_thread``) working."""

from __future__ import annotations

from .service import DEFAULT_MAX_BODY_BYTES, ApiError, create_app, serve_in_thread

__all__ = ["DEFAULT_MAX_BODY_BYTES", "ApiError", "create_app", "serve_in_thread"]
