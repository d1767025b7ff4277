"""The room's text layer and search index, ``ROOM/.index/``: built once, then only read.

    ROOM/.index/
      meta.json    format version, hash of room.json, document file sizes (the freshness check)
      docs.json    document records in index order (sorted by path, so a folder is one range)
      layout.bin   int64 arrays (lengths in meta.json), in this order:
                     doc_start[n], doc_end[n]      byte range of each document in text.bin
                     doc_page0[n+1]                index of each document's first page
                     page_start[P], page_end[P]    byte range of each page in text.bin
                     page_cstart[P], page_cend[P]  char range of each page in its document's text
      text.bin     every document's full text (pages joined by "\\f"), UTF-8, "\\n" between docs
      lower.bin    text.bin with ASCII letters lowered (same offsets): grep's literal prefilter
      search.db    SQLite FTS5, contentless, one row per page (rowid = page index + 1), plus
                   ``common(term, df)``: page counts of the frequent (stemmed) terms
      tokens.bin   tokens per page and a checkpoint every 64 tokens (a slice is cut by look-up)
      lines.bin    the coverage probe's line table (see :mod:`dealroom.room._tables`)
      dense.*      optional: passage embeddings for hybrid search (see :mod:`dealroom.room._dense`)

Nothing in it is written after the build, so a read-only copy of the room works as is: the
database opens with ``immutable=1`` and the text files are memory-mapped read-only.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sqlite3
import threading
from array import array
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom._util.files import write_json_atomic
from dealroom.errors import RoomError
from dealroom.room._dense import DENSE_FILES, embed_index, installed
from dealroom.room._extract import PAGE_BREAK, Extraction, extract_document
from dealroom.room._manifest import MANIFEST, check_documents, document_path, load_manifest
from dealroom.room._normalize import normalize_pages
from dealroom.room._ocr_store import overlay_ocr
from dealroom.room._printed import read_printed
from dealroom.room._tables import TableWriter

if TYPE_CHECKING:
    from dealroom.room._room_schema import DocumentRecord

INDEX_DIR = ".index"
INDEX_FILES = ("meta.json", "docs.json", "layout.bin", "text.bin", "lower.bin", "search.db",
               "tokens.bin", "lines.bin")
"""Every file a build writes in ``.index/`` (and all a reader opens), but the optional
passage embeddings (``DENSE_FILES``), which only the host reads."""
INDEX_VERSION = 5
"""2: pages normalized (:mod:`dealroom.room._normalize`); 3: token and line tables; 4: quotes
folded, plain text paginated, page labels and OCR marks in docs.json; 5: printed page labels
read from the text (:mod:`dealroom.room._printed`) and transcripts' line numbers in docs.json."""
READABLE_VERSIONS = (4, INDEX_VERSION)
"""Index formats a read-only room may be opened with as they are (4 lacks only the labels read
from the text); a writable room's older index is rebuilt."""
TOKENIZE = "porter unicode61 remove_diacritics 2"
COMMON_SHARE = 0.02
"""Terms on more than this share of pages get a row in ``common`` (used to plan queries)."""
LAYOUT = ("doc_start", "doc_end", "doc_page0", "page_start", "page_end", "page_cstart",
          "page_cend")
