"""The memo's Markdown in other formats: Word (``.docx``) and plain text (``.txt``).

The Markdown is parsed once with markdown-it (CommonMark plus tables) into :class:`Block` s —
headings, paragraphs, bullet and numbered list items (nested), quotes, code, rules, tables —
whose text is a list of :class:`Span` s (bold, italic, monospace, line breaks). Then:

- :func:`to_docx` writes them with python-docx's default template and styles: ``Heading 1-6``,
  ``List Bullet``/``List Number`` (levels 2 and 3 as ``List Bullet 2`` ...; each numbered list
  counts from its own start), ``List Continue`` for an item's further paragraphs, ``Quote``,
  ``Table Grid`` with a bold header row. The body is built with lxml on python-docx's elements:
  python-docx's ``add_paragraph(style=...)`` looks each style up by name, ~60 times slower
  (``benchmarks/deliverables.py``).
- :func:`to_text` writes them as plain text: ``-`` and ``1.`` list markers, ``a | b`` rows, no
  emphasis marks.

Citations such as ``[D00042 p.3]`` are plain text to Markdown and stay exactly as written.
"""

from __future__ import annotations

import functools
import io
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docx.document import Document as DocxDocument
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
"""Characters XML cannot hold (a model's reply may contain them)."""
_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_WHOLE = re.compile(r"^ {0,3}\[[^\]]+\]:|<(?:pre|script|style|textarea)\b", re.I | re.M)
"""What a section cannot be parsed alone with: link definitions, HTML blocks across blank
lines."""
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_MONO = "Courier New"


@dataclass
class Span:
    """A run of text with one formatting."""

    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False


@dataclass
class Block:
    """One paragraph-level element of the memo."""

    kind: str
    """``heading``, ``para``, ``item`` (a list item's first paragraph), ``code``, ``rule`` or
    ``table``."""
    spans: list[Span] = field(default_factory=list)
    level: int = 0
    """The heading's level; for paragraphs, items and code, how many lists enclose them."""
    ordered: bool = False
    """An item of a numbered list."""
    number: int = 0
    """A numbered item's number."""
    list_id: int = 0
    """Which list an item belongs to (each numbered list restarts its numbering)."""
    quote: bool = False
    """Inside a block quote."""
    rows: list[list[list[Span]]] = field(default_factory=list)
    """A table's rows of cells (the first row is the header)."""


def parse_blocks(markdown: str) -> list[Block]:
    """The blocks of ``markdown``, in order.

    The memo is parsed section by section (:func:`sections`), each section's blocks kept in a
    cache: a memo that grows turn by turn is re-parsed only where it changed.
    """
    markdown = _CONTROL.sub("", markdown)
    pieces = sections(markdown) if not _WHOLE.search(markdown) else [markdown]
    blocks: list[Block] = []
    lists = 0
    for piece in pieces:
        parsed = _parse(piece)
        blocks += [replace(b, list_id=b.list_id + lists) if b.list_id else b for b in parsed]
        lists += max((b.list_id for b in parsed), default=0)
    return blocks


def sections(markdown: str) -> list[str]:
    r"""``markdown`` cut before every heading that starts a line after a blank line, outside
    fenced code: CommonMark parses the pieces alone as it parses them together (a paragraph,
    list, quote, table or HTML block ends at the blank line; a heading there is top level).

    >>> sections("# A\n\ntext\n## B\n\n```\n\n# not a heading\n```\n\n# C\n")
    ['# A\n\ntext\n## B\n\n```\n\n# not a heading\n```\n\n', '# C\n']
    """
    out: list[str] = []
    start = 0
    fence: str | None = None
    blank = True
    position = 0
    for line in markdown.splitlines(keepends=True):
        opened = _FENCE.match(line)
        if fence is not None:
            if line.strip() and set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
                fence = None
        elif opened:
            fence = opened.group(1)
        elif blank and position and _HEADING.match(line):
            out.append(markdown[start:position])
            start = position
        blank = not line.strip()
        position += len(line)
    out.append(markdown[start:])
    return [piece for piece in out if piece]


@functools.lru_cache(maxsize=2048)
def _parse(markdown: str) -> tuple[Block, ...]:
    return tuple(_Walker().walk(_parser().parse(markdown)))


@functools.cache
def _parser() -> MarkdownIt:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


@dataclass
class _List:
    ordered: bool
    next: int
    id: int


