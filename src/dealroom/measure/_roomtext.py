"""The room's text layer as coverage sees it: one string per document, pages joined by ``\\f``.

One small seam: :func:`room_documents` uses :class:`dealroom.room.Room` (the room store and its
text layer) when the room package provides it, and otherwise extracts each file with
:func:`dealroom.room.extract_pages`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dealroom.room import extract_pages, load_manifest

PAGE_BREAK = "\f"


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
    """Every document of ``room`` (a room folder or an open ``Room``) and a text getter."""
    store = _open_store(room)
    if store is not None:
        docs = [DocText(d.id, d.folder, d.category, store.text(d.id)) for d in store.docs]
        return docs, store.text
    docs = list(_extracted(Path(room)))
    by_id = {d.id: d.text for d in docs}
    return docs, by_id.__getitem__


def _open_store(room: Any) -> Any:
    """An object with ``docs`` and ``text(id)``: ``room`` itself or ``Room.open(room)``."""
    if hasattr(room, "docs") and hasattr(room, "text"):
        return room
    import dealroom.room as room_pkg

    opener = getattr(room_pkg, "Room", None)
    return opener.open(Path(room)) if opener is not None else None


def _extracted(room_dir: Path) -> Iterator[DocText]:
    for doc in load_manifest(room_dir).documents:
        pages = extract_pages(room_dir / doc.path, doc.format)
        yield DocText(doc.id, doc.folder, doc.category, PAGE_BREAK.join(pages))
