"""Token and line tables of the text layer, built with the index in the same pass.

dealroom-words-v1 tokens (``\\w+|[^\\w\\s]``: a run of word characters, or one mark) are found
with one vectorised pass over each document's character classes, so what the host needs per
sub-call is a look-up:

    tokens.bin   int64 arrays (lengths in meta.json's ``counts``), in this order:
                   page_tokens[P]     tokens on each page
                   page_tick0[P+1]    index in ``ticks`` of each page's first checkpoint
                   ticks[...]         char offset, in its page, just after every TICK-th token
    lines.bin    the coverage probe's units: every line (split at "\\n" and "\\f") that holds a
                 token, in room order
                   doc_line0[n+1]              first line of each document
                   line_start[L], line_end[L]  char range in the document's full text
                   line_tokens[L]              tokens on the line
                   line_hash[L]                :func:`line_hashes` of the normalised line
                   hash_order[L]               lines sorted by hash (stable)
                   pfx_hash[Q], pfx_line[Q]    hash of the first PREFIX_CHARS characters of
                                               longer lines, sorted, and the line of each

Hashes are stable across processes (see :func:`line_hashes`), so the table is written once
and read by every process that measures coverage.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

TICK = 64
"""A checkpoint every TICK tokens: cutting a page to N tokens scans fewer than TICK tokens."""
PREFIX_CHARS = 48
"""A line longer than this (normalised) is also indexed by its first PREFIX_CHARS characters."""
TOKEN_ARRAYS = ("page_tokens", "page_tick0", "ticks")
LINE_ARRAYS = ("doc_line0", "line_start", "line_end", "line_tokens", "line_hash", "hash_order",
               "pfx_hash", "pfx_line")

_TOKEN = re.compile(r"\w+|[^\w\s]")
_SPACE, _WORD, _MARK = 0, 1, 2
_ASCII_CLASS = np.array(
    [_SPACE if chr(i).isspace() else _WORD if chr(i).isalnum() or i == 95 else _MARK
     for i in range(128)], dtype=np.uint8)
"""dealroom-words-v1 classes of the ASCII characters (``\\s`` is ``isspace``, ``\\w`` is
``isalnum`` or ``_``, for every code point)."""
_from_bytes = int.from_bytes


def char_codes(text: str) -> np.ndarray:
    """The code points of ``text`` (``uint8`` when it is ASCII, else ``uint32``)."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def char_classes(codes: np.ndarray) -> np.ndarray:
    """The class of every code point: 0 space, 1 word character, 2 mark."""
    if codes.dtype == np.uint8:
        return _ASCII_CLASS[codes]
    out = np.empty(len(codes), dtype=np.uint8)
    low = codes < 128
    out[low] = _ASCII_CLASS[codes[low]]
    high, inverse = np.unique(codes[~low], return_inverse=True)
    table = np.array([_SPACE if c.isspace() else _WORD if c.isalnum() else _MARK
                      for c in map(chr, high.tolist())], dtype=np.uint8)
    if len(high):
        out[~low] = table[inverse]
    return out


def token_bounds(classes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) offsets of every token, from :func:`char_classes`."""
    word = classes == _WORD
    mark = classes == _MARK
    prev = np.concatenate(([False], word[:-1]))
    nxt = np.concatenate((word[1:], [False]))
    return np.flatnonzero(mark | (word & ~prev)), np.flatnonzero(mark | (word & ~nxt)) + 1


def page_tables(ends: np.ndarray, cstart: np.ndarray, cend: np.ndarray
                ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Tokens on each page and its checkpoints (offsets in the page after every TICK-th token).

    ``ends`` are the document's token ends; pages span ``[cstart, cend)`` of its text.
    """
    first = np.searchsorted(ends, cstart, "right")
    last = np.searchsorted(ends, cend, "right")
    counts = last - first
    ticks = [ends[a + TICK - 1:b:TICK] - lo
             for a, b, lo in zip(first.tolist(), last.tolist(), cstart.tolist(), strict=True)]
    return counts, ticks


def normalize_line(line: str) -> str:
    """A line with its whitespace runs collapsed to one space and its ends stripped.

    >>> normalize_line("  Article\\t1.  The name ")
    'Article 1. The name'
    """
    # Already normal (the common case, checked fast): no whitespace but single inner spaces;
    # ``isprintable`` is False for every whitespace character except the space.
    if line.isprintable() and "  " not in line and line[:1] != " " and line[-1:] != " ":
        return line
    return " ".join(line.split())


def line_hashes(lines: list[str]) -> np.ndarray:
    """A stable 64-bit hash (``uint64``) of each line, the same in every process.

    The hash of the line's UTF-8 bytes read as one integer (Python reduces it modulo the
    Mersenne prime 2**61 - 1) and of its length, combined as a tuple: neither is salted.
    """
    return np.fromiter(
        (hash((_from_bytes(line.encode("utf-8", "surrogatepass"), "little"), len(line)))
         for line in lines), dtype=np.int64, count=len(lines)).view(np.uint64)


