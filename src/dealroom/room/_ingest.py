"""Ingestion of real data rooms: a folder tree of documents becomes a room.

::

    SRC/ ──walk──► files ──extract (process pool)──► pages ──► OUT/documents/  (copies)
                    │                                   │        OUT/room.json  (manifest)
                    └── problems ─────────────┐         │        OUT/task.json  (LAB task)
                                              ▼         ▼        OUT/.index/    (build_index)
                                      OUT/ingest_report.json

Pages without a text layer (scans, image files) are read by OCR between extraction and the
index (:mod:`dealroom.room._ingest_ocr`). Every file is either ingested or listed in the
report with a reason; one bad file never stops the ingest. Document ids follow the sorted
destination paths (``D00001``, ``D00002``, ...), so ingesting the same folder twice gives the
same room.
"""

from __future__ import annotations

import multiprocessing
import re
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath
from types import FrameType
from typing import Any

from dealroom._util.files import clear_output_dir, write_json_atomic
from dealroom.errors import ConfigError, RoomError
from dealroom.room._extract import (
    EXTRACTORS,
    Extraction,
    ExtractionError,
    extract_document,
    format_of,
)
from dealroom.room._ingest_ocr import OCR_REASONS, ocr_outcomes
from dealroom.room._manifest import COPIED, DOCUMENTS, MANIFEST, TASK
from dealroom.room._ocr import OCR_MODES, OcrLimits
from dealroom.room._room_schema import DocumentRecord, RoomManifest
from dealroom.room._safecopy import CopyRefused, resolve_inside, safe_copy
from dealroom.room._tokens import count_tokens
from dealroom.room._walk import Found, Problem, walk

REPORT = "ingest_report.json"
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
POOL_MIN_FILES = 8
"""Below this many files extraction runs in-process: starting workers would cost more."""
MAX_CRASHES_IN_A_ROW = 3
_WORKERS_DEAD = (
    "extraction worker processes die as soon as they start. If you call ingest() from a "
    "script, put the call under `if __name__ == '__main__':` (workers start with 'spawn' and "
    "re-import the main module); otherwise ingest with workers=1 to see the error"
)

INGEST_REASONS: dict[str, str] = {
    "too_large": "the file is larger than the size limit (100 MB unless set)",
    "symlink_loop": "a symbolic link that leads back to itself or to a folder containing it",
    "duplicate": "a folder reached a second time through a symbolic link",
    "symlink": "a symbolic link, with link following turned off",
    "symlink_outside": "a symbolic link that leads outside the source folder (never followed)",
    "hidden": "a hidden or system file (.DS_Store, ~$lock files, Thumbs.db, ...)",
    "unreadable": "the file could not be read (permissions, broken link, not a regular file)",
    "renamed": "a name with control characters or invalid bytes, ingested under a safe name",
    "timeout": "extraction took longer than the per-file time limit (pathological file)",
    "ocr": "pages read by OCR from their images (the detail gives the engine's confidence)",
    **OCR_REASONS,
}
"""Reasons the walk adds to :data:`dealroom.room.REASONS` in the ingestion report."""

DEFAULT_INSTRUCTIONS = (
    "We are advising the buyer on the proposed acquisition. Review the data room and prepare a "
    "due diligence memo for the deal team: summarise the material findings with citations to "
    "the documents, quantify exposures where the documents allow, flag anything missing that "
    "we would expect to see, and recommend next steps before signing."
)


@dataclass(frozen=True)
class IngestSettings:
    """How :func:`ingest` treats a source folder."""

    name: str | None = None
    """Room name; defaults to the source folder's name."""
    max_bytes: int = DEFAULT_MAX_BYTES
    """Files larger than this are skipped as ``too_large``."""
    workers: int = 2
    """Extraction processes; 1 extracts in this process."""
    file_timeout: float = 300.0
    """Seconds one file's extraction may take before it is reported as ``timeout``; 0: none."""
    follow_symlinks: bool = True
    """Follow symlinked files and folders (loops are detected and reported)."""
    include_hidden: bool = False
    """Ingest dot-files, ``~$`` Office lock files, Thumbs.db and the like."""
    copy_skipped: bool = False
    """Also copy files that were skipped into ``documents/`` (not in the manifest)."""
    build_index: bool = True
    """Build the room's index after writing the manifest."""
    dense: bool = False
    """Also embed the pages' passages for hybrid search (the ``[search]`` extra)."""
    overwrite: bool = False
    """Replace an existing room at the output path."""
    ocr: str = "auto"
    """OCR: ``auto`` (pages without a text layer, image files), ``always`` (every page of PDFs
    and images), ``never``."""
    ocr_limits: OcrLimits = OcrLimits()
    """Pages OCR'd per document, Tesseract's time-out per page, the OCR time budget of the
    whole ingest, pixels per page, memory per worker."""

    def __post_init__(self) -> None:
        if self.ocr not in OCR_MODES:
            raise ConfigError(f"ocr must be one of {', '.join(OCR_MODES)}, got {self.ocr!r}")
        if self.max_bytes <= 0:
            raise ConfigError(f"max_bytes must be positive, got {self.max_bytes}")
        if self.workers < 1:
            raise ConfigError(f"workers must be at least 1, got {self.workers}")
        if self.file_timeout < 0:
            raise ConfigError(f"file_timeout must be 0 (none) or positive, got {self.file_timeout}")