PRINTED_FORMATS = frozenset({"pdf", "docx", "txt", "md", "png", "jpg", "tiff"})
"""Formats whose pages are printed pages: their page numbers are read from the text (a sheet,
a slide, an e-mail or a web page prints none that a citation uses)."""
INLINE_FORMATS = frozenset({"md", "txt", "csv", "html", "eml"})
"""Formats cheap enough to extract in-process; the others go to a process pool."""

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``; stages are ``extract``, ``index`` and ``embed``."""


def index_dir(room_dir: Path) -> Path:
    return Path(room_dir) / INDEX_DIR


def _manifest_hash(room_dir: Path) -> str:
    return hashlib.sha256((Path(room_dir) / MANIFEST).read_bytes()).hexdigest()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _ordered(docs: Sequence[DocumentRecord]) -> list[DocumentRecord]:
    return sorted(docs, key=lambda d: (d.path, d.id))


def index_status(room_dir: Path, versions: Sequence[int] = (INDEX_VERSION,)) -> str | None:
    """``None`` when ``ROOM/.index/`` is complete and current (of one of ``versions``), else
    why it must be (re)built."""
    room_dir = Path(room_dir)
    meta_path = index_dir(room_dir) / "meta.json"
    if not meta_path.is_file():
        return "the index has not been built"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return "the index's meta.json is unreadable"
    if meta.get("version") not in versions:
        return f"the index has format {meta.get('version')}, this dealroom reads {INDEX_VERSION}"
    if meta.get("manifest_sha256") != _manifest_hash(room_dir):
        return f"{MANIFEST} changed since the index was built"
    for rel, size in zip(meta["paths"], meta["sizes"], strict=True):
        if _size(room_dir / rel) != size:
            return f"{rel} changed since the index was built"
    return None


# -- extraction -----------------------------------------------------------------------------
def _extract_one(room_dir: str, path: str, fmt: str) -> tuple[bool, Extraction | str]:
    """Pool task: ``(True, extraction)`` or ``(False, reason)`` (exceptions may not pickle)."""
    try:
        return True, _read(Path(room_dir), path, fmt)
    except Exception as exc:  # noqa: BLE001 - sent back as text, raised with the doc's name
        return False, str(exc)


def _read(room_dir: Path, path: str, fmt: str) -> Extraction:
    """The document's extraction, with the OCR'd pages ingest kept for it laid over it."""
    real = document_path(room_dir, path)
    return overlay_ocr(room_dir, path, extract_document(real, fmt), real)


def _given(pages: list[str] | Extraction) -> Extraction:
    if isinstance(pages, Extraction):
        return Extraction(normalize_pages(pages.pages), title=pages.title, labels=pages.labels,
                          ocr=pages.ocr)
    return Extraction(normalize_pages(pages))


def _named(doc: DocumentRecord, exc: Exception) -> RoomError:
    return RoomError(f"cannot index {doc.id} ({doc.path}): {exc}")


def _iter_pages(room_dir: Path, docs: list[DocumentRecord],
                given: Mapping[str, list[str] | Extraction],
                workers: int) -> Iterator[Extraction]:
    """Each document's pages in order: given, extracted inline, or from a bounded pool."""
    heavy = [d for d in docs if d.id not in given and d.format not in INLINE_FORMATS]
    pool = None
    if workers > 1 and len(heavy) > 1:
        # fork needs no importable __main__ (stdin scripts, notebooks); with threads, spawn
        method = "fork" if threading.active_count() == 1 else "spawn"
        pool = ProcessPoolExecutor(min(workers, len(heavy)), mp_context=get_context(method))
    pending: dict[str, Future[tuple[bool, Extraction | str]]] = {}
    queue = iter(heavy)

    def refill() -> None:
        while pool is not None and len(pending) < 2 * workers:
            nxt = next(queue, None)
            if nxt is None:
                return
            pending[nxt.id] = pool.submit(_extract_one, str(room_dir), nxt.path, nxt.format)

    try:
        refill()
        for doc in docs:
            try:
                if doc.id in given:
                    pages = _given(given[doc.id])
                elif doc.id in pending:
                    try:
                        _, got = pending.pop(doc.id).result()
                    except BrokenProcessPool:  # the pool could not run: extract here instead
                        pool.shutdown(wait=False, cancel_futures=True)  # type: ignore[union-attr]
                        pool = None
                        got = _read(room_dir, doc.path, doc.format)
                        pending.clear()
                    refill()
                    if not isinstance(got, Extraction):
                        raise RoomError(got)
                    pages = got
                else:
                    pages = _read(room_dir, doc.path, doc.format)
            except Exception as exc:  # noqa: BLE001 - every failure names the document
                raise _named(doc, exc) from exc
            pages.pages = pages.pages or [""]
            yield pages
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


