"""``deliverable_text``: a memo file as the judges read it, whatever its format."""

from __future__ import annotations

import docx
import pytest
from pdfs import unicode_pdf_bytes

from dealroom.errors import RoomError
from dealroom.room import ExtractionError, deliverable_text


def test_markdown_and_text_are_read_as_written_and_normalized(tmp_path):
    memo = tmp_path / "memo.md"
    memo.write_text("# Findings\n\n- Change\u00a0of control [D00001 p.2]\f\n", encoding="utf-8")
    assert deliverable_text(memo) == "# Findings\n\n- Change of control [D00001 p.2]\n\n"
    (tmp_path / "memo.txt").write_bytes("Caf\xe9 lease".encode("cp1252"))
    assert deliverable_text(tmp_path / "memo.txt") == "Caf\xe9 lease"
    (tmp_path / "empty.md").write_bytes(b"")
    assert deliverable_text(tmp_path / "empty.md") == ""


def test_docx_keeps_headings_items_and_blocks_and_pdf_goes_through_extraction(tmp_path):
    d = docx.Document()
    d.add_heading("Memo", level=0)
    d.add_heading("Antitrust risk", level=2)
    d.add_paragraph("HSR filing required [D00003 p.1]", style="List Bullet")
    d.add_paragraph("A second paragraph.")
    table = d.add_table(rows=2, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "Route", "Overlap"
    table.rows[1].cells[0].text, table.rows[1].cells[1].text = "EU", "a | b"
    d.save(tmp_path / "memo.docx")
    assert deliverable_text(tmp_path / "memo.docx") == (
        "# Memo\n\n## Antitrust risk\n\n- HSR filing required [D00003 p.1]\n\n"
        "A second paragraph.\n\n| Route | Overlap |\n|---|---|\n| EU | a \\| b |"
    )
    (tmp_path / "memo.pdf").write_bytes(unicode_pdf_bytes([["Page one"], ["Page two"]]))
    assert deliverable_text(tmp_path / "memo.pdf") == "Page one\n\nPage two"


def test_missing_or_unreadable_deliverables_raise(tmp_path):
    with pytest.raises(RoomError, match="does not exist"):
        deliverable_text(tmp_path / "memo.docx")
    (tmp_path / "memo.docx").write_bytes(b"not a zip")
    with pytest.raises(ExtractionError) as info:
        deliverable_text(tmp_path / "memo.docx")
    assert info.value.reason == "corrupt"
