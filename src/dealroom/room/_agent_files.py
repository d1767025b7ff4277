"""The files of a room an agent may read, checked: what the sandbox shows its worker.

    ROOM/room.json                 the manifest
    ROOM/documents/...             each document room.json lists (at its listed path)
    ROOM/.index/<INDEX_FILES>      the files a build writes, nothing else of .index/

Nothing else of the room (``task.json``, ``answer_key/``, ``ocr/``, notes, an unlisted file in
``documents/`` or ``.index/``) is an agent file, whatever its name or links.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from dealroom.errors import RoomError
from dealroom.room._index import INDEX_DIR, INDEX_FILES
from dealroom.room._manifest import (
    DOCUMENTS,
    MANIFEST,
    check_documents,
    document_path,
    hidden_inodes,
    load_manifest,
    plain_files,
)


@dataclass(frozen=True)
class AgentFile:
    """One file an agent may read."""

    path: str
    """Relative to the room, where the agent finds it (``documents/a/b.pdf``)."""
    real: str
    """The file on the host, every link resolved."""
    inode: tuple[int, int]
    """``(st_dev, st_ino)`` when it was checked: a file swapped since is not this one."""


def agent_files(room: str | Path) -> list[AgentFile]:
    """``room.json``, each listed document and the index's files, checked: each is a regular
    file inside the room (a document inside ``documents/``), none a hard link to ``task.json``
    or ``answer_key/``. Raises :class:`RoomError` naming the first problem; the index must
    have been built (``ensure_index``)."""
    real_room = os.path.realpath(room)
    docs = load_manifest(Path(real_room)).documents
    check_documents(Path(real_room), docs)
    hidden = hidden_inodes(Path(real_room))
    plain = plain_files(os.path.join(real_room, DOCUMENTS))
    out = [_own(real_room, MANIFEST, hidden)]
    for doc in docs:
        rel = doc.path.split("/", 1)[1]
        if rel in plain:
            out.append(_checked(doc.path, os.path.join(real_room, doc.path), hidden))
        else:  # a link inside documents/: check_documents resolved it
            out.append(_checked(doc.path, str(document_path(Path(real_room), doc.path)), hidden))
    out += [_own(real_room, f"{INDEX_DIR}/{name}", hidden) for name in INDEX_FILES]
    return out


def _own(room: str, rel: str, hidden: dict[tuple[int, int], str]) -> AgentFile:
    """A file dealroom writes itself: it must be that very file, not a link."""
    path = os.path.join(room, rel)
    if os.path.realpath(path) != path:
        raise RoomError(f"{room}/{rel} is a symbolic link ({os.path.realpath(path)}): dealroom "
                        "writes it as a plain file; build the index again")
    return _checked(rel, path, hidden)


def _checked(rel: str, real: str, hidden: dict[tuple[int, int], str]) -> AgentFile:
    try:
        st = os.stat(real, follow_symlinks=False)
    except OSError as exc:
        raise RoomError(f"{rel} cannot be read ({exc.strerror}): build the room's index "
                        "(Room.open) before it is shown to an agent") from None
    if not stat.S_ISREG(st.st_mode):
        raise RoomError(f"{rel} is not a regular file")
    if (name := hidden.get((st.st_dev, st.st_ino))) is not None:
        raise RoomError(f"{rel} is a hard link to the room's {name}, which an agent must never "
                        "read: remove it")
    return AgentFile(rel, real, (st.st_dev, st.st_ino))
