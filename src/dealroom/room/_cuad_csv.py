"""CUAD's labels as ``master_clauses.csv`` ships them: one row per contract.

::

    Filename,Document Name,Document Name-Answer,Parties,Parties-Answer,...,Change Of Control,...
    "ACME_2019-EX-10.1-SUPPLY AGREEMENT.pdf","['SUPPLY AGREEMENT']",SUPPLY AGREEMENT,...,"[]",...

``Filename`` names the contract (its PDF's name; the title is that name without ``.pdf``);
each category has a column of the labelled span texts, a Python list literal (``[]``: none),
and a ``<Category>-Answer`` column (``Yes``/``No``, a date: not a label, left out). The file
is read with :mod:`csv` (a cell over :data:`MAX_CELL` characters is refused), each span list
with :func:`ast.literal_eval` (literals only, nothing run); a malformed cell is an
:class:`~dealroom.errors.InputError` naming its line, contract and column. The CSV gives
span texts, not offsets: :func:`dealroom.room._cuad.import_cuad` finds each in the room's
text, and reports those it cannot find.
"""

from __future__ import annotations

import ast
import csv
import io
import re
from collections.abc import Iterable

CUAD_CSV = "master_clauses.csv"
MAX_CELL = 131_072
"""The longest cell read (characters): :mod:`csv`'s own field limit, checked per cell."""
_ANSWER = re.compile(r"-\s*answer\s*$", re.I)
_SUFFIX = re.compile(r"\.(?:pdf|txt)$", re.I)

Row = tuple[str, dict[str, list[str]], int]
"""A contract's title, its category → labelled span texts, and its line in the file."""


class CellError(ValueError):
    """A malformed cell or row; the message says what is wrong (the caller adds where)."""


def parse_clauses(text: str, known: Iterable[str] = ()) -> list[Row]:
    """The rows of a ``master_clauses.csv`` (its text): a :class:`CellError` names the line
    and, for a cell, the contract and column. Category names equal to one of ``known`` but
    for case and spaces are spelled as there."""
    canonical = {_key(k): k for k in known}
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader, [])]
        if "Filename" not in header:
            raise CellError("line 1 has no 'Filename' column: it is not CUAD's "
                            "master_clauses.csv (Filename, then a column of span lists and a "
                            "'<Category>-Answer' column per category)")
        name = header.index("Filename")
        columns = [(i, canonical.get(_key(h), h)) for i, h in enumerate(header)
                   if h and i != name and not _ANSWER.search(h)]
        rows = []
        for row in reader:
            if any(cell.strip() for cell in row):
                rows.append(_row(row, len(header), name, columns, reader.line_num))
        return rows
    except csv.Error as exc:
        detail = "a cell is over 131,072 characters" if "field limit" in str(exc) else exc
        raise CellError(f"line {reader.line_num}: {detail}") from None


def _row(row: list[str], width: int, name: int, columns: list[tuple[int, str]],
         line: int) -> Row:
    if len(row) != width:
        raise CellError(f"line {line} has {len(row)} cells, the header {width}")
    title = _SUFFIX.sub("", row[name].strip()).strip()
    if not title:
        raise CellError(f"line {line}: Filename is empty")
    spans = {}
    for i, category in columns:
        try:
            spans[category] = span_list(row[i])
        except CellError as exc:
            raise CellError(f"line {line} ({_short(title)}), column {category!r}: "
                            f"{exc}") from None
    return title, spans, line


def span_list(cell: str) -> list[str]:
    """A cell's span texts: a Python list of strings (``['text', ...]``), empty for ``[]`` or
    an empty cell; anything else is a :class:`CellError`.

    >>> span_list("['Neither party may assign', \\"the Distributor's rights\\"]")
    ['Neither party may assign', "the Distributor's rights"]
    """
    text = cell.strip()
    if not text:
        return []
    if len(text) > MAX_CELL:
        raise CellError(f"the cell is {len(text):,} characters, over {MAX_CELL:,}")
    if not (text.startswith("[") and text.endswith("]")):
        raise CellError(f"{_short(text)} is not a list of span texts such as ['text', ...]")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        why = exc.msg if isinstance(exc, SyntaxError) else type(exc).__name__
        raise CellError(f"{_short(text)} is not a list of quoted span texts ({why})") from None
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise CellError(f"{_short(text)} is not a list of span texts (strings)")
    return [v for v in value if v.strip()]


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
