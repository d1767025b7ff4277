"""The OCR step of ingest: pages without a text layer are read from their images.

Runs after extraction, over every page that needs it (``auto``: the empty pages of PDFs and
every page of an image file; ``always``: every page of both; ``never``: none), all documents'
pages in one process pool. Each OCR'd page replaces its empty text in the outcome, is marked
with the engine's confidence (``Extraction.ocr``), and the document's OCR text is kept in
``ROOM/ocr/`` (:mod:`dealroom.room._ocr_store`) so that a later index rebuild keeps it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from dealroom.errors import ConfigError
from dealroom.room._extract import SCANNED_FORMATS
from dealroom.room._normalize import normalize_text
from dealroom.room._ocr import OcrResult, OcrTask, ocr_pages, ocr_status
from dealroom.room._ocr_store import write_ocr
from dealroom.room._titles import document_title
from dealroom.room._tokens import count_tokens

if TYPE_CHECKING:
    from dealroom.room._ingest import _Job, _Outcome

SCANNED = "scanned_no_text_layer"


def _wanted(job: _Job, outcome: _Outcome, mode: str) -> list[int]:
    """0-based pages of one outcome to OCR under ``mode``."""
    if outcome.reason or job.fmt not in SCANNED_FORMATS or mode == "never":
        return []
    return [i for i, text in enumerate(outcome.pages) if mode == "always" or not text.strip()]


def ocr_outcomes(jobs: list[_Job], outcomes: list[_Outcome], out: Path, mode: str, workers: int,
                 progress: Callable[[int, int, str], None] | None = None) -> str:
    """OCR the pages ``mode`` asks for, in place; return the engine used (``""``: none ran).

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
    tasks = [OcrTask(jobs[i].dest, jobs[i].fmt, p) for i, p in wanted]
    rels = [jobs[i].rel for i, _ in wanted]

    def report(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total, rels[done - 1])

    results = ocr_pages(tasks, workers, report)
    by_doc: dict[int, dict[int, OcrResult]] = {}
    for (i, p), result in zip(wanted, results, strict=True):
        by_doc.setdefault(i, {})[p] = result
    for i, pages in by_doc.items():
        _apply(jobs[i], outcomes[i], pages, out, engine)
    return engine


def _apply(job: _Job, outcome: _Outcome, results: dict[int, OcrResult], out: Path,
           engine: str) -> None:
    """Lay one document's OCR'd pages into its outcome; keep them in ``ROOM/ocr/``."""
    kept: dict[int, tuple[str, float]] = {}
    empty = []
    for p, result in sorted(results.items()):
        text = normalize_text(result.text)
        if not text.strip():
            empty.append((p + 1, result.error))
            continue
        outcome.pages[p] = text
        outcome.ocr[p + 1] = result.confidence
        kept[p + 1] = (text, result.confidence)
    notes = [w for w in outcome.warnings if w[0] != SCANNED]
    if kept:
        mean = sum(c for _, c in kept.values()) / len(kept)
        notes.append(("ocr", f"{len(kept)} page{'s' * (len(kept) > 1)} read by OCR ({engine}, "
                      f"mean confidence {mean:.0f})", tuple(kept)))
        rel = Path(job.dest).relative_to(out).as_posix()
        write_ocr(out, rel, outcome.sha256, engine, kept)
    if empty:
        errors = sorted({e for _, e in empty if e})
        detail = "OCR read no text on these pages" + (f" ({'; '.join(errors)})" if errors else "")
        notes.append(("ocr_empty", detail, tuple(p for p, _ in empty)))
    outcome.warnings = notes
    outcome.tokens = sum(count_tokens(p) for p in outcome.pages)
    outcome.title = outcome.title or document_title(outcome.pages, job.fmt)