@dataclass(frozen=True)
class ReportEntry:
    """One line of the ingestion report: a file skipped, or ingested with a warning."""

    path: str
    """Path relative to the source folder (invalid bytes escaped as ``\\xNN``)."""
    reason: str
    action: str
    """``skipped`` (not in the room), ``copied`` (in documents/ but not the manifest),
    ``ingested`` (in the room, with a warning) or ``renamed`` (a note on the name)."""
    detail: str = ""
    doc_id: str = ""
    pages: tuple[int, ...] = ()
    original: str = ""
    """For ``renamed``: the name as it was."""

    def to_dict(self) -> dict[str, Any]:
        return {k: (list(v) if k == "pages" else v) for k, v in asdict(self).items() if v}


@dataclass(frozen=True)
class IngestProgress:
    """Reported to the progress callback after each file is extracted, then as it is indexed."""

    done: int
    total: int
    path: str
    stage: str = "extract"
    """``extract`` (one call per file), ``ocr`` (one call per page read by OCR), ``index``
    (as the index builder reports) or ``embed`` (passages embedded for hybrid search)."""


@dataclass
class IngestReport:
    """What :func:`ingest` did; written to ``OUT/ingest_report.json``."""

    room: Path
    source: Path
    files: int
    """Regular files the walk found (links followed), before any was refused."""
    entries: list[ReportEntry]
    manifest: RoomManifest
    index: str = ""
    """``built``, or why the index was not built."""
    seconds: float = 0.0

    def counts(self) -> dict[str, Any]:
        skipped = {e.path for e in self.entries if e.action in ("skipped", "copied")}
        warned = {e.path for e in self.entries if e.action == "ingested"}
        pages = Counter[str]()  # pages per reason, where entries list them
        for e in self.entries:
            pages[e.reason] += len(e.pages)
        return {
            "files": self.files,
            "ingested": len(self.manifest.documents),
            "skipped": len(skipped),
            "warnings": len(warned),
            "by_reason": dict(sorted(Counter(e.reason for e in self.entries).items())),
            "pages_by_reason": {r: n for r, n in sorted(pages.items()) if n},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": 1,
            "room": str(self.room),
            "source": str(self.source),
            "counts": self.counts(),
            "totals": self.manifest.totals(),
            "index": self.index,
            "seconds": round(self.seconds, 3),
            "entries": [e.to_dict() for e in self.entries],
        }


ProgressFn = Callable[[IngestProgress], None]
_JobFn = Callable[["_Job"], "_Outcome"]
_Record = Callable[[int, "_Outcome"], None]


# --- extraction jobs (run in worker processes) -----------------------------------------------


@dataclass(frozen=True)
class _Job:
    source: str
    dest: str
    rel: str
    fmt: str
    timeout: float = 0.0
    """Seconds the extraction may take; 0 for no limit."""
    root: str = ""
    """The source folder: the file must still resolve inside it when it is read."""
    max_bytes: int | None = None
    """The size limit, checked again as the file is copied (it may have grown since)."""


@dataclass
class _Outcome:
    rel: str
    reason: str = ""
    detail: str = ""
    pages: list[str] = field(default_factory=list)
    warnings: list[tuple[str, str, tuple[int, ...]]] = field(default_factory=list)
    sha256: str = ""
    bytes: int = 0
    tokens: int = 0
    title: str = ""
    labels: list[str] = field(default_factory=list)
    ocr: dict[int, float] = field(default_factory=dict)


