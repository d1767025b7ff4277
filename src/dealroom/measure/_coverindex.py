"""The coverage index: a room's text cut into lines, each with a token weight and a hash.

Every document's text (pages joined by ``\\f``) is split at ``\\n`` and ``\\f``. Each line holding
at least one token is a *unit*. Units are numbered in room order (document by document, top to
bottom) and stored in flat numpy arrays:

    unit_start, unit_end   global character offsets (document offset + offset in its text)
    unit_tok               dealroom-words-v1 tokens on the line (the coverage weight)
    unit_doc               index of the document the unit belongs to
    unit_hash              stable hash of the whitespace-normalised line
    hash_sorted/hash_unit  the hashes sorted, and the unit each sorted hash came from
    pfx_sorted/pfx_unit    the same for the first PREFIX_CHARS characters of long lines

For a room these arrays are read from the line table its index already holds
(:meth:`dealroom.room.Room.line_table`), so opening the index costs a file read; a list of
:class:`DocText` is cut into lines in memory with the same functions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

from dealroom.measure._roomtext import DocText
from dealroom.room import (
    char_classes,
    char_codes,
    line_hashes,
    line_units,
    prefix_hashes,
    token_bounds,
)

if TYPE_CHECKING:
    from dealroom.room import Room

_TOKEN = re.compile(r"\w+|[^\w\s]")
LineText = Callable[[int, int, int], str]
"""``line_text(doc, start, end)``: characters ``[start, end)`` of a document's full text."""


def token_starts(line: str) -> list[int]:
    """Offsets where the dealroom-words-v1 tokens of ``line`` start."""
    return [m.start() for m in _TOKEN.finditer(line)]


