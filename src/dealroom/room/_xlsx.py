"""Reading XLSX/XLSM workbooks by their cells, never by the dimension a sheet declares.

A sheet may declare ``A1:XFD1048576`` while holding one cell (a 4.6 KB file): reading it
row by row up to its declared size builds 17 billion empty cells. Here each sheet's XML is
streamed with openpyxl's own cell parser (cached values, dates from the styles) and only the
cells present are rendered: one line per row that holds a value, cells joined by tabs, an
empty cell between two values as an empty field. A run of more than :data:`MAX_GAP` empty
columns is written as :data:`MAX_GAP` tabs, so a lone cell at column XFD costs 64 bytes, not
16,384.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MAX_GAP = 64
"""Most tabs written for a run of empty columns between two values."""
MAX_UNPACKED = 1 << 30
"""Largest total a workbook's parts may unpack to (a zip bomb is refused before parsing)."""


def cell_text(value: object) -> str:
    """A cell's value as text: whole floats without ``.0``, dates as ISO (no time at midnight)."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if hasattr(value, "isoformat"):
        text = value.isoformat()
        return text[:10] if text.endswith("T00:00:00") else text
    return str(value)


def _line(cells: list[dict[str, Any]]) -> str:
    parts: list[str] = []
    column = 0
    for cell in sorted(cells, key=lambda c: c["column"]):
        text = cell_text(cell["value"])
        if not text:
            continue
        gap = cell["column"] - column - 1
        if parts or gap > 0:
            parts.append("\t" * (min(gap, MAX_GAP) + (1 if parts else 0)))
        parts.append(text)
        column = cell["column"]
    return "".join(parts)


def _rows(book: Any, sheet: Any) -> Iterator[str]:
    """The non-empty lines of one read-only sheet, straight from its XML."""
    from openpyxl.worksheet._reader import WorkSheetParser

    with sheet._get_source() as source:
        parser = WorkSheetParser(source, sheet._shared_strings, data_only=book.data_only,
                                 epoch=book.epoch, date_formats=book._date_formats,
                                 timedelta_formats=book._timedelta_formats)
        for _, cells in parser.parse():
            line = _line(cells)
            if line.strip():
                yield line


def sheet_pages(path: Path) -> tuple[list[str], int]:
    """One page per sheet (``# title`` then its rows) and the number of rows with a value."""
    import zipfile

    import openpyxl

    with zipfile.ZipFile(path) as package:
        unpacked = sum(info.file_size for info in package.infolist())
    if unpacked > MAX_UNPACKED:
        raise ValueError(f"its parts unpack to {unpacked / 2**30:.1f} GiB, more than "
                         f"{MAX_UNPACKED / 2**30:g} GiB (a zip bomb?)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # openpyxl warns about unsupported extensions
        book = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    try:
        pages, rows = [], 0
        for sheet in book.worksheets:
            lines = list(_rows(book, sheet))
            rows += len(lines)
            pages.append("\n".join([f"# {sheet.title}", *lines]))
    finally:
        book.close()
    return pages, rows
