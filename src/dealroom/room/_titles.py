"""Document titles taken from the documents themselves, for ingested rooms.

A file name (``EX-10.2 3b8f.pdf``) says little; the document usually says more. In order:

1. the PDF's own metadata title, unless it is a placeholder (``Untitled``, ``Microsoft Word -
   draft.doc``, a file name, the document's own file name);
2. a Markdown ``#`` heading among the first lines;
3. the first heading-like line of the first page: short, with at least two words, not a
   sentence (no final ``.``/``,``/``;``), not a bare label (``EXHIBIT 10.1``, ``Page 1``,
   ``CONFIDENTIAL``), preferring a line in capitals.

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


def _heading_like(line: str) -> bool:
    words = re.findall(r"[A-Za-z][A-Za-z'&-]*", line)
    return (len(words) >= 2 and len(line) <= MAX_TITLE and line[-1] not in ".,;:"
            and not _LABEL.match(line))


def text_title(first_page: str, fmt: str = "") -> str:
    """A title from the first page's opening lines, or ``""``.

    >>> text_title("EXHIBIT 10.1\\n\\nMASTER SUPPLY AGREEMENT\\n\\nThis Agreement is made ...")
    'MASTER SUPPLY AGREEMENT'
    >>> text_title("# Share Purchase Agreement\\n\\nBody.", "md")
    'Share Purchase Agreement'
    """
    lines = [clean_title(x) for x in first_page.splitlines()[:40]]
    lines = [x for x in lines if x]
    if fmt == "md":
        for line in lines[:20]:
            m = _HEADING.match(line)
            if m:
                return clean_title(m.group(1))
    candidates = [x for x in lines[:8] if _heading_like(x)]
    upper = [x for x in candidates if x.upper() == x]
    return (upper or candidates or [""])[0]


def document_title(pages: list[str], fmt: str, meta: str = "", stem: str = "") -> str:
    """The title the document gives itself: its metadata title (unless it merely repeats the
    file name ``stem``, as PDF writers do), else a heading, else ``""``."""
    meta = metadata_title(meta)
    if meta and meta.casefold() != stem.casefold():
        return meta
    return text_title(pages[0], fmt) if pages else ""
