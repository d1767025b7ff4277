"""The room's text layer as coverage sees it: one string per document, pages joined by ``\\f``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealroom.room import Room


@dataclass(frozen=True)
class DocText:
    """One document's full text with the grouping coverage reports by."""

    id: str
    folder: str
    category: str
    text: str
    """All pages joined with ``\\f``: the character space that sub-call slices point into."""


TextSource = Callable[[str], str]
"""Returns a document's full text by id (used again for partly covered lines)."""


def room_documents(room: Any) -> tuple[list[DocText], TextSource]:
    """Every document of ``room`` (a room folder, or an open room: ``docs`` and ``text(id)``)
    and a text getter."""
    store = room if hasattr(room, "docs") and hasattr(room, "text") else Room.open(Path(room))
    docs = [DocText(d.id, d.folder, d.category, store.text(d.id)) for d in store.docs]
    return docs, store.text
