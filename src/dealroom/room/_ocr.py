"""OCR of page images: scanned PDF pages and image files, with Tesseract, in a process pool.

::

    PDF page ──pypdfium2, 300 dpi──► image ──Tesseract (pytesseract)──► words + confidence
    PNG / JPEG / TIFF frame ─────────┘                                      │
                                                          lines joined ◄────┘ → page text

The engine is Tesseract (Debian's ``tesseract-ocr``, English data included) driven through
``pytesseract``; ``benchmarks/bench_ocr.py`` measured it against RapidOCR on the same pages
(docs/ingestion.md, "OCR"). One task is one page, so a 23-page scan spreads over every worker;
each worker runs Tesseract single-threaded (``OMP_THREAD_LIMIT=1``), since the pool already
uses the cores. :func:`ocr_status` says whether OCR can run here (``dealroom doctor`` shows it).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom.errors import MissingDependency

if TYPE_CHECKING:
    from PIL import Image

DPI = 300
"""Resolution PDF pages are rendered at (Tesseract's accuracy drops below ~200 dpi)."""
OCR_MODES = ("auto", "always", "never")
"""``auto``: pages without a text layer; ``always``: every page of PDFs and images."""
IMAGE_FORMATS = frozenset({"png", "jpg", "tiff"})
INSTALL = ("apt-get install tesseract-ocr (Debian/Ubuntu; brew install tesseract on macOS) "
           "and pip install 'dealroom[ocr]'")


@dataclass(frozen=True)
class OcrTask:
    """One page to read: page ``index`` (0-based) of the PDF or image file at ``path``."""

    path: str
    fmt: str
    index: int


@dataclass(frozen=True)
class OcrResult:
    """What the engine read on one page: text (lines joined by ``\\n``) and mean confidence."""

    text: str
    confidence: float
    """Mean word confidence, 0-100 (Tesseract's scale); 0.0 when no word was found."""
    error: str = ""


def ocr_status() -> tuple[bool, str]:
    """``(True, "tesseract 5.3.0")`` when OCR can run here, else ``(False, what to install)``."""
    try:
        import pypdfium2  # noqa: F401
        import pytesseract
        from PIL import Image  # noqa: F401
    except ImportError as exc:
        return False, f"{exc.name} is not installed: {INSTALL}"
    try:
        version = pytesseract.get_tesseract_version()
        languages = pytesseract.get_languages(config="")
    except Exception:  # noqa: BLE001 - TesseractNotFoundError, or a broken install
        return False, f"the tesseract program is not installed: {INSTALL}"
    if "eng" not in languages:
        return False, "tesseract has no English data: apt-get install tesseract-ocr-eng"
    return True, f"tesseract {version}"


def require_ocr() -> str:
    """The engine's name and version; :class:`MissingDependency` saying what to install."""
    ok, detail = ocr_status()
    if not ok:
        raise MissingDependency(f"OCR is not available: {detail}")
    return detail


def page_count(path: Path, fmt: str) -> int:
    """Frames of an image file (a multi-page TIFF has several; PNG and JPEG one)."""
    from PIL import Image

    with Image.open(path) as img:
        return int(getattr(img, "n_frames", 1))


def _image(task: OcrTask) -> Image.Image:
    from PIL import Image

    if task.fmt == "pdf":
        import pypdfium2

        pdf = pypdfium2.PdfDocument(task.path)
        try:
            page = pdf[task.index]
            return page.render(scale=DPI / 72, grayscale=True).to_pil()
        finally:
            pdf.close()
    with Image.open(task.path) as img:
        img.seek(task.index)
        return img.convert("L")


def _words_to_text(data: dict[str, list[Any]]) -> tuple[str, float]:
    """Tesseract's word table as text (a line per line, a blank line between blocks)."""
    lines: dict[tuple[int, int, int], list[str]] = {}
    confs = []
    for i, word in enumerate(data["text"]):
        conf = float(data["conf"][i])
        if conf < 0 or not str(word).strip():
            continue
        key = (data["block_num"][i], data["par_num"][i], data["line_num"][i])
        lines.setdefault(key, []).append(str(word))
        confs.append(conf)
    out, last_block = [], None
    for (block, _, _), words in lines.items():
        if last_block is not None and block != last_block:
            out.append("")
        out.append(" ".join(words))
        last_block = block
    return "\n".join(out), (sum(confs) / len(confs) if confs else 0.0)


def ocr_page(task: OcrTask) -> OcrResult:
    """Render and read one page; a failure comes back as ``error`` (never raised)."""
    try:
        import pytesseract

        data = pytesseract.image_to_data(_image(task), output_type=pytesseract.Output.DICT)
        text, conf = _words_to_text(data)
        return OcrResult(text, round(conf, 1))
    except Exception as exc:  # noqa: BLE001 - a bad page is reported, the others go on
        return OcrResult("", 0.0, f"{type(exc).__name__}: {exc}")


def _init_worker() -> None:
    os.environ["OMP_THREAD_LIMIT"] = "1"  # the pool uses the cores; one thread per page


def ocr_pages(tasks: list[OcrTask], workers: int,
              progress: Callable[[int, int], None] | None = None) -> list[OcrResult]:
    """Read every page, in a process pool of ``workers`` when there are several pages;
    results in task order. ``progress(done, total)`` is called as pages finish."""
    results: dict[int, OcrResult] = {}

    def done(i: int, result: OcrResult) -> None:
        results[i] = result
        if progress is not None:
            progress(len(results), len(tasks))

    if workers <= 1 or len(tasks) < 2:
        for i, task in enumerate(tasks):
            done(i, ocr_page(task))
        return [results[i] for i in range(len(tasks))]
    context = multiprocessing.get_context("spawn")  # the caller may run threads
    with ProcessPoolExecutor(min(workers, len(tasks)), mp_context=context,
                             initializer=_init_worker) as pool:
        futures: dict[Future[OcrResult], int] = {
            pool.submit(ocr_page, t): i for i, t in enumerate(tasks)}
        for future in as_completed(futures):
            try:
                done(futures[future], future.result())
            except Exception as exc:  # noqa: BLE001 - a worker that died: that page fails
                done(futures[future], OcrResult("", 0.0, f"{type(exc).__name__}: {exc}"))
    return [results[i] for i in range(len(tasks))]
