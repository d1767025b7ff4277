"""Printed page numbers read from the pages' own text, for documents whose PDF defines no
``/PageLabels`` (filed agreements, CUAD's contracts, scanned transcripts).

A page's *candidates* are the numbers its first and last :data:`EDGE_LINES` lines print alone:
``12``, ``- 12 -``, ``Page 12``, ``Page 12 of 40``, ``A-12`` (an exhibit or annex), ``iv``
(front matter), or a header ending in ``Page 452`` (a transcript). A candidate on page ``i``
proposes a *run*: its place (top or bottom), its style and prefix, and ``value - i``. A run is
kept when at least :data:`MIN_RUN` pages support it (:data:`MIN_MARKED_RUN` for a line that
is only ``Page N``, ``A-n`` or a roman numeral) and they are at least half the pages from its
first to its last; stronger runs win overlaps. Every page from a run's first to its last
support is labelled, so a page whose number was misread or left off inside a run still gets
its label. Numbers inside the
body, a lone number, or numbers that do not count up with the pages label nothing.

A transcript numbers its lines down the margin (1..25): a page whose lines, in order, start
with 1, 2, 3, ... (at least :data:`MIN_MARGIN` of them) has *line numbers*; those numbers are
never page candidates.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

EDGE_LINES = 3
"""Non-empty lines at the top and at the bottom of a page that may print its number."""
MIN_RUN = 3
"""Pages that must print a bare number of one run for it to label pages."""
MIN_MARKED_RUN = 2
"""The same for the marked styles: ``Page N``, ``A-n`` and roman numerals."""
MARGIN_MAX = 30
"""Highest line number a transcript's margin prints (25 is usual, some courts use 28)."""
MIN_MARGIN = 10
"""Lines of a page that must count up from 1 in the margin for it to have line numbers."""

_BARE = re.compile(r"^[-\u2013\u2014\s]*(page\s+)?(\d{1,4})(?:\s+of\s+\d{1,5})?[-\u2013\u2014\s]*$",
                   re.I)
_HEADER_PAGE = re.compile(r"\S.*\b(?:Page|PAGE)\s+(\d{1,5})(?:\s+of\s+\d{1,5})?\s*$")
_LETTERED = re.compile(r"^(?:page\s+)?([A-Z]{1,2})\s?[-\u2013]\s?(\d{1,4})$")
_ROMAN = re.compile(r"^[-\u2013\s]*(?:page\s+)?([ivxlc]{1,7})[-\u2013\s]*$")
_MARGIN = re.compile(r"^\s*(\d{1,2})(?:\s+(\S.*))?$")
_DIGIT_LINE = re.compile(r"\n[ \t]*\d")
SHORT_LINE = 24
"""A line printing a page number alone is at most this long (``- Page 1234 of 1250 -``)."""
EDGE_SPAN = 600
"""Characters at each end of a page read for its number (a page number's line is short)."""
_ROMAN_VALUES = (("c", 100), ("xc", 90), ("l", 50), ("xl", 40), ("x", 10), ("ix", 9),
                 ("v", 5), ("iv", 4), ("i", 1))


@dataclass(frozen=True)
class Printed:
    """What a document prints about its pages: one label per page (``""``: none read) and
    whether its pages number their lines in the margin (a transcript)."""

    labels: list[str] = field(default_factory=list)
    line_numbers: bool = False

    @property
    def informative(self) -> bool:
        """Whether the labels say more than the PDF index (or the lines are numbered)."""
        differ = any(lab and lab != str(i) for i, lab in enumerate(self.labels, 1))
        return differ or (self.line_numbers and any(self.labels))


def roman(n: int) -> str:
    """``n`` as a lower-case roman numeral (``roman(14) == "xiv"``)."""
    out = []
    for digits, value in _ROMAN_VALUES:
        while n >= value:
            out.append(digits)
            n -= value
    return "".join(out)


def roman_value(text: str) -> int:
    """The value of a lower-case roman numeral written the usual way, else 0."""
    total, rest = 0, text
    for digits, value in _ROMAN_VALUES:
        while rest.startswith(digits):
            total += value
            rest = rest[len(digits):]
    return total if not rest and roman(total) == text else 0


@dataclass(frozen=True)
class _Run:
    """A run hypothesis: where the number sits, its style, its prefix, value − page."""

    place: str
    style: str
    prefix: str
    offset: int

    def label(self, page: int) -> str:
        value = page + self.offset
        if self.style == "roman":
            return roman(value)
        return f"{self.prefix}-{value}" if self.prefix else str(value)

    @property
    def needs(self) -> int:
        return MIN_RUN if self.style in ("bare", "header") else MIN_MARKED_RUN


def margin_lines(lines: Sequence[str]) -> list[int]:
    """Indices of the lines that carry the page's margin line numbers 1, 2, 3, ... (empty
    when fewer than :data:`MIN_MARGIN` count up that way). A number may be skipped (a line
    OCR misread: ``l`` for ``1``), never more than two in a row."""
    found, last = [], 0
    for i, line in enumerate(lines):
        m = _MARGIN.match(line)
        if m and last < int(m.group(1)) <= min(last + 3, MARGIN_MAX):
            found.append(i)
            last = int(m.group(1))
    return found if len(found) >= MIN_MARGIN else []


