"""Result files: writing and reading their lines (format 3, lean; formats 2 and 1 still read)."""

from .codec import decode, dump_line, encode, line_format, load_result

__all__ = ["decode", "dump_line", "encode", "line_format", "load_result"]
