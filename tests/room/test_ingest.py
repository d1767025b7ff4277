"""Ingestion of a real-looking folder tree built here with the real format libraries."""

from __future__ import annotations

import email.message
import hashlib
import json
import os
import sys
import types
from pathlib import Path

import docx
import openpyxl
import pytest
from docx.enum.text import WD_BREAK
from pdfs import pdf_bytes
from pptx import Presentation
from pypdf import PdfReader, PdfWriter
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.errors import ConfigError, RoomError
from dealroom.room import (
    INGEST_REASONS,
    REASONS,
    IngestSettings,
    Room,
    index_status,
    ingest,
    load_manifest,
    load_task,
    ocr_status,
)
from dealroom.room._extract import EXTRACTORS
from dealroom.room._ingest import POOL_MIN_FILES, REPORT, _Job, _Outcome, extract_job, run_jobs


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def good_files(src: Path) -> None:
    """One readable file of every format, in numbered category folders."""
    d = docx.Document()
    d.add_paragraph("Certificate of incorporation").add_run().add_break(WD_BREAK.PAGE)
    d.add_paragraph("Bylaws")
    (src / "01 Corporate" / "1.1 Charter").mkdir(parents=True)
    d.save(src / "01 Corporate" / "1.1 Charter" / "charter.docx")
    write(src / "01 Corporate" / "1.2 Minutes" / "minutes 2023.md", "# Board\fApproved the deal")
    book = openpyxl.Workbook()
    book.active.append(["Customer", "ARR"])
    book.create_sheet("Q2").append(["Acme", 12])
    (src / "02 Finance").mkdir()
    book.save(src / "02 Finance" / "revenue.xlsx")
    write(src / "02 Finance" / "ledger.csv", "account,amount\ncash,10\n")
    write(src / "03 Contracts" / "3.10 Other" / "msa.pdf", pdf_bytes(["Master services"]))
    write(src / "03 Contracts" / "3.2 Customer" / "acme.pdf", pdf_bytes(["Acme", "Consent"]))
    msg = email.message.EmailMessage()
    msg["Subject"], msg["From"] = "Escrow", "cfo@target.example"
    msg.set_content("Escrow of $4.5 million")
    write(src / "04 Correspondence" / "escrow.eml", msg.as_bytes())
    deck = Presentation()
    deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "Overview"
    deck.save(src / "04 Correspondence" / "deck.pptx")
    write(src / "05 Web" / "page.html", "<html><body><p>Privacy policy</p></body></html>")


def bad_files(src: Path) -> None:
    """One file for each reason the report knows."""
    bad = src / "06 Problems"
    write(bad / "corrupt.pdf", b"%PDF-1.4\nnot really a pdf")
    writer = PdfWriter(clone_from=PdfReader(write(bad / "tmp.pdf", pdf_bytes(["x"]))))
    writer.encrypt(user_password="secret", owner_password="owner")
    with open(bad / "locked.pdf", "wb") as fh:
        writer.write(fh)
    (bad / "tmp.pdf").unlink()
    write(bad / "zero.txt", b"")
    write(bad / "binary.txt", b"MZ\x00\x00\x90\x00" * 100)
    write(bad / "latin.txt", b"\x81\x8d\x90 not text" * 10)
    write(bad / "scan.pdf", pdf_bytes([None, None]))
    write(bad / "huge.txt", "big " * 30_000)
    write(bad / "photo.heic", b"\xff\xd8\xff\xe0")
    write(bad / ".DS_Store", b"\x00\x00\x00\x01Bud1")
    os.symlink("..", bad / "loop")
    os.symlink("self", bad / "self")


def odd_names(src: Path) -> None:
    odd = src / "07 Odd names"
    write(odd / "Side Letter (final) – é.md", "side letter")
    write(odd / "契約書.txt", "contract")
    write(odd / "line\nbreak.txt", "newline in the name")
    with open(os.path.join(os.fsencode(odd), b"caf\xe9.txt"), "wb") as fh:
        fh.write(b"latin-1 name")


OCR = ocr_status()[0]
"""Tesseract is installed: the blank scan is OCR'd (and reads nothing)."""


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "Project Falcon"
    src.mkdir()
    good_files(src)
    bad_files(src)
    odd_names(src)
    return src