class _Walker:
    """markdown-it's token stream → :class:`Block` s."""

    def __init__(self) -> None:
        self.out: list[Block] = []
        self.lists: list[_List] = []
        self.made = 0
        self.item_open = False
        self.quote = 0

    def walk(self, tokens: list[Token]) -> list[Block]:
        i = 0
        while i < len(tokens):
            i = self.step(tokens, i)
        return self.out

    def step(self, tokens: list[Token], i: int) -> int:
        t = tokens[i]
        kind = t.type
        if kind == "heading_open":
            self.add(Block("heading", _spans(tokens[i + 1]), level=int(t.tag[1])))
            return i + 3
        if kind == "paragraph_open":
            self.paragraph(_spans(tokens[i + 1]))
            return i + 3
        if kind in ("bullet_list_open", "ordered_list_open"):
            self.made += 1
            start = int(t.attrs.get("start", 1)) if kind == "ordered_list_open" else 1
            self.lists.append(_List(kind == "ordered_list_open", start, self.made))
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
        elif kind == "list_item_open":
            self.item_open = True
        elif kind == "blockquote_open":
            self.quote += 1
        elif kind == "blockquote_close":
            self.quote -= 1
        elif kind in ("fence", "code_block"):
            self.add(Block("code", [Span(t.content.rstrip("\n"), code=True)],
                           level=len(self.lists)))
        elif kind == "html_block" and t.content.strip():
            self.paragraph([Span(t.content.strip())])
        elif kind == "hr":
            self.add(Block("rule"))
        elif kind == "table_open":
            return self.table(tokens, i)
        return i + 1

    def add(self, block: Block) -> None:
        block.quote = self.quote > 0
        self.out.append(block)

    def paragraph(self, spans: list[Span]) -> None:
        if not self.lists:
            self.add(Block("para", spans))
            return
        if not self.item_open:  # a further paragraph of the same item
            self.add(Block("para", spans, level=len(self.lists)))
            return
        current = self.lists[-1]
        self.add(Block("item", spans, level=len(self.lists), ordered=current.ordered,
                       number=current.next, list_id=current.id))
        current.next += 1
        self.item_open = False

    def table(self, tokens: list[Token], i: int) -> int:
        rows: list[list[list[Span]]] = []
        while tokens[i].type != "table_close":
            t = tokens[i]
            if t.type == "tr_open":
                rows.append([])
            elif t.type == "inline":
                rows[-1].append(_spans(t))
            i += 1
        self.add(Block("table", rows=rows))
        return i + 1


def _spans(inline: Token) -> list[Span]:
    """The spans of an ``inline`` token; adjacent spans of one formatting merged."""
    out: list[Span] = []
    bold = italic = 0
    for c in inline.children or []:
        kind = c.type
        if kind in ("strong_open", "strong_close"):
            bold += 1 if kind == "strong_open" else -1
        elif kind in ("em_open", "em_close"):
            italic += 1 if kind == "em_open" else -1
        elif kind in ("text", "html_inline", "image", "code_inline", "softbreak", "hardbreak"):
            text = {"softbreak": " ", "hardbreak": "\n"}.get(kind, c.content)
            span = Span(text, bold > 0, italic > 0, kind == "code_inline")
            last = out[-1] if out else None
            if last and (last.bold, last.italic, last.code) == (span.bold, span.italic, span.code):
                last.text += span.text
            elif text:
                out.append(span)
    return out


def plain(spans: list[Span]) -> str:
    """The text of ``spans``, formatting dropped."""
    return "".join(s.text for s in spans)


# -- plain text -----------------------------------------------------------------------------
def to_text(markdown: str) -> str:
    """``markdown`` as plain text."""
    parts: list[str] = []
    previous: Block | None = None
    for block in parse_blocks(markdown):
        text = _text_block(block)
        tight = previous is not None and previous.kind == "item" and block.kind == "item"
        parts.append(("\n" if tight else "\n\n") + text if parts else text)
        previous = block
    return "".join(parts) + "\n" if parts else ""


def _text_block(block: Block) -> str:
    indent = "  " * max(0, block.level - 1)
    if block.kind == "item":
        marker = f"{block.number}. " if block.ordered else "- "
        lines = plain(block.spans).split("\n")
        text = indent + marker + ("\n" + indent + " " * len(marker)).join(lines)
    elif block.kind == "table":
        text = "\n".join(" | ".join(plain(cell) for cell in row) for row in block.rows)
    elif block.kind == "rule":
        text = "-" * 40
    elif block.kind == "code":
        text = "\n".join("    " + line for line in plain(block.spans).split("\n"))
    else:
        pad = "  " * block.level if block.kind == "para" else ""
        text = "\n".join(pad + line for line in plain(block.spans).split("\n"))
    if block.quote:
        text = "\n".join("    " + line for line in text.split("\n"))
    return text


