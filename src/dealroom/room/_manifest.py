"""A room's layout and its files read safely; ``room.json``'s records are in
:mod:`dealroom.room._room_schema` (:class:`RoomManifest`), ``task.json``'s in
:mod:`dealroom.room._task_schema`.

A room is a folder::

    ROOM/
      room.json        this manifest
      task.json        the task in Harvey LAB's format, with dealroom's criterion extensions
      documents/       the files, in category folders (a file directly in documents/ is in the
                       root category: category and folder "")
      answer_key/      planted findings and gold_memo.md (never shown to an agent; optional)
      ocr/             OCR text of scanned documents, kept by ingest (optional)
      .index/          text layer and search index, built once and kept beside the room
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.files import nested_too_deep, read_json, too_deep
from dealroom.errors import RoomError

if TYPE_CHECKING:
    from dealroom.room._room_schema import DocumentRecord, RoomManifest

MANIFEST = "room.json"
TASK = "task.json"
DOCUMENTS = "documents"
ANSWER_KEY = "answer_key"
COPIED = "copied"
"""``meta`` key: files ingest copied into documents/ that are not documents (path → reason)."""
FORMATS = ("md", "txt", "pdf", "docx", "xlsx", "csv", "pptx", "eml", "msg", "html", "png", "jpg",
           "tiff")


def load_manifest(room: Path) -> RoomManifest:
    """Read and validate ``ROOM/room.json`` (:class:`~dealroom.room.RoomManifest`); a
    :class:`RoomError` says what is wrong (the file, the key such as ``documents[3].pages``,
    what is allowed and what it holds).

    A current file is validated straight from its bytes (the fast path: a 5,000-document room
    loads in a few milliseconds); any other is parsed, migrated and validated again to say why.
    """
    from pydantic import ValidationError

    from dealroom.room._room_schema import RoomManifest

    path = Path(room) / MANIFEST
    try:
        manifest = RoomManifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        pass
    else:  # meta is free-form: the one part of a valid file that may nest deep
        if nested_too_deep({"meta": manifest.meta}):
            raise too_deep(str(path), RoomError)
        return manifest
    missing = f"{room} is not a data room: {MANIFEST} is missing"
    return RoomManifest.from_dict(read_json(path, RoomError, missing), str(path))


def room_name(room: Path) -> str:
    """The ``name`` of ``ROOM/room.json``, read without validating the records: for the
    sandboxed worker's :class:`~dealroom.room.Room`, whose host validated the manifest before
    the index was built from it."""
    missing = f"{room} is not a data room: {MANIFEST} is missing"
    data = read_json(Path(room) / MANIFEST, RoomError, missing)
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(name, str):
        raise RoomError(f"{Path(room) / MANIFEST}: name must be a string, got {name!r}")
    return name


def load_task(room: Path) -> dict[str, Any]:
    """Read ``ROOM/task.json`` (LAB's task with dealroom's extensions), check it against
    :class:`~dealroom.room.RoomTask` and return it as written (migrated to the current
    version): a RoomError names the file, the key, what is allowed and what it holds."""
    from dealroom.room._task_schema import check_room_task

    path = Path(room) / TASK
    task = check_room_task(read_json(path, RoomError, f"{room} has no {TASK}"), str(path))
    if not any(not _ID.match(name) for name in _named(task)):
        return task
    try:
        documents = load_manifest(room).documents
    except RoomError:
        return task  # no room.json: the names stay as written (validate says why)
    return cite_ids(task, documents)


_ID = re.compile(r"^D\d+$")


def _named(task: dict[str, Any]) -> Iterable[str]:
    for criterion in task.get("criteria") or []:
        expect = criterion.get("expect") or {}  # checked by check_room_task
        yield from expect.get("cite") or []
        yield from expect.get("pages") or {}
        yield from expect.get("reviewed") or []


def cite_ids(task: dict[str, Any], documents: Iterable[DocumentRecord]) -> dict[str, Any]:
    """``task`` with the documents its ``expect`` blocks name (``cite``, ``pages``,
    ``reviewed``) by path given as ids: a rubric may name a document by its id (``D00042``),
    its path in the room (``documents/03 Contracts/msa.pdf``) or its path under
    ``documents/`` (``03 Contracts/msa.pdf``). Names that match nothing stay as written."""
    ids: dict[str, str] = {}
    for d in documents:
        ids[d.path] = ids[d.path.removeprefix(f"{DOCUMENTS}/")] = d.id
    if not isinstance(task.get("criteria"), list):
        return task
    return {**task, "criteria": [_cite_ids(c, ids) for c in task["criteria"]]}


def _cite_ids(criterion: Any, ids: dict[str, str]) -> Any:
    expect = criterion.get("expect") if isinstance(criterion, dict) else None
    if not isinstance(expect, dict):
        return criterion
    expect = dict(expect)
    for key in ("cite", "reviewed"):
        if isinstance(expect.get(key), list):
            expect[key] = [ids.get(n, n) if isinstance(n, str) else n for n in expect[key]]
    if isinstance(expect.get("pages"), dict):
        expect["pages"] = {ids.get(n, n): p for n, p in expect["pages"].items()}
    return {**criterion, "expect": expect}


def document_path(room: Path, rel: str) -> Path:
    """The file ``room.json`` names as ``rel``, every link resolved, checked before it is read.

    Raises :class:`RoomError` unless ``rel`` is ``documents/[folder/.../]file`` without ``..``,
    ``documents/`` is a real folder of the room, and the path resolves to a regular file inside
    it: a symbolic link that leaves ``documents/`` (to ``/etc/shadow``, say) is never followed.
    """
    parts = rel.split("/")
    if parts[0] != DOCUMENTS or len(parts) < 2 or {"", ".", ".."} & set(parts[1:]):
        raise RoomError(f"{MANIFEST} names {rel!r}: a document path is "
                        f"{DOCUMENTS}/[folder/.../]file, without '.' or '..'")
    room_real = os.path.realpath(room)
    top = os.path.realpath(os.path.join(room_real, DOCUMENTS))
    if top != os.path.join(room_real, DOCUMENTS):
        raise RoomError(f"{room}/{DOCUMENTS} is a symbolic link to {top}: a room's documents "
                        "must lie inside it")
    real = os.path.realpath(os.path.join(room_real, rel))
    if not real.startswith(top + os.sep):
        raise RoomError(f"{rel} is a symbolic link to {real}, outside the room's {DOCUMENTS}/")
    try:
        mode = os.stat(real).st_mode
    except FileNotFoundError:
        raise RoomError(f"{rel} is missing") from None
    except OSError as exc:
        raise RoomError(f"{rel} cannot be read: {exc.strerror}") from exc
    if not stat.S_ISREG(mode):
        raise RoomError(f"{rel} is not a regular file (a folder, device, pipe or socket)")
    return Path(real)


def check_documents(room: Path, docs: Iterable[DocumentRecord]) -> None:
    """Check every document path as :func:`document_path` does, before anything is read.

    One listing of ``documents/`` finds the regular files reached without a link; only the other
    paths are resolved one by one. A document that is a hard link to ``task.json`` or a file of
    ``answer_key/`` (the same inode, as a symlink to one is refused) is refused too. Raises one
    :class:`RoomError` naming what is wrong (the first three problems and a count).
    """
    top = os.path.join(os.path.realpath(room), DOCUMENTS)
    plain = plain_files(top) if not os.path.islink(top) else set()
    hidden = hidden_inodes(room)
    problems = []
    for doc in docs:
        parts = doc.path.split("/")
        try:
            if parts[0] != DOCUMENTS or "/".join(parts[1:]) not in plain or ".." in parts:
                document_path(room, doc.path)
            if hidden:
                _not_hidden(room, doc.path, hidden)
        except RoomError as exc:
            problems.append(f"{doc.id}: {exc}")
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise RoomError(f"{room} cannot be opened, nothing was read: "
                        f"{'; '.join(problems[:3])}{more}")


def hidden_inodes(room: Path) -> dict[tuple[int, int], str]:
    """(device, inode) of each file an agent must not read — ``task.json`` and everything under
    ``answer_key/`` — that has other names (hard links), to its name in the room."""
    found: dict[tuple[int, int], str] = {}
    real = os.path.realpath(room)
    paths = [os.path.join(real, TASK)]
    for folder, _, files in os.walk(os.path.join(real, ANSWER_KEY)):
        paths += [os.path.join(folder, f) for f in files]
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:  # only a linked one can be a document
            found[(st.st_dev, st.st_ino)] = os.path.relpath(path, real)
    return found


def _not_hidden(room: Path, rel: str, hidden: dict[tuple[int, int], str]) -> None:
    """Refuse a document that is a hard link to a hidden file (the same inode)."""
    try:
        st = os.stat(os.path.join(os.path.realpath(room), rel))
    except OSError:
        return  # reported by document_path
    if (name := hidden.get((st.st_dev, st.st_ino))) is not None:
        raise RoomError(f"{rel} is a hard link to the room's {name}, which an agent must "
                        "never read: remove it from documents/ and room.json")


def plain_files(top: str) -> set[str]:
    """Paths (relative to ``top``) of the regular files under it reached without any link."""
    found: set[str] = set()
    stack = [("", top)]
    while stack:
        rel, folder = stack.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((f"{rel}{entry.name}/", entry.path))
                    elif entry.is_file(follow_symlinks=False):
                        found.add(f"{rel}{entry.name}")
        except OSError:
            continue
    return found


def load_answer_key(room: Path) -> dict[str, Any]:
    """``answer_key/findings.json`` of ``room`` (host-side only: never shown to an agent); a
    RoomError when the room has none (only generated rooms do)."""
    path = Path(room) / ANSWER_KEY / "findings.json"
    key = read_json(path, RoomError, f"{room} has no answer key ({ANSWER_KEY}/findings.json): "
                    "only generated rooms (dealroom generate) have one")
    if not isinstance(key, dict) or not isinstance(key.get("findings"), list):
        raise RoomError(f"{path} holds no findings list")
    return key
