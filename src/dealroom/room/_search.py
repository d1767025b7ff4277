"""Ranked full-text search over the room's pages (SQLite FTS5, bm25).

A query is cut into units: a double-quoted phrase, a word, a word ending in ``*`` (prefix), or
a token with punctuation such as ``4.2`` or ``change-of-control`` (a phrase of its words).
Unquoted English stop words are dropped. Scoring every page that holds a very common term is
what makes FTS5 slow (about 2 µs a page), so the planner

0. drops units found on no page at all (they would only make the AND empty);
1. sets aside units found on more than :data:`COMMON` of all pages (their bm25 weight is
   near zero anyway) and uses them only when the rarer units match nothing;
2. asks for pages holding *all* kept units, best bm25 first;
3. if that gives fewer than ``k`` pages, fills up with pages holding any of the rarest units
   (on at most :data:`RARE` of pages: cheap to score), then with pages holding any unit.

Results are ``(page_rowid, score)`` with higher scores better; rowid is the page index + 1.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from dealroom.room._index import TOKENIZE

COMMON = 0.25
RARE = 0.02
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
    "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "will", "with",
    "which", "who", "what", "when", "where", "any", "all", "not", "no",
})
_UNIT = re.compile(r'"([^"]*)"|(\S+)')
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Unit:
    """One searchable piece of a query."""

    words: tuple[str, ...]
    prefix: bool = False

    def fts(self) -> str:
        return '"' + " ".join(self.words) + '"' + (" *" if self.prefix else "")


def parse_query(query: str) -> list[Unit]:
    """Split a free-text query into units; stop words go unless nothing else is left."""
    units, stops = [], []
    for m in _UNIT.finditer(query):
        quoted = m.group(1) is not None
        raw = m.group(1) if quoted else m.group(2)
        words = tuple(_WORD.findall(raw))
        if not words:
            continue
        unit = Unit(words, prefix=not quoted and raw.endswith("*"))
        plain = not quoted and len(words) == 1 and not unit.prefix
        (stops if plain and words[0].lower() in STOPWORDS else units).append(unit)
    return units or stops


class SearchIndex:
    """The FTS5 table of one room's index, opened read-only."""

    def __init__(self, db_path: Path, n_pages: int) -> None:
        uri = f"file:{quote(str(db_path))}?mode=ro&immutable=1"
        self._db = sqlite3.connect(uri, uri=True, check_same_thread=False)
        self._common = dict(self._db.execute("SELECT term, df FROM common"))
        self._tok = sqlite3.connect(":memory:", check_same_thread=False)
        self._tok.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize='{TOKENIZE}')")
        self._tok.execute("CREATE VIRTUAL TABLE tv USING fts5vocab(t, 'row')")
        self._lock = threading.Lock()
        self.n_pages = n_pages

    def close(self) -> None:
        self._db.close()
        self._tok.close()

    def _df(self, unit: Unit) -> int:
        """Pages holding the unit, as far as the ``common`` table tells (0: a rare unit)."""
        if unit.prefix:
            return 0 if len(unit.words[-1]) >= 3 else self.n_pages
        self._tok.execute("DELETE FROM t")
        self._tok.execute("INSERT INTO t(x) VALUES (?)", (" ".join(unit.words),))
        terms = [row[0] for row in self._tok.execute("SELECT term FROM tv")]
        return min((self._common.get(t, 0) for t in terms), default=0)

    def query(self, units: list[Unit], k: int,
              ranges: list[tuple[int, int]] | None = None) -> list[tuple[int, float]]:
        """Best pages for ``units`` within page-rowid ``ranges`` (inclusive), best first."""
        if not units or k <= 0:
            return []
        with self._lock:
            dfs = {u: self._df(u) for u in units}
            units = [u for u in units if dfs[u] or self._exists(u)]  # absent words only cost
            rare = [u for u in units if dfs[u] <= COMMON * self.n_pages]
            common = sorted((u for u in units if u not in rare), key=dfs.__getitem__)[:3]
            found = self._all_then_any(rare, dfs, k, ranges) if rare else []
            if not found and common:  # nothing rarer matched: pay for the common terms
                found = self._all_then_any(common, dfs, k, ranges)
        return found

    def _exists(self, unit: Unit) -> bool:
        try:
            return self._db.execute("SELECT 1 FROM pages WHERE pages MATCH ? LIMIT 1",
                                    (unit.fts(),)).fetchone() is not None
        except sqlite3.OperationalError:
            return False

    def _all_then_any(self, units: list[Unit], dfs: dict[Unit, int], k: int,
                      ranges: list[tuple[int, int]] | None) -> list[tuple[int, float]]:
        """Pages with all units; then pages with any of the rarest, then with any at all."""
        found = self._run(" AND ".join(u.fts() for u in units), k, ranges, ())
        if len(units) == 1:
            return found
        rarest = [u for u in units if dfs[u] <= RARE * self.n_pages]
        for group in ([rarest] if 0 < len(rarest) < len(units) else []) + [units]:
            if len(found) >= k:
                break
            seen = tuple(rowid for rowid, _ in found)
            found += self._run(" OR ".join(u.fts() for u in group), k - len(found), ranges, seen)
        return found

    def _run(self, match: str, k: int, ranges: list[tuple[int, int]] | None,
             exclude: tuple[int, ...]) -> list[tuple[int, float]]:
        sql = "SELECT rowid, rank FROM pages WHERE pages MATCH ?"
        args: list[object] = [match]
        if ranges:
            sql += " AND (" + " OR ".join("rowid BETWEEN ? AND ?" for _ in ranges) + ")"
            args += [x for r in ranges for x in r]
        if exclude:
            sql += f" AND rowid NOT IN ({','.join('?' * len(exclude))})"
            args += exclude
        sql += " ORDER BY rank LIMIT ?"
        args.append(k)
        try:
            rows = self._db.execute(sql, args).fetchall()
        except sqlite3.OperationalError:  # e.g. a query the FTS5 parser rejects
            return []
        return [(rowid, -rank) for rowid, rank in rows]


def snippet_regex(units: list[Unit]) -> re.Pattern[str] | None:
    """A pattern finding where a hit page mentions the query (stems cut to match variants)."""
    alts = []
    for unit in units:
        word = unit.words[0]
        stem = word[: max(4, len(word) - 3)] if len(word) > 5 else word
        alts.append(re.escape(stem) if len(unit.words) == 1 else
                    r"\W+".join(re.escape(w) for w in unit.words))
    return re.compile(r"\b(?:" + "|".join(alts) + ")", re.I) if alts else None