def _edges(text: str) -> tuple[list[int], list[str]]:
    """``(margin line indices, lines)`` of a page: the whole page when it may number its lines
    in the margin, else only the non-empty lines at its ends (cheap on long pages)."""
    if len(_DIGIT_LINE.findall(text, 0, 20_000)) >= MIN_MARGIN - 1:
        lines = text.splitlines()
        return margin_lines(lines), lines
    if len(text) <= 2 * EDGE_SPAN:
        return [], text.splitlines()
    tail = text[-EDGE_SPAN:].splitlines()[1:]  # its first line may be cut
    return [], [*text[:EDGE_SPAN].splitlines(), *tail]


def _candidates(lines: list[str], skip: set[int]) -> list[tuple[str, str, str, int]]:
    """``(place, style, prefix, value)`` for each number the page's edge lines print."""
    shown = [i for i, line in enumerate(lines) if line.strip() and i not in skip]
    out = []
    for place, picked in (("top", shown[:EDGE_LINES]), ("bottom", shown[-EDGE_LINES:])):
        for i in picked:
            found = _number(lines[i].strip())
            if found is not None:
                out.append((place, *found))
    return out


def _number(line: str) -> tuple[str, str, int] | None:
    """``(style, prefix, value)`` of a line that is a page number, else None."""
    if len(line) > SHORT_LINE:  # only a header ending "Page N" is longer
        tail = line[-22:]
        if ("Page" in tail or "PAGE" in tail) and (m := _HEADER_PAGE.match(line)):
            return "header", "", int(m.group(1))
        return None
    if m := _BARE.match(line):
        return ("marked" if m.group(1) else "bare"), "", int(m.group(2))
    if m := _LETTERED.match(line):
        return "marked", m.group(1), int(m.group(2))
    if (m := _ROMAN.match(line)) and (value := roman_value(m.group(1))):
        return "roman", "", value
    if m := _HEADER_PAGE.match(line):
        return "header", "", int(m.group(1))
    return None


def read_printed(pages: Sequence[str]) -> Printed:
    """The printed page labels and line numbering of a document's pages (see the module)."""
    votes: dict[_Run, set[int]] = {}
    margins = 0
    for page, text in enumerate(pages, 1):
        margin, lines = _edges(text)
        skip = set(margin)
        margins += bool(skip)
        for place, style, prefix, value in _candidates(lines, skip):
            votes.setdefault(_Run(place, style, prefix, value - page), set()).add(page)
    labels = [""] * len(pages)
    taken: list[tuple[int, int]] = []
    for run, support in sorted(votes.items(), key=lambda kv: (-len(kv[1]), min(kv[1]))):
        first, last = min(support), max(support)
        if (len(support) < run.needs or 2 * len(support) < last - first + 1
                or first + run.offset < 1
                or any(lo <= last and first <= hi for lo, hi in taken)):
            continue
        taken.append((first, last))
        for page in range(first, last + 1):
            labels[page - 1] = run.label(page)
    written = sum(1 for text in pages if text.strip())
    lined = margins > 0 and 2 * margins >= written
    return Printed(labels if any(labels) else [], lined)


def printed_line(page_text: str, line: int, look_back: int = 4) -> int:
    """The margin number of line ``line`` (1-based) of a page with line numbers: the number it
    starts with; for a line without one, the number its neighbours imply (one line a number,
    a misread one) or that of the numbered line at most ``look_back`` lines above (a wrapped
    line); 0 when there is none. Where OCR read the numbers as a column of their own, the
    page's other lines (headers aside) are matched to them in order when there are as many
    as the column counts, else 0."""
    lines = page_text.splitlines()
    numbers = {i: int(lines[i].split()[0]) for i in margin_lines(lines)}
    at = line - 1
    if not numbers or not 0 <= at < len(lines):
        return 0
    if 2 * sum(1 for i in numbers if len(lines[i].split()) > 1) < len(numbers):
        return _column_line(lines, numbers, at)
    if at in numbers:
        return numbers[at]
    above = max((i for i in numbers if i < at), default=None)
    below = min((i for i in numbers if i > at), default=None)
    if above is None:
        return 0
    if below is not None and numbers[below] - numbers[above] == below - above:
        return numbers[above] + at - above
    return numbers[above] if at - above <= look_back else 0


def _column_line(lines: list[str], numbers: dict[int, int], at: int) -> int:
    """The margin number of line ``at`` (0-based) on a page whose numbers stand in a column
    of their own: the k-th line of text gets the column's k-th number, when the text has as
    many lines as the column counts (a misread number inside the column still counts)."""
    lo, hi = min(numbers.values()), max(numbers.values())
    first, last = min(numbers), max(numbers)  # the column's lines, a misread one among them
    body = [i for i, text in enumerate(lines) if text.strip() and not first <= i <= last
            and _number(text.strip()) is None]
    if len(body) != hi - lo + 1 or at not in body:
        return 0
    return lo + body.index(at)


_CITED = re.compile(r"^\s*(?:page\s+|p\.\s*)?(\S+?)(?:\s*:\s*(\d{1,3}))?\s*$", re.I)


def printed_page(cited: str | int) -> tuple[str, int]:
    """A printed page as cited → ``(label, margin line)`` (line 0: none given).

    >>> printed_page("452:7"), printed_page("Page A-12"), printed_page(12)
    (('452', 7), ('A-12', 0), ('12', 0))
    """
    m = _CITED.match(str(cited))
    if m is None:
        raise ValueError(f"{cited!r} is not a printed page: write it as printed, e.g. 'A-12', "
                         "'iv', '452', or a transcript's page and line '452:7'")
    return m.group(1), int(m.group(2) or 0)
