"""OCR limits benchmark: hostile scans through ``ingest`` end in seconds, within a stated memory.

The files of issue 37 item 3, made in code (``tests/room/hostile_scans.py``):

- ``huge-page.pdf``: one 200 x 200 inch page (under 1.5 KB; 3.6 billion pixels at 300 dpi);
- ``user-unit.pdf``: a letter page with ``/UserUnit 75000``;
- ``10000-pages.pdf``: 10,000 pages, each its own 30 x 30 noise image (about 12 MB);
- ``3000-frames.tiff``: 3,000 frames of 8 x 8 pixels.

Each is ingested alone, in a fresh process, with the defaults (``--ocr auto``, 2 workers, the
default :class:`dealroom.room.OcrLimits`). Printed per file: wall seconds; peak RSS of the
ingest process and of its largest child (an OCR worker or a Tesseract), from ``getrusage``;
the peak of the whole process tree's RSS summed (sampled every 50 ms with psutil, when
installed); and the report's ``pages_by_reason``.

    python benchmarks/bench_ocr_limits.py
    python benchmarks/bench_ocr_limits.py --max-pages 500 --only 10000-pages.pdf
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).parents[1] / "tests" / "room"
CHILD = """
import json, resource, sys
from pathlib import Path
from dealroom.room import IngestSettings, OcrLimits, ingest

if __name__ == "__main__":
    src, out, max_pages = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    report = ingest(src, out, IngestSettings(ocr_limits=OcrLimits(max_pages=max_pages)))
    print(json.dumps({
        "seconds": report.seconds,
        "pages_by_reason": report.counts()["pages_by_reason"],
        "self_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "child_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }))
"""


def make_files(folder: Path) -> dict[str, Path]:
    sys.path.insert(0, str(TESTS))  # the suite's generators of the same files
    from hostile_scans import frames_tiff, huge_page_pdf, many_pages_pdf

    files = {
        "huge-page.pdf": huge_page_pdf(folder / "huge-page" / "huge-page.pdf"),
        "user-unit.pdf": huge_page_pdf(folder / "user-unit" / "user-unit.pdf", user_unit=75000),
        "10000-pages.pdf": many_pages_pdf(folder / "10000-pages" / "10000-pages.pdf", side=30),
        "3000-frames.tiff": frames_tiff(folder / "3000-frames" / "3000-frames.tiff"),
    }
    return files


def _tree_rss(pid: int) -> int:
    import psutil

    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            total += proc.memory_info().rss
    return total


def run(path: Path, out: Path, max_pages: int) -> dict[str, object]:
    """Ingest the folder holding ``path`` in a fresh process; its figures."""
    try:
        import psutil  # noqa: F401
        sample = True
    except ImportError:
        sample = False
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path.parent), str(out),
                             str(max_pages)], stdout=subprocess.PIPE, text=True)
    peak = 0
    while proc.poll() is None:
        if sample:
            peak = max(peak, _tree_rss(proc.pid))
        time.sleep(0.05)
    wall = time.perf_counter() - started
    figures = json.loads(proc.stdout.read() if proc.stdout else "{}")
    return {**figures, "wall": wall, "tree_mb": peak / 2**20 if sample else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-pages", type=int, default=None,
                        help="pages OCR'd per document (default: OcrLimits' default)")
    parser.add_argument("--only", default="", help="one file's name")
    args = parser.parse_args()
    from dealroom.room import OcrLimits

    limits = OcrLimits()
    max_pages = limits.max_pages if args.max_pages is None else args.max_pages
    print(f"limits: {max_pages} pages a document (given up after {limits.give_up_after} "
          f"without text), {limits.page_pixels:,} pixels a page, "
          f"{limits.page_timeout:g} s a page, {limits.budget:g} s budget, "
          f"{limits.worker_memory_mb} MB address space a worker; 2 workers")
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        for label, path in make_files(tmp / "src").items():
            if args.only and label != args.only:
                continue
            f = run(path, tmp / "rooms" / label, max_pages)
            tree = f"{f['tree_mb']:.0f} MB" if f["tree_mb"] is not None else "n/a (no psutil)"
            print(f"{label:17s} {path.stat().st_size:>11,} bytes: {f['wall']:6.1f} s wall "
                  f"(ingest {f['seconds']:.1f} s); peak RSS: ingest {f['self_mb']:.0f} MB, "
                  f"largest child {f['child_mb']:.0f} MB, whole tree {tree}; "
                  f"pages {f['pages_by_reason']}", flush=True)


if __name__ == "__main__":
    main()
