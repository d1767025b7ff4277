"""What real documents need from the text layer: curly quotes, paginated plain text, titles
taken from the documents, printed PDF page labels."""

from __future__ import annotations

import io
from pathlib import Path

from pdfs import pdf_bytes
from pypdf import PdfReader, PdfWriter

from dealroom.room import IngestSettings, Room, extract_document, ingest, load_manifest

SETTINGS = IngestSettings(workers=1)


def _write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _labelled_pdf(path: Path) -> Path:
    """Five text pages printed as i, ii, A-1, A-2, A-3, titled in the metadata."""
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(
        ["Cover page", "Contents", "Annex A first page", "Termination Fee of $4.2m",
         "Annex A last page"]))))
    writer.set_page_label(0, 1, "/r")
    writer.set_page_label(2, 4, "/D", prefix="A-")
    writer.add_metadata({"/Title": "Agreement and Plan of Merger"})
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        writer.write(fh)
    return path


def test_straight_quotes_find_curly_ones(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _write(src / "merger.txt", "the \u201cCompany Termination Fee\u201d is due; Buyer\u2019s "
           "right\n")
    ingest(src, tmp_path / "room", SETTINGS)
    with Room.open(tmp_path / "room") as room:
        assert len(room.grep('"Company Termination Fee"')) == 1
        assert len(room.grep("Buyer's right")) == 1
        assert len(room.grep("\u201cCompany Termination Fee\u201d")) == 1  # curly pattern too
        assert room.search('\u201cCompany Termination Fee\u201d')[0].doc == "D00001"


def test_long_plain_text_is_paginated(tmp_path: Path) -> None:
    src = tmp_path / "src"
    lines = [f"{n}. Clause {n} of the supply agreement." for n in range(1, 151)]
    lines[99] = "100. The Supplier may not assign this Agreement without consent."
    _write(src / "supply.txt", "\n".join(lines) + "\n")
    _write(src / "paged.txt", "first page\fsecond page\n")
    ingest(src, tmp_path / "room", SETTINGS)
    with Room.open(tmp_path / "room") as room:
        supply = room.doc("supply.txt")
        assert supply.pages == 3
        (hit,) = room.grep("may not assign")
        assert (hit.doc, hit.page) == (supply.id, 2)
        assert room.doc("paged.txt").pages == 2  # form feeds still decide where they exist


def test_titles_come_from_the_documents(tmp_path: Path) -> None:
    src = tmp_path / "src"
    _write(src / "EX-10.2 3b8f.txt", "EXHIBIT 10.2\n\nMASTER SUPPLY AGREEMENT\n\nThis Master "
           "Supply Agreement is made on 1 May 2019.\n")
    _write(src / "spa.md", "Draft\n\n# Share Purchase Agreement\n\nBody text.\n")
    _write(src / "notes.txt", "just a sentence of notes, nothing more.\n")
    _labelled_pdf(src / "merger.pdf")
    ingest(src, tmp_path / "room", SETTINGS)
    titles = {d.path.split("/")[-1]: d.title for d in load_manifest(tmp_path / "room").documents}
    assert titles == {"EX-10.2 3b8f.txt": "MASTER SUPPLY AGREEMENT",
                      "spa.md": "Share Purchase Agreement", "notes.txt": "notes",
                      "merger.pdf": "Agreement and Plan of Merger"}


def test_printed_page_labels_are_kept_and_shown_with_hits(tmp_path: Path) -> None:
    pdf = _labelled_pdf(tmp_path / "src" / "merger.pdf")
    assert extract_document(pdf).labels == ["i", "ii", "A-1", "A-2", "A-3"]
    ingest(tmp_path / "src", tmp_path / "room", SETTINGS)
    with Room.open(tmp_path / "room") as room:
        doc = room.doc("merger.pdf")
        assert doc.labels == ["i", "ii", "A-1", "A-2", "A-3"] and doc.label(4) == "A-2"
        (hit,) = room.grep("Termination Fee")
        assert (hit.page, hit.label) == (4, "A-2")
        assert repr(hit).startswith(f"[{doc.id} p.4] (printed A-2)")
        assert room.search("termination fee")[0].label == "A-2"


def test_plain_page_numbers_keep_no_labels(tmp_path: Path) -> None:
    pdf = _write(tmp_path / "plain.pdf", pdf_bytes(["one", "two"]))
    assert extract_document(pdf).labels == []
