"""Coverage probes: the share of a room's tokens that reached any model.

What counts is the text actually sent, at any depth: the root's (and child roots') messages and
every sub-call's prompt, free text and document slices. Two kinds of evidence are folded into one
boolean per unit (a non-blank line, see :mod:`dealroom.measure._coverindex`) plus token ranges for
lines covered in part:

* a **slice** ``{id, chars: [start, end]}`` (or ``pages: [first, last]``) names room text by
  reference; lines inside it are covered, lines cut by its ends are covered from the cut on (a
  token counts when its first character lies inside the slice);
* **raw text** is cut into lines and matched back to the room by hash. A line equal (up to
  whitespace) to a room line covers it. A line found in several places is resolved by its
  neighbours (the room line that continues the run of the line before or after it); failing
  that the first occurrence is credited once. Short lines (fewer than
  :data:`MIN_ANCHOR_TOKENS` tokens) count only inside such a run, never alone. A line cut short
  counts for the tokens it holds when it is a prefix of a room line (found by a prefix hash or
  next to a matched run) or a suffix of the room line just before a matched run. A line that
  matches nothing is tried again without a short label before a colon (``D00042 p.3: ...``,
  as search hits print).

Coverage = covered tokens / room tokens, by document, folder and category.
"""

from __future__ import annotations

import functools
import os
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from dealroom.measure._behaviour import ratio
from dealroom.measure._coverindex import CoverageIndex, token_starts
from dealroom.room import PREFIX_CHARS, line_hashes, normalize_line
from dealroom.runs import CoverageGroup, CoverageSummary, RunFolder

if TYPE_CHECKING:
    from dealroom.measure._roomtext import DocText
    from dealroom.room import Room

    RoomSource: TypeAlias = (str | Path | Room | CoverageIndex | list[DocText]
                             | tuple[DocText, ...])
    """What coverage is measured against: a room folder, an open Room, its index, or texts."""

TEXT_BATCH = 512
"""Raw texts are matched in batches of this many (and whenever a summary is asked for)."""
MIN_ANCHOR_TOKENS = 4
"""Lines with fewer tokens are only credited as part of a run of matched lines."""

_LABEL = re.compile(r"^[^\s:]{1,24}(?: [^\s:]{1,12}){0,2}: ")
"""A short label before a room line (``D00042 p.3: ``, ``Out[7]: ``), tried without it."""


def build_index(room: str | Path | Room) -> CoverageIndex:
    """The :class:`CoverageIndex` of ``room`` (a room folder or an open ``Room``), read from the
    line table of its index; for a folder, shared by the calls that name the same build."""
    if not isinstance(room, str | os.PathLike):
        return CoverageIndex.from_room(room)
    from dealroom.room import Room, index_status

    path = Path(room).resolve()
    if index_status(path) is not None:
        Room.open(path).close()  # builds it, or says why it cannot
    meta = (path / ".index" / "meta.json").stat()
    return _room_index(path, (meta.st_mtime_ns, meta.st_ino))


@functools.lru_cache(maxsize=2)
def _room_index(path: Path, built: tuple[int, int]) -> CoverageIndex:
    """One index per room folder and build (many runs of a room share it)."""
    from dealroom.room import Room

    return CoverageIndex.from_room(Room.open(path))  # open while the index is used


