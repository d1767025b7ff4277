"""The text layer's normalization, unit by unit and end to end on every format a room holds."""

from __future__ import annotations

import email.message
from pathlib import Path

import docx
import openpyxl
import pytest
from pdfs import unicode_pdf_bytes
from pptx import Presentation

from dealroom.room import IngestSettings, Room, extract_pages, ingest, normalize_text
from dealroom.room._generate._formats import docx_bytes, text_bytes, xlsx_bytes
from dealroom.room._generate._sheets import Sheet

NBSP, ZWSP, SHY = "\u00a0", "\u200b", "\u00ad"
TITLE = f"CHANGE{NBSP}OF{NBSP}{ZWSP}CONTROL\u037e con{SHY}sent"
"""The words of a filed PDF: no-break spaces, a zero-width space, a Greek question mark, a soft
hyphen inside a word."""
LINES = [TITLE, "the assign-", "ment clause survives"]
"""A word hyphenated across a line break."""


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (f"change{NBSP}of{ZWSP} control\u037e", "change of control;"),
        (f"con{SHY}sent", "consent"),
        (f"assign{SHY}\nment", "assignment"),
        ("assign-\nment", "assignment"),
        ("assign\u2010\n  ment", "assignment"),
        ("Non-\nCompete", "Non-\nCompete"),
        ("pre- \nand post-closing", "pre- \nand post-closing"),
        ("12-\n14", "12-\n14"),
        ("a\r\nb\rc", "a\nb\nc"),
        ("one\fsame page\u2028line\u1680x\u3000y", "one\nsame page\nline x y"),
        ("\ufb01nancial \uff21\uff22\uff23 \u2460", "financial ABC 1"),
        ("plain ascii text", "plain ascii text"),
    ],
)
def test_normalize_text(raw, clean):
    assert normalize_text(raw) == clean
    assert normalize_text(clean) == clean  # idempotent


def _sheet_book(path: Path) -> None:
    book = openpyxl.Workbook()
    book.active.append(["Clause", TITLE])
    book.active.append(["Note", "the assign-\nment clause survives"])
    book.save(path)


def _pptx(path: Path) -> None:
    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "\n".join(LINES)
    deck.save(path)


def _python_docx(path: Path) -> None:
    d = docx.Document()
    for line in LINES:
        d.add_paragraph(line)
    d.save(path)


def _eml() -> bytes:
    msg = email.message.EmailMessage()
    msg["Subject"], msg["From"], msg["To"] = "Consent", "gc@target.example", "deal@buyer.example"
    msg.set_content("\n".join(LINES), cte="quoted-printable")
    return msg.as_bytes()


BODY = "\n".join(LINES)
FILES = {
    "pdf/filed.pdf": lambda p: p.write_bytes(unicode_pdf_bytes([LINES, ["second page"]])),
    "docx/generated.docx": lambda p: p.write_bytes(docx_bytes([BODY, "second page"])),
    "docx/word.docx": _python_docx,
    "xlsx/generated.xlsx": lambda p: p.write_bytes(xlsx_bytes(
        [Sheet("Terms", [["Clause", TITLE], ["Note", "the assign-\nment clause survives"]])])),
    "xlsx/openpyxl.xlsx": _sheet_book,
    "eml/notice.eml": lambda p: p.write_bytes(_eml()),
    "text/notes.md": lambda p: p.write_bytes(text_bytes([BODY, "second page"])),
    "text/notes.txt": lambda p: p.write_bytes(text_bytes([BODY])),
    "text/utf16.txt": lambda p: p.write_bytes(BODY.encode("utf-16")),
    "text/ledger.csv": lambda p: p.write_text(f'clause,text\n1,"{TITLE}"\n2,"{BODY}"\n'),
    "web/page.html": lambda p: p.write_text(
        f"<html><body><p>{TITLE}</p><pre>{BODY}</pre></body></html>", encoding="utf-8"),
    "deck/slides.pptx": _pptx,
}


@pytest.fixture(scope="module")
def room(tmp_path_factory) -> Room:
    src = tmp_path_factory.mktemp("normalize") / "src"
    for rel, write in FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        write(src / rel)
    out = src.parent / "room"
    report = ingest(src, out, IngestSettings(workers=1))
    assert report.entries == []
    with Room.open(out) as opened:
        yield opened


def test_every_format_is_found_by_grep_for_the_phrase_and_the_split_word(room):
    every = sorted(d.id for d in room.docs)
    assert len(every) == len(FILES)
    assert sorted(room.grep("(?i)change of control;").docs()) == every
    assert sorted(room.grep(r"\bconsent\b").docs()) == every
    assert sorted(room.grep(r"\bassignment clause\b").docs()) == every
    assert room.grep("[\u00a0\u200b\u00ad\u037e]").total == 0
    assert sorted(h.doc for h in room.search('"change of control"', k=50)) == every


def test_hits_and_page_spans_point_at_the_normalized_pages(room):
    pdf = room.doc("pdf/filed.pdf")
    assert pdf.pages == 2
    (hit,) = room.grep("assignment", folder="pdf")
    text = room.text(pdf)
    assert text[hit.offset:hit.offset + len("assignment")] == "assignment"
    spans = room.page_spans(pdf)
    assert [text[a:b] for a, b in spans] == [room.text(pdf, n) for n in (1, 2)]
    assert "second page" in room.text(pdf, 2)
    assert room.grep("second page", folder="pdf")[0].page == 2


def test_extract_pages_normalizes(tmp_path):
    path = tmp_path / "a.pdf"
    path.write_bytes(unicode_pdf_bytes([LINES]))
    (page,) = extract_pages(path)
    assert "CHANGE OF CONTROL; consent\nthe assignment clause survives" in page
