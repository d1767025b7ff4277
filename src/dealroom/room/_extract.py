"""Text per page for every document format a room may hold.

Pages are what citations point at: PDF pages; form-feed separated pages in text and Markdown
(a plain-text file without form feeds is cut every 60 lines, see
:func:`~dealroom.room._pagemeta.paginate_text`);
page breaks in DOCX (explicit, section and rendered ones, see :func:`_docx`); one page per sheet
in XLSX and CSV; one per slide in PPTX; one page for an e-mail or HTML file.

Failures raise :class:`ExtractionError` (a :class:`~dealroom.errors.RoomError`) whose ``reason``
is one word of :data:`REASONS`; problems that still leave usable text (a scanned PDF, a page that
would not parse) come back as :class:`ExtractionWarning` records beside the pages.
"""

from __future__ import annotations

import csv
import email
import email.policy
import io
import logging
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from dealroom.errors import RoomError
from dealroom.room._normalize import normalize_pages
from dealroom.room._pagemeta import paginate_text, pdf_labels, pdf_title
from dealroom.room._titles import document_title
from dealroom.room._xlsx import sheet_pages

if TYPE_CHECKING:
    from pypdf import PdfReader

PAGE_BREAK = "\f"
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

REASONS: dict[str, str] = {
    "corrupt": "the file is damaged or not in the format its name says",
    "encrypted": "the file is password-protected",
    "empty": "the file holds no text at all",
    "binary": "a text file holds binary data (NUL or control bytes)",
    "undecodable": "a text file is in no encoding dealroom reads (UTF-8/16/32, Windows-1252)",
    "unsupported_format": "dealroom has no extractor for this file type",
    "scanned_no_text_layer": "PDF pages or image files without a text layer, not OCR'd "
                             "(OCR off, or not installed: see dealroom doctor)",
    "ocr_empty": "OCR ran on these pages but read no text (blank, or not legible)",
}
"""Reasons an extraction fails or warns, in the ingestion report's vocabulary."""


class ExtractionError(RoomError):
    """A document could not be turned into text; ``reason`` is a key of :data:`REASONS`."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class ExtractionWarning:
    """A problem that left the document readable, e.g. pages without a text layer."""

    reason: str
    detail: str
    pages: tuple[int, ...] = ()
    """1-based pages concerned (empty: the whole document)."""


@dataclass
class Extraction:
    """The text of a document, one string per page, plus any warnings."""

    pages: list[str]
    warnings: list[ExtractionWarning] = field(default_factory=list)
    title: str = ""
    """The title the document gives itself (PDF metadata, first heading); ``""``: none."""
    labels: list[str] = field(default_factory=list)
    """Printed page labels (``A-65``) per page where the PDF defines them; else empty."""
    ocr: dict[int, float] = field(default_factory=dict)
    """Pages (1-based) whose text came from OCR, with the engine's mean confidence (0-100)."""


