"""Text extraction per format: pages, failure reasons and warnings, on files built here."""

from __future__ import annotations

import email.message
import zipfile
from pathlib import Path

import docx
import openpyxl
import pytest
from docx.enum.section import WD_SECTION
from docx.enum.text import WD_BREAK
from docx.oxml import OxmlElement
from malformed import encrypted_pdf, ole_with_encrypted_package
from pdfs import pdf_bytes
from pptx import Presentation
from pptx.util import Inches

from dealroom.errors import RoomError
from dealroom.room import (
    REASONS,
    ExtractionError,
    decode_text,
    extract_document,
    extract_pages,
    format_of,
)
from dealroom.room import _xlsx as xlsx_mod

# --- builders --------------------------------------------------------------------------------


def docx_file(path: Path, build) -> Path:
    document = docx.Document()
    build(document)
    document.save(path)
    return path


def rendered_break(run) -> None:
    run._r.append(OxmlElement("w:lastRenderedPageBreak"))


# --- formats and pages -----------------------------------------------------------------------


def test_format_of_maps_suffixes():
    assert format_of(Path("a/Report.MARKDOWN")) == "md"
    assert format_of(Path("x.htm")) == "html"
    assert format_of(Path("book.xlsm")) == "xlsx"
    assert format_of(Path("noext")) == ""


