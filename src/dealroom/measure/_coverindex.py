"""The coverage index: a room's text cut into lines, each with a token weight and a hash.

Every document's text (pages joined by ``\\f``) is split at ``\\n`` and ``\\f``. Each line holding
at least one token is a *unit*. Units are numbered in room order (document by document, top to
bottom) and stored in flat numpy arrays, so the whole 80M-token room costs a few hundred MB:

    unit_start, unit_end   global character offsets (document offset + offset in its text)
    unit_tok               dealroom-words-v1 tokens on the line (the coverage weight)
    unit_doc               index of the document the unit belongs to
    unit_hash              hash of the whitespace-normalised line
    hash_sorted/hash_unit  the hashes sorted, and the unit each sorted hash came from
    pfx_sorted/pfx_unit    the same for the first PREFIX_CHARS characters of long lines

Hashes are Python's ``hash`` of ``str``: fast and 64-bit, but salted per process, so an index
is never written to disk; it is rebuilt in the process that measures.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from dealroom.measure._roomtext import DocText, TextSource
from dealroom.room import count_tokens

PREFIX_CHARS = 48
"""A line at least this long (normalised) is also indexed by its first PREFIX_CHARS characters."""

_TOKEN = re.compile(r"\w+|[^\w\s]")
_ASCII_CLASS = np.array(
    [0 if re.match(r"\s", chr(i)) else 1 if re.match(r"\w", chr(i)) else 2 for i in range(128)],
    dtype=np.uint8,
)
"""dealroom-words-v1 character classes of ASCII: 0 space, 1 word character, 2 punctuation."""


def normalize_line(line: str) -> str:
    """A line with its whitespace runs collapsed to one space and its ends stripped.

    >>> normalize_line("  Article\t1.  The name ")
    'Article 1. The name'
    """
    # Already normal (the common case, checked fast): no whitespace but single inner spaces;
    # ``isprintable`` is False for every whitespace character except the space.
    if line.isprintable() and "  " not in line and line[:1] != " " and line[-1:] != " ":
        return line
    return " ".join(line.split())


def line_hashes(lines: list[str]) -> np.ndarray:
    """``hash`` of each (already normalised) line as ``uint64``."""
    return np.fromiter(map(hash, lines), dtype=np.int64, count=len(lines)).view(np.uint64)


def token_starts(line: str) -> list[int]:
    """Offsets where the dealroom-words-v1 tokens of ``line`` start."""
    return [m.start() for m in _TOKEN.finditer(line)]


def _line_tokens(text: str, starts: np.ndarray, ends: np.ndarray, lines: list[str]) -> np.ndarray:
    """Token count of every line: vectorised for ASCII text, by regex otherwise."""
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        return np.fromiter(map(count_tokens, lines), dtype=np.int64, count=len(lines))
    cls = _ASCII_CLASS[np.frombuffer(raw, dtype=np.uint8)]
    word = cls == 1
    first = np.flatnonzero((cls == 2) | (word & ~np.concatenate(([False], word[:-1]))))
    return np.searchsorted(first, ends) - np.searchsorted(first, starts)


@dataclass
class _DocUnits:
    starts: np.ndarray
    ends: np.ndarray
    toks: np.ndarray
    hashes: np.ndarray
    prefixes: list[tuple[int, int]]
    """(unit index within the document, prefix hash) for lines of PREFIX_CHARS or more."""
    pages: np.ndarray
    """Offset where each page starts."""


def _doc_units(text: str) -> _DocUnits:
    lines = text.replace("\f", "\n").split("\n")
    lengths = np.fromiter(map(len, lines), dtype=np.int64, count=len(lines))
    ends = np.cumsum(lengths + 1) - 1
    starts = ends - lengths
    toks = _line_tokens(text, starts, ends, lines)
    keep = np.flatnonzero(toks > 0)
    norms = [normalize_line(lines[i]) for i in keep]
    prefixes = [(j, hash(n[:PREFIX_CHARS])) for j, n in enumerate(norms) if len(n) > PREFIX_CHARS]
    page_starts = [0] + [m.end() for m in re.finditer("\f", text)]
    return _DocUnits(
        starts[keep],
        ends[keep],
        toks[keep],
        line_hashes(norms),
        prefixes,
        np.asarray(page_starts, dtype=np.int64),
    )


class CoverageIndex:
    """Read-only hash index of a room's text; build once per room, share among probes."""

    def __init__(self, docs: Iterable[DocText], text_of: TextSource | None = None) -> None:
        docs = list(docs)
        if text_of is None:
            text_of = {d.id: d.text for d in docs}.__getitem__
        self.text_of: TextSource = functools.lru_cache(maxsize=8)(text_of)
        """Full text by id; cached, as cut lines of one document come in runs."""
        self.doc_ids = [d.id for d in docs]
        self.doc_index = {d: i for i, d in enumerate(self.doc_ids)}
        self.folders, self.doc_folder = _groups([d.folder for d in docs])
        self.categories, self.doc_category = _groups([d.category for d in docs])
        self.doc_len = np.array([len(d.text) for d in docs], dtype=np.int64)
        self.doc_off = np.concatenate(([0], np.cumsum(self.doc_len + 1)))[:-1]
        self._build(docs)

    def _build(self, docs: list[DocText]) -> None:
        parts = [_doc_units(d.text) for d in docs]
        counts = np.array([len(p.toks) for p in parts], dtype=np.int64)
        first_unit = np.concatenate(([0], np.cumsum(counts)))
        self.unit_doc = np.repeat(np.arange(len(docs), dtype=np.int32), counts)
        self.unit_start = _cat([p.starts + o for p, o in zip(parts, self.doc_off, strict=True)])
        self.unit_end = _cat([p.ends + o for p, o in zip(parts, self.doc_off, strict=True)])
        self.unit_tok = _cat([p.toks for p in parts]).astype(np.int32)
        self.unit_hash = _cat([p.hashes for p in parts], np.uint64)
        order = np.argsort(self.unit_hash, kind="stable")
        self.hash_sorted = self.unit_hash[order]
        self.hash_unit = order.astype(np.int64)
        pfx = [(first_unit[i] + j, h) for i, p in enumerate(parts) for j, h in p.prefixes]
        pfx_unit = np.array([u for u, _ in pfx], dtype=np.int64)
        pfx_hash = np.array([h for _, h in pfx], dtype=np.int64).view(np.uint64)
        order = np.argsort(pfx_hash, kind="stable")
        self.pfx_sorted, self.pfx_unit = pfx_hash[order], pfx_unit[order]
        self.page_starts = [p.pages for p in parts]
        self.doc_tokens = np.bincount(
            self.unit_doc, weights=self.unit_tok, minlength=len(docs)
        ).astype(np.int64)

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
        text = self.text_of(self.doc_ids[doc])
        return text[int(self.unit_start[unit]) - off : int(self.unit_end[unit]) - off]

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


def _cat(arrays: list[np.ndarray], dtype: type = np.int64) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)