def format_of(path: PurePath) -> str:
    """The room format of a file, from its suffix (``.markdown`` → ``md``, ``.htm`` → ``html``)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    return {"markdown": "md", "htm": "html", "text": "txt", "xlsm": "xlsx", "jpeg": "jpg",
            "tif": "tiff"}.get(suffix, suffix)


# --- plain text ------------------------------------------------------------------------------

_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]")


def _bomless_utf16(raw: bytes) -> str | None:
    """Name the UTF-16 byte order of BOM-less text whose every other byte is NUL, else None."""
    if len(raw) < 4 or len(raw) % 2:
        return None
    sample = raw[:4096]
    half = len(sample) // 2
    if sample[1::2].count(0) > 0.9 * half and not sample[0::2].count(0):
        return "utf-16-le"
    if sample[0::2].count(0) > 0.9 * half and not sample[1::2].count(0):
        return "utf-16-be"
    return None


def decode_text(raw: bytes, name: str = "file") -> str:
    """Decode the bytes of a text file: BOM, then UTF-8, then Windows-1252, all strict.

    Raises :class:`ExtractionError` with reason ``empty``, ``binary`` or ``undecodable``.
    """
    if not raw:
        raise ExtractionError("empty", f"{name} is empty (0 bytes)")
    encoding = next((enc for bom, enc in _BOMS if raw.startswith(bom)), None)
    encoding = encoding or _bomless_utf16(raw)
    if encoding is None and b"\x00" in raw:
        raise ExtractionError("binary", f"{name} holds NUL bytes: binary data, not text")
    text = None
    for enc in (encoding,) if encoding else ("utf-8", "cp1252"):
        try:
            text = raw.decode(enc)
            break
        except UnicodeDecodeError:
            continue
    if text is None:
        raise ExtractionError("undecodable", f"{name} is neither UTF-8 nor Windows-1252 text")
    sample = text[:65536]
    if len(_CONTROL.findall(sample)) > max(8, len(sample) // 100):
        raise ExtractionError("binary", f"{name} is mostly control characters: binary data")
    return text


def _text(path: Path) -> list[str]:
    return decode_text(path.read_bytes(), path.name).split(PAGE_BREAK)


def _plain(path: Path) -> list[str]:
    return paginate_text(decode_text(path.read_bytes(), path.name))


def _csv(path: Path) -> list[str]:
    text = decode_text(path.read_bytes(), path.name)
    try:
        dialect: Any = csv.Sniffer().sniff(text[:8192], delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    rows = csv.reader(io.StringIO(text), dialect)
    return ["\n".join("\t".join(r).rstrip("\t") for r in rows if any(c.strip() for c in r))]


# --- PDF -------------------------------------------------------------------------------------


def _has_image(page: Any) -> bool:
    try:
        xobjects = page["/Resources"]["/XObject"]
        return any(xobjects[k].get_object().get("/Subtype") == "/Image" for k in xobjects)
    except Exception:  # no resources, or a broken dictionary
        return False


def _pdf_open(path: Path) -> PdfReader:
    from pypdf import PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # damage is reported, not logged
    reader = PdfReader(str(path))
    if reader.is_encrypted:
        opened: Any
        try:
            opened = reader.decrypt("")  # owner-password-only PDFs open with an empty password
        except Exception:  # unsupported algorithm or missing crypto backend
            opened = 0
        if not opened:
            raise ExtractionError("encrypted", f"{path.name} is an encrypted PDF")
    return reader


def _pdf(path: Path) -> Extraction:
    reader = _pdf_open(path)
    pages, failed, scanned = [], [], []
    for number, page in enumerate(reader.pages, 1):
        try:
            text = page.extract_text() or ""
        except Exception:  # one broken page must not cost the document
            text = ""
            failed.append(number)
        if not text.strip() and number not in failed and _has_image(page):
            scanned.append(number)
        pages.append(text)
    if not pages:
        raise ExtractionError("corrupt", f"{path.name} is a PDF with no pages")
    notes = []
    if not any(p.strip() for p in pages):
        detail = f"no text layer on any of {len(pages)} pages (scanned?)"
        notes.append(ExtractionWarning("scanned_no_text_layer", detail))
    elif scanned:
        notes.append(ExtractionWarning("scanned_no_text_layer", "image-only pages", tuple(scanned)))
    if failed:
        notes.append(ExtractionWarning("corrupt", "pages that could not be parsed", tuple(failed)))
    return Extraction(pages, notes, pdf_title(reader), pdf_labels(reader))


# --- Office Open XML -------------------------------------------------------------------------


def _check_ooxml(path: Path) -> None:
    """Raise ``encrypted`` for a password-protected Office file, ``corrupt`` for a legacy one."""
    with open(path, "rb") as fh:
        head = fh.read(8)
    if head != OLE_MAGIC:
        return
    import olefile

    try:
        with olefile.OleFileIO(str(path)) as ole:
            encrypted = ole.exists("EncryptedPackage")
    except Exception as exc:
        raise ExtractionError("corrupt", f"{path.name}: damaged OLE container: {exc}") from exc
    if encrypted:
        raise ExtractionError("encrypted", f"{path.name} is a password-protected Office file")
    raise ExtractionError("corrupt", f"{path.name} is a legacy binary Office file, not OOXML")


W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
REL = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
MAX_PART_BYTES = 1 << 30
_OFF = ("0", "false", "off")


class _PageWriter:
    """Collects DOCX text into pages.

    An explicit page break always starts a page. A ``pageBreakBefore`` or a section break
    starts one only if the page already has text; whether a section break is one is said by the
    *next* section's ``w:type``. Word also records where it last laid out a page
    (``lastRenderedPageBreak``); that marker starts a page too, unless it merely repeats a
    structural break with no text in between.
    """

    def __init__(self) -> None:
        self.pages: list[list[str]] = [[]]
        self.line: list[str] = []
        self.has_text = False
        self.pending = False
        self.section_breaks: list[bool] = []
        """Per section end, in order: does the next section start on a new page?"""

    def text(self, chunk: str) -> None:
        if chunk:
            self.line.append(chunk)
            self.has_text = True
            self.pending = False

    def end_line(self) -> None:
        self.pages[-1].append("".join(self.line))
        self.line = []

    def _new_page(self) -> None:
        if self.line:
            self.end_line()
        self.pages.append([])
        self.has_text = False
        self.pending = True

    def hard(self) -> None:
        self._new_page()

    def soft(self) -> None:
        if self.has_text:
            self._new_page()
        self.pending = True

    def rendered(self) -> None:
        if self.pending:
            self.pending = False
        elif self.has_text:
            self._new_page()
            self.pending = False

    def result(self) -> list[str]:
        if self.line:
            self.end_line()
        return ["\n".join(lines).strip("\n") for lines in self.pages]


def _on(element: Any) -> bool:
    return element is not None and element.get(W + "val", "true") not in _OFF


def _break(element: Any, out: _PageWriter) -> None:
    tag = element.tag
    if tag == W + "br":
        if element.get(W + "type") == "page":
            out.hard()
        elif element.get(W + "type") != "column":
            out.text("\n")
    elif tag == W + "lastRenderedPageBreak":
        out.rendered()


def _paragraph(p: Any, out: _PageWriter) -> None:
    ppr = p.find(W + "pPr")
    if ppr is not None and _on(ppr.find(W + "pageBreakBefore")):
        out.soft()
    for el in p.iter(W + "t", W + "tab", W + "br", W + "cr", W + "lastRenderedPageBreak"):
        if el.tag == W + "t":
            out.text(el.text or "")
        elif el.tag == W + "tab":
            out.text("\t")
        elif el.tag == W + "cr":
            out.text("\n")
        else:
            _break(el, out)
    out.end_line()
    ends_section = ppr is not None and ppr.find(W + "sectPr") is not None
    if ends_section and out.section_breaks.pop(0):
        out.soft()


def _table(tbl: Any, out: _PageWriter) -> None:
    for row in tbl.iter(W + "tr"):
        for el in row.iter(W + "br", W + "lastRenderedPageBreak"):
            if el.tag == W + "lastRenderedPageBreak":
                out.rendered()
            elif el.get(W + "type") == "page":
                out.hard()
        cells = []
        for cell in row.iterchildren(W + "tc"):
            paras = (
                "".join(t.text or "" for t in para.iter(W + "t")) for para in cell.iter(W + "p")
            )
            cells.append(" ".join(s for s in paras if s))
        out.text(" | ".join(cells))
        out.end_line()


def _docx_body(path: Path) -> Any:
    """The ``w:body`` of a DOCX's main part, parsed with lxml straight from the zip.

    python-docx's ``Document()`` builds every part of the package (styles, numbering,
    settings) and costs ~40x more than reading the one part text lives in.
    """
    from lxml import etree

    with zipfile.ZipFile(path) as package:
        name = _main_part(package, etree)
        if package.getinfo(name).file_size > MAX_PART_BYTES:
            raise ExtractionError("corrupt", f"{path.name}: {name} expands beyond 1 GiB")
        parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=True)
        root = etree.fromstring(package.read(name), parser)
    body = root.find(W + "body")
    if body is None:
        raise ExtractionError("corrupt", f"{path.name}: {name} has no document body")
    return body


def _main_part(package: zipfile.ZipFile, etree: Any) -> str:
    """The package's main document part, from ``_rels/.rels`` (usually word/document.xml)."""
    try:
        rels = etree.fromstring(package.read("_rels/.rels"))
    except KeyError:
        return "word/document.xml"
    for rel in rels.iter(REL):
        if rel.get("Type", "").endswith("/officeDocument"):
            return rel.get("Target", "").lstrip("/")
    return "word/document.xml"