class CoverageIndex:
    """Read-only hash index of a room's text; build once per room, share among probes.

    ``CoverageIndex(docs)`` cuts a list of :class:`DocText` into lines;
    :meth:`from_room` reads an open room's line table.
    """

    def __init__(self, docs: Iterable[DocText], text_of: Callable[[str], str] | None = None
                 ) -> None:
        docs = list(docs)
        texts = {d.id: d.text for d in docs}
        fetch = functools.lru_cache(maxsize=8)(text_of or texts.__getitem__)
        lines: dict[str, list[Any]] = {k: [] for k in ("starts", "ends", "toks", "hashes")}
        pfx: list[tuple[np.ndarray, np.ndarray]] = []
        page_starts, count = [], 0
        for d in docs:
            codes = char_codes(d.text)
            starts, _ = token_bounds(char_classes(codes))
            lo, hi, toks, norms = line_units(d.text, codes, starts)
            for key, arr in zip(lines, (lo, hi, toks, line_hashes(norms)), strict=True):
                lines[key].append(arr)
            index, hashes = prefix_hashes(norms)
            pfx.append((index + count, hashes))
            count += len(toks)
            page_starts.append(np.flatnonzero(codes == 12) + 1)
        self._setup(
            [d.id for d in docs], [d.folder for d in docs], [d.category for d in docs],
            np.array([len(d.text) for d in docs], dtype=np.int64),
            np.array([len(t) for t in lines["toks"]], dtype=np.int64),
            _cat(lines["starts"]), _cat(lines["ends"]), _cat(lines["toks"]),
            _cat(lines["hashes"]).astype(np.uint64),
            _cat([i for i, _ in pfx]), _cat([h for _, h in pfx]).astype(np.uint64),
            [np.concatenate(([0], p)) for p in page_starts],
            lambda doc, a, b: fetch(self.doc_ids[doc])[a:b],
        )

    @classmethod
    def from_room(cls, room: Room) -> CoverageIndex:
        """The index of an open :class:`dealroom.room.Room`, from its stored line table."""
        t = room.line_table()
        self = cls.__new__(cls)
        page0, cstart = t["doc_page0"], t["page_cstart"]
        page_starts = [cstart[a:b] for a, b in zip(page0[:-1], page0[1:], strict=True)]
        doc_len = t["page_cend"][page0[1:] - 1] if len(page0) > 1 else np.zeros(0, np.int64)

        @functools.lru_cache(maxsize=64)
        def page_text(doc: int, page: int) -> str:
            return room.text(room.docs[doc].id, page)

        def line_text(doc: int, a: int, b: int) -> str:
            page = int(np.searchsorted(page_starts[doc], a, "right"))
            base = int(page_starts[doc][page - 1])
            return page_text(doc, page)[a - base:b - base]

        order = t["hash_order"]
        self._setup(
            [d.id for d in room.docs], [d.folder for d in room.docs],
            [d.category for d in room.docs], doc_len, np.diff(t["doc_line0"]),
            t["line_start"], t["line_end"], t["line_tokens"], t["line_hash"],
            t["pfx_line"], t["pfx_hash"], page_starts, line_text, order=order, sorted_pfx=True,
        )
        return self

    def _setup(self, ids: list[str], folders: list[str], categories: list[str],
               doc_len: np.ndarray, per_doc: np.ndarray, starts: np.ndarray, ends: np.ndarray,
               toks: np.ndarray, hashes: np.ndarray, pfx_unit: np.ndarray, pfx_hash: np.ndarray,
               page_starts: list[np.ndarray], line_text: LineText, *,
               order: np.ndarray | None = None, sorted_pfx: bool = False) -> None:
        self.doc_ids = ids
        self.doc_index = {d: i for i, d in enumerate(ids)}
        self.folders, self.doc_folder = _groups(folders)
        self.categories, self.doc_category = _groups(categories)
        self.doc_len = np.asarray(doc_len, dtype=np.int64)
        self.doc_off = np.concatenate(([0], np.cumsum(self.doc_len + 1)))[:-1]
        self.unit_doc = np.repeat(np.arange(len(ids), dtype=np.int32), per_doc)
        self.unit_start = starts + self.doc_off[self.unit_doc]
        self.unit_end = ends + self.doc_off[self.unit_doc]
        self.unit_tok = toks.astype(np.int32)
        self.unit_hash = hashes
        order = np.argsort(hashes, kind="stable") if order is None else order
        self.hash_sorted, self.hash_unit = hashes[order], order.astype(np.int64)
        if not sorted_pfx:
            pfx_order = np.argsort(pfx_hash, kind="stable")
            pfx_hash, pfx_unit = pfx_hash[pfx_order], pfx_unit[pfx_order]
        self.pfx_sorted, self.pfx_unit = pfx_hash, pfx_unit
        self.page_starts = page_starts
        running = np.concatenate(([0], np.cumsum(toks, dtype=np.int64)))
        bounds = np.concatenate(([0], np.cumsum(per_doc)))
        self.doc_tokens = running[bounds[1:]] - running[bounds[:-1]]
        self._line_text = line_text

    @property
    def n_units(self) -> int:
        return len(self.unit_tok)

    @property
    def total_tokens(self) -> int:
        return int(self.doc_tokens.sum())

    def unit_text(self, unit: int) -> str:
        """The raw line of ``unit`` as it stands in its document."""
        doc = int(self.unit_doc[unit])
        off = int(self.doc_off[doc])
        return self._line_text(doc, int(self.unit_start[unit]) - off,
                               int(self.unit_end[unit]) - off)

    def page_span(self, doc: int, first: int, last: int) -> tuple[int, int]:
        """Character span of pages ``first..last`` (1-based, inclusive) of document ``doc``."""
        starts = self.page_starts[doc]
        first = min(max(first, 1), len(starts))
        last = min(max(last, first), len(starts))
        end = int(starts[last]) - 1 if last < len(starts) else int(self.doc_len[doc])
        return int(starts[first - 1]), end


def _groups(names: list[str]) -> tuple[list[str], np.ndarray]:
    labels = sorted(set(names))
    pos = {n: i for i, n in enumerate(labels)}
    return labels, np.array([pos[n] for n in names], dtype=np.int32)


def _cat(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
