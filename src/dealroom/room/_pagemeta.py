"""Page structure a document states about itself: printed PDF page labels and metadata
titles, and the pages of plain text that has none."""

from __future__ import annotations

from typing import Any

from dealroom.room._titles import metadata_title

PAGE_BREAK = "\f"
TEXT_PAGE_LINES = 60
TEXT_PAGE_CHARS = 4000
"""A plain-text file without form feeds gets a page every 60 lines or ~4,000 characters."""


def paginate_text(text: str) -> list[str]:
    """Pages of a plain-text file: its form feeds, else at most :data:`TEXT_PAGE_LINES` lines
    and about :data:`TEXT_PAGE_CHARS` characters a page (cut at line ends only).

    >>> [len(p.splitlines()) for p in paginate_text("line\\n" * 130)]
    [60, 60, 10]
    """
    if PAGE_BREAK in text:
        return text.split(PAGE_BREAK)
    pages: list[str] = []
    lines: list[str] = []
    size = 0
    for line in text.splitlines(keepends=True):
        if lines and (len(lines) >= TEXT_PAGE_LINES or size + len(line) > TEXT_PAGE_CHARS):
            pages.append("".join(lines))
            lines, size = [], 0
        lines.append(line)
        size += len(line)
    return pages + ["".join(lines)] if lines or not pages else pages


def pdf_title(reader: Any) -> str:
    """The PDF's metadata title when it is a real one (:func:`metadata_title`), else ``""``."""
    try:
        return metadata_title((reader.metadata or {}).get("/Title"))
    except Exception:  # a broken info dictionary is no title
        return ""


def pdf_labels(reader: Any) -> list[str]:
    """The printed page labels, when the PDF defines any that differ from 1, 2, 3, ..."""
    try:
        if "/PageLabels" not in reader.trailer["/Root"]:
            return []
        labels = [str(x) for x in reader.page_labels]
    except Exception:  # a broken number tree: plain page numbers
        return []
    same = all(label == str(i) for i, label in enumerate(labels, 1))
    return [] if same or len(labels) != len(reader.pages) else labels
