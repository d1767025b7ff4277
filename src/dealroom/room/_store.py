"""``Room``: a data room opened for reading — the ``room`` object of the agent's REPL.

    room = Room.open("rooms/aravon")         # builds ROOM/.index/ on first open
    print(room.tree())                        # folders with document counts and token sizes
    room.docs[0]                              # Doc(D00001 'documents/01 Corporate/...' pdf ...)
    room.doc("D00042").page(3)                # text of page 3
    room.grep(r"change of control", folder="03 Material Contracts")
    room.search("consent required assignment", k=10)
    room.text("D00042"), room.page_spans("D00042")   # full text and its page char ranges
    room.page_tokens("D00042")                # tokens on each page (from the index)

All text comes from the index's memory-mapped text layer (see :mod:`dealroom.room._index`);
nothing is held per document until asked for.
"""

from __future__ import annotations

import difflib
import functools
import mmap
import re
import sys
from bisect import bisect_right
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from dealroom.errors import RoomError
from dealroom.room._dense import DenseIndex, DenseSearch, fuse
from dealroom.room._grep import (
    PARALLEL_BYTES,
    ScanResult,
    compile_matcher,
    decode_span,
    default_workers,
    parallel,
    scan_docs,
    split_chunks,
)
from dealroom.room._index import (
    READABLE_VERSIONS,
    Progress,
    build_index,
    ensure_index,
    index_dir,
    index_status,
    read_json,
    read_layout,
)
from dealroom.room._manifest import room_name
from dealroom.room._normalize import fold_quotes
from dealroom.room._printed import printed_line, printed_page
from dealroom.room._search import SearchIndex, parse_query, query_phrase, snippet_regex
from dealroom.room._tables import LINE_ARRAYS, TOKEN_ARRAYS, read_tables, token_end

__all__ = ["Doc", "Hit", "HitList", "Room", "RoomKeyError", "build_index"]

SNIPPET = 240
"""Characters of context shown around a hit."""
FUSE_DEPTH = 50
"""Pages each ranking (bm25, dense) gives the fusion, at least."""
PASSAGE_CHARS = 1200
"""Where the dense half found a page, the snippet's words are looked for this far into the
passage first."""



def _current_index(room: Path) -> Path:
    """``ROOM/.index/`` when it is built and current (in a format this dealroom reads)."""
    if (reason := index_status(room, READABLE_VERSIONS)) is not None:
        raise RoomError(f"{room}: {reason}; open the room with Room.open(path) to build it")
    return index_dir(room)

