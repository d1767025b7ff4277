"""Printed page numbers read from the text at ingest: a transcript's page headers and margin
line numbers (as text and as OCR reads a scan), a filed agreement's ``A-n`` footers after a
cover page, and stray numbers that label nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pdfs import pdf_bytes, unicode_pdf_bytes

from dealroom.room import IngestSettings, OcrLimits, Room, RoomKeyError, ingest
from dealroom.room import _ingest_ocr as ingest_ocr
from dealroom.room._ocr import OcrResult

SETTINGS = IngestSettings(workers=1)
FIRST = 452


def _write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _testimony(page: int, line: int) -> str:
    if (page, line) == (FIRST + 1, 7):
        return "A. The termination fee was never discussed with the board."
    return f"Q. Question {line} asked on page {page}, about the 2019 forecast of 25 units?"


def transcript_pages() -> list[list[str]]:
    """A caption page, then pages printed 452-455: a header ``Page N`` and 25 numbered lines."""
    caption = ["UNITED STATES DISTRICT COURT", "DEPOSITION OF JANE ROE", "Volume III"]
    pages = [caption]
    for page in range(FIRST, FIRST + 4):
        head = ["Jane Roe - March 3, 2020", f"Page {page}"]
        pages.append(head + [f"{n} {_testimony(page, n)}" for n in range(1, 26)])
    return pages


def agreement_pages() -> list[list[str]]:
    """A cover page, then six pages with ``A-1`` ... ``A-6`` footers (one left off, as a
    scan can lose it) and numbers in the body."""
    pages = [["AGREEMENT AND PLAN OF MERGER", "among", "Parent, Merger Sub and the Company",
              "Dated as of May 1, 2019"]]
    for n in range(1, 7):
        body = [f"Section {n}.1 Terms of article {n}.", "12", f"The amount is $4,{n}00,000.",
                "Company Termination Payment of $88 million" if n == 4 else "Other terms."]
        pages.append(body + ([] if n == 3 else [f"A-{n}"]))
    return pages


def _room(tmp_path: Path, name: str, pages: list[list[str]]) -> Path:
    _write(tmp_path / "src" / name, unicode_pdf_bytes(pages))
    ingest(tmp_path / "src", tmp_path / "room", SETTINGS)
    return tmp_path / "room"


def test_a_transcript_is_cited_by_printed_page_and_line(tmp_path: Path) -> None:
    with Room.open(_room(tmp_path, "roe.pdf", transcript_pages())) as room:
        doc = room.doc("roe.pdf")
        assert doc.labels == ["", "452", "453", "454", "455"] and doc.labels_from == "text"
        assert doc.line_numbers
        (hit,) = room.grep("never discussed")
        assert (hit.page, hit.label, hit.printed_line, hit.printed) == (3, "453", 7, "453:7")
        assert "(printed 453:7)" in repr(hit)
        top = room.search("termination fee never discussed")[0]
        assert (top.page, top.printed) == (3, "453:7")
        assert doc.locate("453:7") == (3, "453:7") and doc.page_of("Page 455") == 5
        assert doc.locate(3) == (3, "453")
        with pytest.raises(RoomKeyError, match="prints no page '999'"):
            doc.page_of("999")


def test_a_filed_agreement_prints_its_exhibit_pages_after_a_cover(tmp_path: Path) -> None:
    with Room.open(_room(tmp_path, "merger.pdf", agreement_pages())) as room:
        doc = room.doc("merger.pdf")
        assert doc.labels == ["", "A-1", "A-2", "A-3", "A-4", "A-5", "A-6"]
        (hit,) = room.grep("Termination Payment")
        assert (hit.page, hit.label, hit.printed_line) == (5, "A-4", 0)
        assert doc.page_of("A-3") == 4  # its footer was left off: the run gives it
        assert doc.locate("a-4") == (5, "A-4")
        with pytest.raises(ValueError, match="does not number its lines"):
            doc.locate("A-4:7")


STRAY = [  # edge numbers that do not count up with the pages, or too few that do
    ["2019", "Revenue by quarter", "Q1 12", "Q2 14", "7", "the total is carried to Page 12"],
    ["2019", "Section 4", "4", "The parties agree.", "3", "and is restated on Page 13"],
    ["Annual report", "Table 2", "15", "16", "17", "The end of the table.", "88"],
    ["Notes", "1", "A note in the body of the page with 12 units.", "21", "Signed."],
    ["Appendix", "page 9 of the source says so", "Closing remarks.", "page 40"],
]


def test_stray_numbers_label_no_page(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    _write(tmp_path / "src" / "notes.txt", "\f".join("\n".join(p) for p in STRAY))
    _write(tmp_path / "src" / "report.pdf", unicode_pdf_bytes(STRAY))
    _write(tmp_path / "src" / "plain.pdf", pdf_bytes(["1", "2", "3"]))  # numbers = index
    ingest(tmp_path / "src", tmp_path / "room", SETTINGS)
    with Room.open(tmp_path / "room") as room:
        for doc in room.docs:
            assert (doc.labels, doc.labels_from, doc.line_numbers) == ([], "", False), doc.path
        assert all(h.label == "" for h in room.grep(r"\d+"))


OCR_TEXT = {  # what Tesseract gives a scanned transcript: blocks, misread digits
    0: "IN THE MATTER OF ARBITRATION\n\nTRANSCRIPT OF PROCEEDINGS",
    1: "Page 12\n\n" + "\n".join(f"{n} Q. Line {n} of the first page." for n in range(1, 26)),
    2: "Page l3\n\n" + "\n".join(
        ("l0 A. The cap on indemnity was fifteen percent." if n == 10 else
         f"{n} A. Line {n} of the second page.") for n in range(1, 26)),
    3: "\n".join("Z" if n == 7 else str(n) for n in range(1, 26)) + "\n\nPage 14\n\n" + "\n".join(
        "A. The board approved the escrow." if n == 7 else f"Q. Line {n} of the third page."
        for n in range(1, 26)),  # the margin read as a column of its own, as Tesseract does
    4: "Page 15\n\n" + "\n".join(f"{n} Q. Line {n} of the last page." for n in range(1, 26)),
}


def test_a_scanned_transcript_is_labelled_from_its_ocr_text(tmp_path: Path,
                                                            monkeypatch) -> None:
    _write(tmp_path / "src" / "hearing.pdf", pdf_bytes([None] * 5))  # image-only pages
    monkeypatch.setattr(ingest_ocr, "ocr_status", lambda: (True, "tesseract (test)"))
    monkeypatch.setattr(ingest_ocr, "ocr_pages", lambda tasks, *a, **k: [
        OcrResult(OCR_TEXT[t.index], 88.0) for t in tasks])
    settings = IngestSettings(workers=1, ocr="always", ocr_limits=OcrLimits(give_up_after=5))
    ingest(tmp_path / "src", tmp_path / "room", settings)
    with Room.open(tmp_path / "room") as room:
        doc = room.doc("hearing.pdf")
        assert sorted(doc.ocr) == [1, 2, 3, 4, 5]
        assert doc.labels == ["", "12", "13", "14", "15"] and doc.line_numbers
        (hit,) = room.grep("cap on indemnity")
        assert (hit.page, hit.printed) == (3, "13:10")  # "l3" and "l0" misread, still found
        (hit,) = room.grep("approved the escrow")
        assert (hit.page, hit.printed) == (4, "14:7")
    docs = json.loads((tmp_path / "room" / ".index" / "docs.json").read_text())
    assert docs[0]["labels_from"] == "text" and docs[0]["line_numbers"] is True


RO_OPEN = """
import sys
from dealroom.room import Room
from dealroom.errors import RoomError
try:
    room = Room.open(sys.argv[1])
