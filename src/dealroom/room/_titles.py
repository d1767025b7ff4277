"""Document titles taken from the documents themselves, for ingested rooms.

A file name (``EX-10.2 3b8f.pdf``) says little; the document usually says more. In order:

1. the PDF's own metadata title, unless it is a placeholder (``Untitled``, ``Microsoft Word -
   draft.doc``, a file name, the document's own file name);
2. a Markdown ``#`` heading among the first lines;
3. the first heading-like line of the first page, tested whole (a long line is text, not a
   title cut short): at most :data:`MAX_TITLE` characters and 16 words, at least two, not a
   sentence (no final ``.``/``,``/``;``, no sentence inside), not a bare label (``EXHIBIT
   10.1``, ``Page 1``, ``CONFIDENTIAL``), stamp (``EXECUTION COPY``, ``REDACTED COPY``),
   bracketed mark (``[ABOUT LOGO]``), confidentiality legend (``[***]``, ``omitted``),
   signature line (``By: /s/ ...``, ``Name:``) or fragment (a lower-case start, a final
   ``and``/``of``/``the``, the wrapped tail of a paragraph), preferring a line in capitals.

Nothing found: the caller keeps the file name.
"""

from __future__ import annotations

import re

MAX_TITLE = 120
"""Longer lines are text, not a title."""
_LABEL = re.compile(
    r"^(?:exhibit|schedule|annex|appendix|attachment|page|execution version|confidential"
    r"|draft|table of contents|contents)\b[\s\w.\-:()]{0,16}$", re.I)
_PLACEHOLDER = re.compile(r"^(?:untitled|document\d*|microsoft (?:word|powerpoint) - .*"
                          r"|.*\.(?:docx?|pdf|rtf|txt|html?))$", re.I)
_HEADING = re.compile(r"^#{1,3}\s+(.+?)\s*#*$")


def clean_title(text: str) -> str:
    """``text`` on one line, whitespace collapsed, cut to :data:`MAX_TITLE` characters."""
    return " ".join(text.split())[:MAX_TITLE].strip()


def metadata_title(title: object) -> str:
    """A PDF metadata title when it is a real one, else ``""``.

    >>> metadata_title("Microsoft Word - merger.docx"), metadata_title("Supply Agreement")
    ('', 'Supply Agreement')
    """
    text = clean_title(title) if isinstance(title, str) else ""
    return "" if not text or _PLACEHOLDER.match(text) or not re.search(r"[A-Za-z]{2}", text) \
        else text


_STAMP = re.compile(
    r"^\W*(?:execution|redacted|conformed|composite|final|signed|certified|true|public"
    r"|confidential|draft|exhibit|filing|sec)\s+(?:copy|version|form|draft|use)\W*$", re.I)
_LEGEND = re.compile(
    r"\bomitted\b|confidential (?:treatment|portions?|information)|certain (?:confidential|"
    r"information|portions)|\[\s*\*+\s*\]|\*{3}|securities and exchange commission|"
    r"\brule 24b-2\b|^source\s*:|^ex-\d|\.html?\b|\bpage \d+ of \d+\b|\blogo\b", re.I)
_SIGNATURE = re.compile(r"/s/|^by\b[^:]{0,40}:|^(?:name|title|date|signature|witness|attest|"
                        r"its|dated|print name)\s*:|_{4,}", re.I)
_CONNECTIVE = re.compile(r"\b(?:and|or|of|the|to|for|in|by|with|between|an|as|on|that)$", re.I)
_STOP = re.compile(r"(\w+)\. [A-Z]")
_ABBREVIATIONS = {"inc", "corp", "ltd", "llc", "bros", "assn", "dept", "nos", "mrs", "etc"}


def _abbreviated(line: str) -> bool:
    """The line ends with a company's abbreviation (``HOLDINGS, INC.``), not a sentence."""
    last = line.rsplit(None, 1)[-1].rstrip(".").replace(".", "").lower()
    return last in _ABBREVIATIONS | {"co", "lp", "na", "sa", "nv", "bv", "ag", "plc"}


def _sentence_inside(line: str) -> bool:
    """``Miscellaneous. The parties ...``: a word in lower case ends a sentence mid-line."""
    return any(len(w) >= 3 and w[-1].islower() and w.lower() not in _ABBREVIATIONS
               for w in _STOP.findall(line))


def _heading_like(line: str) -> bool:
    """A title-like line (tested whole, before any cut): short, two words or more, no
    sentence, not a label, stamp, legend, signature line or fragment."""
    words = re.findall(r"[A-Za-z][A-Za-z'&-]*", line)
    final_stop = line[-1] in ".,;:" and not (line[-1] == "." and _abbreviated(line))
    return (2 <= len(words) <= 16 and len(line) <= MAX_TITLE and not final_stop
            and (line[0].isupper() or line[0].isdigit() or line[0] in "\"'\u201c")
            and not (_LABEL.match(line) or _STAMP.match(line) or _LEGEND.search(line)
                     or _SIGNATURE.search(line) or _CONNECTIVE.search(line)
                     or _sentence_inside(line) or line.startswith("[")))


def _lines(first_page: str) -> list[str]:
    """The opening lines, whitespace collapsed, without those that continue a paragraph (a
    line after a long one that ends mid-sentence: the tail of a wrapped legend)."""
    out, previous = [], ""
    for raw in first_page.splitlines()[:40]:
        line = " ".join(raw.split())
        if line and not (len(previous) >= 60 and previous[-1] not in ".:;!?"):
            out.append(line)
        previous = line
    return out


def text_title(first_page: str, fmt: str = "") -> str:
    """A title from the first page's opening lines, or ``""`` (the caller keeps the file
    name). Each line is tested whole, then cut to :data:`MAX_TITLE`.

    >>> text_title("EXHIBIT 10.1\\n\\nMASTER SUPPLY AGREEMENT\\n\\nThis Agreement is made ...")
    'MASTER SUPPLY AGREEMENT'
    >>> text_title("# Share Purchase Agreement\\n\\nBody.", "md")
    'Share Purchase Agreement'
    >>> text_title("[ABOUT LOGO]\\nEXECUTION COPY\\nBy Client: /s/ Jane Roe\\nThe parties agree.")
    ''
    """
    lines = _lines(first_page)
    if fmt == "md":
        for line in lines[:20]:
            m = _HEADING.match(line)
            if m:
                return clean_title(m.group(1))
    candidates = [x for x in lines[:10] if _heading_like(x)]
    upper = [x for x in candidates if x.upper() == x]
    return clean_title((upper or candidates or [""])[0])


def document_title(pages: list[str], fmt: str, meta: str = "", stem: str = "") -> str:
    """The title the document gives itself: its metadata title (unless it merely repeats the
    file name ``stem``, as PDF writers do), else a heading, else ``""``."""
    meta = metadata_title(meta)
    if meta and meta.casefold() != stem.casefold():
        return meta
    return text_title(pages[0], fmt) if pages else ""
