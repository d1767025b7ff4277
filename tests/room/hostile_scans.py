"""Hostile scans, made in code: pages too large to render, and documents with too many pages.

Shared by ``tests/room/test_ocr_limits.py`` and ``benchmarks/bench_ocr_limits.py``:

- :func:`huge_page_pdf`: one 200 x 200 inch page (about 1.5 KB), or a letter page with
  ``/UserUnit 75000``; at 300 dpi either is billions of pixels;
- :func:`many_pages_pdf`: 10,000 pages, each its own small noise image (about 12 MB);
- :func:`frames_tiff`: a TIFF of 3,000 frames of 8 x 8 pixels (about 400 KB);
- :func:`sized_page_pdf`: one page of a given size in inches, with text drawn large enough to
  be read at any resolution the OCR step may choose.
"""

from __future__ import annotations

import io
import random
from pathlib import Path


def _pdf(objs: list[bytes]) -> bytes:
    """Header, numbered objects, cross-reference table, trailer (joined once: 10,000 pages)."""
    parts, offsets, size = [b"%PDF-1.4\n"], [], len(b"%PDF-1.4\n")
    for number, body in enumerate(objs, 1):
        offsets.append(size)
        part = b"%d 0 obj\n%s\nendobj\n" % (number, body)
        parts.append(part)
        size += len(part)
    parts.append(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    parts.extend(b"%010d 00000 n \n" % o for o in offsets)
    parts.append(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n"
                 % (len(objs) + 1, size))
    return b"".join(parts)


def _image(width: int, height: int, pixels: bytes) -> bytes:
    return (b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
            b"/BitsPerComponent 8 /Length %d >>\nstream\n%s\nendstream"
            % (width, height, len(pixels), pixels))


def _image_pages(boxes: list[tuple[float, float, str]], images: list[bytes]) -> bytes:
    """A PDF whose page ``i`` (``(width pt, height pt, extra page keys)``) fills itself with
    image ``i``."""
    n = len(boxes)
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>"
            % (b" ".join(b"%d 0 R" % (3 + 3 * i) for i in range(n)), n)]
    for i, ((w, h, extra), image) in enumerate(zip(boxes, images, strict=True)):
        content = b"q %g 0 0 %g 0 0 cm /Im0 Do Q" % (w, h)
        objs.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %g %g] %s /Resources "
                    b"<< /XObject << /Im0 %d 0 R >> >> /Contents %d 0 R >>"
                    % (w, h, extra.encode(), 5 + 3 * i, 4 + 3 * i))
        objs.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
        objs.append(image)
    return _pdf(objs)


def _noise(rng: random.Random, side: int) -> bytes:
    return bytes(rng.choice((0, 255)) for _ in range(side * side))


def huge_page_pdf(path: Path, inches: float = 200, user_unit: float = 0) -> Path:
    """One page of ``inches`` square filled with an 8 x 8 noise image; with ``user_unit``, a
    letter page whose ``/UserUnit`` makes it that many times larger."""
    rng = random.Random(0)
    box = (612, 792, f"/UserUnit {user_unit:g}") if user_unit else (inches * 72, inches * 72, "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_image_pages([box], [_image(8, 8, _noise(rng, 8))]))
    return path


def many_pages_pdf(path: Path, pages: int = 10_000, side: int = 32) -> Path:
    """``pages`` letter pages, each its own ``side`` x ``side`` noise image (not blank)."""
    rng = random.Random(0)
    images = [_image(side, side, _noise(rng, side)) for _ in range(pages)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_image_pages([(612, 792, "")] * pages, images))
    return path


def frames_tiff(path: Path, frames: int = 3_000, side: int = 8) -> Path:
    """A multi-page TIFF of ``frames`` noise frames of ``side`` x ``side`` pixels."""
    from PIL import Image

    rng = random.Random(0)
    images = [Image.frombytes("L", (side, side), _noise(rng, side)) for _ in range(frames)]
    path.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(path, save_all=True, append_images=images[1:])
    return path


def sized_page_pdf(path: Path, inches: float, text: str) -> Path:
    """One page ``inches`` square: ``text`` drawn black on white, its letters about a tenth of
    the page tall (legible at 300 dpi and at the lowest resolution OCR renders at)."""
    from PIL import Image, ImageDraw, ImageFont

    side = 1000
    img = Image.new("L", (side, side), 255)
    ImageDraw.Draw(img).multiline_text((40, 300), text, font=ImageFont.load_default(size=90),
                                       fill=0, spacing=40)
    buf = io.BytesIO()
    img.save(buf, "PDF", resolution=side / inches)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())
    return path