# -- writing --------------------------------------------------------------------------------
class _Writer:
    """Streams documents into text.bin, lower.bin, the FTS table, the layout arrays and the
    token and line tables."""

    def __init__(self, out: Path) -> None:
        self.text = open(out / "text.bin", "wb")  # noqa: SIM115 - closed in close()
        self.lower = open(out / "lower.bin", "wb")  # noqa: SIM115
        self.db = sqlite3.connect(out / "search.db")
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "cache_size=-200000"):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.execute(
            f"CREATE VIRTUAL TABLE pages USING fts5(body, content='', tokenize='{TOKENIZE}')"
        )
        self.arrays = {name: array("q") for name in LAYOUT}
        self.arrays["doc_page0"].append(0)
        self.pos = 0
        self.rows: list[tuple[int, str]] = []
        self.tables = TableWriter()

    def add(self, pages: list[str]) -> None:
        a = self.arrays
        a["doc_start"].append(self.pos)
        chars = 0
        stored = []
        for i, page in enumerate(pages):
            data = page.encode("utf-8", "replace")
            if i:
                self._write(PAGE_BREAK.encode())
                chars += 1
            a["page_start"].append(self.pos)
            self._write(data)
            a["page_end"].append(self.pos)
            a["page_cstart"].append(chars)
            chars += len(page)
            a["page_cend"].append(chars)
            self.rows.append((len(a["page_start"]), page))
            stored.append(page if page.isascii() else data.decode("utf-8"))  # as read back
        a["doc_end"].append(self.pos)
        a["doc_page0"].append(len(a["page_start"]))
        self._write(b"\n")
        p0 = len(a["page_cstart"]) - len(pages)
        self.tables.add(PAGE_BREAK.join(stored), a["page_cstart"][p0:], a["page_cend"][p0:])
        if len(self.rows) >= 2000:
            self._flush_rows()

    def _write(self, data: bytes) -> None:
        self.text.write(data)
        self.lower.write(data.lower())
        self.pos += len(data)

    def _flush_rows(self) -> None:
        self.db.executemany("INSERT INTO pages(rowid, body) VALUES (?, ?)", self.rows)
        self.rows.clear()

    def finish(self, out: Path) -> dict[str, int]:
        """Write what is buffered and close; return the token and line tables' lengths."""
        self._flush_rows()
        self.db.execute("INSERT INTO pages(pages) VALUES ('optimize')")
        n_pages = len(self.arrays["page_start"])
        self.db.execute("CREATE TABLE common(term TEXT PRIMARY KEY, df INTEGER) WITHOUT ROWID")
        self.db.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, pages, row)")
        self.db.execute("INSERT INTO common SELECT term, doc FROM temp.vocab WHERE doc > ?",
                        (max(1, int(n_pages * COMMON_SHARE)),))
        self.db.commit()
        with open(out / "layout.bin", "wb") as fh:
            for name in LAYOUT:
                self.arrays[name].tofile(fh)
        self.close()
        return self.tables.write(out)

    def close(self) -> None:
        self.text.close()
        self.lower.close()
        self.db.close()


def build_index(room_dir: Path,
                pages_by_doc: Mapping[str, list[str] | Extraction] | None = None,
                progress: Progress | None = None, *, workers: int | None = None,
                dense: bool | None = None) -> Path:
    """Build ``ROOM/.index/`` from scratch and return its path.

    ``pages_by_doc`` maps document ids to their page texts (a generator or an ingester that
    already has them; they are normalized like extracted ones); every other document is read
    with :func:`dealroom.room.extract_pages`.
    A document that cannot be read raises :class:`RoomError` naming it. ``progress(stage, done,
    total)`` is called as documents are indexed. The new index replaces the old one at the end.
    ``dense``: also embed every page's passages for hybrid search (the ``[search]`` extra;
    ``MissingDependency`` without it); ``None``: when the index it replaces had them.
    """
    room_dir = Path(room_dir)
    with _build_lock(room_dir):
        _build(room_dir, pages_by_doc or {}, progress, workers, dense)
    return index_dir(room_dir)


def had_dense(room_dir: Path) -> bool:
    """Whether the room's current index has passage embeddings (and they can be rebuilt)."""
    return (index_dir(room_dir) / DENSE_FILES[0]).is_file() and installed()


