"""What a model proposes, and what the system builds around it.

* :mod:`.events` -- the content of every event, built from its span and speaker.
"""

from .events import ContentCorrection, content_correction, event_content, with_event_content

__all__ = ["ContentCorrection", "content_correction", "event_content", "with_event_content"]