def _docx(path: Path) -> list[str]:
    """DOCX body text (paragraphs and tables, in order) split into pages; see _PageWriter."""
    _check_ooxml(path)
    body = _docx_body(path)
    for fallback in list(body.iter(MC_FALLBACK)):  # duplicate of mc:Choice content
        fallback.getparent().remove(fallback)
    out = _PageWriter()
    sections = list(body.iter(W + "sectPr"))
    out.section_breaks = [_new_page_section(s) for s in sections[1:]]
    for block in _blocks(body):
        if block.tag == W + "p":
            _paragraph(block, out)
        elif block.tag == W + "tbl":
            _table(block, out)
    return out.result()


def _new_page_section(sect: Any) -> bool:
    """Whether a section starts on a new page (its ``w:type``; the default is ``nextPage``)."""
    kind = sect.find(W + "type")
    return kind is None or kind.get(W + "val") != "continuous"


def _blocks(parent: Any) -> Iterator[Any]:
    """Body-level paragraphs and tables in order, looking inside content controls."""
    for child in parent.iterchildren():
        if child.tag == W + "sdt":
            content = child.find(W + "sdtContent")
            if content is not None:
                yield from _blocks(content)
        else:
            yield child


def _xlsx(path: Path) -> list[str]:
    """One page per sheet, read by its cells (see :mod:`dealroom.room._xlsx`)."""
    _check_ooxml(path)
    pages, rows = sheet_pages(path)
    if not rows:
        raise ExtractionError("empty", f"{path.name}: no sheet holds a value")
    return pages


