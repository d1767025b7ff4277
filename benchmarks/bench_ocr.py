"""OCR benchmark: a 23-page scan through ``dealroom ingest``, and two engines on the same pages.

A 23-page text PDF of contract prose (dealroom's own PDF writer: Helvetica, 9 pt, ~45 lines a
page, the size of the Skilling deposition transcript that prompted OCR) is rendered to images
at 300 dpi with pypdfium2 and saved as an image-only PDF: a scan whose true text is known.

1. ``ingest`` of the scan with the default settings (``--ocr auto``, 2 workers): wall time, and
   the character accuracy of every OCR'd page against the text PDF's own text layer;
2. Tesseract (pytesseract) and RapidOCR (rapidocr-onnxruntime) page by page in one process on
   the first ``--pages`` pages: seconds per page and character accuracy.

Character accuracy is ``1 - edit distance / reference length`` over the page's text with
whitespace collapsed (the edit distance from difflib's matching blocks' complement, an upper
bound on Levenshtein's: accuracy is, if anything, understated).

    python benchmarks/bench_ocr.py                 # 23 pages, engines on 5 pages
    python benchmarks/bench_ocr.py --pages 2       # quicker engine comparison
    pip install rapidocr-onnxruntime==1.4.4        # the second engine (the bench extra)
"""

from __future__ import annotations

import argparse
import difflib
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

PROSE = (
    "the Company shall not assign this Agreement or any rights hereunder without the prior "
    "written consent of Purchaser which consent shall not be unreasonably withheld provided "
    "that a change of control of Seller shall be deemed an assignment for purposes of Section "
    "7.2 and the Termination Fee of $4,250,000 shall be payable within five Business Days "
    "indemnification obligations survive the Closing for eighteen (18) months subject to the "
    "Cap deductible basket escrow holdback representations warranties covenants Schedule 3.14"
)


def _text_pdf(path: Path, pages: int, seed: int) -> list[str]:
    from dealroom.room._generate._formats import pdf_bytes

    rng, words = random.Random(seed), PROSE.split()
    texts = []
    for n in range(1, pages + 1):
        lines = [f"Page {n} of the deposition transcript"]
        for _ in range(44):
            lines.append(" ".join(rng.choice(words) for _ in range(rng.randint(9, 15))))
        texts.append("\n".join(lines))
    path.write_bytes(pdf_bytes(texts, "Transcript"))
    return texts


def _scan(text_pdf: Path, out: Path, dpi: int = 300) -> list[object]:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(text_pdf))
    images = [pdf[i].render(scale=dpi / 72, grayscale=True).to_pil() for i in range(len(pdf))]
    pdf.close()
    images[0].save(out, "PDF", resolution=dpi, save_all=True, append_images=images[1:])
    return images


def accuracy(truth: str, got: str) -> float:
    a, b = " ".join(truth.split()), " ".join(got.split())
    matched = sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False)
                  .get_matching_blocks())
    return max(0.0, 1 - (max(len(a), len(b)) - matched) / max(1, len(a)))


def _truth(text_pdf: Path) -> list[str]:
    from dealroom.room import extract_pages

    return extract_pages(text_pdf)


def bench_ingest(tmp: Path, truth: list[str]) -> None:
    from dealroom.room import IngestSettings, Room, ingest

    started = time.perf_counter()
    report = ingest(tmp / "scan", tmp / "room", IngestSettings(workers=2))
    seconds = time.perf_counter() - started
    with Room.open(tmp / "room") as room:
        doc = room.docs[0]
        accs = [accuracy(truth[n - 1], room.text(doc, n)) for n in range(1, doc.pages + 1)]
        greppable = sum(bool(room.text(doc, n).strip()) for n in range(1, doc.pages + 1))
    print(f"ingest of a {doc.pages}-page scan (--ocr auto, 2 workers): {seconds:.1f} s "
          f"({seconds / doc.pages:.2f} s/page), {greppable}/{doc.pages} pages with text, "
          f"OCR confidence mean {statistics.mean(doc.ocr.values()):.1f}, character accuracy "
          f"mean {statistics.mean(accs):.4f} (min {min(accs):.4f}); index: {report.index}")


def _tesseract(image: object) -> str:
    import pytesseract

    from dealroom.room._ocr import _words_to_text

    data = pytesseract.image_to_data(image, output_type=pytesseract.Output.DICT)
    return _words_to_text(data)[0]


def _rapidocr() -> object:
    from rapidocr_onnxruntime import RapidOCR

    engine = RapidOCR()

    def run(image: object) -> str:
        import numpy as np

        result, _ = engine(np.asarray(image.convert("RGB")))
        return "\n".join(r[1] for r in result or [])
    return run


def bench_engines(images: list[object], truth: list[str], pages: int) -> None:
    engines = {"tesseract": _tesseract}
    try:
        engines["rapidocr"] = _rapidocr()
    except ImportError:
        print("rapidocr: not installed (pip install rapidocr-onnxruntime==1.4.4)")
    for name, run in engines.items():
        times, accs = [], []
        for i in range(pages):
            started = time.perf_counter()
            got = run(images[i])
            times.append(time.perf_counter() - started)
            accs.append(accuracy(truth[i], got))
        print(f"{name:10s} {pages} pages at 300 dpi, one process: "
              f"{statistics.mean(times):.2f} s/page, character accuracy mean "
              f"{statistics.mean(accs):.4f} (min {min(accs):.4f})")


def main() -> None:
    os.environ["OMP_THREAD_LIMIT"] = "1"  # as ingest's workers run it: one thread an engine
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scan-pages", type=int, default=23)
    parser.add_argument("--pages", type=int, default=5, help="pages for the engine comparison")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "scan").mkdir()
        _text_pdf(tmp / "transcript-text.pdf", args.scan_pages, args.seed)
        truth = _truth(tmp / "transcript-text.pdf")
        images = _scan(tmp / "transcript-text.pdf", tmp / "scan" / "transcript.pdf")
        bench_ingest(tmp, truth)
        bench_engines(images, truth, min(args.pages, len(images)))


if __name__ == "__main__":
    main()