except RoomError as exc:
    print("ROOMERROR", exc)
else:
    print(room.doc("merger.pdf").labels, room.grep("Termination Payment")[0].page)
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root")
def test_an_index_of_the_previous_format_opens_read_only_and_is_rebuilt_where_writable(
        tmp_path: Path) -> None:
    room = _room(tmp_path, "merger.pdf", agreement_pages())
    meta, docs = room / ".index" / "meta.json", room / ".index" / "docs.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "version": 4}))
    docs.write_text(json.dumps([{k: v for k, v in d.items() if k != "labels"}
                                for d in json.loads(docs.read_text())]))
    cmd = (f"mount --bind '{room}' '{room}' && mount -o remount,bind,ro '{room}' && "
           f"{sys.executable} -c '{RO_OPEN}' '{room}'")
    out = subprocess.run(["unshare", "--mount", "sh", "-c", cmd], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]", "5"]  # as it was built: no labels read from the text
    with Room.open(room) as opened:  # writable: rebuilt in the current format
        assert opened.doc("merger.pdf").labels[1:3] == ["A-1", "A-2"]


def test_front_matter_body_and_exhibit_runs_label_their_own_pages() -> None:
    from dealroom.room._printed import read_printed

    pages = (["COVER PAGE\nAgreement"] + [f"Contents\nline\n{r}" for r in ("i", "ii", "iii")]
             + [f"Body {n}\ntext about 5 things\n{n}" for n in range(1, 11)]
             + [f"Exhibit text\nA-{n}" for n in range(1, 4)])
    pages[6] = pages[6].replace("\n3", "\n8")  # a misread footer
    pages[9] = pages[9].removesuffix("\n6")  # a page whose number was lost
    assert read_printed(pages).labels == [
        "", "i", "ii", "iii", *map(str, range(1, 11)), "A-1", "A-2", "A-3"]