class RoomKeyError(RoomError, KeyError):
    """No document or folder by that name; the message lists close matches."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True, slots=True)
class Hit:
    """One place a pattern or query matched.

    ``page`` and ``line`` are 1-based (line within the page); ``offset`` is the character
    offset of the match in the document's full text (``room.text(doc)``).
    """

    doc: str
    """Document id, e.g. ``D00042``; cite as ``[D00042 p.3]``."""
    page: int
    line: int
    offset: int
    snippet: str
    """The matched line (or the text around the match), whitespace collapsed."""
    path: str
    match: str = ""
    """The matched text (grep) or the query word found (search)."""
    score: float | None = None
    """Relevance of a ``search`` hit (higher is better): the bm25 score, or where the room has
    passage embeddings the reciprocal-rank fusion of bm25 and embedding similarity; ``None``
    for grep."""
    label: str = ""
    """The page's printed label (``A-65``, ``452``) where the document prints one (its PDF's
    page labels, else the numbers read from its text); ``page`` is the PDF index."""
    printed_line: int = 0
    """The line number printed in the margin (a transcript's ``7`` of ``452:7``); 0: none."""

    @property
    def printed(self) -> str:
        """The printed page as cited: ``"A-65"``, ``"452:7"`` (page and line), ``""``: none."""
        if not self.label:
            return ""
        return f"{self.label}:{self.printed_line}" if self.printed_line else self.label

    def __repr__(self) -> str:
        printed = f" (printed {self.printed})" if self.printed else ""
        return f"[{self.doc} p.{self.page}]{printed} l.{self.line}: {self.snippet}"


class HitList(list):  # type: ignore[type-arg]
    """A list of :class:`Hit` that says whether it was cut short.

    ``truncated`` is True when more matches exist than were returned; ``total`` counts all
    matches (a lower bound when ``exact`` is False: counting stops at 10,000 or 10 × max_hits).
    """

    def __init__(self, hits: Iterable[Hit] = (), *, total: int | None = None,
                 exact: bool = True) -> None:
        super().__init__(hits)
        self.total = len(self) if total is None else total
        self.exact = exact

    @property
    def truncated(self) -> bool:
        return self.total > len(self)

    def __repr__(self) -> str:
        head = f"{len(self)} hits"
        if self.truncated:
            head += f" of {'' if self.exact else '≥'}{self.total:,} (truncated)"
        return "\n".join([head, *map(repr, self)]) if self else head

    def docs(self) -> list[str]:
        """The distinct document ids hit, in order."""
        return list(dict.fromkeys(h.doc for h in self))


class Doc:
    """One document of the room; ``.text`` and ``.page(n)`` read it from the text layer."""

    __slots__ = ("_room", "category", "folder", "format", "id", "index", "labels", "labels_from",
                 "line_numbers", "ocr", "pages", "path", "title", "tokens")

    def __init__(self, room: Room, index: int, record: dict[str, Any]) -> None:
        self._room = room
        self.index = index
        self.id: str = record["id"]
        self.path: str = record["path"]
        """Path in the room, ``documents/<folder>/<file>``."""
        self.title: str = record["title"]
        self.category: str = record["category"]
        self.folder: str = record["folder"]
        self.format: str = record["format"]
        self.tokens: int = record["tokens"]
        self.pages: int = record["pages"]
        self.labels: list[str] = record.get("labels", [])
        """Printed page labels (``["", "i", "ii", "A-1", ...]``), one per page (``""``: that
        page prints none); empty when the document prints none that differ from its PDF index."""
        self.labels_from: str = record.get("labels_from", "pdf" if self.labels else "")
        """Where the labels come from: ``pdf`` (its ``/PageLabels``), ``text`` (the numbers its
        pages print, read at ingest), ``""`` (none)."""
        self.line_numbers: bool = record.get("line_numbers", False)
        """Whether its pages number their lines in the margin (a transcript: cite ``452:7``)."""
        self.ocr: dict[int, float] = {int(p): c for p, c in record.get("ocr", {}).items()}
        """Pages read by OCR, with the engine's mean word confidence (0-100)."""

    def label(self, n: int) -> str:
        """The printed label of page ``n`` (``"A-65"``), or ``""`` when it prints none."""
        return self.labels[n - 1] if self.labels and 1 <= n <= len(self.labels) else ""

    def page_of(self, printed: str | int) -> int:
        """The page (PDF index, 1-based) that prints ``printed``: a label (``"A-12"``,
        ``"iv"``, ``"452"``, ``"Page 452"``) or a transcript's page and line (``"452:7"``).

        A document whose labels are all its PDF index stores none: a number then names the
        page of that index. Raises :class:`RoomKeyError` naming close labels when no page
        prints it.
        """
        want = printed_page(printed)[0]
        for n, label in enumerate(self.labels, 1):
            if label.casefold() == want.casefold():
                return n
        if not self.labels and want.isdigit() and 1 <= int(want) <= self.pages:
            return int(want)
        shown = [lab for lab in self.labels if lab]
        close = difflib.get_close_matches(want, shown, n=3, cutoff=0.5)
        hint = (f"; close: {', '.join(close)}" if close else
                f"; it prints {shown[0]} to {shown[-1]}" if shown else
                f"; it prints no page labels (pages 1-{self.pages})")
        raise RoomKeyError(f"{self.id} prints no page {str(printed)!r}{hint} (doc.labels)")

    def locate(self, page: int | str) -> tuple[int, str]:
        """A cited page → ``(PDF page, the page as printed or "")``: an int is the PDF index,
        a string the page as printed (``"A-12"``, a transcript's ``"452:7"``, see
        :meth:`page_of`). A printed line of a document that numbers none raises ValueError."""
        if isinstance(page, int) and not isinstance(page, bool):
            return page, self.printed(page)
        label, line = printed_page(page)
        if line and not self.line_numbers:
            raise ValueError(f"{self.id} does not number its lines: cite {label!r} without "
                             f"the line ({page!r})")
        n = self.page_of(label)
        return n, self.printed(n, line) or (f"{label}:{line}" if line else "")

    def printed(self, n: int, line: int = 0) -> str:
        """How page ``n`` (and a margin ``line``) is cited as printed: ``"A-12"``,
        ``"452:7"``; ``""`` when the page prints no label."""
        label = self.label(n)
        return f"{label}:{line}" if label and line else label

    @property
    def text(self) -> str:
        """The full text: all pages joined by ``"\\f"`` (read from disk on each access)."""
        return self._room.text(self.id)

    def page(self, n: int) -> str:
        """The text of page ``n`` (1-based)."""
        return self._room.text(self.id, n)

    def __repr__(self) -> str:
        ocr = f", {len(self.ocr)}p OCR" if self.ocr else ""
        return (f"Doc({self.id} {self.path!r} {self.format} {self.pages}p "
                f"{_size(self.tokens)} tokens{ocr})")


def _size(tokens: int) -> str:
    if tokens >= 1_000_000:
        return f"{tokens / 1e6:.1f}M"
    return f"{tokens / 1e3:.1f}k" if tokens >= 1000 else str(tokens)


class Room:
    """A data room opened for reading: documents, folder outline, regex grep, ranked search.

        room.tree(depth=2)                  folder outline with document counts and tokens
        room.docs                           every Doc: .id .path .title .category .folder
                                            .format .tokens .pages .text .page(n)
                                            .labels (printed page labels) .ocr (OCR'd pages)
                                            .page_of("A-12") .locate("452:7") .printed(n)
                                            .line_numbers (a transcript's margin)
        room.doc("D00042")                  one document, by id or path
        room.text("D00042", pages=(2, 4))   text of pages 2-4 (None: all, 3: page 3)
        room.page_spans("D00042")           (start, end) char offsets of each page
        room.page_tokens("D00042")          tokens on each page
        room.grep(r"change of control", folder=None, max_hits=200)   regex, case-insensitive
        room.search("consent assignment", k=20, folder=None)         ranked pages (hybrid)

    Hits have ``.doc .page .line .offset .snippet .match .score .label .printed_line
    .printed``; cite them as ``[D00042 p.3]`` (``page`` is the PDF index; ``printed`` the page
    as printed, ``"A-12"`` or a transcript's ``"452:7"``). Attributes: ``name``, ``path``,
    ``docs`` (in folder order), ``totals`` (docs, folders, categories, tokens, pages). Pages
    are 1-based everywhere.
    """

    def __init__(self, path: Path, records: list[dict[str, Any]], layout: dict[str, Any],
                 counts: dict[str, int], dense_search: DenseSearch | None = None) -> None:
        n_pages = counts["page_start"]
        self.path = path
        self._counts = counts
        self.name = room_name(path)
        self.docs = [Doc(self, i, r) for i, r in enumerate(records)]
        self._by_id = {d.id: d for d in self.docs}
        self._by_path = {d.path: d for d in self.docs}
        self._a = layout
        idx = path / ".index"
        self._files = [open(idx / n, "rb") for n in ("text.bin", "lower.bin")]  # noqa: SIM115
        self._text, self._lower = (_map(f) for f in self._files)
        self._search = SearchIndex(idx / "search.db", n_pages)
        self._dense = DenseIndex(idx)
        self._dense_search = dense_search or self._dense.search
        self._no_dense = False
        self._pool: ThreadPoolExecutor | None = None
        self.totals = {
            "docs": len(self.docs),
            "folders": len({d.folder for d in self.docs}),
            "categories": len({d.category for d in self.docs}),
            "tokens": sum(d.tokens for d in self.docs),
            "pages": n_pages,
        }

    @classmethod
    def open(cls, path: str | Path, progress: Progress | None = None, *,
             dense_search: DenseSearch | None = None, built: bool = False) -> Room:
        """Open the room at ``path``, building ``ROOM/.index/`` first if missing or stale.

        ``progress(stage, done, total)`` reports a build. ``dense_search`` answers the dense
        half of :meth:`search` (default: :meth:`dense_pages`, this process; an agent's REPL
        asks the host). ``built``: the caller has just built or checked the index (a sandbox's
        host does before its worker starts), so it is opened as it is, after a check that it
        is still current, without reading and validating ``room.json`` again. Raises
        :class:`RoomError` when the folder is not a room, a document cannot be extracted, or
        the index is stale and the room read-only (or, with ``built``, stale at all).
        """
        path = Path(path).resolve()
        idx = _current_index(path) if built else ensure_index(path, progress)
        meta = read_json(idx / "meta.json")
        layout = read_layout(idx, meta["counts"])
        return cls(path, read_json(idx / "docs.json"), layout, meta["counts"], dense_search)

    def close(self) -> None:
        """Release the memory maps, the search database and the dense half's thread."""
        if self._pool is not None:
            self._pool.shutdown()
        self._search.close()
        for m in (self._text, self._lower):
            if isinstance(m, mmap.mmap):
                m.close()
        for f in self._files:
            f.close()

    def __enter__(self) -> Room:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self.docs)

    def __repr__(self) -> str:
        t = self.totals
        return f"Room({self.name!r}: {t['docs']:,} docs, {_size(t['tokens'])} tokens)"

    # -- documents ------------------------------------------------------------------------
    def doc(self, id_or_path: str | Doc) -> Doc:
        """The document with this id (``D00042``) or path (with or without ``documents/``).

        Raises :class:`RoomKeyError` (a ``KeyError``) naming close matches when unknown.
        """
        if isinstance(id_or_path, Doc):
            return id_or_path
        key = str(id_or_path).strip()
        found = (self._by_id.get(key) or self._by_id.get(key.upper())
                 or self._by_path.get(key) or self._by_path.get(f"documents/{key}"))
        if found is None:
            names = list(self._by_id) if re.fullmatch(r"[Dd]\d+", key) else list(self._by_path)
            close = difflib.get_close_matches(key, names, n=5, cutoff=0.5)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            raise RoomKeyError(f"no document {key!r} in this room{hint} (room.docs lists all)")
        return found

    def page_spans(self, doc: str | Doc, first: int = 1,
                   last: int | None = None) -> list[tuple[int, int]]:
        """``(start, end)`` char offsets of pages ``first``..``last`` (all, by default) in the
        document's full text.

        The full text is the pages joined by ``"\\f"``, so page ``n`` is
        ``text[spans[n-1][0]:spans[n-1][1]]`` and a form feed sits at each ``end``.
        """
        p0, p1 = self._page_range(doc, first, last)
        return list(zip(self._a["page_cstart"][p0:p1], self._a["page_cend"][p0:p1], strict=True))

    def _page_range(self, doc: str | Doc, first: int, last: int | None) -> tuple[int, int]:
        """Rows ``[p0, p1)`` of the page tables holding pages ``first``..``last`` of ``doc``."""
        d = self.doc(doc)
        base = self._a["doc_page0"][d.index]
        return base + first - 1, base + (d.pages if last is None else last)

    @functools.cached_property
    def _tokens(self) -> dict[str, np.ndarray]:
        return read_tables(self.path / ".index" / "tokens.bin", TOKEN_ARRAYS, self._counts)

    def page_tokens(self, doc: str | Doc, first: int = 1, last: int | None = None) -> list[int]:
        """Tokens (dealroom-words-v1) on pages ``first``..``last`` (all, by default) of the
        document, from the index."""
        p0, p1 = self._page_range(doc, first, last)
        return self._tokens["page_tokens"][p0:p1].tolist()

    def token_offset(self, doc: str | Doc, page: int, n: int, text: str | None = None) -> int:
        """Char offset in page ``page``'s text just after its first ``n`` tokens: ``text[:k]``
        holds exactly ``n`` tokens and ends with the last of them; 0 for ``n <= 0``, the page's
        length when it has fewer. ``text`` is the page's text when the caller has it."""
        d = self.doc(doc)
        p = self._a["doc_page0"][d.index] + page - 1
        tables = self._tokens
        if n <= 0:
            return 0
        if n > tables["page_tokens"][p]:
            return self._a["page_cend"][p] - self._a["page_cstart"][p]
        ticks = tables["ticks"][tables["page_tick0"][p]:tables["page_tick0"][p + 1]]
        return token_end(self.text(d, page) if text is None else text, n, ticks)

    def line_table(self) -> dict[str, np.ndarray]:
        """The coverage probe's line table (see :mod:`dealroom.room._tables`) read from the
        index, with the pages' char ranges (``doc_page0``, ``page_cstart``, ``page_cend``):
        numpy arrays by name."""
        out = read_tables(self.path / ".index" / "lines.bin", LINE_ARRAYS, self._counts)
        for name in ("doc_page0", "page_cstart", "page_cend"):
            out[name] = np.frombuffer(self._a[name], dtype=np.int64)
        return out

    def text(self, doc: str | Doc, pages: int | tuple[int, int] | None = None) -> str:
        """The document's full text, one page (``pages=3``) or a page range (``(2, 4)``).

        A range is the exact slice of the full text from the first page's start to the last
        page's end, form feeds included, so its char offsets line up with :meth:`page_spans`.
        """
        d = self.doc(doc)
        a = self._a
        if pages is None:
            lo, hi = a["doc_start"][d.index], a["doc_end"][d.index]
        else:
            first, last = (pages, pages) if isinstance(pages, int) else pages
            if not 1 <= first <= last <= d.pages:
                raise IndexError(f"{d.id} has pages 1-{d.pages}; pages {first}-{last} do not exist")
            p0 = a["doc_page0"][d.index]
            lo, hi = a["page_start"][p0 + first - 1], a["page_end"][p0 + last - 1]
        return decode_span(self._text, lo, hi)

    # -- folders --------------------------------------------------------------------------
    def _folder_docs(self, folder: str | None) -> list[int]:
        if folder is None:
            return list(range(len(self.docs)))
        f = folder.strip().strip("/")
        f = f[len("documents/"):] if f.startswith("documents/") else f
        picked = [d.index for d in self.docs if d.folder == f or d.folder.startswith(f + "/")]
        if not picked:  # a numbered prefix such as "03" or "3.2" names a folder
            picked = [d.index for d in self.docs
                      if any(part.split(" ")[0] == f for part in d.folder.split("/"))]
        if not picked:
            folders = sorted({d.folder for d in self.docs} | {d.category for d in self.docs})
            close = difflib.get_close_matches(f, folders, n=5, cutoff=0.4)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            raise RoomKeyError(f"no folder {folder!r} in this room{hint} (see room.tree())")
        return picked

    def tree(self, depth: int = 2) -> str:
        """The folder outline to ``depth`` levels, with document counts and token sizes."""
        stats: dict[tuple[str, ...], list[int]] = {}
        for d in self.docs:
            parts = tuple(d.folder.split("/")) if d.folder else ("(top)",)
            for n in range(1, min(depth, len(parts)) + 1):
                s = stats.setdefault(parts[:n], [0, 0])
                s[0] += 1
                s[1] += d.tokens
        t = self.totals
        lines = [f"{self.name}: {t['docs']:,} documents, {_size(t['tokens'])} tokens, "
                 f"{t['pages']:,} pages, {t['folders']} folders"]
        for key in sorted(stats):
            n, tokens = stats[key]
            lines.append(f"{'  ' * (len(key) - 1)}{key[-1]}/  ({n:,} docs, {_size(tokens)} tokens)")
        return "\n".join(lines)

    # -- grep -----------------------------------------------------------------------------
    def grep(self, pattern: str, folder: str | None = None, max_hits: int = 200,
             flags: int = re.I) -> HitList:
        """Regex search over every document's text, in folder order.

        ``pattern`` is a Python regex (case-insensitive by default; ``^``/``$`` match at line
        ends). Returns at most ``max_hits`` hits; ``.truncated`` and ``.total`` tell how many
        matched in all. ``folder`` limits the search to a folder and its subfolders. Curly
        quotes in the pattern match straight ones (the text layer folds them).
        """
        docs = self._folder_docs(folder)
        pattern = fold_quotes(pattern) if isinstance(pattern, str) else pattern
        try:
            matcher = compile_matcher(pattern, flags)
        except re.error as exc:
            raise ValueError(f"invalid regex {pattern!r}: {exc}") from exc
        cap = max(10_000, 10 * max_hits)
        starts, ends = self._a["doc_start"], self._a["doc_end"]

        def scan(chunk: list[int]) -> ScanResult:
            return scan_docs(self._text, self._lower, starts, ends, chunk, matcher, max_hits, cap)

        size = sum(ends[i] - starts[i] for i in docs)
        parts = default_workers() if size > PARALLEL_BYTES else 1
        result = parallel(split_chunks(docs, starts, ends, parts), scan)
        hits = [self._hit(i, lo, hi) for i, lo, hi in result.matches[:max_hits]]
        return HitList(hits, total=result.total, exact=result.exact)

    def _page_of(self, doc: int, pos: int) -> int:
        a = self._a
        lo, hi = a["doc_page0"][doc], a["doc_page0"][doc + 1]
        return max(lo, bisect_right(a["page_start"], pos, lo, hi) - 1)

    def _hit(self, doc: int, lo: int, hi: int, score: float | None = None) -> Hit:
        a, text = self._a, self._text
        p = self._page_of(doc, lo)
        ps, pe = a["page_start"][p], a["page_end"][p]
        before = text[ps:lo]
        line_start = text.rfind(b"\n", ps, lo) + 1 or ps
        line_end = text.find(b"\n", hi, pe)
        line_end = pe if line_end < 0 or hi > pe else line_end
        context = text[max(line_start, lo - SNIPPET // 2):min(line_end, hi + SNIPPET // 2)]
        d = self.docs[doc]
        page = p - a["doc_page0"][doc] + 1
        line = before.count(b"\n") + 1
        margin = 0
        if d.line_numbers:
            margin = printed_line(decode_span(text, ps, pe, "replace"), line)
        return Hit(
            doc=d.id, page=page, line=line,
            offset=a["page_cstart"][p] + len(before.decode("utf-8", "ignore")),
            snippet=" ".join(context.decode("utf-8", "replace").split()), path=d.path,
            match=text[lo:hi].decode("utf-8", "replace")[:SNIPPET], score=score,
            label=d.label(page), printed_line=margin,
        )

    # -- search ---------------------------------------------------------------------------
    def search(self, query: str, k: int = 20, folder: str | None = None) -> HitList:
        """Ranked search over pages, hybrid: bm25 on the words fused with the similarity of
        meaning (passage embeddings) where the room has them; best first, ``k`` hits (as
        many as the room or folder has pages, where it has embeddings).

        Words match their variants (``indemnify`` finds ``indemnified``); ``"a phrase"`` must
        appear as written (such a query is ranked by bm25 alone); ``word*`` is a prefix. Pages
        holding the words close together, or the query as written (``change of control``),
        rank first; a word on many pages counts for less but is never dropped. Each hit is one
        page, with the best line.
        """
        query = fold_quotes(query)
        units = parse_query(query)
        ranges = None
        if folder is not None:
            a = self._a
            ranges = [(a["doc_page0"][lo] + 1, a["doc_page0"][hi + 1])
                      for lo, hi in _runs(self._folder_docs(folder))]
        literal = any(u.quoted for u in units)
        dense = not literal and k > 0 and not self._no_dense  # known to have none: bm25 alone
        depth = max(k, FUSE_DEPTH) if dense else k
        pending = self._start_near(query, depth, ranges) if dense else None
        rows = self._search.query(units, depth, ranges, query_phrase(query), self._rowid_text)
        near = pending.result() if pending is not None else None
        at: dict[int, int] = {}
        if near is not None:
            at = {rowid: offset for rowid, _, offset in near}
            rows = fuse(rows, near, k)
        finder = snippet_regex(units)
        return HitList(self._page_hit(rowid - 1, score, finder, at.get(rowid))
                       for rowid, score in rows[:k])

    def dense_pages(self, query: str, n: int, ranges: list[tuple[int, int]] | None = None
                    ) -> list[tuple[int, float, int]]:
        """The dense half of :meth:`search`: the ``n`` pages whose passages are nearest
        ``query`` in meaning, ``(page rowid, cosine, char offset of the passage)``, within
        page-rowid ``ranges``. Raises :class:`RoomError` saying why when the room's index has
        no passage embeddings (or the ``[search]`` extra is not installed)."""
        return self._dense.search(query, n, ranges)

    def _start_near(self, query: str, n: int, ranges: list[tuple[int, int]] | None
                    ) -> Future[list[tuple[int, float, int]] | None]:
        """:meth:`_near` on a thread of its own, while bm25 ranks on this one (both release
        the GIL); here where no thread can be started (a sandbox's process limit)."""
        try:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="room-dense")
            return self._pool.submit(self._near, query, n, ranges)
        except RuntimeError:  # can't start new thread
            done: Future[list[tuple[int, float, int]] | None] = Future()
            done.set_result(self._near(query, n, ranges))
            return done

    def _near(self, query: str, n: int, ranges: list[tuple[int, int]] | None
              ) -> list[tuple[int, float, int]] | None:
        """The dense ranking, or ``None`` (said once) when there is none."""
        try:
            return [tuple(row) for row in self._dense_search(query, n, ranges)]  # type: ignore[misc]
        except RoomError as exc:
            if not self._no_dense:
                self._no_dense = True
                print(f"[note] room.search ranks by words only (bm25): {exc}", file=sys.stderr)
            return None

    def _rowid_text(self, rowid: int) -> str:
        """The text of the page with search rowid ``rowid`` (page index + 1)."""
        a = self._a
        return decode_span(self._text, a["page_start"][rowid - 1], a["page_end"][rowid - 1],
                           "replace")

    def _page_hit(self, page: int, score: float, finder: re.Pattern[str] | None,
                  at: int | None = None) -> Hit:
        """The hit of one page: the first place ``finder`` matches (within the passage at
        char ``at`` first, where the dense half found the page), else ``at``, else the top."""
        a = self._a
        doc = bisect_right(a["doc_page0"], page) - 1
        ps, pe = a["page_start"][page], a["page_end"][page]
        text = decode_span(self._text, ps, pe, "replace")
        m = None
        if finder is not None:
            m = (finder.search(text, at, at + PASSAGE_CHARS) if at is not None else None) \
                or finder.search(text)
        start = m.start() if m else (at or 0)
        lo = ps + len(text[:start].encode("utf-8"))
        hi = lo + len(m.group().encode("utf-8")) if m else lo
        return self._hit(doc, lo, hi, score=round(score, 3))


def _runs(indices: list[int]) -> list[tuple[int, int]]:
    """Consecutive runs of sorted ints as inclusive ``(first, last)`` pairs."""
    runs: list[tuple[int, int]] = []
    for i in indices:
        if runs and i == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    return runs


def _map(fh: BinaryIO) -> mmap.mmap | bytes:
    """A read-only map of the file (an empty file cannot be mapped: use ``b""``)."""
    try:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except ValueError:
        return b""