class CoverageProbe:
    """Accumulates what reached the models of one run; ask :meth:`summary` at any time.

    >>> from dealroom.measure import DocText
    >>> probe = CoverageProbe([DocText("D00001", "01 Corp", "01 Corp", "Alpha beta gamma delta.")])
    >>> probe.observe_slice("D00001", 0, 11)   # "Alpha beta " -> 2 of 5 tokens
    >>> probe.summary()["coverage"]
    0.4
    """

    def __init__(self, room: RoomSource) -> None:
        self._source = room
        self._index: CoverageIndex | None = room if isinstance(room, CoverageIndex) else None
        self._lock = threading.Lock()
        self._hit: np.ndarray | None = None
        self._partial: list[tuple[int, int, int]] = []
        self._slices: list[tuple[int, int, int]] = []
        self.counts = {"slices": 0, "texts": 0, "lines_matched": 0, "unknown_docs": 0}
        self._seen: set[int] = set()
        self._texts: list[list[str]] = []

    def load(self) -> CoverageIndex:
        """Read (or build) the room's :class:`CoverageIndex` now; otherwise that happens on
        first use. Thread-safe: a run reads it in a thread while its sandbox starts."""
        with self._lock:
            if self._index is None:
                src = self._source
                self._index = (CoverageIndex(src) if isinstance(src, list | tuple)
                               else src if isinstance(src, CoverageIndex)
                               else build_index(src))
        return self._index

    @property
    def index(self) -> CoverageIndex:
        return self._index if self._index is not None else self.load()

    @property
    def hit(self) -> np.ndarray:
        """Units wholly covered."""
        if self._hit is None:
            self._hit = np.zeros(self.index.n_units, dtype=bool)
        return self._hit

    # -- evidence -------------------------------------------------------------------------

    def observe_slice(self, doc_id: str, start: int, end: int) -> None:
        """Characters ``[start, end)`` of a document's full text reached a model."""
        doc = self.index.doc_index.get(doc_id)
        if doc is None:
            self.counts["unknown_docs"] += 1
            return
        size = int(self.index.doc_len[doc])
        start, end = max(0, int(start)), min(size, int(end))
        self.counts["slices"] += 1
        if end > start:
            self._slices.append((doc, start, end))

    def observe_ref(self, ref: dict[str, Any]) -> None:
        """A sub-call document reference ``{id, pages: [first, last], chars: [start, end]}``."""
        chars, pages = ref.get("chars"), ref.get("pages")
        doc = self.index.doc_index.get(ref.get("id", ""))
        if chars:
            self.observe_slice(ref.get("id", ""), chars[0], chars[1])
        elif pages and doc is not None:
            self.observe_slice(ref["id"], *self.index.page_span(doc, pages[0], pages[-1]))
        elif doc is not None:
            self.observe_slice(ref["id"], 0, int(self.index.doc_len[doc]))
        else:
            self.counts["unknown_docs"] += 1

    def observe_text(self, text: str) -> None:
        """Raw text that reached a model; the room lines it contains are covered."""
        key = hash(text)
        if key in self._seen:  # the same instructions sent again cover nothing new
            return
        self._seen.add(key)
        norms = [n for n in map(normalize_line, text.replace("\f", "\n").split("\n")) if n]
        if norms:
            self._texts.append(norms)
        if len(self._texts) >= TEXT_BATCH:
            self._flush_texts()

    def _flush_texts(self) -> None:
        """Match pending texts; one vectorised look-up first rules out texts that hold no
        room line, no line long enough to be a cut room line, and no labelled line."""
        batch, self._texts = self._texts, []
        if not batch:
            return
        flat = [n for norms in batch for n in norms]
        h = line_hashes(flat)
        lo = np.searchsorted(self.index.hash_sorted, h, "left")
        known = (np.searchsorted(self.index.hash_sorted, h, "right") > lo).tolist()
        start = 0
        for norms in batch:
            end = start + len(norms)
            if any(known[start:end]) or any(
                len(n) >= PREFIX_CHARS or _LABEL.match(n) for n in norms
            ):
                self._match_text(norms)
            else:
                self.counts["texts"] += 1
            start = end

    def _match_text(self, norms: list[str]) -> None:
        self.counts["texts"] += 1
        chosen = self._observe_lines(norms)
        labelled = [norms[i] for i in np.flatnonzero(chosen < 0) if _LABEL.match(norms[i])]
        if labelled:  # "D00042 p.3: <room line>", as search results and listings print
            self._observe_lines([_LABEL.sub("", line, count=1) for line in labelled])

    def _observe_lines(self, norms: list[str]) -> np.ndarray:
        chosen = _match_lines(self.index, norms)
        matched = chosen[chosen >= 0]
        self.hit[matched] = True
        self.counts["lines_matched"] += len(matched)
        self._partial.extend(_partial_lines(self.index, norms, chosen))
        return chosen

    def observe_event(self, event: dict[str, Any]) -> None:
        """Fold in one trajectory event (only ``model_call`` events carry model inputs)."""
        if event.get("type") != "model_call" or not _was_sent(event):
            return
        data = event.get("input") or {}
        if event.get("role") == "sub":
            for key in ("prompt", "text"):
                if data.get(key):
                    self.observe_text(data[key])
            for ref in data.get("docs") or []:
                self.observe_ref(ref)
        else:
            for message in data.get("messages") or []:
                self.observe_text(_message_text(message))

    def observe_events(self, events: Iterable[dict[str, Any]]) -> None:
        """Fold in many trajectory events."""
        for event in events:
            self.observe_event(event)

    # -- results --------------------------------------------------------------------------

    def covered_by_unit(self) -> np.ndarray:
        """Covered tokens of every unit."""
        self._flush()
        covered = np.where(self.hit, self.index.unit_tok, 0).astype(np.int64)
        if self._partial:
            units, tokens = _union_sizes(np.array(self._partial, dtype=np.int64))
            cut = ~self.hit[units]
            covered[units[cut]] = tokens[cut]
        return covered

    def coverage(self) -> float:
        """The covered share of the room's tokens (``summary()["coverage"]``), cheaply."""
        self._flush()
        covered = int(self.index.unit_tok.sum(where=self.hit, dtype=np.int64))
        if self._partial:
            units, tokens = _union_sizes(np.array(self._partial, dtype=np.int64))
            covered += int(tokens[~self.hit[units]].sum())
        return ratio(covered, self.index.total_tokens)

    def summary(self, by_document: bool = True) -> CoverageSummary:
        """Coverage overall and by category, folder and (optionally) document."""
        ix = self.index
        per_doc = np.bincount(
            ix.unit_doc, weights=self.covered_by_unit(), minlength=len(ix.doc_ids)
        ).astype(np.int64)
        out: CoverageSummary = {
            "coverage": ratio(int(per_doc.sum()), ix.total_tokens),
            "tokens_covered": int(per_doc.sum()),
            "tokens_total": ix.total_tokens,
            "documents_touched": int((per_doc > 0).sum()),
            "documents_total": len(ix.doc_ids),
            "by_category": _grouped(ix.categories, ix.doc_category, per_doc, ix.doc_tokens),
            "by_folder": _grouped(ix.folders, ix.doc_folder, per_doc, ix.doc_tokens),
            "evidence": dict(self.counts),
        }
        if by_document:
            out["by_document"] = {
                d: ratio(int(c), int(t))
                for d, c, t in zip(ix.doc_ids, per_doc, ix.doc_tokens, strict=True)
            }
        return out

    def _flush(self) -> None:
        """Fold pending texts and slices into ``hit`` (whole lines) and ``partial`` (cut lines)."""
        self._flush_texts()
        if not self._slices:
            return
        ix = self.index
        arr = np.array(self._slices, dtype=np.int64)
        self._slices.clear()
        g0 = ix.doc_off[arr[:, 0]] + arr[:, 1]
        g1 = ix.doc_off[arr[:, 0]] + arr[:, 2]
        first = np.searchsorted(ix.unit_start, g0, "left")
        stop = np.searchsorted(ix.unit_end, g1, "right")
        hit = self.hit
        for a, b in zip(first.tolist(), stop.tolist(), strict=True):
            hit[a:b] = True  # a few slices per call: no pass over the whole room
        for a, b in zip(g0.tolist(), g1.tolist(), strict=True):
            for unit in _cut_units(ix, a, b):
                lo, hi = _token_range(ix, unit, a, b)
                if hi > lo:
                    self._partial.append((unit, lo, hi))


