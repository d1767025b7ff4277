"""A deliverable (a memo) as the judges read it, whatever format it was delivered in.

``.md``/``.txt`` are decoded as written; ``.pdf`` and the other document formats go through
the documents' extraction, pages joined by a blank line. For ``.docx`` that extraction
(:mod:`dealroom.room._extract`) would give plain text, but a memo's judge also needs its
structure — which lines are headings (the reference judge checks required sections and reads
each finding under its heading) and where one block ends. So a paragraph styled
``Heading N`` (or ``Title``) becomes ``#``-prefixed, a list paragraph a ``- `` item, a table
``|`` rows, and blocks are kept apart by a blank line.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any

from dealroom.errors import RoomError
from dealroom.room._extract import (
    MC_FALLBACK,
    ExtractionError,
    W,
    _blocks,
    _check_ooxml,
    _docx_body,
    decode_text,
    extract_pages,
    format_of,
)
from dealroom.room._normalize import normalize_text

_HEADING = re.compile(r"(?i)^heading\s*([1-6])$")
_STYLES = "word/styles.xml"


def deliverable_text(path: Path | str) -> str:
    """The text of the deliverable at ``path`` for judging (see the module docstring),
    normalized like the text layer. An empty file gives ``""``.

    Raises :class:`ExtractionError` when the file cannot be read as text, and
    :class:`~dealroom.errors.RoomError` when it is missing.
    """
    path = Path(path)
    if not path.is_file():
        raise RoomError(f"deliverable {path} does not exist")
    fmt = format_of(path)
    try:
        if fmt in ("md", "txt"):
            return normalize_text(decode_text(path.read_bytes(), path.name))
        if fmt == "docx":
            return normalize_text(_read_docx(path))
        return "\n\n".join(page.strip("\n") for page in extract_pages(path, fmt))
    except ExtractionError as exc:
        if exc.reason == "empty":
            return ""
        raise


def _read_docx(path: Path) -> str:
    try:
        return _docx_markdown(path)
    except ExtractionError:
        raise
    except Exception as exc:  # noqa: BLE001 - parsers raise many unrelated types
        raise ExtractionError(
            "corrupt", f"cannot read {path.name} as docx: {type(exc).__name__}: {exc}"
        ) from exc


def _docx_markdown(path: Path) -> str:
    """The deliverable at ``path`` (a DOCX) as Markdown text; see the module docstring."""
    _check_ooxml(path)
    body = _docx_body(path)
    for fallback in list(body.iter(MC_FALLBACK)):  # duplicate of mc:Choice content
        fallback.getparent().remove(fallback)
    names = _style_names(path)
    blocks = []
    for block in _blocks(body):
        text = _table(block) if block.tag == W + "tbl" else _paragraph(block, names)
        if text.strip():
            blocks.append(text)
    return "\n\n".join(blocks)


def _style_names(path: Path) -> dict[str, str]:
    """Style id → style name (``Heading1`` → ``heading 1``) from the package's styles part."""
    from lxml import etree

    with zipfile.ZipFile(path) as package:
        try:
            data = package.read(_STYLES)
        except KeyError:
            return {}
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    names = {}
    for style in etree.fromstring(data, parser).iter(W + "style"):
        name = style.find(W + "name")
        if name is not None:
            names[style.get(W + "styleId", "")] = name.get(W + "val", "")
    return names


def _paragraph(p: Any, names: dict[str, str]) -> str:
    text = _runs(p).strip()
    ppr = p.find(W + "pPr")
    style = ppr.find(W + "pStyle") if ppr is not None else None
    style_id = style.get(W + "val", "") if style is not None else ""
    name = names.get(style_id, style_id)
    level = _HEADING.match(name) or _HEADING.match(style_id)
    if level:
        return "#" * int(level.group(1)) + " " + text.replace("\n", " ")
    if name.lower() == "title":
        return "# " + text.replace("\n", " ")
    if name.lower().startswith("list") or (ppr is not None and ppr.find(W + "numPr") is not None):
        return "- " + text
    return text


def _runs(p: Any) -> str:
    parts = []
    for el in p.iter(W + "t", W + "tab", W + "br", W + "cr"):
        if el.tag == W + "t":
            parts.append(el.text or "")
        elif el.tag == W + "tab":
            parts.append("\t")
        elif el.get(W + "type") not in ("page", "column"):
            parts.append("\n")
    return "".join(parts)


def _table(tbl: Any) -> str:
    rows = [[" ".join(_runs(p).strip() for p in cell.iter(W + "p")).strip()
             for cell in row.iterchildren(W + "tc")] for row in tbl.iter(W + "tr")]
    lines = ["| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |" for cells in rows]
    if len(lines) > 1:
        lines.insert(1, "|" + "---|" * len(rows[0]))
    return "\n".join(lines)