# -- Word -------------------------------------------------------------------------------------
def to_docx(markdown: str) -> bytes:
    """``markdown`` as a Word document (the bytes of a ``.docx``)."""
    import docx

    document = docx.Document()
    writer = _DocxWriter(document)
    for block in parse_blocks(markdown):
        writer.block(block)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


class _DocxWriter:
    """Appends blocks to a python-docx document's body."""

    def __init__(self, document: DocxDocument) -> None:
        from docx.oxml.ns import qn

        self.document = document
        self.qn = qn
        self.end = document.element.body.sectPr
        self._style_ids: dict[str, str] = {}
        self._nums: dict[int, str] = {}

    def style(self, name: str) -> str:
        if name not in self._style_ids:
            self._style_ids[name] = self.document.styles[name].style_id
        return self._style_ids[name]

    def block(self, block: Block) -> None:
        if block.kind == "table":
            self.table(block)
            return
        p = self.paragraph(_style_name(block), block.spans if block.kind != "rule" else [])
        if block.kind == "item" and block.ordered:
            self.number(p, block)
        self.end.addprevious(p)

    def paragraph(self, style: str | None, spans: list[Span]) -> Any:
        from lxml import etree

        qn = self.qn
        p = etree.Element(qn("w:p"))
        if style is not None:
            ppr = etree.SubElement(p, qn("w:pPr"))
            etree.SubElement(ppr, qn("w:pStyle")).set(qn("w:val"), self.style(style))
        for span in spans:
            self.run(p, span)
        return p

    def run(self, p: Any, span: Span) -> None:
        from lxml import etree

        qn = self.qn
        r = etree.SubElement(p, qn("w:r"))
        if span.bold or span.italic or span.code:
            rpr = etree.SubElement(r, qn("w:rPr"))
            if span.code:
                fonts = etree.SubElement(rpr, qn("w:rFonts"))
                for attr in ("w:ascii", "w:hAnsi", "w:cs"):
                    fonts.set(qn(attr), _MONO)
            if span.bold:
                etree.SubElement(rpr, qn("w:b"))
            if span.italic:
                etree.SubElement(rpr, qn("w:i"))
        for n, line in enumerate(span.text.split("\n")):
            if n:
                etree.SubElement(r, qn("w:br"))
            if line:
                t = etree.SubElement(r, qn("w:t"))
                t.text = line
                t.set(_XML_SPACE, "preserve")

    def number(self, p: Any, block: Block) -> None:
        """Number ``p`` in its own list, counting from the list's start."""
        from lxml import etree

        qn = self.qn
        num_id = self._nums.get(block.list_id)
        if num_id is None:
            num_id = self._nums[block.list_id] = self.new_list(_style_name(block) or "",
                                                               block.number)
        ppr = p.find(qn("w:pPr"))
        numpr = etree.SubElement(ppr, qn("w:numPr"))
        etree.SubElement(numpr, qn("w:ilvl")).set(qn("w:val"), "0")
        etree.SubElement(numpr, qn("w:numId")).set(qn("w:val"), num_id)

    def new_list(self, style: str, start: int) -> str:
        """A numbering instance of ``style``'s list definition, starting at ``start``."""
        numbering = self.document.part.numbering_part.element
        style_num = self.document.styles[style].element.pPr.numPr.numId.val
        abstract = numbering.num_having_numId(style_num).abstractNumId.val
        num = numbering.add_num(abstract)
        num.add_lvlOverride(ilvl=0).add_startOverride(start)
        return str(num.numId)

    def table(self, block: Block) -> None:
        width = max((len(row) for row in block.rows), default=0)
        if not width:
            return
        table = self.document.add_table(rows=len(block.rows), cols=width)
        table.style = self.document.styles["Table Grid"]
        for r, (row, cells) in enumerate(zip(table.rows, block.rows, strict=True)):
            for cell, spans in zip(row.cells, cells, strict=False):
                p = cell.paragraphs[0]._p
                for span in spans:
                    self.run(p, Span(span.text, span.bold or r == 0, span.italic, span.code))


def _style_name(block: Block) -> str | None:
    if block.kind == "heading":
        return f"Heading {min(block.level, 6)}"
    suffix = "" if block.level <= 1 else f" {min(block.level, 3)}"
    if block.kind == "item":
        return ("List Number" if block.ordered else "List Bullet") + suffix
    if block.kind == "code":
        return "No Spacing"
    if block.quote:
        return "Quote"
    if block.kind == "para" and block.level:
        return "List Continue" + suffix
    return None
