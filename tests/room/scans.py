"""Scanned pages made in the tests: text drawn into images, saved as image-only PDFs or image
files (no text layer anywhere), and PDFs mixing such pages with text pages."""

from __future__ import annotations

import io
from pathlib import Path

from pdfs import pdf_bytes

DPI = 150


def page_image(text: str, size: int = 30):  # -> PIL.Image.Image
    """A white letter-size page at 150 dpi with ``text`` drawn in black, a line per line."""
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("L", (int(8.5 * DPI), 11 * DPI), 255)
    ImageDraw.Draw(img).multiline_text((90, 120), text, font=ImageFont.load_default(size=size),
                                       fill=0, spacing=14)
    return img


def scanned_pdf(path: Path, pages: list[str]) -> Path:
    """An image-only PDF, one drawn page per text."""
    images = [page_image(text) for text in pages]
    path.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(path, "PDF", resolution=DPI, save_all=True, append_images=images[1:])
    return path


def mixed_pdf(path: Path, pages: list[tuple[str, bool]]) -> Path:
    """A PDF of text pages (``(text, False)``) and scanned pages (``(text, True)``)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for text, scanned in pages:
        if scanned:
            buf = io.BytesIO()
            page_image(text).save(buf, "PDF", resolution=DPI)
        else:
            buf = io.BytesIO(pdf_bytes([text]))
        writer.add_page(PdfReader(io.BytesIO(buf.getvalue())).pages[0])
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        writer.write(fh)
    return path


def image_file(path: Path, pages: list[str]) -> Path:
    """A PNG/JPEG (one page) or a multi-page TIFF, by ``path``'s suffix."""
    images = [page_image(text) for text in pages]
    path.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(path, save_all=len(images) > 1, append_images=images[1:])
    return path
