"""OCR during ingest: scanned PDFs, image files and mixed PDFs come out greppable by page."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from scans import image_file, mixed_pdf, scanned_pdf

from dealroom.errors import ConfigError
from dealroom.room import IngestSettings, Room, ingest, ocr_status, validate_room
from dealroom.room import _ingest_ocr as ingest_ocr

OCR, ENGINE = ocr_status()
needs_ocr = pytest.mark.skipif(not OCR, reason=f"no OCR engine here: {ENGINE}")
PAGES = ["CERTIFICATE OF MERGER\nfiled with the Secretary of State",
         "Section 7.2 Change of Control.\nThe Termination Fee is $4,250,000.",
         "IN WITNESS WHEREOF the parties\nhave signed this Agreement."]


def _settings(**kw) -> IngestSettings:
    return IngestSettings(**{"workers": 2, **kw})


@needs_ocr
def test_a_scanned_pdf_is_greppable_on_the_right_pages(tmp_path: Path) -> None:
    scanned_pdf(tmp_path / "src" / "scan.pdf", PAGES)
    seen = []
    report = ingest(tmp_path / "src", tmp_path / "room", _settings(), progress=seen.append)
    assert [p.done for p in seen if p.stage == "ocr"] == [1, 2, 3]
    (entry,) = [e for e in report.entries if e.reason == "ocr"]
    assert entry.pages == (1, 2, 3) and "tesseract" in entry.detail
    with Room.open(tmp_path / "room") as room:
        doc = room.doc("scan.pdf")
        assert doc.pages == 3 and doc.tokens > 0 and doc.title == "CERTIFICATE OF MERGER"
        assert sorted(doc.ocr) == [1, 2, 3] and all(c > 50 for c in doc.ocr.values())
        (hit,) = room.grep("Termination Fee")
        assert (hit.doc, hit.page) == (doc.id, 2)
        assert room.grep("IN WITNESS WHEREOF")[0].page == 3
        assert room.search("change of control")[0].page == 2
    deep = validate_room(tmp_path / "room", deep=True)  # re-extracts, OCR text included
    assert [p for p in deep if p.level == "error" or "tokens" in p.message] == []
    shutil.rmtree(tmp_path / "room" / ".index")  # a rebuild keeps the OCR text (ROOM/ocr/)
    with Room.open(tmp_path / "room") as room:
        assert room.grep("Termination Fee")[0].page == 2 and sorted(room.docs[0].ocr) == [1, 2, 3]


@needs_ocr
def test_image_files_are_documents(tmp_path: Path) -> None:
    image_file(tmp_path / "src" / "consent.png", ["WRITTEN CONSENT\nof the sole director"])
    image_file(tmp_path / "src" / "fax.tiff", ["Fax cover sheet\nto the Buyer",
                                              "Landlord consent to assignment"])
    report = ingest(tmp_path / "src", tmp_path / "room", _settings(workers=1))
    assert {d.format for d in report.manifest.documents} == {"png", "tiff"}
    with Room.open(tmp_path / "room") as room:
        assert room.grep("sole director")[0].doc == room.doc("consent.png").id
        (hit,) = room.grep("Landlord consent")
        assert (hit.doc, hit.page) == (room.doc("fax.tiff").id, 2)


@needs_ocr
def test_a_mixed_pdf_is_ocrd_only_where_it_has_no_text(tmp_path: Path) -> None:
    mixed_pdf(tmp_path / "src" / "mixed.pdf", [("Page one has a text layer", False),
                                               (PAGES[1], True), ("Page three as text", False)])
    ingest(tmp_path / "src", tmp_path / "auto", _settings())
    with Room.open(tmp_path / "auto") as room:
        doc = room.doc("mixed.pdf")
        assert sorted(doc.ocr) == [2]
        assert room.grep("Termination Fee")[0].page == 2
        assert room.grep("text layer")[0].page == 1
    report = ingest(tmp_path / "src", tmp_path / "never", _settings(ocr="never"))
    assert [(e.reason, e.pages) for e in report.entries] == [("scanned_no_text_layer", (2,))]
    with Room.open(tmp_path / "never") as room:
        assert room.doc("mixed.pdf").ocr == {} and not room.grep("Termination Fee")
    ingest(tmp_path / "src", tmp_path / "always", _settings(ocr="always"))
    with Room.open(tmp_path / "always") as room:
        assert sorted(room.doc("mixed.pdf").ocr) == [1, 2, 3]
        assert room.grep("Page three")[0].page == 3


@needs_ocr
def test_a_blank_page_is_reported(tmp_path: Path) -> None:
    from hostile_scans import many_pages_pdf

    scanned_pdf(tmp_path / "src" / "blank.pdf", [PAGES[0], ""])
    many_pages_pdf(tmp_path / "src" / "noise.pdf", pages=1)  # ink, but no word
    report = ingest(tmp_path / "src", tmp_path / "room", _settings())
    reasons = {(e.path, e.reason): e.pages for e in report.entries}
    assert reasons == {("blank.pdf", "ocr"): (1,), ("blank.pdf", "ocr_blank"): (2,),
                       ("noise.pdf", "ocr_empty"): (1,)}
    kept = json.loads((tmp_path / "room" / "ocr" / "blank.pdf.json").read_text())
    assert list(kept["pages"]) == ["1"] and kept["engine"] == ENGINE


def test_without_an_engine_auto_says_so_and_always_refuses(tmp_path: Path, monkeypatch) -> None:
    from pdfs import pdf_bytes

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "scan.pdf").write_bytes(pdf_bytes([None]))
    monkeypatch.setattr(ingest_ocr, "ocr_status",
                        lambda: (False, "the tesseract program is not installed: apt-get ..."))
    report = ingest(tmp_path / "src", tmp_path / "room", _settings())
    (entry,) = report.entries
    assert entry.reason == "scanned_no_text_layer" and "not OCR'd: the tesseract" in entry.detail
    with pytest.raises(ConfigError, match="--ocr always"):
        ingest(tmp_path / "src", tmp_path / "room2", _settings(ocr="always"))
    with pytest.raises(ConfigError, match="ocr must be one of"):
        IngestSettings(ocr="sometimes")


def test_cli_ingest_takes_the_ocr_mode(tmp_path: Path) -> None:
    from pdfs import pdf_bytes
    from typer.testing import CliRunner

    from dealroom.cli import app

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "scan.pdf").write_bytes(pdf_bytes([None]))
    args = ["ingest", str(tmp_path / "src"), str(tmp_path / "room"), "--workers", "1"]
    result = CliRunner().invoke(app, [*args, "--ocr", "never"])
    assert result.exit_code == 0, result.output
    assert "scanned_no_text_layer" in result.output
    result = CliRunner().invoke(app, [*args, "--ocr", "sometimes", "--force"])
    assert result.exit_code == 2 and "'sometimes' is not one of" in result.output
