"""Deliverable file names: what a task may name as a file of the run's ``output/`` folder."""

from __future__ import annotations

MAX_FILE_NAME = 255
"""The longest deliverable file name in UTF-8 bytes (what file systems take)."""


def file_name_problem(name: object) -> str | None:
    """What makes ``name`` no plain file name for the run's ``output/`` folder (None: nothing).

    >>> file_name_problem("memo.md"), file_name_problem("../memo.md")
    (None, 'a path, not a file name')
    """
    if not isinstance(name, str) or not name:
        return "not a non-empty string"
    if "/" in name or "\\" in name or name in (".", ".."):
        return "a path, not a file name"
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        return "a name holding a control character (NUL, newline, ...)"
    if len(name.encode("utf-8", "surrogatepass")) > MAX_FILE_NAME:
        return f"longer than {MAX_FILE_NAME} bytes"
    return None
