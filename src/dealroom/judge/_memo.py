"""Reading a memo the way the reference judge needs: finding contexts and what they state.

A memo is cut into *blocks*, the contexts a finding lives in: a paragraph, a top-level list item
with its nested items, or a table row. Each block knows its chain of headings. From a block's
text we extract citations (``[D00042 p.3]``, ``[D00042]``, ``[D00042 pp.3-4]``, several in one
bracket), amounts in US dollars, dates and severity labels.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from datetime import date

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_BOLD_LINE = re.compile(r"^\s*(?:\*\*|__)([^*_].*?)(?:\*\*|__)\s*:?\s*$")
_ITEM = re.compile(r"^(\s*)(?:[-*+•]|\d{1,3}[.)]|[a-zA-Z][.)])\s+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")

_CITE_GROUP = re.compile(r"[\[(]([^\[\]()]*\bD\d{5}\b[^\[\]()]*)[\])]")
_DOC_ID = re.compile(r"\bD\d{5}\b")

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE_WORDS = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "mm": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "mil": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
}
_AMOUNT = re.compile(
    rf"(?:(?:US\$|USD|\$)\s?(?P<n1>{_NUM})(?:\s?(?P<s1>thousand|million|billion|mil|mm|mn|bn|k|m|b)\b)?)"
    rf"|(?:\b(?P<n2>{_NUM})\s?(?P<s2>thousand|million|billion|mm|mn|bn|m)\b(?:\s?(?:USD|dollars))?)"
    rf"|(?:\b(?P<n3>{_NUM})\s?(?:USD|dollars)\b)",
    re.IGNORECASE,
)

_SCALE = r"thousand|million|billion|mil|mm|mn|bn|k|m|b"
_CURRENCY = r"US\$|USD|\$"
_RANGE = re.compile(
    rf"(?P<c1>{_CURRENCY})?\s?(?P<a>{_NUM})(?:\s?(?P<sa>{_SCALE})\b)?\s*(?P<sep>[-–—]|\bto\b|\band\b)"
    rf"\s*(?P<c2>{_CURRENCY})?\s?(?P<b>{_NUM})(?:\s?(?P<sb>{_SCALE})\b)?",
    re.IGNORECASE,
)
"""``$1.1–1.8 million``, ``$1.1 million to $1.8 million``, ``between $1.1 and $1.8 million``."""

_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES, start=1)}
_MONTH = (
    r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_DATES = [
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b"),
    re.compile(rf"\b{_MONTH}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}})\b", re.I),
    re.compile(
        rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(?P<y>\d{{4}})\b", re.I
    ),
    re.compile(r"\b(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})\b"),
    re.compile(rf"\b{_MONTH}\s+(?P<y>\d{{4}})\b", re.I),
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})\b(?!-\d)"),
]

_LABEL = r"(high|medium|moderate|low|critical)"
_SEVERITY = [
    re.compile(
        rf"\b(?:severity|risk(?: level| rating)?|priority|rating)\s*(?:[:=\-–—]|is|of)?"
        rf"\s*[*_(\[]*\s*{_LABEL}\b",
        re.I,
    ),
    re.compile(rf"\b{_LABEL}[\s\-–]+(?:severity|risk|priority)\b", re.I),
    re.compile(rf"[\[(]\s*{_LABEL}\s*[\])]", re.I),
    re.compile(rf"\|\s*[*_]*{_LABEL}[*_]*\s*(?=\|)", re.I),
]
_SEVERITY_LIST = re.compile(rf"\b{_LABEL}\s*(?:/|,|\bor\b|\band\b|\|)\s*{_LABEL}\b", re.I)
_CANON = {"critical": "high", "moderate": "medium"}


@dataclass
class Block:
    """One finding context of a memo."""

    text: str
    headings: list[str] = field(default_factory=list)
    """Enclosing headings, outermost first."""
    line: int = 0
    """1-based line where the block starts."""


@dataclass
class Memo:
    """A memo cut into blocks, with its headings."""

    text: str
    blocks: list[Block]
    headings: list[str]


def parse_memo(text: str) -> Memo:
    """Cut ``text`` into :class:`Block` s (see the module docstring)."""
    blocks: list[Block] = []
    headings: list[str] = []
    stack: list[tuple[int, str]] = []
    current: list[str] = []
    start = 0

    def flush() -> None:
        if any(line.strip() for line in current):
            blocks.append(Block("\n".join(current).strip(), [h for _, h in stack], start))
        current.clear()

    for no, line in enumerate(text.splitlines(), start=1):
        level, title = _heading(line)
        if title is not None:
            flush()
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            headings.append(title)
            continue
        if not line.strip() or _TABLE_RULE.match(line):
            flush()
            continue
        item = _ITEM.match(line)
        new_item = item is not None and len(item.group(1).expandtabs(4)) < 2
        if new_item or line.lstrip().startswith("|"):
            flush()
        if not current:
            start = no
        current.append(line)
    flush()
    return Memo(text, blocks, headings)


def _heading(line: str) -> tuple[int, str | None]:
    match = _HEADING.match(line)
    if match:
        return len(match.group(1)), match.group(2).strip()
    match = _BOLD_LINE.match(line)
    if match:
        return 7, match.group(1).strip()
    return 0, None


@functools.lru_cache(maxsize=4096)
def citations(text: str) -> frozenset[str]:
    """Document ids cited in ``text`` in brackets or parentheses."""
    return frozenset(d for group in _CITE_GROUP.findall(text) for d in _DOC_ID.findall(group))


@functools.lru_cache(maxsize=4096)
def amounts(text: str) -> tuple[float, ...]:
    """US-dollar amounts stated in ``text``; a range gives both ends, each at its scale.

    >>> amounts("fees of $88.2 million, USD 88.2m, $88,200,000 and 88.2M; 3 years")
    (88200000.0, 88200000.0, 88200000.0, 88200000.0)
    >>> amounts("an exposure of $1.1–1.8 million")
    (1100000.0, 1800000.0)
    """
    found = _ranges(text)
    taken = [span for span, _ in found]
    out = [(span[0], v) for span, pair in found for v in pair]
    for m in _AMOUNT.finditer(text):
        if any(lo <= m.start() < hi for lo, hi in taken):
            continue
        num = m.group("n1") or m.group("n2") or m.group("n3")
        scale = (m.group("s1") or m.group("s2") or "").lower()
        out.append((m.start(), round(float(num.replace(",", "")) * _SCALE_WORDS.get(scale, 1.0),
                                     2)))
    return tuple(v for _, v in sorted(out, key=lambda x: x[0]))


@functools.lru_cache(maxsize=4096)
def amount_ranges(text: str) -> tuple[tuple[float, float], ...]:
    """US-dollar ranges stated in ``text`` as ``(low, high)``.

    >>> amount_ranges("between $1.1 and $1.8 million; $2m to $3m; 2023-2024")
    ((1100000.0, 1800000.0), (2000000.0, 3000000.0))
    """
    return tuple(pair for _, pair in _ranges(text))


def _ranges(text: str) -> list[tuple[tuple[int, int], tuple[float, float]]]:
    """Each range's span and ``(low, high)``: a currency mark, a rising pair (``and`` only
    after *between*); a scale written once applies to both ends."""
    out = []
    for m in _RANGE.finditer(text):
        between = text[:m.start()].rstrip().lower().endswith("between")
        if not (m.group("c1") or m.group("c2")) or (m.group("sep").lower() == "and"
                                                      and not between):
            continue
        scale_b = (m.group("sb") or m.group("sa") or "").lower()
        scale_a = (m.group("sa") or m.group("sb") or "").lower()
        low = float(m.group("a").replace(",", "")) * _SCALE_WORDS.get(scale_a, 1.0)
        high = float(m.group("b").replace(",", "")) * _SCALE_WORDS.get(scale_b, 1.0)
        if low < high:
            out.append(((m.start(), m.end()), (round(low, 2), round(high, 2))))
    return out


@functools.lru_cache(maxsize=4096)
def dates(text: str) -> frozenset[tuple[int, int, int]]:
    """Dates stated in ``text`` as ``(year, month, day)``; day 0 when only a month is named.

    >>> sorted(dates("on 15 March 2024, i.e. 2024-03-15; renewal March 2025"))
    [(2024, 3, 15), (2025, 3, 0)]
    """
    found: set[tuple[int, int, int]] = set()
    for pattern in _DATES:
        for m in pattern.finditer(text):
            parts = m.groupdict()
            month = int(parts["m"]) if parts.get("m") else _MONTHS[parts["mon"][:3].lower()]
            day = int(parts.get("d") or 0)
            if _valid(int(parts["y"]), month, day):
                found.add((int(parts["y"]), month, day))
    days = {(y, m) for y, m, d in found if d}
    return frozenset(d for d in found if d[2] or (d[0], d[1]) not in days)


def _valid(year: int, month: int, day: int) -> bool:
    try:
        date(year, month, day or 1)
    except ValueError:
        return False
    return 1900 <= year <= 2100


def parse_iso(value: str) -> tuple[int, int, int]:
    """``2024-03-15`` → (2024, 3, 15); ``2024-03`` → (2024, 3, 0)."""
    parts = [int(p) for p in value.strip().split("-")]
    return parts[0], parts[1] if len(parts) > 1 else 0, parts[2] if len(parts) > 2 else 0


def date_matches(expected: tuple[int, int, int], found: frozenset[tuple[int, int, int]]) -> bool:
    """A stated date matches an expected day exactly, or an expected month by any day in it."""
    y, m, d = expected
    if d:
        return expected in found
    return any(fy == y and fm == m for fy, fm, _ in found)


@functools.lru_cache(maxsize=4096)
def severities(text: str) -> frozenset[str]:
    """Severity labels stated in ``text`` (``critical`` counts as high, ``moderate`` as medium).

    >>> sorted(severities("Severity: **High**. Unlike the low-risk lease"))
    ['high', 'low']
    """
    found = [x for pattern in _SEVERITY for x in pattern.findall(text)]
    found += [x for pair in _SEVERITY_LIST.findall(text) for x in pair]  # "High / Low": both
    return frozenset(_CANON.get(x.lower(), x.lower()) for x in found)


def heading_severity(heading: str) -> frozenset[str]:
    """Severity named by a heading: a labelled phrase, or the bare label as the heading."""
    bare = re.fullmatch(rf"[\W\d]*{_LABEL}[\W]*", heading, re.I)
    if bare:
        return frozenset({_CANON.get(bare.group(1).lower(), bare.group(1).lower())})
    return severities(heading)


@functools.lru_cache(maxsize=4096)
def normalize(text: str) -> str:
    """Lowercase, straight quotes, hyphens and slashes as spaces, single spaces."""
    text = text.lower().replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    return " ".join(re.sub(r"[-‐‑–—_/]", " ", text).split())


@functools.lru_cache(maxsize=4096)
def term_pattern(term: str) -> re.Pattern[str]:
    """Whole-word (plural-tolerant) pattern of a normalised key phrase."""
    return re.compile(rf"(?<![a-z0-9]){re.escape(normalize(term))}(?:s|es)?(?![a-z0-9])")


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences (at ``. ! ?`` or ``;`` followed by space, and at lines)."""
    parts = re.split(r"(?<=[.!?;])\s+(?=[^a-z])|\n+", text)
    return [p for p in (s.strip() for s in parts) if p]
