"""``room.json`` as typed records: :class:`RoomManifest` and its :class:`DocumentRecord` list.

Kept apart from :mod:`dealroom.room._manifest` (the room's layout and safe paths), which the
sandboxed worker imports: pydantic loads only where a manifest is validated (the host).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError

from dealroom._util.records import Migration, migrate
from dealroom._util.schema import Schema, explain
from dealroom.errors import RoomError
from dealroom.room._manifest import MANIFEST

ROOM_VERSION = 1
"""Format version of the ``room.json`` written now."""
MIGRATIONS: dict[int, Migration] = {}
"""Version N → the function that turns a ``room.json`` of version N into one of N + 1. Version
1 is the first (a file without ``version`` is 1); the next format change adds ``MIGRATIONS[1]``
and raises :data:`ROOM_VERSION` (and the ``Literal`` of ``RoomManifest.version``, which only
the current version passes: an older file takes the migrating path)."""


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
        data = migrate(data, ROOM_VERSION, MIGRATIONS, where, RoomError)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise RoomError(f"{where}: {explain(exc, cls, limit=3)} (dealroom validate ROOM "
                            "lists every problem)") from None


_DOCS = TypeAdapter(list[DocumentRecord])
