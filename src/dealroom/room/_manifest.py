"""The room manifest, ``room.json``: one record per document plus the totals.

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
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from dealroom._util.files import read_json
from dealroom._util.schema import Schema, explain
from dealroom.errors import RoomError

MANIFEST = "room.json"
TASK = "task.json"
DOCUMENTS = "documents"
ANSWER_KEY = "answer_key"
COPIED = "copied"
"""``meta`` key: files ingest copied into documents/ that are not documents (path → reason)."""
FORMATS = ("md", "txt", "pdf", "docx", "xlsx", "csv", "pptx", "eml", "msg", "html", "png", "jpg",
           "tiff")
ROOM_VERSION = 1
"""Format version of the ``room.json`` written now."""
Migration = Callable[[dict[str, Any]], dict[str, Any]]
MIGRATIONS: dict[int, Migration] = {}
"""Version N → the function that turns a ``room.json`` of version N into one of N + 1. Version
1 is the first (a file without ``version`` is 1); the next format change adds ``MIGRATIONS[1]``
and raises :data:`ROOM_VERSION`."""


class JsonRecord(Schema):
    """A record of a room's JSON files: a key that must hold a mapping is "an object", and a
    record nested in another is validated in pydantic's core (not through :class:`Schema`'s
    ``__init__``), so an error names the whole path (``documents[3].pages``) and a 5,000-record
    list validates without a Python call per record."""

    object_noun: ClassVar[str] = "an object"

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)

    __init__.__pydantic_base_init__ = True  # type: ignore[attr-defined]


class DocumentRecord(JsonRecord):
    """One document of a room, as listed in ``room.json``. Loading checks each key's type;
    ``dealroom validate`` also checks the values against the room (id form, path, folder and
    category, format, counts, hashes)."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Stable id used in citations, ``D`` and five digits: ``D00042``."""
    path: str
    """Path relative to the room folder, starting with ``documents/``."""
    title: str
    """The document's title, as the data room index shows it."""
    category: str
    """Top-level category folder, e.g. ``03 Material Contracts`` (``""`` for a file directly in
    ``documents/``)."""
    folder: str
    """Folder relative to ``documents/``, e.g. ``03 Material Contracts/3.2 Customer Agreements``."""
    format: str
    """The file's format, from its suffix: ``md``, ``txt``, ``pdf``, ``docx``, ``xlsx``, ``csv``,
    ``pptx``, ``eml``, ``msg``, ``html``, ``png``, ``jpg`` or ``tiff``."""
    pages: int = Field(ge=0)
    """Pages of its text layer (citations point at them, 1-based)."""
    tokens: int = Field(ge=0)
    """Tokens of its text, counted by the manifest's ``tokenizer``."""
    sha256: str
    """SHA-256 of the file, 64 lowercase hex digits."""
    bytes: int = Field(0, ge=0)
    """Size of the file (0: not recorded, in rooms written before it was)."""


class RoomManifest(JsonRecord):
    """The parsed ``room.json``: the room's name, provenance and one record per document.

    ``version`` absent is 1; a file of an older version is migrated on load
    (:data:`MIGRATIONS`), one newer than this dealroom reads is refused. ``totals`` are written
    from the documents every time (:meth:`to_dict`) and checked by ``dealroom validate``."""

    version: Literal[1] = 1
    """Format version of the file (:data:`ROOM_VERSION`); absent means 1."""
    name: str
    """The room's name: the target company of a generated room, the source folder's name of
    an ingested one."""
    tokenizer: str = "dealroom-words-v1"
    """The tokenizer the documents' ``tokens`` were counted with."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Free-form provenance: generator, target, buyer, dates; ingestion source and settings;
    ``lab`` (the LAB task imported) and ``copied`` (files copied that are not documents)."""
    stated_totals: dict[str, int] | None = Field(default=None, validation_alias="totals")
    """Sums over the documents as the file states them (``docs``, ``folders``, ``categories``,
    ``tokens``, ``pages``, ``bytes``): written from the documents every time, ignored on read."""
    documents: list[DocumentRecord]
    """One record per document, in folder order."""

    def totals(self) -> dict[str, int]:
        """Sums over the documents: docs, folders, categories, tokens, pages and bytes."""
        return {
            "docs": len(self.documents),
            "folders": len({d.folder for d in self.documents}),
            "categories": len({d.category for d in self.documents}),
            "tokens": sum(d.tokens for d in self.documents),
            "pages": sum(d.pages for d in self.documents),
            "bytes": sum(d.bytes for d in self.documents),
        }

    def to_dict(self) -> dict[str, Any]:
        """``room.json`` as written: the keys in this order, ``totals`` from the documents."""
        return {
            "version": self.version,
            "name": self.name,
            "tokenizer": self.tokenizer,
            "meta": self.meta,
            "totals": self.totals(),
            "documents": _DOCS.dump_python(self.documents, mode="json"),
        }

    @classmethod
    def from_dict(cls, data: Any, where: str = MANIFEST) -> RoomManifest:
        """Validate ``data`` (a ``room.json``'s content) after migrating it to the current
        version; a :class:`RoomError` names ``where``, the key, what is allowed and what came."""
        if not isinstance(data, dict):
            raise RoomError(f"{where} must hold a JSON object, got {type(data).__name__}")
        data = migrate(data, ROOM_VERSION, MIGRATIONS, where)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise RoomError(f"{where}: {explain(exc, cls, limit=3)} (dealroom validate ROOM "
                            "lists every problem)") from None


_DOCS = TypeAdapter(list[DocumentRecord])


def migrate(data: dict[str, Any], current: int, migrations: dict[int, Migration],
            where: str) -> dict[str, Any]:
    """``data`` as version ``current`` reads it: each migration from its ``version`` on (absent:
    1) applied in turn. A version newer than ``current``, or not a number, is a RoomError.

    >>> migrate({"name": "x"}, 1, {}, "room.json")["version"]
    1
    """
    version = data.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= current:
        raise RoomError(f"{where}: format version {version!r}; this dealroom reads 1 to "
                        f"{current}: upgrade dealroom to read it")
    data = {**data, "version": version}
    while data["version"] < current:
        data = {**migrations[data["version"]](data), "version": data["version"] + 1}
    return data


def load_manifest(room: Path) -> RoomManifest:
    """Read and validate ``ROOM/room.json``; a :class:`RoomError` says what is wrong (the file,
    the key such as ``documents[3].pages``, what is allowed and what it holds).

    A current file is validated straight from its bytes (the fast path: a 5,000-document room
    loads in a few milliseconds); any other is parsed, migrated and validated again to say why.
    """
    path = Path(room) / MANIFEST
    try:
        return RoomManifest.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        pass
    missing = f"{room} is not a data room: {MANIFEST} is missing"
    return RoomManifest.from_dict(read_json(path, RoomError, missing), str(path))


def load_task(room: Path) -> dict[str, Any]:
    """Read ``ROOM/task.json`` (LAB's task with dealroom's extensions), check it against
    :class:`~dealroom.room.RoomTask` and return it as written (migrated to the current
    version): a RoomError names the file, the key, what is allowed and what it holds."""
    from dealroom.room._task_schema import check_room_task

    path = Path(room) / TASK
    return check_room_task(read_json(path, RoomError, f"{room} has no {TASK}"), str(path))


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
    plain = _plain_files(top) if not os.path.islink(top) else set()
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


def _plain_files(top: str) -> set[str]:
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
