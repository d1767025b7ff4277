"""A document's text as coverage sees it: one string, pages joined by ``\\f``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DocText:
    """One document's full text with the grouping coverage reports by."""

    id: str
    folder: str
    category: str
    text: str
    """All pages joined with ``\\f``: the character space that sub-call slices point into."""
