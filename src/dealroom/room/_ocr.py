"""OCR of page images: scanned PDF pages and image files, with Tesseract, each page bounded.

::

    PDF page ──pypdfium2, 300 dpi or less (≤ page_pixels)──► image ─┬─ no ink: not OCR'd
    PNG / JPEG / TIFF frame ──Pillow (reduced to ≤ page_pixels)─────┘   │
                                          Tesseract (pytesseract, time-out) ◄─┘
                                                  │ words + confidence
                                    lines joined ◄┘ → page text

The engine is Tesseract (Debian's ``tesseract-ocr``, English data included) driven through
``pytesseract``; ``benchmarks/bench_ocr.py`` measured it against RapidOCR on the same pages
(docs/ingestion.md, "OCR"). :func:`ocr_page` reads one page and never raises: a page it does
not read comes back with the reason (``ocr_too_large``, ``ocr_blank``, ...). Every page is
bounded in pixels (:func:`render_dpi`) and in Tesseract's time (:class:`OcrLimits`); the pool
that runs the pages (:mod:`dealroom.room._ocr_pool`) bounds memory and the whole ingest's time.
:func:`ocr_status` says whether OCR can run here (``dealroom doctor`` shows it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from dealroom.errors import ConfigError, MissingDependency

if TYPE_CHECKING:
    from PIL import Image

DPI = 300
"""Resolution PDF pages are rendered at (Tesseract's accuracy drops below ~200 dpi)."""
MIN_DPI = 100
"""The lowest resolution a large page is rendered at (8 pt text is ~11 pixels tall there);
a page that would need less to stay under the pixel ceiling is not OCR'd (``ocr_too_large``)."""
MIN_SIDE = 16
"""An image under this many pixels on a side holds no legible word (``ocr_too_small``)."""
INK = 240
"""A page whose darkest pixel is lighter than this (0 black, 255 white) has no ink."""
FRAME_FACTOR = 4
"""An image frame up to this many times ``page_pixels`` is decoded and reduced; past it,
``ocr_too_large``."""
OCR_MODES = ("auto", "always", "never")
"""``auto``: pages without a text layer; ``always``: every page of PDFs and images."""
IMAGE_FORMATS = frozenset({"png", "jpg", "tiff"})
INSTALL = ("apt-get install tesseract-ocr (Debian/Ubuntu; brew install tesseract on macOS) "
           "and pip install 'dealroom[ocr]'")


@dataclass(frozen=True)
class OcrLimits:
    """How much OCR one page, one document and one ingest may cost."""

    max_pages: int = 100
    """Pages OCR'd per document (the first ones that need it); the rest are ``ocr_page_limit``.
    0: no limit."""
    give_up_after: int = 20
    """A document whose first this many pages sent to OCR read no text (noise, photographs)
    is not OCR'd further; its other pages are ``ocr_gave_up``. 0: never give up."""
    page_timeout: float = 60.0
    """Seconds Tesseract may spend on one page (its own time-out); else ``ocr_timeout``.
    0: none."""
    budget: float = 1800.0
    """Seconds all the OCR of one ingest may take; pages not read by then are ``ocr_budget``.
    0: none."""
    page_pixels: int = 25_000_000
    """Pixels one page may be rendered at: 300 dpi up to 277 square inches (A3, tabloid),
    lower for larger pages, refused below :data:`MIN_DPI`."""
    worker_memory_mb: int = 2048
    """Address space of each OCR worker process and its Tesseract (``RLIMIT_AS``); 0: none."""

    def __post_init__(self) -> None:
        for name in ("max_pages", "give_up_after", "page_timeout", "budget",
                     "worker_memory_mb"):
            if getattr(self, name) < 0:
                raise ConfigError(f"ocr {name} must be 0 (no limit) or positive, "
                                  f"got {getattr(self, name)}")
        if self.page_pixels < 1_000_000:
            raise ConfigError(f"ocr page_pixels must be at least 1,000,000 (a page at "
                              f"{MIN_DPI} dpi), got {self.page_pixels}")
        if 0 < self.worker_memory_mb < 512:
            raise ConfigError(f"ocr worker_memory_mb must be 0 (no limit) or at least 512 "
                              f"(Tesseract and its model need that), got {self.worker_memory_mb}")


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
    """Why the page was not read, in words (``reason`` in one word)."""
    reason: str = ""
    """``""`` when Tesseract ran, else why not: ``ocr_blank``, ``ocr_too_large``,
    ``ocr_too_small``, ``ocr_timeout``, ``ocr_failed``, ``ocr_page_limit``, ``ocr_gave_up``,
    ``ocr_budget``."""
    dpi: int = 0
    """Resolution a PDF page was rendered at (0 for an image file)."""


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


def render_dpi(width_in: float, height_in: float, page_pixels: int) -> int:
    """The resolution a page of this size (inches) is rendered at: :data:`DPI`, lowered so the
    page stays under ``page_pixels``; 0 when that would take less than :data:`MIN_DPI`.

    >>> render_dpi(8.5, 11, 25_000_000), render_dpi(34, 44, 25_000_000)
    (300, 129)
    >>> render_dpi(200, 200, 25_000_000)
    0
    """
    area = width_in * height_in
    if not area > 0 or not math.isfinite(area):
        return 0
    dpi = min(DPI, int(math.sqrt(page_pixels / area)))
    return dpi if dpi >= MIN_DPI else 0


class _NotRead(Exception):
    """A page OCR leaves alone, and why (``reason``: one word; the message: in words)."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def _pdf_page(task: OcrTask, limits: OcrLimits) -> tuple[Image.Image, int]:
    """Render one PDF page, at the resolution :func:`render_dpi` allows for its size."""
    import pypdfium2

    pdf = pypdfium2.PdfDocument(task.path)
    try:
        page = pdf[task.index]
        width, height = (v / 72 for v in page.get_size())  # points, /UserUnit applied
        dpi = render_dpi(width, height, limits.page_pixels)
        if not dpi:
            raise _NotRead("ocr_too_large", f"a {width:,.0f} x {height:,.0f} inch page is over "
                           f"{limits.page_pixels:,} pixels even at {MIN_DPI} dpi")
        return page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L"), dpi
    finally:
        pdf.close()


def _frame(task: OcrTask, limits: OcrLimits) -> Image.Image:
    """Decode one image frame (refused before decoding when it is far too large), reduced to
    at most ``page_pixels``."""
    from PIL import Image

    try:
        img = Image.open(task.path)
    except Image.DecompressionBombError as exc:
        raise _NotRead("ocr_too_large", str(exc)) from exc
    with img:
        img.seek(task.index)
        pixels = img.width * img.height
        if pixels > FRAME_FACTOR * limits.page_pixels:
            raise _NotRead("ocr_too_large", f"a {img.width:,} x {img.height:,} pixel image is "
                           f"over {FRAME_FACTOR * limits.page_pixels:,} pixels")
        if min(img.size) >= MIN_SIDE and pixels > limits.page_pixels:
            img.draft("L", (img.width // 2, img.height // 2))  # JPEG: decode at a lower scale
        frame = img.convert("L")
    factor = math.ceil(math.sqrt(frame.width * frame.height / limits.page_pixels))
    return frame.reduce(factor) if factor > 1 else frame


def _page_image(task: OcrTask, limits: OcrLimits) -> tuple[Image.Image, int]:
    """The page as a grayscale image within the limits, and its dpi; :class:`_NotRead` when
    OCR has nothing to do on it (too small, or no ink)."""
    image, dpi = _pdf_page(task, limits) if task.fmt == "pdf" else (_frame(task, limits), 0)
    if min(image.size) < MIN_SIDE:
        raise _NotRead("ocr_too_small", f"{image.width} x {image.height} pixels: too small "
                       "to hold a word")
    darkest = image.getextrema()[0]
    if isinstance(darkest, (int, float)) and darkest >= INK:
        raise _NotRead("ocr_blank", "")
    return image, dpi


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


def ocr_page(task: OcrTask, limits: OcrLimits | None = None) -> OcrResult:
    """Render and read one page within ``limits``; a page not read comes back with its
    ``reason`` (never raised)."""
    limits = limits or OcrLimits()
    dpi = 0
    try:
        import pytesseract

        image, dpi = _page_image(task, limits)
        data = pytesseract.image_to_data(image, output_type=pytesseract.Output.DICT,
                                         timeout=limits.page_timeout)
        text, conf = _words_to_text(data)
        return OcrResult(text, round(conf, 1), dpi=dpi)
    except _NotRead as exc:
        return OcrResult("", 0.0, str(exc), exc.reason, dpi)
    except RuntimeError as exc:
        if "timeout" not in str(exc):
            return OcrResult("", 0.0, f"{type(exc).__name__}: {exc}", "ocr_failed", dpi)
        return OcrResult("", 0.0, f"Tesseract took more than {limits.page_timeout:g} s",
                         "ocr_timeout", dpi)
    except Exception as exc:  # noqa: BLE001 - a bad page is reported, the others go on
        return OcrResult("", 0.0, f"{type(exc).__name__}: {exc}", "ocr_failed", dpi)