SETTINGS = IngestSettings(max_bytes=100_000, workers=1)


def test_ingest_builds_a_room_with_ids_in_natural_path_order(source, tmp_path):
    report = ingest(source, tmp_path / "room", SETTINGS)
    manifest = load_manifest(tmp_path / "room")
    assert manifest.name == "Project Falcon"
    assert manifest.meta["source"] == str(source.resolve())
    paths = [d.path.removeprefix("documents/") for d in manifest.documents]
    assert paths[:8] == [
        "01 Corporate/1.1 Charter/charter.docx",
        "01 Corporate/1.2 Minutes/minutes 2023.md",
        "02 Finance/ledger.csv",
        "02 Finance/revenue.xlsx",
        "03 Contracts/3.2 Customer/acme.pdf",
        "03 Contracts/3.10 Other/msa.pdf",
        "04 Correspondence/deck.pptx",
        "04 Correspondence/escrow.eml",
    ]
    assert [d.id for d in manifest.documents] == [f"D{n:05d}" for n in range(1, len(paths) + 1)]
    by_path = {d.path: d for d in manifest.documents}
    charter = by_path["documents/01 Corporate/1.1 Charter/charter.docx"]
    assert (charter.category, charter.folder, charter.format, charter.pages) == (
        "01 Corporate",
        "01 Corporate/1.1 Charter",
        "docx",
        2,
    )
    assert by_path["documents/02 Finance/revenue.xlsx"].pages == 2
    assert by_path["documents/01 Corporate/1.2 Minutes/minutes 2023.md"].pages == 2
    for doc in manifest.documents:
        data = (tmp_path / "room" / doc.path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == doc.sha256 and len(data) == doc.bytes
    assert report.counts()["ingested"] == len(manifest.documents)
    assert manifest.totals()["tokens"] == sum(d.tokens for d in manifest.documents) > 0


def test_report_lists_every_problem_with_its_reason(source, tmp_path):
    report = ingest(source, tmp_path / "room", SETTINGS)
    on_disk = json.loads((tmp_path / "room" / REPORT).read_text(encoding="utf-8"))
    reasons = {(e["path"], e["reason"], e["action"]) for e in on_disk["entries"]}
    bad = "06 Problems"
    assert reasons == {
        (f"{bad}/corrupt.pdf", "corrupt", "skipped"),
        (f"{bad}/locked.pdf", "encrypted", "skipped"),
        (f"{bad}/zero.txt", "empty", "skipped"),
        (f"{bad}/binary.txt", "binary", "skipped"),
        (f"{bad}/latin.txt", "undecodable", "skipped"),
        (f"{bad}/scan.pdf", "ocr_blank" if OCR else "scanned_no_text_layer", "ingested"),
        (f"{bad}/huge.txt", "too_large", "skipped"),
        (f"{bad}/photo.heic", "unsupported_format", "skipped"),
        (f"{bad}/.DS_Store", "hidden", "skipped"),
        (f"{bad}/loop", "symlink_loop", "skipped"),
        (f"{bad}/self", "symlink_loop", "skipped"),
        ("07 Odd names/line\nbreak.txt", "renamed", "renamed"),
        ("07 Odd names/caf\\xe9.txt", "renamed", "renamed"),
    }
    assert {reason for _, reason, _ in reasons} <= set(REASONS) | set(INGEST_REASONS)
    counts = on_disk["counts"]
    assert counts["skipped"] == 10 and counts["warnings"] == 1
    assert counts["by_reason"]["symlink_loop"] == 2
    assert on_disk["totals"] == report.manifest.totals()


def test_scanned_pdf_is_in_the_room_without_text(source, tmp_path):
    ingest(source, tmp_path / "room", SETTINGS)
    (scan,) = [d for d in load_manifest(tmp_path / "room").documents if d.title == "scan"]
    assert (scan.pages, scan.tokens) == (2, 0)


def test_odd_names_are_kept_or_made_safe_and_recorded(source, tmp_path):
    report = ingest(source, tmp_path / "room", SETTINGS)
    docs = tmp_path / "room" / "documents" / "07 Odd names"
    assert sorted(p.name for p in docs.iterdir()) == sorted(
        ["Side Letter (final) – é.md", "契約書.txt", "line_break.txt", "caf\ufffd.txt"]
    )
    renamed = {e.original: e.detail for e in report.entries if e.reason == "renamed"}
    assert set(renamed) == {"line\nbreak.txt", "caf\\xe9.txt"}
    assert "line_break.txt" in renamed["line\nbreak.txt"]


def test_ingest_is_deterministic(source, tmp_path):
    ingest(source, tmp_path / "a", SETTINGS)
    ingest(source, tmp_path / "b", SETTINGS)
    room_a = json.loads((tmp_path / "a" / "room.json").read_text(encoding="utf-8"))
    room_b = json.loads((tmp_path / "b" / "room.json").read_text(encoding="utf-8"))
    assert room_a == room_b


def test_process_pool_gives_the_same_room_and_reports_progress(source, tmp_path):
    seen = []
    ingest(source, tmp_path / "serial", SETTINGS)
    pooled = IngestSettings(max_bytes=100_000, workers=2)
    report = ingest(source, tmp_path / "pooled", pooled, progress=seen.append)
    assert report.files >= POOL_MIN_FILES
    serial = load_manifest(tmp_path / "serial").documents
    assert load_manifest(tmp_path / "pooled").documents == serial
    extracted = [p for p in seen if p.stage == "extract"]
    assert [p.done for p in extracted] == list(range(1, extracted[-1].total + 1))
    assert {p.path for p in seen} >= {"02 Finance/revenue.xlsx", "06 Problems/corrupt.pdf"}


def crash_on_marker(job: _Job) -> _Outcome:
    """A job function that kills its worker process for files named ``crash*``."""
    if Path(job.source).name.startswith("crash"):
        os._exit(3)
    return extract_job(job)


def test_a_crashing_worker_costs_only_its_own_file(tmp_path):
    jobs = []
    for n in range(10):
        name = "crash.txt" if n == 4 else f"doc{n}.txt"
        path = write(tmp_path / "src" / name, f"document {n}")
        jobs.append(_Job(str(path), str(tmp_path / "out" / name), name, "txt"))
    outcomes = run_jobs(jobs, 2, fn=crash_on_marker)
    assert [o.reason for o in outcomes] == [""] * 4 + ["corrupt"] + [""] * 5
    assert "crashed" in outcomes[4].detail
    assert outcomes[9].pages == ["document 9"]


def test_a_file_that_takes_too_long_is_reported_as_timeout(tmp_path, monkeypatch):
    def slow(path):
        while True:
            pass

    monkeypatch.setitem(EXTRACTORS, "md", slow)
    write(tmp_path / "src" / "slow.md", "never read")
    write(tmp_path / "src" / "fine.txt", "read")
    settings = IngestSettings(workers=1, file_timeout=0.2)
    report = ingest(tmp_path / "src", tmp_path / "room", settings)
    assert [(e.path, e.reason) for e in report.entries] == [("slow.md", "timeout")]
    assert [d.title for d in report.manifest.documents] == ["fine"]


def always_crash(job: _Job) -> _Outcome:
    os._exit(3)


def test_workers_that_cannot_run_at_all_raise_a_clear_error(tmp_path):
    jobs = [_Job(str(tmp_path / f"{n}.txt"), "", f"{n}.txt", "txt") for n in range(POOL_MIN_FILES)]
    with pytest.raises(RoomError, match="__main__"):
        run_jobs(jobs, 2, fn=always_crash)


def test_index_is_built_from_the_pages_already_extracted(source, tmp_path, monkeypatch):
    calls = []
    fake = types.ModuleType("dealroom.room._index")

    def build_index(room, pages_by_doc=None, progress=None, *, workers=None, dense=None):
        assert dense is False  # IngestSettings' default: no passage embeddings
        calls.append((room, pages_by_doc))
        progress("index", 1, 1)

    fake.build_index = build_index
    monkeypatch.setitem(sys.modules, "dealroom.room._index", fake)
    seen = []
    report = ingest(source, tmp_path / "room", SETTINGS, progress=seen.append)
    assert report.index == "built"
    assert seen[-1].stage == "index" and seen[0].stage == "extract"
    ((room, pages),) = calls
    manifest = load_manifest(room)
    assert sorted(pages) == [d.id for d in manifest.documents]
    charter = next(d for d in manifest.documents if d.path.endswith("charter.docx"))
    assert pages[charter.id].pages == ["Certificate of incorporation", "Bylaws"]
    assert charter.title == "Certificate of incorporation"  # the document's own heading


def test_ingested_room_opens_and_cites_by_page(source, tmp_path):
    report = ingest(source, tmp_path / "room", SETTINGS)
    assert report.index == "built" and index_status(tmp_path / "room") is None
    with Room.open(tmp_path / "room") as room:
        charter = next(d for d in report.manifest.documents if d.path.endswith("charter.docx"))
        (hit,) = room.grep("Bylaws")
        assert (hit.doc, hit.page) == (charter.id, 2)
        (sheet,) = room.grep("Acme", folder="02 Finance")
        assert sheet.page == 2  # the second sheet of revenue.xlsx
        assert room.doc(charter.id).page(1) == "Certificate of incorporation"


def test_without_a_rubric_the_task_is_a_minimal_lab_task(source, tmp_path):
    ingest(source, tmp_path / "room", SETTINGS)
    task = load_task(tmp_path / "room")
    assert task["criteria"] == [] and task["deliverables"] == {"memo": "memo.md"}
    assert len(task["instructions"].split()) >= 40


def test_copy_skipped_keeps_the_whole_tree(source, tmp_path):
    settings = IngestSettings(max_bytes=100_000, workers=1, copy_skipped=True)
    report = ingest(source, tmp_path / "room", settings)
    assert (tmp_path / "room" / "documents" / "06 Problems" / "corrupt.pdf").is_file()
    copied = {e.path for e in report.entries if e.action == "copied"}
    assert "06 Problems/huge.txt" in copied and "06 Problems/loop" not in copied


def test_symlinked_folders_inside_the_source_are_followed_once(tmp_path):
    src = tmp_path / "src"
    shared = write(src / "zz shared" / "note.md", "shared note").parent
    os.symlink(shared, src / "a link")
    os.symlink("zz shared", src / "b link")
    report = ingest(src, tmp_path / "room", SETTINGS)
    assert [d.path for d in report.manifest.documents] == ["documents/a link/note.md"]
    assert [(e.path, e.reason) for e in report.entries] == [
        ("b link", "duplicate"), ("zz shared", "duplicate")]
    unfollowed = ingest(src, tmp_path / "room2", IngestSettings(follow_symlinks=False))
    assert {e.reason for e in unfollowed.entries} == {"symlink"}


def test_links_out_of_the_source_are_never_followed_and_each_is_reported(tmp_path):
    from dealroom.room import validate_room

    canary = write(tmp_path / "private" / "salary.md", "CANARY-7f3a private text")
    src = tmp_path / "src"
    write(src / "01 Corporate" / "charter.md", "Charter")
    os.symlink("/etc/passwd", src / "passwd.txt")
    os.symlink(canary, src / "01 Corporate" / "outside.md")
    os.symlink(canary.parent, src / "private folder")
    os.symlink("/etc", src / "etc")
    os.symlink("../../private/salary.md", src / "01 Corporate" / "relative.md")
    for copy_skipped in (False, True):
        out = tmp_path / f"room-{copy_skipped}"
        report = ingest(src, out, IngestSettings(workers=1, copy_skipped=copy_skipped))
        assert [d.path for d in report.manifest.documents] == [
            "documents/01 Corporate/charter.md"]
        outside = {e.path: e for e in report.entries}
        assert sorted(outside) == ["01 Corporate/outside.md", "01 Corporate/relative.md", "etc",
                                   "passwd.txt", "private folder"]
        assert {e.reason for e in outside.values()} == {"symlink_outside"}
        assert {e.action for e in outside.values()} == {"skipped"}
        assert "'/etc/passwd'" in outside["passwd.txt"].detail
        assert report.files == 1  # the walk never read /etc
        stored = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
        assert b"CANARY-7f3a" not in stored and b"root:x:0:0" not in stored
        assert not [p for p in validate_room(out) if p.level == "error"]


def test_a_file_swapped_for_an_outside_link_after_the_walk_is_refused(tmp_path):
    canary = write(tmp_path / "private.md", "CANARY-91c2")
    src = tmp_path / "src"
    doc = write(src / "notes.md", "notes")
    job = _Job(str(doc), str(tmp_path / "out" / "notes.md"), "notes.md", "md", 0, str(src))
    doc.unlink()
    os.symlink(canary, doc)
    outcome = extract_job(job)
    assert (outcome.reason, outcome.pages) == ("symlink_outside", [])
    assert not (tmp_path / "out").exists()


def test_output_folder_guards(source, tmp_path):
    ingest(source, tmp_path / "room", SETTINGS)
    with pytest.raises(ConfigError, match="already exists"):
        ingest(source, tmp_path / "room", SETTINGS)
    again = IngestSettings(max_bytes=100_000, workers=1, overwrite=True)
    assert ingest(source, tmp_path / "room", again).manifest.documents
    write(tmp_path / "precious" / "thesis.md", "do not delete")
    with pytest.raises(ConfigError, match="not a dealroom room"):
        ingest(source, tmp_path / "precious", again)
    with pytest.raises(ConfigError, match="contain each other"):
        ingest(source, source / "inside", SETTINGS)
    with pytest.raises(ConfigError, match="not a folder"):
        ingest(tmp_path / "missing", tmp_path / "x", SETTINGS)
    with pytest.raises(ConfigError):
        IngestSettings(max_bytes=0)


def test_cli_ingest_renders_a_summary(source, tmp_path):
    result = CliRunner().invoke(
        app, ["ingest", str(source), str(tmp_path / "room"), "--max-mb", "0.1", "--workers", "1"]
    )
    assert result.exit_code == 0, result.output
    assert "encrypted" in result.output and "too_large" in result.output
    assert (tmp_path / "room" / "room.json").is_file()


def test_an_ingested_room_without_a_rubric_is_valid_with_a_warning(tmp_path):
    from dealroom.room import validate_room

    src = tmp_path / "src" / "01 Corporate"
    src.mkdir(parents=True)
    (src / "minutes.md").write_text("Board minutes approving the budget.")
    ingest(src.parent, tmp_path / "room")
    problems = validate_room(tmp_path / "room")
    assert [p.level for p in problems] == ["warning"]
    assert "no criteria" in problems[0].message


def top_level_files(src: Path) -> None:
    """Files straight in the source folder, as a common export has them."""
    msg = email.message.EmailMessage()
    msg["Subject"], msg["From"] = "Data room index", "banker@advisor.example"
    msg.set_content("The index of the data room is attached.")
    write(src / "mail.eml", msg.as_bytes())
    write(src / "README.txt", "Read me first")
    write(src / "logo.psd", b"\x89PNG\r\n\x1a\n")


@pytest.mark.parametrize("copy_skipped", [False, True])
def test_a_room_fresh_from_ingest_validates_with_top_level_files(source, tmp_path, copy_skipped):
    from dealroom.room import validate_room

    top_level_files(source)
    settings = IngestSettings(max_bytes=100_000, workers=1, copy_skipped=copy_skipped)
    report = ingest(source, tmp_path / "room", settings)
    by_path = {d.path: d for d in report.manifest.documents}
    mail = by_path["documents/mail.eml"]
    assert (mail.category, mail.folder) == ("", "")
    problems = validate_room(tmp_path / "room", deep=True)
    assert [str(p) for p in problems if p.level == "error"] == []
    copied = report.manifest.meta.get("copied", {})
    assert ("documents/logo.psd" in copied) == copy_skipped
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "room")])
    assert result.exit_code == 0, result.output
    with Room.open(tmp_path / "room") as room:
        assert "(top)/" in room.tree() and room.grep("Read me first").docs() == [
            by_path["documents/README.txt"].id
        ]


def test_a_far_cell_sheet_is_ingested_quickly_and_junk_email_is_reported(tmp_path):
    from test_extract import far_cell_workbook

    src = tmp_path / "src"
    src.mkdir()
    far_cell_workbook(src / "far.xlsx")
    write(src / "junk.eml", bytes(range(256)) * 20)
    report = ingest(src, tmp_path / "room", IngestSettings(workers=1, file_timeout=20))
    assert [d.path for d in report.manifest.documents] == ["documents/far.xlsx"]
    assert [(e.path, e.reason) for e in report.entries] == [("junk.eml", "corrupt")]
    assert "not an e-mail message" in report.entries[0].detail  # and far.xlsx not timed out