def _shape_text(shape: Any) -> list[str]:
    from pptx.shapes.group import GroupShape

    if isinstance(shape, GroupShape):
        return [t for s in shape.shapes for t in _shape_text(s)]
    if getattr(shape, "has_table", False) and shape.has_table:
        return [" | ".join(c.text for c in row.cells) for row in shape.table.rows]
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        return [shape.text_frame.text]
    return []


def _pptx(path: Path) -> list[str]:
    from pptx import Presentation

    _check_ooxml(path)
    slides = []
    for slide in Presentation(str(path)).slides:
        parts = [t for shape in slide.shapes for t in _shape_text(shape) if t.strip()]
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes = slide.notes_slide.notes_text_frame.text.strip()
            parts += [f"Notes: {notes}"] if notes else []
        slides.append("\n".join(parts))
    return slides


# --- e-mail and HTML -------------------------------------------------------------------------


HEADERS = frozenset({"from", "to", "cc", "bcc", "date", "subject", "message-id", "sender",
                     "reply-to", "received", "mime-version", "return-path", "in-reply-to",
                     "references", "content-type"})
"""Header names of which an e-mail message has at least one (else it is not one)."""


def _looks_binary(text: str) -> bool:
    """Mostly control characters or U+FFFD (bytes no charset decodes): binary data, not text."""
    sample = text[:65536]
    bad = len(_CONTROL.findall(sample)) + sample.count("\ufffd")
    return bad > max(8, len(sample) // 20)


def _eml(path: Path) -> list[str]:
    msg = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    if not HEADERS & {k.lower() for k in msg}:
        raise ExtractionError("corrupt", f"{path.name} is not an e-mail message: no From, To, "
                              "Date or Subject header before the body")
    head = [f"{k}: {msg[k]}" for k in ("From", "To", "Cc", "Date", "Subject") if msg[k]]
    attached = [p.get_filename() or "(unnamed)" for p in msg.iter_attachments()]
    if attached:
        head.append("Attachments: " + ", ".join(attached))
    body = msg.get_body(preferencelist=("plain", "html"))
    text = ""
    if body is not None:
        try:
            text = body.get_content()
        except (LookupError, UnicodeError):  # unknown or wrong charset label
            payload: Any = body.get_payload(decode=True) or b""
            text = payload.decode("utf-8", errors="replace")
        if body.get_content_type() == "text/html":
            text = _html_text(text)
        if _looks_binary(text):
            raise ExtractionError("binary", f"{path.name}: the message body is binary data")
    return ["\n".join(head) + f"\n\n{text}"]


def _msg(path: Path) -> list[str]:
    import extract_msg

    msg = extract_msg.Message(str(path))
    try:
        head = f"From: {msg.sender}\nTo: {msg.to}\nDate: {msg.date}\nSubject: {msg.subject}"
        names = [a.getFilename() or "(unnamed)"  # type: ignore[union-attr]
                 for a in msg.attachments]
        if names:
            head += "\nAttachments: " + ", ".join(names)
        body = msg.body
        if not body and msg.htmlBody:
            body = _html_text(msg.htmlBody.decode("utf-8", errors="replace"))
        return [f"{head}\n\n{body or ''}"]
    finally:
        msg.close()


def _html_text(markup: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "lxml")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    return soup.get_text("\n", strip=True)


_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def _html(path: Path) -> list[str]:
    raw = path.read_bytes()
    declared = _CHARSET.search(raw[:4096])
    if declared and raw:
        try:
            return [_html_text(raw.decode(declared.group(1).decode("ascii")))]
        except (LookupError, UnicodeDecodeError):
            pass  # a wrong label: fall back to our own decoding
    return [_html_text(decode_text(raw, path.name))]


def _image(path: Path) -> Extraction:
    """An image file: one empty page per frame, to be read by OCR."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            frames = int(getattr(img, "n_frames", 1))
    except UnidentifiedImageError as exc:
        raise ExtractionError("corrupt", f"{path.name} is not a readable image") from exc
    detail = f"an image: no text layer on any of {frames} page{'s' * (frames > 1)}"
    return Extraction([""] * frames, [ExtractionWarning("scanned_no_text_layer", detail)])


EXTRACTORS: dict[str, Callable[[Path], list[str] | Extraction]] = {
    "md": _text,
    "txt": _plain,
    "pdf": _pdf,
    "docx": _docx,
    "xlsx": _xlsx,
    "csv": _csv,
    "pptx": _pptx,
    "eml": _eml,
    "msg": _msg,
    "html": _html,
    "png": _image,
    "jpg": _image,
    "tiff": _image,
}
SCANNED_FORMATS = frozenset({"pdf", "png", "jpg", "tiff"})
"""Formats whose pages may be images: they may be empty, and OCR reads them."""


def extract_document(path: Path, fmt: str | None = None) -> Extraction:
    """Extract ``path`` page by page, with warnings; raise :class:`ExtractionError` on failure.

    Every page is normalized (:func:`dealroom.room.normalize_text`). Zero-byte files and
    documents without any text fail with reason ``empty``, except PDFs, which come back with a
    ``scanned_no_text_layer`` warning (their pages exist, only the text is missing).
    """
    path = Path(path)
    fmt = fmt or format_of(path)
    extractor = EXTRACTORS.get(fmt)
    if extractor is None:
        raise ExtractionError("unsupported_format", f"unsupported format {fmt!r}: {path.name}")
    if path.stat().st_size == 0:
        raise ExtractionError("empty", f"{path.name} is empty (0 bytes)")
    try:
        result = extractor(path)
    except RoomError:
        raise
    except Exception as exc:  # parsers raise many unrelated types on corrupt input
        raise ExtractionError(
            "corrupt", f"cannot read {path.name} as {fmt}: {type(exc).__name__}: {exc}"
        ) from exc
    extraction = result if isinstance(result, Extraction) else Extraction(result)
    extraction.pages = normalize_pages(extraction.pages) or [""]
    extraction.title = document_title(extraction.pages, fmt, extraction.title, path.stem)
    if fmt not in SCANNED_FORMATS and not any(p.strip() for p in extraction.pages):
        raise ExtractionError("empty", f"{path.name} holds no text")
    return extraction


def extract_pages(path: Path, fmt: str | None = None) -> list[str]:
    """Return the text of each page of ``path``; raise :class:`RoomError` if it cannot be read.

    The error is an :class:`ExtractionError` whose ``reason`` says why (see :data:`REASONS`).
    """
    return extract_document(path, fmt).pages