def coverage_from_run(run_dir: Path, room: RoomSource | None = None,
                      by_document: bool = True) -> CoverageSummary:
    """Coverage of a finished (or running) run, from its ``trajectory.jsonl``.

    ``room`` defaults to the ``room`` of the run's ``config.json``; pass a
    :class:`CoverageIndex` to reuse one across runs of the same room.
    """
    folder = RunFolder.open(run_dir)
    probe = CoverageProbe(room if room is not None else folder.room)
    probe.observe_events(folder.events())
    return probe.summary(by_document=by_document)


# -- matching raw text ------------------------------------------------------------------------


def _match_lines(ix: CoverageIndex, norms: list[str]) -> np.ndarray:
    """The unit each normalised raw line is credited to, or -1."""
    if not ix.n_units:
        return np.full(len(norms), -1, dtype=np.int64)
    h = line_hashes(norms)
    lo = np.searchsorted(ix.hash_sorted, h, "left")
    cnt = np.searchsorted(ix.hash_sorted, h, "right") - lo
    has = cnt > 0
    first = np.where(has, ix.hash_unit[np.minimum(lo, ix.n_units - 1)], -1)
    short = np.zeros(len(norms), dtype=bool)
    short[has] = ix.unit_tok[first[has]] < MIN_ANCHOR_TOKENS
    chosen = np.where(has & (cnt == 1) & ~short, first, -1)
    pending = np.flatnonzero(has & (chosen < 0)).tolist()
    if not pending:
        return chosen
    hashes = h.tolist()

    def follows(prev: int, i: int, step: int) -> int:
        nxt = prev + step
        if prev < 0 or not 0 <= nxt < ix.n_units or ix.unit_doc[nxt] != ix.unit_doc[prev]:
            return -1
        return nxt if int(ix.unit_hash[nxt]) == hashes[i] else -1

    for i in pending:  # forward: continue the run of the line before
        if i > 0 and chosen[i] < 0:
            chosen[i] = follows(int(chosen[i - 1]), i, 1)
    for i in reversed(pending):  # backward: continue the run of the line after
        if i + 1 < len(norms) and chosen[i] < 0:
            chosen[i] = follows(int(chosen[i + 1]), i, -1)
    for i in pending:  # unresolved: first occurrence for full lines, then runs again
        if chosen[i] < 0:
            run = follows(int(chosen[i - 1]), i, 1) if i > 0 else -1
            chosen[i] = run if run >= 0 else (-1 if short[i] else first[i])
    return chosen