def _build(room_dir: Path, given: Mapping[str, list[str] | Extraction], progress: Progress | None,
           workers: int | None, dense: bool | None = None) -> None:
    docs = _ordered(load_manifest(room_dir).documents)
    check_documents(room_dir, docs)
    workers = workers or min(8, len(os.sched_getaffinity(0)))
    dense = had_dense(room_dir) if dense is None else dense
    tmp = room_dir / f"{INDEX_DIR}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        _write_all(room_dir, tmp, docs, given, progress, workers, dense)
        _swap(tmp, index_dir(room_dir))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _write_all(room_dir: Path, out: Path, docs: list[DocumentRecord],
               given: Mapping[str, list[str] | Extraction], progress: Progress | None,
               workers: int, dense: bool = False) -> None:
    writer = _Writer(out)
    try:
        records = []
        for done, (doc, got) in enumerate(
            zip(docs, _iter_pages(room_dir, docs, given, workers), strict=True), 1
        ):
            writer.add(got.pages)
            records.append(_doc_record(doc, got))
            if progress is not None:
                progress("extract", done, len(docs))
        if progress is not None:
            progress("index", 0, 1)
        counts = {name: len(writer.arrays[name]) for name in LAYOUT}
        counts.update(writer.finish(out))
    except BaseException:
        writer.close()
        raise
    write_json_atomic(out / "docs.json", records)
    write_json_atomic(out / "meta.json", {
        "version": INDEX_VERSION,
        "manifest_sha256": _manifest_hash(room_dir),
        "paths": [d.path for d in docs],
        "sizes": [_size(room_dir / d.path) for d in docs],
        "counts": counts,
        "tokenize": TOKENIZE,
    })
    if dense:
        embed_index(out, writer.arrays, progress)
    _share(out)  # readable by a sandboxed worker's uid, like the room
    if progress is not None:
        progress("index", 1, 1)


def _doc_record(doc: DocumentRecord, got: Extraction) -> dict[str, Any]:
    """The document's line of docs.json: its manifest record, its page count, and (when it
    has them) its printed page labels (the PDF's ``/PageLabels`` first, else those read from
    the text: ``labels_from``), whether it numbers its lines (``line_numbers``), and its OCR'd
    pages with their confidence."""
    record: dict[str, Any] = {**doc.to_dict(), "pages": len(got.pages)}
    printed = read_printed(got.pages if doc.format in PRINTED_FORMATS else [])
    if got.labels and len(got.labels) == len(got.pages):
        record.update(labels=list(got.labels), labels_from="pdf")
    elif printed.informative:
        record.update(labels=printed.labels, labels_from="text")
    if printed.line_numbers:
        record["line_numbers"] = True
    if got.ocr:
        record["ocr"] = {str(page): conf for page, conf in sorted(got.ocr.items())}
    return record


def _swap(new: Path, final: Path) -> None:
    old = final.with_name(f"{INDEX_DIR}.old-{os.getpid()}")
    if final.exists():
        os.replace(final, old)
    os.replace(new, final)
    shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def _build_lock(room_dir: Path) -> Iterator[None]:
    """One builder per room at a time (other processes wait); fails clearly when read-only."""
    try:
        fh = open(room_dir / f"{INDEX_DIR}.lock", "a")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise RoomError(
            f"cannot build the index of {room_dir}: the room is not writable ({exc.strerror}); "
            "build it where the room is writable (Room.open or build_index) and copy it along"
        ) from exc
    try:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield
    finally:
        fh.close()


def ensure_index(room_dir: Path, progress: Progress | None = None) -> Path:
    """Build the index if it is missing or stale (waiting for a concurrent builder); a
    rebuild keeps passage embeddings where the stale index had them."""
    room_dir = Path(room_dir)
    # "not a data room" beats any complaint about its index; an unsafe room stops here
    check_documents(room_dir, load_manifest(room_dir).documents)
    reason = index_status(room_dir)
    if reason is None:
        _share(index_dir(room_dir))
        return index_dir(room_dir)
    if not os.access(room_dir, os.W_OK):
        if index_status(room_dir, READABLE_VERSIONS) is None:  # an older format still read
            _share(index_dir(room_dir))
            return index_dir(room_dir)
        raise RoomError(
            f"{reason} and {room_dir} is read-only: build the index where the room is writable "
            "(Room.open or dealroom.room.build_index) and copy .index/ along with the room"
        )
    with _build_lock(room_dir):
        if index_status(room_dir) is not None:  # not built meanwhile by another process
            _build(room_dir, {}, progress, None)
    return index_dir(room_dir)


def _share(idx: Path) -> None:
    """Make the index readable to every uid (a sandboxed worker's), where we may."""
    for path in [idx, *idx.iterdir()]:
        mode = path.stat().st_mode
        want = mode | (0o555 if path.is_dir() else 0o444)
        if mode != want:
            with contextlib.suppress(OSError):
                path.chmod(want)


def read_layout(idx: Path, counts: Mapping[str, int]) -> dict[str, array[int]]:
    """The int64 arrays of ``layout.bin``, by name."""
    out: dict[str, array[int]] = {}
    with open(idx / "layout.bin", "rb") as fh:
        for name in LAYOUT:
            arr = array("q")
            arr.fromfile(fh, counts[name])
            out[name] = arr
    return out


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