def line_units(text: str, codes: np.ndarray, starts: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """Every line of ``text`` holding a token: starts, ends, token counts, normalised texts.

    Lines are split at ``"\\n"`` and ``"\\f"``; ``codes`` are :func:`char_codes` of ``text``
    and ``starts`` its token starts.
    """
    breaks = np.flatnonzero((codes == 10) | (codes == 12))
    lo = np.concatenate(([0], breaks + 1))
    hi = np.concatenate((breaks, [len(codes)]))
    toks = np.searchsorted(starts, hi) - np.searchsorted(starts, lo)
    keep = np.flatnonzero(toks > 0)
    lo, hi = lo[keep], hi[keep]
    norms = [text[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]
    dirty = _dirty(codes, lo, hi) if codes.dtype == np.uint8 else range(len(norms))
    for i in dirty:
        norms[i] = normalize_line(norms[i])
    return lo, hi, toks[keep], norms


def _dirty(codes: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[int]:
    """The ASCII lines (``[lo, hi)``, each holding a token) that :func:`normalize_line`
    changes: with a tab or other non-space blank, two spaces, or a space at either end."""
    if not len(lo):
        return []
    space = codes == 32
    odd = (_ASCII_CLASS[codes] == _SPACE) & ~space
    pos = np.flatnonzero(odd | (space & np.append(space[1:], False)))
    line = np.searchsorted(lo, pos, "right") - 1
    inside = (line >= 0) & (pos < hi[np.maximum(line, 0)])
    marked = np.zeros(len(lo), dtype=bool)
    marked[line[inside]] = True
    marked |= space[lo] | space[hi - 1]
    return np.flatnonzero(marked).tolist()


def prefix_hashes(norms: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(index, hash of the first PREFIX_CHARS characters) of the lines longer than that."""
    long = [i for i, n in enumerate(norms) if len(n) > PREFIX_CHARS]
    return (np.asarray(long, dtype=np.int64),
            line_hashes([norms[i][:PREFIX_CHARS] for i in long]))


def token_end(text: str, n: int, ticks: np.ndarray) -> int:
    """Offset in ``text`` (a page) just after its ``n``-th token (``n`` at least 1 and at
    most the page's tokens), scanning on from the page's last checkpoint ``ticks`` before it."""
    j = n // TICK
    pos, left = (int(ticks[j - 1]), n - j * TICK) if j else (0, n)
    if left == 0:
        return pos
    for i, match in enumerate(_TOKEN.finditer(text, pos), start=1):
        if i == left:
            return match.end()
    raise ValueError(f"the page has fewer than {n} tokens")


class TableWriter:
    """Accumulates the token and line tables document by document; writes both files."""

    def __init__(self) -> None:
        self.page_tokens: list[np.ndarray] = []
        self.ticks: list[np.ndarray] = []
        self.lines: dict[str, list[np.ndarray]] = {
            k: [] for k in ("line_start", "line_end", "line_tokens", "line_hash")}
        self.pfx: list[tuple[np.ndarray, np.ndarray]] = []
        self.doc_line0 = [0]

    def add(self, text: str, cstart: Sequence[int], cend: Sequence[int]) -> None:
        """One document's full text and the char range of each of its pages."""
        codes = char_codes(text)
        starts, ends = token_bounds(char_classes(codes))
        counts, ticks = page_tables(ends, np.asarray(cstart), np.asarray(cend))
        self.page_tokens.append(counts)
        self.ticks.extend(ticks)
        lo, hi, toks, norms = line_units(text, codes, starts)
        base = self.doc_line0[-1]
        for key, arr in zip(self.lines, (lo, hi, toks, line_hashes(norms)), strict=True):
            self.lines[key].append(arr)
        index, hashes = prefix_hashes(norms)
        self.pfx.append((index + base, hashes))
        self.doc_line0.append(base + len(toks))

    def write(self, out: Path) -> dict[str, int]:
        """Write ``tokens.bin`` and ``lines.bin`` into ``out``; return the array lengths."""
        tick0 = np.concatenate(([0], np.cumsum([len(t) for t in self.ticks])))
        tokens = {"page_tokens": _cat(self.page_tokens), "page_tick0": tick0,
                  "ticks": _cat(self.ticks)}
        lines = {k: _cat(v) for k, v in self.lines.items()}
        lines["line_hash"] = lines["line_hash"].astype(np.uint64)
        lines["hash_order"] = np.argsort(lines["line_hash"], kind="stable")
        pfx_line = _cat([i for i, _ in self.pfx])
        pfx_hash = _cat([h for _, h in self.pfx]).astype(np.uint64)
        order = np.argsort(pfx_hash, kind="stable")
        lines.update(doc_line0=np.asarray(self.doc_line0), pfx_hash=pfx_hash[order],
                     pfx_line=pfx_line[order])
        _write(out / "tokens.bin", tokens, TOKEN_ARRAYS)
        _write(out / "lines.bin", lines, LINE_ARRAYS)
        return {name: len(arr) for name, arr in {**tokens, **lines}.items()}


def _cat(arrays: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)


def _write(path: Path, arrays: dict[str, np.ndarray], names: tuple[str, ...]) -> None:
    with open(path, "wb") as fh:
        for name in names:
            arr = arrays[name]
            (arr.view("<i8") if arr.dtype == np.uint64 else arr.astype("<i8")).tofile(fh)


def read_tables(path: Path, names: tuple[str, ...], counts: dict[str, int]
                ) -> dict[str, np.ndarray]:
    """The int64 arrays of ``tokens.bin`` or ``lines.bin``, by name (hashes as ``uint64``)."""
    out: dict[str, np.ndarray] = {}
    with open(path, "rb") as fh:
        for name in names:
            arr = np.fromfile(fh, dtype="<i8", count=counts[name])
            out[name] = arr.view(np.uint64) if name.endswith("_hash") else arr
    return out