def _partial_lines(
    ix: CoverageIndex, norms: list[str], chosen: np.ndarray
) -> list[tuple[int, int, int]]:
    """(unit, first token, end token) for raw lines that are cut-off room lines."""
    unmatched = np.flatnonzero(chosen < 0).tolist()
    candidates = _prefix_candidates(ix, norms, unmatched)
    out: list[tuple[int, int, int]] = []
    for i in unmatched:
        line = norms[i]
        before = int(chosen[i - 1]) if i > 0 else -1
        after = int(chosen[i + 1]) if i + 1 < len(norms) else -1
        found = _cut_match(ix, line, before + 1, before, prefix=True) or _cut_match(
            ix, line, after - 1, after, prefix=False
        )
        for unit in candidates.get(i, ()):
            found = found or _verify_cut(ix, unit, line, prefix=True)
        if found:
            out.append(found)
    return out


def _prefix_candidates(
    ix: CoverageIndex, norms: list[str], lines: list[int]
) -> dict[int, list[int]]:
    """Units whose first PREFIX_CHARS characters equal those of each long unmatched line."""
    lines = [i for i in lines if len(norms[i]) >= PREFIX_CHARS]
    if not lines or not len(ix.pfx_sorted):
        return {}
    keys = line_hashes([norms[i][:PREFIX_CHARS] for i in lines])
    lo = np.searchsorted(ix.pfx_sorted, keys, "left")
    hi = np.searchsorted(ix.pfx_sorted, keys, "right")
    return {
        i: ix.pfx_unit[a:b].tolist()
        for i, a, b in zip(lines, lo.tolist(), hi.tolist(), strict=True)
        if b > a
    }


