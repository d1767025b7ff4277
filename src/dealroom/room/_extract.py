"""Text per page for every document format a room may hold.

Pages are what citations point at: PDF pages; form-feed separated pages in text and Markdown;
explicit page breaks in DOCX; one page per sheet in XLSX and CSV; one per slide in PPTX; one page
for an e-mail or HTML file.
"""

from __future__ import annotations

import csv
import email
import email.policy
import io
from collections.abc import Callable
from pathlib import Path

from dealroom.errors import RoomError

PAGE_BREAK = "\f"


def format_of(path: Path) -> str:
    """The room format of a file, from its suffix (``.markdown`` → ``md``, ``.htm`` → ``html``)."""
    suffix = path.suffix.lower().lstrip(".")
    return {"markdown": "md", "htm": "html", "text": "txt", "xlsm": "xlsx"}.get(suffix, suffix)


def _text(path: Path) -> list[str]:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("cp1252", errors="replace")
    return text.split(PAGE_BREAK)


def _pdf(path: Path) -> list[str]:
    from pypdf import PdfReader

    reader = PdfReader(str(path))
    if reader.is_encrypted:
        raise RoomError("encrypted PDF")
    return [page.extract_text() or "" for page in reader.pages]


def _docx(path: Path) -> list[str]:
    import docx

    pages: list[list[str]] = [[]]
    for para in docx.Document(str(path)).paragraphs:
        if 'w:br w:type="page"' in para._p.xml or "<w:lastRenderedPageBreak" in para._p.xml:
            pages.append([])
        pages[-1].append(para.text)
    return ["\n".join(p) for p in pages]


def _xlsx(path: Path) -> list[str]:
    import openpyxl

    book = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    try:
        pages = []
        for sheet in book.worksheets:
            rows = (
                "\t".join("" if v is None else str(v) for v in row)
                for row in sheet.iter_rows(values_only=True)
            )
            pages.append(f"# {sheet.title}\n" + "\n".join(r for r in rows if r.strip()))
        return pages
    finally:
        book.close()


def _csv(path: Path) -> list[str]:
    text = _text(path)[0]
    rows = csv.reader(io.StringIO(text))
    return ["\n".join("\t".join(r) for r in rows)]


def _pptx(path: Path) -> list[str]:
    from pptx import Presentation

    slides = []
    for slide in Presentation(str(path)).slides:
        parts = [s.text_frame.text for s in slide.shapes if s.has_text_frame]
        slides.append("\n".join(parts))
    return slides


def _eml(path: Path) -> list[str]:
    msg = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
    head = "\n".join(f"{k}: {msg[k]}" for k in ("From", "To", "Cc", "Date", "Subject") if msg[k])
    body = msg.get_body(preferencelist=("plain", "html"))
    text = body.get_content() if body is not None else ""
    if body is not None and body.get_content_type() == "text/html":
        text = _html_text(text)
    return [f"{head}\n\n{text}"]


def _msg(path: Path) -> list[str]:
    import extract_msg

    msg = extract_msg.Message(str(path))
    try:
        head = f"From: {msg.sender}\nTo: {msg.to}\nDate: {msg.date}\nSubject: {msg.subject}"
        return [f"{head}\n\n{msg.body or ''}"]
    finally:
        msg.close()


def _html_text(markup: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(markup, "html.parser")
    for tag in soup(["script", "style"]):
        tag.decompose()
    return soup.get_text("\n", strip=True)


def _html(path: Path) -> list[str]:
    return [_html_text(_text(path)[0])]


EXTRACTORS: dict[str, Callable[[Path], list[str]]] = {
    "md": _text,
    "txt": _text,
    "pdf": _pdf,
    "docx": _docx,
    "xlsx": _xlsx,
    "csv": _csv,
    "pptx": _pptx,
    "eml": _eml,
    "msg": _msg,
    "html": _html,
}


def extract_pages(path: Path, fmt: str | None = None) -> list[str]:
    """Return the text of each page of ``path``; raise :class:`RoomError` if it cannot be read."""
    path = Path(path)
    fmt = fmt or format_of(path)
    extractor = EXTRACTORS.get(fmt)
    if extractor is None:
        raise RoomError(f"unsupported format {fmt!r}: {path.name}")
    try:
        pages = extractor(path)
    except RoomError:
        raise
    except Exception as exc:  # parsers raise many unrelated types on corrupt input
        raise RoomError(f"cannot read {path.name} as {fmt}: {type(exc).__name__}: {exc}") from exc
    return pages or [""]