def test_text_pages_split_on_form_feed(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("one\fTwo\fthree", encoding="utf-8")
    assert extract_pages(path) == ["one", "Two", "three"]


def test_pdf_one_page_per_page(tmp_path):
    path = tmp_path / "a.pdf"
    path.write_bytes(pdf_bytes(["Purchase price $88.2 million", "Consent required"]))
    pages = extract_pages(path)
    assert len(pages) == 2
    assert "88.2 million" in pages[0] and "Consent" in pages[1]


def test_docx_explicit_break_splits_inside_a_paragraph(tmp_path):
    def build(d):
        p = d.add_paragraph("before")
        p.add_run().add_break(WD_BREAK.PAGE)
        p.add_run("after")
        p2 = d.add_paragraph("x")
        p2.add_run().add_break(WD_BREAK.PAGE)
        p2.add_run().add_break(WD_BREAK.PAGE)  # a deliberately blank page
        p2.add_run("y")

    pages = extract_pages(docx_file(tmp_path / "a.docx", build))
    assert pages == ["before", "after\nx", "", "y"]


def test_docx_rendered_break_after_explicit_break_is_not_counted_twice(tmp_path):
    def build(d):
        p = d.add_paragraph("one")
        p.add_run().add_break(WD_BREAK.PAGE)
        rendered_break(d.add_paragraph().add_run("two"))  # Word's marker for the same break
        q = d.add_paragraph()
        rendered_break(q.add_run())  # a page that Word laid out by itself (soft break)
        q.add_run("three")

    pages = extract_pages(docx_file(tmp_path / "a.docx", build))
    assert pages == ["one", "two", "three"]


def test_docx_page_break_before_and_sections(tmp_path):
    def build(d):
        d.add_paragraph("first")
        d.add_paragraph("second").paragraph_format.page_break_before = True
        d.add_section(WD_SECTION.NEW_PAGE)
        d.add_paragraph("third")
        d.add_section(WD_SECTION.CONTINUOUS)
        d.add_paragraph("still third")

    pages = extract_pages(docx_file(tmp_path / "a.docx", build))
    assert [p.split("\n")[-1] for p in pages] == ["first", "second", "still third"]
    assert len(pages) == 3


def test_docx_keeps_tables_in_order(tmp_path):
    def build(d):
        d.add_paragraph("Schedule 4.2")
        table = d.add_table(rows=2, cols=2)
        table.cell(0, 0).text, table.cell(0, 1).text = "Counterparty", "Consent"
        table.cell(1, 0).text, table.cell(1, 1).text = "Acme Corp", "Required"
        d.add_paragraph("End")

    (page,) = extract_pages(docx_file(tmp_path / "a.docx", build))
    assert page.split("\n") == [
        "Schedule 4.2",
        "Counterparty | Consent",
        "Acme Corp | Required",
        "End",
    ]


def test_xlsx_one_page_per_sheet(tmp_path):
    book = openpyxl.Workbook()
    book.active.title = "Revenue"
    book.active.append(["Customer", "ARR"])
    book.active.append(["Acme", 88200000.0])
    book.create_sheet("Empty")
    book.create_sheet("Notes").append(["renewal due"])
    book.save(tmp_path / "a.xlsx")
    pages = extract_pages(tmp_path / "a.xlsx")
    assert pages == ["# Revenue\nCustomer\tARR\nAcme\t88200000", "# Empty", "# Notes\nrenewal due"]


def test_csv_one_page_with_sniffed_delimiter(tmp_path):
    path = tmp_path / "a.csv"
    path.write_text("name;amount\nAcme;12\n", encoding="utf-8")
    assert extract_pages(path) == ["name\tamount\nAcme\t12"]


def test_pptx_one_page_per_slide_with_tables_and_notes(tmp_path):
    deck = Presentation()
    one = deck.slides.add_slide(deck.slide_layouts[5])
    one.shapes.title.text = "Deal overview"
    table = one.shapes.add_table(1, 2, Inches(1), Inches(2), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(0, 1).text = "EBITDA", "12.5"
    one.notes_slide.notes_text_frame.text = "Check the earn-out"
    two = deck.slides.add_slide(deck.slide_layouts[5])
    two.shapes.title.text = "Risks"
    deck.save(tmp_path / "a.pptx")
    pages = extract_pages(tmp_path / "a.pptx")
    assert pages == ["Deal overview\nEBITDA | 12.5\nNotes: Check the earn-out", "Risks"]


def test_eml_headers_body_and_attachment_names(tmp_path):
    msg = email.message.EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "cfo@target.com", "counsel@buyer.com", "Escrow"
    msg.set_content("The escrow is $4.5 million.")
    msg.add_attachment(b"%PDF", maintype="application", subtype="pdf", filename="escrow.pdf")
    (tmp_path / "a.eml").write_bytes(msg.as_bytes())
    (page,) = extract_pages(tmp_path / "a.eml")
    assert "Subject: Escrow" in page and "Attachments: escrow.pdf" in page
    assert "$4.5 million" in page


def test_html_respects_declared_charset_and_drops_scripts(tmp_path):
    path = tmp_path / "a.html"
    markup = '<html><head><meta charset="iso-8859-1"><script>x()</script></head>'
    path.write_bytes((markup + "<body><p>Société</p></body></html>").encode("latin-1"))
    assert extract_pages(path) == ["Société"]


# --- failures and their reasons --------------------------------------------------------------


def reason_of(path: Path) -> str:
    with pytest.raises(ExtractionError) as info:
        extract_document(path)
    assert isinstance(info.value, RoomError)
    assert info.value.reason in REASONS
    return info.value.reason


def test_corrupt_files(tmp_path):
    (tmp_path / "bad.pdf").write_bytes(b"%PDF-1.4\nthis is not a pdf at all")
    (tmp_path / "bad.docx").write_bytes(b"PK\x03\x04 truncated zip")
    (tmp_path / "bad.xlsx").write_text("plain text, not a workbook")
    with zipfile.ZipFile(tmp_path / "other.docx", "w") as package:
        package.writestr("readme.txt", "a zip, but not a Word document")
    assert reason_of(tmp_path / "other.docx") == "corrupt"
    assert reason_of(tmp_path / "bad.pdf") == "corrupt"
    assert reason_of(tmp_path / "bad.docx") == "corrupt"
    assert reason_of(tmp_path / "bad.xlsx") == "corrupt"


def test_encrypted_pdf_and_owner_only_pdf(tmp_path):
    assert reason_of(encrypted_pdf(tmp_path / "locked.pdf", user="secret")) == "encrypted"
    assert "Secret terms" in extract_pages(encrypted_pdf(tmp_path / "open.pdf", user=""))[0]


def test_encrypted_office_file(tmp_path):
    for name in ("locked.docx", "locked.xlsx", "locked.pptx"):
        assert reason_of(ole_with_encrypted_package(tmp_path / name)) == "encrypted"


def test_encrypted_office_file_written_by_msoffcrypto(tmp_path):
    ooxml = pytest.importorskip("msoffcrypto.format.ooxml")
    plain = docx_file(tmp_path / "plain.docx", lambda d: d.add_paragraph("hidden"))
    with open(plain, "rb") as src, open(tmp_path / "locked.docx", "wb") as dst:
        ooxml.OOXMLFile(src).encrypt("pw", dst)
    assert reason_of(tmp_path / "locked.docx") == "encrypted"


def test_empty_files(tmp_path):
    for name in ("a.txt", "a.pdf", "a.docx", "a.eml"):
        (tmp_path / name).write_bytes(b"")
        assert reason_of(tmp_path / name) == "empty"
    (tmp_path / "blank.md").write_text("  \n\n\f \n")
    assert reason_of(tmp_path / "blank.md") == "empty"
    openpyxl.Workbook().save(tmp_path / "blank.xlsx")
    assert reason_of(tmp_path / "blank.xlsx") == "empty"


def test_binary_text_files(tmp_path):
    (tmp_path / "nul.txt").write_bytes(b"header\x00\x01\x02\x00" * 50)
    (tmp_path / "ctl.csv").write_bytes(bytes(range(1, 9)) * 200)
    assert reason_of(tmp_path / "nul.txt") == "binary"
    assert reason_of(tmp_path / "ctl.csv") == "binary"


def test_undecodable_and_decodable_encodings(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"ok " + b"\x81\x8d\x90\xc3\x28" * 20)
    assert reason_of(tmp_path / "bad.txt") == "undecodable"
    assert decode_text("naïve €".encode("cp1252")) == "naïve €"
    assert decode_text("Vertrag §5".encode("utf-16")) == "Vertrag §5"
    assert decode_text("Vertrag §5".encode("utf-16-le")) == "Vertrag §5"
    assert decode_text("契約書".encode("utf-8-sig")) == "契約書"


def test_unsupported_format(tmp_path):
    (tmp_path / "photo.heic").write_bytes(b"\xff\xd8\xff\xe0 jpeg")
    assert reason_of(tmp_path / "photo.heic") == "unsupported_format"


def test_scanned_pdf_is_kept_with_a_warning(tmp_path):
    path = tmp_path / "scan.pdf"
    path.write_bytes(pdf_bytes([None, None]))
    result = extract_document(path)
    assert result.pages == ["", ""]
    (note,) = result.warnings
    assert note.reason == "scanned_no_text_layer" and note.pages == ()


def test_partly_scanned_pdf_names_the_image_pages(tmp_path):
    path = tmp_path / "mixed.pdf"
    path.write_bytes(pdf_bytes(["Signed agreement", None, "", "Exhibit A"]))
    result = extract_document(path)
    assert len(result.pages) == 4
    (note,) = result.warnings
    assert note.reason == "scanned_no_text_layer" and note.pages == (2,)  # page 3 is just blank


# --- pathological files ----------------------------------------------------------------------


def far_cell_workbook(path: Path, rows: int = 1) -> Path:
    """A workbook declaring A1:XFD1048576, with values at A1 and at the last cell(s)."""
    book = openpyxl.Workbook()
    book.active["A1"] = "near"
    for n in range(rows):
        book.active.cell(row=1_048_576 - n, column=16_384, value=f"far {n}")
    book.save(path)
    return path


def test_a_sheet_is_read_by_its_cells_not_its_declared_dimension(tmp_path):
    path = far_cell_workbook(tmp_path / "far.xlsx")
    assert path.stat().st_size < 6000
    with zipfile.ZipFile(path) as package:
        assert b'<dimension ref="A1:XFD1048576"/>' in package.read("xl/worksheets/sheet1.xml")
    (page,) = extract_pages(path)  # today: minutes (17 billion padded cells)
    assert page == "# Sheet\nnear\n" + "\t" * 64 + "far 0"


def test_many_far_cells_stay_small(tmp_path):
    (page,) = extract_pages(far_cell_workbook(tmp_path / "far.xlsx", rows=2000))
    assert len(page) < 2000 * 80 and page.count("far ") == 2000


def test_gaps_between_cells_keep_their_columns(tmp_path):
    book = openpyxl.Workbook()
    book.active["A1"], book.active["C1"], book.active["B2"] = "a", "c", 2.0
    book.save(tmp_path / "gaps.xlsx")
    assert extract_pages(tmp_path / "gaps.xlsx") == ["# Sheet\na\t\tc\n\t2"]


def test_a_zip_bomb_workbook_is_refused_before_parsing(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx_mod, "MAX_UNPACKED", 16 << 20)  # 1 GiB in use; 16 MiB here
    path = tmp_path / "bomb.xlsx"
    openpyxl.Workbook().save(path)
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as package:
        package.writestr("xl/media/zeros.bin", bytes(20 << 20))
    assert path.stat().st_size < 100_000
    with pytest.raises(ExtractionError, match="unpack to 0.0 GiB") as info:
        extract_document(path)
    assert info.value.reason == "corrupt"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (bytes(range(256)) * 20, "corrupt"),  # binary junk, no header
        (b"Hello world\nthis is a note, not an e-mail\n" * 100, "corrupt"),
        (b"From: a@b.example\nSubject: x\n\n" + bytes(range(1, 256)) * 16, "binary"),
    ],
    ids=["binary-junk", "text-without-headers", "binary-body"],
)
def test_junk_eml_is_reported_not_ingested(tmp_path, raw, reason):
    path = tmp_path / "junk.eml"
    path.write_bytes(raw)
    assert 4000 < len(raw) < 6000
    assert reason_of(path) == reason