def _cut_match(
    ix: CoverageIndex, line: str, unit: int, anchor: int, prefix: bool
) -> tuple[int, int, int] | None:
    """``line`` as the start (``prefix``) or end of ``unit``, next to matched ``anchor``."""
    if anchor < 0 or not 0 <= unit < ix.n_units or ix.unit_doc[unit] != ix.unit_doc[anchor]:
        return None
    return _verify_cut(ix, unit, line, prefix)


def _verify_cut(
    ix: CoverageIndex, unit: int, line: str, prefix: bool
) -> tuple[int, int, int] | None:
    """Token range of ``unit`` that ``line`` holds, if it really is the unit's prefix/suffix."""
    full = normalize_line(ix.unit_text(unit))
    if len(line) >= len(full):
        return None
    starts = token_starts(full)
    if prefix and full.startswith(line):
        return unit, 0, sum(1 for s in starts if s < len(line))
    if not prefix and full.endswith(line):
        cut = len(full) - len(line)
        return unit, sum(1 for s in starts if s < cut), len(starts)
    return None


# -- slices ----------------------------------------------------------------------------------


def _cut_units(ix: CoverageIndex, a: int, b: int) -> list[int]:
    """Units that the global character interval ``[a, b)`` covers only in part."""
    units = []
    for pos in (a, b):
        u = int(np.searchsorted(ix.unit_start, pos, "right")) - 1
        if u >= 0 and ix.unit_start[u] < pos < ix.unit_end[u] and u not in units:
            units.append(u)
    return units


def _token_range(ix: CoverageIndex, unit: int, a: int, b: int) -> tuple[int, int]:
    """Tokens of ``unit`` whose first character lies in ``[a, b)``, as an index range."""
    start = int(ix.unit_start[unit])
    starts = np.asarray(token_starts(ix.unit_text(unit)), dtype=np.int64)
    lo = int(np.searchsorted(starts, a - start, "left"))
    hi = int(np.searchsorted(starts, b - start, "left"))
    return lo, hi


def _union_sizes(parts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct units of ``(unit, lo, hi)`` rows and the size of the union of their ranges."""
    span = int(parts[:, 2].max()) + 1  # units' ranges laid end to end cannot overlap
    lo = parts[:, 0] * span + parts[:, 1]
    hi = parts[:, 0] * span + parts[:, 2]
    order = np.lexsort((hi, lo))
    lo, hi, units = lo[order], hi[order], parts[order, 0]
    reach = np.maximum.accumulate(hi)
    start = np.maximum(lo, np.concatenate(([np.iinfo(np.int64).min], reach[:-1])))
    sizes = np.bincount(units, weights=np.maximum(hi - start, 0))
    distinct = np.unique(units)
    return distinct, sizes[distinct].astype(np.int64)


# -- helpers ---------------------------------------------------------------------------------


def _grouped(
    labels: list[str], group_of_doc: np.ndarray, covered: np.ndarray, tokens: np.ndarray
) -> dict[str, CoverageGroup]:
    cov = np.bincount(group_of_doc, weights=covered, minlength=len(labels))
    tot = np.bincount(group_of_doc, weights=tokens, minlength=len(labels))
    return {
        name: {"coverage": ratio(c, t), "tokens_covered": int(c), "tokens_total": int(t)}
        for name, c, t in zip(labels, cov, tot, strict=True)
    }


def _was_sent(event: dict[str, Any]) -> bool:
    """False only for a failed call with no sign that the model received its input."""
    usage = event.get("usage") or {}
    return not event.get("error") or bool(usage.get("input_tokens"))


def _message_text(message: object) -> str:
    """The text of a chat message whose content is a string or a list of parts."""
    if isinstance(message, str):
        return message
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""
