"""OCR's bounds: pixels per page, Tesseract's time per page, pages per document, the whole
ingest's time, a worker that dies; blank pages never reach the engine.

Most tests run a stand-in ``tesseract`` put first on ``PATH`` (the workers inherit it): it
answers ``--version`` and ``--list-langs`` as Tesseract does, logs every page it is given, and
then reads one word, reads none, hangs (so only a time-out or the budget can end it), or kills
its worker on pages wider than 4,000 pixels. What it does never depends on the machine's speed.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hostile_scans import frames_tiff, huge_page_pdf, many_pages_pdf, sized_page_pdf
from pdfs import pdf_bytes

from dealroom.errors import ConfigError
from dealroom.room import IngestSettings, OcrLimits, ingest, ocr_status
from dealroom.room._ocr import DPI, MIN_DPI, OcrTask, _NotRead, _page_image, render_dpi

pytest.importorskip("pytesseract", reason="the ocr extra is not installed")
pytest.importorskip("pypdfium2", reason="the ocr extra is not installed")
OCR, ENGINE = ocr_status()
needs_ocr = pytest.mark.skipif(not OCR, reason=f"no OCR engine here: {ENGINE}")

FAKE = """#!{python}
import os, resource, struct, sys, time
if sys.argv[1] == "--version":
    print("tesseract 5.3.0")
    sys.exit(0)
if sys.argv[1] == "--list-langs":
    print("List of available languages in /usr/share (1):\\neng")
    sys.exit(0)
with open(sys.argv[1], "rb") as fh:
    width = struct.unpack(">I", fh.read(24)[16:20])[0]
with open({log!r}, "a") as fh:
    fh.write(f"{{os.getpid()}} {{width}} {{resource.getrlimit(resource.RLIMIT_AS)[0]}}\\n")
mode = {mode!r}
if mode == "hang":
    time.sleep(3600)
if mode == "crash" and width > 4000:
    os.kill(os.getppid(), 9)
    time.sleep(3600)
head = "level page_num block_num par_num line_num word_num left top width height conf text"
row = "5 1 1 1 1 1 0 0 10 10 95 READ"
if mode == "empty":  # ink, but no word: the page's row only, as Tesseract writes it
    row = "1 1 0 0 0 0 0 0 10 10 -1 "
with open(sys.argv[2] + ".tsv", "w") as fh:
    fh.write(head.replace(" ", "\\t") + "\\n" + row.replace(" ", "\\t") + "\\n")
