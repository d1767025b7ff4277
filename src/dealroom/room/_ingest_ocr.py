"""The OCR step of ingest: pages without a text layer are read from their images.

Runs after extraction, over every page that needs it (``auto``: the empty pages of PDFs and
every page of an image file; ``always``: every page of both; ``never``: none), up to
``max_pages`` a document, all documents' pages in one process pool
(:mod:`dealroom.room._ocr_pool`) within the ingest's time budget. Each OCR'd page replaces its
empty text in the outcome, is marked with the engine's confidence (``Extraction.ocr``), and the
document's OCR text is kept in ``ROOM/ocr/`` (:mod:`dealroom.room._ocr_store`) so that a later
index rebuild keeps it. A page left without text gets a report entry with its reason
(:data:`OCR_REASONS`, and ``ocr_empty``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from dealroom.errors import ConfigError
from dealroom.room._extract import SCANNED_FORMATS
from dealroom.room._normalize import normalize_text
from dealroom.room._ocr import DPI, OcrLimits, OcrResult, OcrTask, ocr_status
from dealroom.room._ocr_pool import ocr_pages
from dealroom.room._ocr_store import write_ocr
from dealroom.room._titles import document_title
from dealroom.room._tokens import count_tokens

if TYPE_CHECKING:
    from dealroom.room._ingest import _Job, _Outcome

SCANNED = "scanned_no_text_layer"
OCR_REASONS: dict[str, str] = {
    "ocr_blank": "pages with no ink: not sent to OCR",
    "ocr_too_large": "pages too large to OCR (over the pixel ceiling even at 100 dpi)",
    "ocr_too_small": "images too small to hold a word (under 16 pixels on a side)",
    "ocr_timeout": "Tesseract took longer than its per-page time-out (--ocr-page-timeout)",
    "ocr_failed": "OCR failed on these pages (an engine error, or its worker died)",
    "ocr_page_limit": "pages past the per-document OCR limit (--ocr-max-pages): not OCR'd",
    "ocr_gave_up": "the document's first pages sent to OCR read no text, so its other pages "
                   "were not OCR'd (--ocr-give-up-after)",
    "ocr_budget": "pages not reached before the ingest's OCR time budget ran out (--ocr-budget)",
}
"""Why OCR left a page without text (besides ``ocr_empty``: it ran and read nothing)."""


def _wanted(job: _Job, outcome: _Outcome, mode: str) -> list[int]:
    """0-based pages of one outcome to OCR under ``mode``."""
    if outcome.reason or job.fmt not in SCANNED_FORMATS or mode == "never":
        return []
    return [i for i, text in enumerate(outcome.pages) if mode == "always" or not text.strip()]


def ocr_outcomes(jobs: list[_Job], outcomes: list[_Outcome], out: Path, mode: str, workers: int,
                 progress: Callable[[int, int, str], None] | None = None,
                 limits: OcrLimits | None = None) -> str:
    """OCR the pages ``mode`` asks for within ``limits``, in place; return the engine used
    (``""``: none ran).

    With ``always`` and no engine installed this raises :class:`ConfigError` before any page is
    read; with ``auto`` the scanned pages stay empty and their warning says OCR is missing.
    """
    wanted = [(i, p) for i, (job, o) in enumerate(zip(jobs, outcomes, strict=True))
              for p in _wanted(job, o, mode)]
    if not wanted:
        return ""
    ok, engine = ocr_status()
    if not ok:
        if mode == "always":
            raise ConfigError(f"--ocr always, but OCR is not available: {engine}")
        for i in sorted({i for i, _ in wanted}):
            outcomes[i].warnings = [
                (r, f"{d}; not OCR'd: {engine}" if r == SCANNED else d, pages)
                for r, d, pages in outcomes[i].warnings]
        return ""
    read = _read(jobs, wanted, workers, limits or OcrLimits(), progress)
    by_doc: dict[int, dict[int, OcrResult]] = {}
    for (i, p), result in read.items():
        by_doc.setdefault(i, {})[p] = result
    for i, pages in by_doc.items():
        _apply(jobs[i], outcomes[i], pages, out, engine)
    return engine


_Page = tuple[int, int]
"""(outcome index, 0-based page)."""


def _read(jobs: list[_Job], wanted: list[_Page], workers: int, limits: OcrLimits,
          progress: Callable[[int, int, str], None] | None) -> dict[_Page, OcrResult]:
    """Every wanted page's result: the first ``give_up_after`` pages of each document, then
    the rest (to ``max_pages``) of the documents where they found text, in the one budget."""
    wanted, over = _capped(wanted, limits.max_pages)
    first, rest = _capped(wanted, limits.give_up_after)
    results = {w: OcrResult("", 0.0, f"only the first {limits.max_pages} pages of a document "
                            "are OCR'd (--ocr-max-pages)", "ocr_page_limit") for w in over}
    started, total = time.monotonic(), len(wanted)
    results.update(_pool(jobs, first, workers, limits, progress, 0, total))
    readable = {i for (i, _), r in results.items() if r.text.strip() or r.reason == "ocr_budget"}
    quit_ = OcrResult("", 0.0, f"its first {limits.give_up_after} pages sent to OCR read no "
                      "text (--ocr-give-up-after)", "ocr_gave_up")
    results.update({w: quit_ for w in rest if w[0] not in readable})
    rest = [w for w in rest if w[0] in readable]
    left = limits.budget - (time.monotonic() - started)
    if limits.budget and left <= 0:
        spent = OcrResult("", 0.0, f"the OCR time budget ({limits.budget:g} s) ran out",
                          "ocr_budget")
        return {**results, **{w: spent for w in rest}}
    later = replace(limits, budget=max(left, 1e-3)) if limits.budget else limits
    return {**results, **_pool(jobs, rest, workers, later, progress, len(first), total)}


def _pool(jobs: list[_Job], pages: list[_Page], workers: int, limits: OcrLimits,
          progress: Callable[[int, int, str], None] | None, offset: int,
          total: int) -> dict[_Page, OcrResult]:
    """Read ``pages`` in one OCR pool; progress counts from ``offset`` of ``total``."""
    if not pages:
        return {}
    rels = [jobs[i].rel for i, _ in pages]

    def report(done: int, _: int) -> None:
        if progress is not None:
            progress(offset + done, total, rels[done - 1])

    tasks = [OcrTask(jobs[i].dest, jobs[i].fmt, p) for i, p in pages]
    return dict(zip(pages, ocr_pages(tasks, workers, limits, report), strict=True))


def _capped(wanted: list[_Page], max_pages: int) -> tuple[list[_Page], list[_Page]]:
    """Split (document, page) pairs into the first ``max_pages`` of each document and the rest
    (0: no limit)."""
    keep: list[_Page] = []
    over: list[_Page] = []
    seen = Counter[int]()
    for pair in wanted:
        seen[pair[0]] += 1
        (keep if not max_pages or seen[pair[0]] <= max_pages else over).append(pair)
    return keep, over


def _apply(job: _Job, outcome: _Outcome, results: dict[int, OcrResult], out: Path,
           engine: str) -> None:
    """Lay one document's OCR'd pages into its outcome; keep them in ``ROOM/ocr/``."""
    kept: dict[int, OcrResult] = {}
    left: dict[str, list[tuple[int, str]]] = {}
    for p, result in sorted(results.items()):
        text = normalize_text(result.text)
        if not text.strip():
            left.setdefault(result.reason or "ocr_empty", []).append((p + 1, result.error))
            continue
        outcome.pages[p] = text
        outcome.ocr[p + 1] = result.confidence
        kept[p + 1] = replace(result, text=text)
    notes = [w for w in outcome.warnings if w[0] != SCANNED]
    if kept:
        notes.append(("ocr", _read_detail(kept, engine), tuple(kept)))
        rel = Path(job.dest).relative_to(out).as_posix()
        write_ocr(out, rel, outcome.sha256, engine,
                  {p: (r.text, r.confidence, r.dpi) for p, r in kept.items()})
    for reason, pages in sorted(left.items()):
        notes.append((reason, _left_detail(reason, [e for _, e in pages]),
                      tuple(p for p, _ in pages)))
    outcome.warnings = notes
    outcome.tokens = sum(count_tokens(p) for p in outcome.pages)
    outcome.title = outcome.title or document_title(outcome.pages, job.fmt)


def _read_detail(kept: dict[int, OcrResult], engine: str) -> str:
    """``3 pages read by OCR (tesseract 5.3.0, mean confidence 91)``, and any lowered dpi."""
    mean = sum(r.confidence for r in kept.values()) / len(kept)
    detail = (f"{len(kept)} page{'s' * (len(kept) > 1)} read by OCR ({engine}, "
              f"mean confidence {mean:.0f})")
    lowered = sorted({r.dpi for r in kept.values() if 0 < r.dpi < DPI})
    if lowered:
        detail += f"; large pages rendered at {', '.join(map(str, lowered))} dpi"
    return detail


def _left_detail(reason: str, errors: list[str]) -> str:
    """What the entry for pages left without text says: the reason, then up to 3 errors."""
    if reason == "ocr_empty":
        head = "OCR read no text on these pages"
    else:
        head = OCR_REASONS.get(reason, reason)
    distinct = sorted({e for e in errors if e})
    more = f"; and {len(distinct) - 3} more" if len(distinct) > 3 else ""
    return head + (f" ({'; '.join(distinct[:3])}{more})" if distinct else "")
