"""Versions of the package and of the public data contracts it writes.

``SCHEMA_VERSION`` covers the JSON Schema files in ``schemas/`` (conversation input, extraction
output, memory candidate, validation report, admission decision, result line). Bump it, on
purpose, whenever one of those files changes; a test fails when the files drift from the models.
"""

__version__ = "0.1.0"
SCHEMA_VERSION = "3.0.0"