"""


def _fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str = "read") -> Path:
    """Put the stand-in tesseract first on PATH; return its log (a line per page given)."""
    bin_dir, log = tmp_path / "bin", tmp_path / "tesseract.log"
    bin_dir.mkdir()
    log.touch()
    exe = bin_dir / "tesseract"
    exe.write_text(FAKE.format(python=sys.executable, log=str(log), mode=mode))
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return log


def _given(log: Path) -> list[tuple[int, int]]:
    """(pid, image width) of every page the stand-in was given."""
    return [(pid, width) for pid, width, _ in _lines(log)]


def _lines(log: Path) -> list[tuple[int, ...]]:
    """(pid, image width, its address-space limit) of every page the stand-in was given."""
    return [tuple(map(int, line.split())) for line in log.read_text().splitlines()]


def _reasons(report) -> dict[tuple[str, str], tuple[int, ...]]:
    return {(Path(e.path).name, e.reason): e.pages for e in report.entries}


def _settings(**limits) -> IngestSettings:
    return IngestSettings(workers=2, build_index=False, ocr_limits=OcrLimits(**limits))


def test_render_dpi_lowers_the_resolution_of_large_pages_then_refuses() -> None:
    pixels = OcrLimits().page_pixels
    assert render_dpi(8.5, 11, pixels) == DPI  # letter, A4, A3 and tabloid at 300 dpi
    assert render_dpi(11, 17, pixels) == DPI
    assert render_dpi(40, 40, pixels) == 125
    assert render_dpi(34, 44, pixels) == 129
    assert render_dpi(200, 200, pixels) == render_dpi(50.1, 50.1, pixels) == 0
    assert render_dpi(0, 11, pixels) == render_dpi(float("inf"), 1, pixels) == 0
    for side in (1, 8.5, 17, 23, 36, 49.9):
        dpi = render_dpi(side, side, pixels)
        assert MIN_DPI <= dpi <= DPI and (side * dpi) ** 2 <= pixels


def test_a_page_is_rendered_within_the_pixel_ceiling(tmp_path: Path) -> None:
    limits = OcrLimits()
    huge = huge_page_pdf(tmp_path / "huge.pdf")
    assert huge.stat().st_size < 1500  # 200 x 200 inches: 3.6 billion pixels at 300 dpi
    with pytest.raises(_NotRead, match="200 x 200 inch page is over 25,000,000") as info:
        _page_image(OcrTask(str(huge), "pdf", 0), limits)
    assert info.value.reason == "ocr_too_large"
    # pdfium renders a /UserUnit page at its MediaBox size: the ceiling holds either way
    image, dpi = _page_image(OcrTask(str(huge_page_pdf(tmp_path / "unit.pdf", user_unit=75000)),
                                     "pdf", 0), limits)
    assert image.width * image.height <= limits.page_pixels and dpi == DPI
    image, dpi = _page_image(OcrTask(str(sized_page_pdf(tmp_path / "40in.pdf", 40, "BIG")),
                                     "pdf", 0), limits)
    assert dpi == 125 and image.size == (5000, 5000)


def test_a_huge_page_is_marked_not_rendered(tmp_path: Path, monkeypatch) -> None:
    log = _fake(tmp_path, monkeypatch)
    huge_page_pdf(tmp_path / "src" / "huge.pdf")
    sized_page_pdf(tmp_path / "src" / "poster.pdf", 40, "BIG")
    report = ingest(tmp_path / "src", tmp_path / "room", _settings())
    reasons = _reasons(report)
    assert reasons[("huge.pdf", "ocr_too_large")] == (1,)
    assert reasons[("poster.pdf", "ocr")] == (1,)
    assert [w for _, w in _given(log)] == [5000]  # the poster at 125 dpi; the huge page never
    import resource

    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    bound = 2048 * 2**20 if hard == resource.RLIM_INFINITY else min(2048 * 2**20, hard)
    assert [limit for _, _, limit in _lines(log)] == [bound]  # the worker's RLIMIT_AS
    assert report.counts()["pages_by_reason"] == {"ocr": 1, "ocr_too_large": 1}
    (entry,) = [e for e in report.entries if e.reason == "ocr"]
    assert "rendered at 125 dpi" in entry.detail
    kept = json.loads((tmp_path / "room" / "ocr" / "poster.pdf.json").read_text())
    assert kept["pages"]["1"]["dpi"] == 125


def test_pages_past_the_document_limit_are_marked(tmp_path: Path, monkeypatch) -> None:
    log = _fake(tmp_path, monkeypatch)
    many_pages_pdf(tmp_path / "src" / "many.pdf", pages=40)
    frames_tiff(tmp_path / "src" / "frames.tiff", frames=30)
    report = ingest(tmp_path / "src", tmp_path / "room", _settings(max_pages=4))
    reasons = _reasons(report)
    assert reasons[("many.pdf", "ocr")] == (1, 2, 3, 4)
    assert reasons[("many.pdf", "ocr_page_limit")] == tuple(range(5, 41))
    assert reasons[("frames.tiff", "ocr_too_small")] == (1, 2, 3, 4)  # 8 x 8: no word fits
    assert reasons[("frames.tiff", "ocr_page_limit")] == tuple(range(5, 31))
    assert len(_given(log)) == 4
    assert report.counts()["pages_by_reason"] == {
        "ocr": 4, "ocr_page_limit": 36 + 26, "ocr_too_small": 4}
    saved = json.loads((tmp_path / "room" / "ingest_report.json").read_text())
    assert saved["counts"]["pages_by_reason"]["ocr_page_limit"] == 62


def test_a_document_whose_first_pages_read_nothing_is_given_up(tmp_path: Path,
                                                              monkeypatch) -> None:
    log = _fake(tmp_path, monkeypatch, "empty")
    many_pages_pdf(tmp_path / "src" / "noise.pdf", pages=12)
    many_pages_pdf(tmp_path / "src" / "short.pdf", pages=2)
    report = ingest(tmp_path / "src", tmp_path / "room", _settings(give_up_after=3))
    assert _reasons(report) == {("noise.pdf", "ocr_empty"): (1, 2, 3),
                                ("noise.pdf", "ocr_gave_up"): tuple(range(4, 13)),
                                ("short.pdf", "ocr_empty"): (1, 2)}
    assert len(_given(log)) == 5
    report = ingest(tmp_path / "src", tmp_path / "never", _settings(give_up_after=0))
    assert _reasons(report)[("noise.pdf", "ocr_empty")] == tuple(range(1, 13))


def test_tesseract_that_hangs_is_stopped_by_its_page_timeout(tmp_path: Path,
                                                             monkeypatch) -> None:
    log = _fake(tmp_path, monkeypatch, "hang")
    many_pages_pdf(tmp_path / "src" / "scan.pdf", pages=3)
    report = ingest(tmp_path / "src", tmp_path / "room", _settings(page_timeout=1, budget=0))
    assert _reasons(report) == {("scan.pdf", "ocr_timeout"): (1, 2, 3)}
    assert "Tesseract took more than 1 s" in report.entries[0].detail
    assert len(_given(log)) == 3


def test_the_budget_ends_the_ocr_and_marks_the_pages_left(tmp_path: Path, monkeypatch) -> None:
    log = _fake(tmp_path, monkeypatch, "hang")  # nothing but the budget can end these pages
    many_pages_pdf(tmp_path / "src" / "scan.pdf", pages=3)
    report = ingest(tmp_path / "src", tmp_path / "room", _settings(page_timeout=0, budget=2))
    assert _reasons(report) == {("scan.pdf", "ocr_budget"): (1, 2, 3)}
    assert report.counts()["pages_by_reason"] == {"ocr_budget": 3}
    for pid, _ in _given(log):  # the hung Tesseracts were killed with their workers
        assert not _alive(pid)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc here
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_a_page_that_kills_its_worker_fails_alone(tmp_path: Path, monkeypatch) -> None:
    _fake(tmp_path, monkeypatch, "crash")  # kills the worker on a page over 4,000 pixels
    sized_page_pdf(tmp_path / "src" / "a-poster.pdf", 16, "BIG")  # 4,800 pixels at 300 dpi
    many_pages_pdf(tmp_path / "src" / "b-scan.pdf", pages=3)
    report = ingest(tmp_path / "src", tmp_path / "room", _settings())
    reasons = _reasons(report)
    assert reasons[("a-poster.pdf", "ocr_failed")] == (1,)
    assert reasons[("b-scan.pdf", "ocr")] == (1, 2, 3)
    (entry,) = [e for e in report.entries if e.reason == "ocr_failed"]
    assert "worker died" in entry.detail


def test_blank_pages_are_not_sent_to_ocr(tmp_path: Path, monkeypatch) -> None:
    log = _fake(tmp_path, monkeypatch)
    (tmp_path / "src").mkdir()
    # a text page, a page whose only image is white, and one with nothing at all on it
    blank = pdf_bytes(["Page one has a text layer", None, None]).replace(
        b"/Contents 10 0 R", b" " * 16)  # same length: the offsets stay right
    (tmp_path / "src" / "blank.pdf").write_bytes(blank)
    many_pages_pdf(tmp_path / "src" / "ink.pdf", pages=1)
    report = ingest(tmp_path / "src", tmp_path / "room", _settings())
    reasons = _reasons(report)
    assert reasons[("blank.pdf", "ocr_blank")] == (2, 3)
    assert ("blank.pdf", "ocr_empty") not in reasons
    assert [w for _, w in _given(log)] == [2550]  # only the page with ink (letter, 300 dpi)


def test_the_limits_are_checked() -> None:
    for bad in ({"max_pages": -1}, {"give_up_after": -1}, {"budget": -5}, {"page_timeout": -1},
                {"worker_memory_mb": 100}, {"page_pixels": 10}):
        with pytest.raises(ConfigError, match="ocr "):
            OcrLimits(**bad)


def test_cli_takes_the_ocr_limits(tmp_path: Path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from dealroom.cli import app

    _fake(tmp_path, monkeypatch)
    many_pages_pdf(tmp_path / "src" / "many.pdf", pages=5)
    args = ["ingest", str(tmp_path / "src"), str(tmp_path / "room"), "--no-index"]
    result = CliRunner().invoke(app, [*args, "--ocr-max-pages", "2", "--ocr-budget", "600",
                                      "--ocr-page-timeout", "30"])
    assert result.exit_code == 0, result.output
    assert "pages by reason: ocr 2, ocr_page_limit 3" in result.output
    result = CliRunner().invoke(app, [*args, "--force", "--ocr-budget", "-1"])
    assert result.exit_code == 2 and "--ocr-budget" in result.output, result.output


@needs_ocr
def test_tesseract_reads_a_large_page_at_the_lower_resolution(tmp_path: Path) -> None:
    sized_page_pdf(tmp_path / "src" / "poster.pdf", 40, "PURCHASE PRICE\nSCHEDULE")
    report = ingest(tmp_path / "src", tmp_path / "room", _settings())
    (entry,) = [e for e in report.entries if e.reason == "ocr"]
    assert "125 dpi" in entry.detail
    kept = json.loads((tmp_path / "room" / "ocr" / "poster.pdf.json").read_text())
    assert "PURCHASE PRICE" in kept["pages"]["1"]["text"] and kept["pages"]["1"]["dpi"] == 125