class _Timeout(BaseException):
    """Raised by SIGALRM inside :func:`_time_limit` (not an Exception: parsers must not eat it)."""


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` (main thread on POSIX only; else no limit)."""
    usable = seconds > 0 and hasattr(signal, "setitimer")
    if not usable or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: FrameType | None) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def extract_job(job: _Job) -> _Outcome:
    """Extract one file and copy it into the room; any failure becomes the outcome's reason.

    The file is read at its resolved path, checked again to lie inside the source folder (a
    link changed since the walk is refused, never followed out).
    """
    root = job.root or None
    try:
        source = resolve_inside(job.source, root)
        with _time_limit(job.timeout):
            extraction = extract_document(Path(source), job.fmt)
        sha, size = safe_copy(source, root, job.dest, job.max_bytes)
    except CopyRefused as exc:
        return _Outcome(job.rel, exc.reason, exc.detail)
    except _Timeout:
        return _Outcome(job.rel, "timeout", f"extraction took more than {job.timeout:g} s")
    except ExtractionError as exc:
        return _Outcome(job.rel, exc.reason, str(exc))
    except OSError as exc:
        return _Outcome(job.rel, "unreadable", f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # an extractor bug must not stop the ingest
        return _Outcome(job.rel, "corrupt", f"{type(exc).__name__}: {exc}")
    notes = [(w.reason, w.detail, w.pages) for w in extraction.warnings]
    tokens = sum(count_tokens(p) for p in extraction.pages)
    return _Outcome(job.rel, "", "", extraction.pages, notes, sha, size, tokens,
                    extraction.title, extraction.labels)


def _crashed(job: _Job) -> _Outcome:
    return _Outcome(job.rel, "corrupt", "the extractor process crashed on this file")


def run_jobs(
    jobs: list[_Job],
    workers: int,
    progress: ProgressFn | None = None,
    fn: Callable[[_Job], _Outcome] = extract_job,
) -> list[_Outcome]:
    """Run ``fn`` on every job, in a process pool when it pays; outcomes in job order.

    If a worker dies (a parser crash, the OOM killer), the jobs the broken pool lost are rerun
    one at a time, so only the file that crashes its worker is reported (as ``corrupt``).
    """
    outcomes: dict[int, _Outcome] = {}

    def record(i: int, outcome: _Outcome) -> None:
        outcomes[i] = outcome
        if progress is not None:
            progress(IngestProgress(len(outcomes), len(jobs), jobs[i].rel))

    if workers <= 1 or len(jobs) < POOL_MIN_FILES:
        for i, job in enumerate(jobs):
            record(i, fn(job))
    else:
        lost = _pooled(jobs, workers, fn, record)
        _one_by_one(jobs, lost, fn, record)
    return [outcomes[i] for i in range(len(jobs))]


def _pool(workers: int) -> ProcessPoolExecutor:
    context = multiprocessing.get_context("spawn")  # no fork: the caller may run threads
    return ProcessPoolExecutor(max_workers=workers, mp_context=context)


def _pooled(jobs: list[_Job], workers: int, fn: _JobFn, record: _Record) -> list[int]:
    """Run all jobs in one pool; return the indices lost to a broken pool."""
    lost: list[int] = []
    pool = _pool(workers)
    try:
        futures: dict[Future[_Outcome], int] = {pool.submit(fn, j): i for i, j in enumerate(jobs)}
        for future in as_completed(futures):
            try:
                record(futures[future], future.result())
            except BrokenProcessPool:
                lost.append(futures[future])
    except BaseException:  # Ctrl-C or a failing callback: do not wait for the queue
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return sorted(lost)


def _one_by_one(jobs: list[_Job], indices: list[int], fn: _JobFn, record: _Record) -> None:
    """Run jobs singly in a one-worker pool; the job that breaks it is the one that crashed.

    A fresh worker that dies on :data:`MAX_CRASHES_IN_A_ROW` jobs in a row means the workers
    cannot run at all, not that the files are bad: that raises :class:`RoomError`.
    """
    pending, in_a_row = list(indices), 0
    while pending:
        with _pool(1) as pool:
            for k, i in enumerate(pending):
                try:
                    record(i, pool.submit(fn, jobs[i]).result())
                    in_a_row = 0
                except BrokenProcessPool:
                    in_a_row += 1
                    if in_a_row >= MAX_CRASHES_IN_A_ROW:
                        raise RoomError(_WORKERS_DEAD) from None
                    record(i, _crashed(jobs[i]))
                    pending = pending[k + 1 :]
                    break
            else:
                pending = []


# --- the room --------------------------------------------------------------------------------


def _natural(path: PurePosixPath) -> list[tuple[int, Any]]:
    """Sort key putting ``5.2`` before ``5.10`` and ``Doc 9`` before ``Doc 10``."""
    parts = re.split(r"(\d+)", path.as_posix())
    return [(0, int(p)) if p.isdigit() else (1, p.casefold()) for p in parts] + [
        (2, path.as_posix())
    ]


def default_task(name: str) -> dict[str, Any]:
    """A minimal LAB task for a room without a rubric: the diligence request, no criteria."""
    return {
        "title": f"Due diligence review: {name}",
        "instructions": DEFAULT_INSTRUCTIONS,
        "work_type": "review",
        "deliverables": {"memo": "memo.md"},
        "criteria": [],
        "tags": ["due-diligence", "ingested"],
    }


def _prepare_out(src: Path, out: Path, overwrite: bool) -> None:
    if not src.is_dir():
        raise ConfigError(f"{src} is not a folder: give the folder that holds the documents")
    s, o = src.resolve(), out.resolve()
    if o == s or s in o.parents or o in s.parents:
        raise ConfigError(f"the room {out} and the source {src} must not contain each other")
    clear_output_dir(out, marker=MANIFEST, kind="dealroom room", overwrite=overwrite)
    (out / DOCUMENTS).mkdir()


def _record(doc_id: str, found: Found, outcome: _Outcome) -> DocumentRecord:
    dest = found.dest
    folder = dest.parent.as_posix()
    return DocumentRecord(
        id=doc_id,
        path=f"{DOCUMENTS}/{dest.as_posix()}",
        title=outcome.title or dest.stem,
        category=dest.parts[0] if len(dest.parts) > 1 else "",
        folder="" if folder == "." else folder,
        format=format_of(dest),
        pages=len(outcome.pages),
        tokens=outcome.tokens,
        sha256=outcome.sha256,
        bytes=outcome.bytes,
    )


def _size(n: int) -> str:
    return f"{n / 2**20:,.1f} MB" if n >= 2**20 else f"{n:,} bytes"


def _screen(found: list[Found], settings: IngestSettings) -> tuple[list[Found], list[Problem]]:
    """Set aside files that need no extraction to be refused: too large, unknown format."""
    keep, refused = [], []
    for f in found:
        if f.size > settings.max_bytes:
            detail = f"{_size(f.size)} is over the {_size(settings.max_bytes)} limit"
            refused.append(Problem(f.rel, "too_large", detail))
        elif format_of(f.dest) not in EXTRACTORS:
            fmt = format_of(f.dest) or "(no suffix)"
            refused.append(Problem(f.rel, "unsupported_format", f"no extractor for {fmt}"))
        else:
            keep.append(f)
    return keep, refused


def ingest(
    src: Path,
    out: Path,
    settings: IngestSettings | None = None,
    *,
    task: dict[str, Any] | None = None,
    meta: dict[str, Any] | None = None,
    progress: ProgressFn | None = None,
) -> IngestReport:
    """Turn the folder ``src`` into a room at ``out``; return (and write) the report.

    ``task`` is the LAB task to store as ``task.json`` (default: :func:`default_task`);
    ``meta`` is merged into the manifest's ``meta``; ``progress`` is called after each file.
    """
    settings = settings or IngestSettings()
    src, out = Path(src), Path(out)
    started = time.monotonic()
    _prepare_out(src, out, settings.overwrite)
    found = walk(src, settings.follow_symlinks, settings.include_hidden)
    candidates, refused = _screen(found.files, settings)
    jobs = [
        _Job(
            str(f.source),
            str(out / DOCUMENTS / f.dest),
            f.rel,
            format_of(f.dest),
            settings.file_timeout,
            str(src),
            settings.max_bytes,
        )
        for f in candidates
    ]
    outcomes = run_jobs(jobs, settings.workers, progress)
    _ocr(jobs, outcomes, out, settings, progress)
    docs, pages_by_doc, entries = _assemble(candidates, outcomes)
    entries += [_entry(p) for p in found.problems + refused]
    copied = _copy_skipped(entries, found.files, src, out) if settings.copy_skipped else {}
    name = settings.name or src.resolve().name
    meta = {**(meta or {}), **({COPIED: copied} if copied else {})}
    manifest = RoomManifest(name=name, documents=docs, meta=_meta(src, settings, meta))
    write_json_atomic(out / TASK, task if task is not None else default_task(name))
    write_json_atomic(out / MANIFEST, manifest.to_dict())
    entries.sort(key=lambda e: (e.path, e.reason))
    report = IngestReport(out, src, len(found.files), entries, manifest)
    report.index = "not requested"
    if settings.build_index:
        report.index = _build_index(out, pages_by_doc, progress, settings.workers,
                                    settings.dense)
    report.seconds = time.monotonic() - started
    write_json_atomic(out / REPORT, report.to_dict())
    return report


def _ocr(jobs: list[_Job], outcomes: list[_Outcome], out: Path, settings: IngestSettings,
         progress: ProgressFn | None) -> None:
    """Read the pages without a text layer by OCR (see :mod:`dealroom.room._ingest_ocr`)."""
    def forward(done: int, total: int, rel: str) -> None:
        if progress is not None:
            progress(IngestProgress(done, total, rel, stage="ocr"))

    ocr_outcomes(jobs, outcomes, out, settings.ocr, settings.workers, forward,
                 settings.ocr_limits)


def _assemble(
    candidates: list[Found], outcomes: list[_Outcome]
) -> tuple[list[DocumentRecord], dict[str, Extraction], list[ReportEntry]]:
    """Number the extracted files in natural path order; report failures and warnings."""
    entries = [ReportEntry(o.rel, o.reason, "skipped", o.detail) for o in outcomes if o.reason]
    ingested = [(f, o) for f, o in zip(candidates, outcomes, strict=True) if not o.reason]
    ingested.sort(key=lambda pair: _natural(pair[0].dest))
    docs, pages_by_doc = [], {}
    for n, (found, outcome) in enumerate(ingested, 1):
        doc_id = f"D{n:05d}"
        docs.append(_record(doc_id, found, outcome))
        pages_by_doc[doc_id] = Extraction(outcome.pages, title=outcome.title,
                                          labels=outcome.labels, ocr=outcome.ocr)
        for reason, detail, pages in outcome.warnings:
            entries.append(ReportEntry(found.rel, reason, "ingested", detail, doc_id, pages))
    return docs, pages_by_doc, entries


def _entry(problem: Problem) -> ReportEntry:
    action = "renamed" if problem.reason == "renamed" else "skipped"
    return ReportEntry(
        problem.rel, problem.reason, action, problem.detail, original=problem.original
    )


def _copy_skipped(entries: list[ReportEntry], files: list[Found], src: Path,
                  out: Path) -> dict[str, str]:
    """Copy refused files into documents/ (outside the manifest) and mark them ``copied``.

    Returns ``{room path: reason}`` of the files copied, for ``room.json``'s ``meta.copied``.
    """
    by_rel = {f.rel: f for f in files}
    copied = {}
    for i, e in enumerate(entries):
        f = by_rel.get(e.path)
        if e.action == "skipped" and f is not None:
            try:
                safe_copy(f.source, src, out / DOCUMENTS / f.dest)
            except (CopyRefused, OSError):
                continue
            entries[i] = ReportEntry(e.path, e.reason, "copied", e.detail)
            copied[f"{DOCUMENTS}/{f.dest.as_posix()}"] = e.reason
    return dict(sorted(copied.items()))


def _meta(src: Path, settings: IngestSettings, extra: dict[str, Any] | None) -> dict[str, Any]:
    from dealroom import __version__

    meta: dict[str, Any] = {
        "source": str(src.resolve()),
        "ingest": {
            "dealroom_version": __version__,
            "max_bytes": settings.max_bytes,
            "follow_symlinks": settings.follow_symlinks,
            "include_hidden": settings.include_hidden,
        },
    }
    meta.update(extra or {})
    return meta


def _build_index(
    out: Path, pages_by_doc: dict[str, Extraction], progress: ProgressFn | None, workers: int,
    dense: bool = False,
) -> str:
    """Build the index with the room store's builder, passing the pages already extracted."""
    try:
        from dealroom.room._index import build_index
    except ImportError:
        return "not built: dealroom.room._index.build_index is not available"

    def forward(stage: str, done: int, total: int) -> None:
        if progress is not None and stage in ("index", "embed"):
            progress(IngestProgress(done, total, "", stage=stage))

    try:
        build_index(out, pages_by_doc=pages_by_doc, progress=forward, workers=workers,
                    dense=dense)
    except RoomError as exc:
        return f"not built: {exc}"
    return "built"
