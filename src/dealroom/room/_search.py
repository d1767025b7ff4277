"""Ranked full-text search over the room's pages (SQLite FTS5, bm25).

A query is cut into units: a double-quoted phrase, a word, a word ending in ``*`` (prefix), or
a token with punctuation such as ``4.2`` or ``change-of-control`` (a phrase of its words).
Unquoted English stop words are dropped. No other word is dropped: bm25's own IDF weighting
makes a word found on a third of the pages ("change", "control") count for little alone, and
the words *together* are what matter, so the ranker

0. drops units found on no page at all (they would only make the AND empty); an unquoted
   hyphenated unit found nowhere (``non-compete``) is searched as its words instead;
1. gathers candidate pages with FTS5: the best by bm25 holding all units and holding them
   within :data:`NEAR` words, then (only when those are fewer than the pool: scoring every
   page that holds any common word is what makes FTS5 slow) the best holding any unit, and
   the best holding the query as written (each ``ORDER BY rank LIMIT`` a pool);
2. scores each candidate by its bm25 over all units, times ``1 +`` :data:`BOOST_ALL` when its
   text holds all units, ``+`` :data:`BOOST_NEAR` when they stand within :data:`NEAR` words,
   ``+`` :data:`BOOST_PHRASE` when it holds the unquoted words as a phrase (up to two stop
   words between them: ``change control`` finds ``change in control``). The boosts are looked
   for in the candidates' own text (word stems, as for snippets), far cheaper than asking
   FTS5 about each page.

Results are ``(page_rowid, score)`` with higher scores better; rowid is the page index + 1.
``benchmarks/search_precision.py`` measures precision at 5 on labelled contracts.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from dealroom.room._index import TOKENIZE

NEAR = 8
"""Words apart (at most) for the proximity boost."""
BOOST_ALL, BOOST_NEAR, BOOST_PHRASE = 0.5, 1.0, 4.0
"""Multipliers added to 1 for a page holding all units, them close together, the phrase."""
POOL = 30
"""Candidates gathered per kind of match (at least; ``2 * k`` when larger)."""
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
    quoted: bool = False
    """Written in double quotes: a phrase the user asked for as is."""

    def fts(self) -> str:
        return '"' + " ".join(self.words) + '"' + (" *" if self.prefix else "")


def parse_query(query: str) -> list[Unit]:
    """Split a free-text query into units; stop words go unless nothing else is left."""
    units: list[Unit] = []
    stops: list[Unit] = []
    for m in _UNIT.finditer(query):
        quoted = m.group(1) is not None
        raw = m.group(1) if quoted else m.group(2)
        words = tuple(_WORD.findall(raw))
        if not words:
            continue
        unit = Unit(words, prefix=not quoted and raw.endswith("*"), quoted=quoted)
        plain = not quoted and len(words) == 1 and not unit.prefix
        (stops if plain and words[0].lower() in STOPWORDS else units).append(unit)
    return units or stops


def query_phrase(query: str) -> Unit | None:
    """The query's unquoted words as one phrase, stop words kept (``None``: under two words).

    >>> query_phrase("change of control").words
    ('change', 'of', 'control')
    """
    words = tuple(w for m in _UNIT.finditer(query) if m.group(1) is None
                  for w in _WORD.findall(m.group(2)))
    return Unit(words) if len(words) >= 2 else None


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

    def query(self, units: list[Unit], k: int, ranges: list[tuple[int, int]] | None = None,
              phrase: Unit | None = None,
              text_of: Callable[[int], str] | None = None) -> list[tuple[int, float]]:
        """Best pages for ``units`` within page-rowid ``ranges`` (inclusive), best first;
        pages holding ``phrase`` (the query as written) rank higher. ``text_of(rowid)`` gives
        a page's text, where the phrase and proximity boosts are looked for."""
        if not units or k <= 0:
            return []
        with self._lock:
            units = [w for u in units for w in self._present(u)]
            if not units:
                return []
            scores = self._candidates(units, max(POOL, 2 * k), ranges, phrase)
        if text_of is not None and scores:
            scores = boosted(scores, units, phrase, text_of)
        return sorted(scores.items(), key=lambda x: (-x[1], x[0]))[:k]

    def _candidates(self, units: list[Unit], pool: int, ranges: list[tuple[int, int]] | None,
                    phrase: Unit | None) -> dict[int, float]:
        """Pages worth ranking, with their bm25 over all units: the best holding all of them,
        them close together, any of them (when the first are too few), the phrase as written."""
        fts = [u.fts() for u in units]
        matches = [" AND ".join(fts), f"NEAR({' '.join(fts)}, {NEAR})"] if len(fts) > 1 else []
        scores: dict[int, float] = {}
        for match in matches:  # bm25 sums over the units, as the OR's would
            for rowid, score in self._run(match, pool, ranges, ()):
                scores.setdefault(rowid, score)
        if len(scores) < pool:  # too few hold every unit: pages holding some of them
            for rowid, score in self._run(" OR ".join(fts), pool, ranges, ()):
                scores.setdefault(rowid, score)
        if phrase is not None and len(phrase.words) > 1:
            floor = min(scores.values(), default=1e-6)  # bm25 of one phrase: another scale
            for rowid, _ in self._run(phrase.fts(), pool, ranges, ()):
                scores.setdefault(rowid, floor)
        return scores

    def _present(self, unit: Unit) -> list[Unit]:
        """``[unit]`` when some page holds it; an unquoted hyphenated unit found nowhere
        (``non-compete``) as its words; else nothing (an absent unit only costs)."""
        single = len(unit.words) == 1 and not unit.prefix  # a phrase's df is a guess: ask
        if (single and self._df(unit)) or self._exists(unit):
            return [unit]
        if unit.quoted or len(unit.words) < 2:
            return []
        words = [Unit((w,)) for w in unit.words if w.lower() not in STOPWORDS and len(w) > 2]
        return [w for w in words if self._df(w) or self._exists(w)]

    def _exists(self, unit: Unit) -> bool:
        try:
            return self._db.execute("SELECT 1 FROM pages WHERE pages MATCH ? LIMIT 1",
                                    (unit.fts(),)).fetchone() is not None
        except sqlite3.OperationalError:
            return False

    def _run(self, match: str, k: int, ranges: list[tuple[int, int]] | None,
             exclude: tuple[int, ...]) -> list[tuple[int, float]]:
        """Up to ``k`` pages matching, best bm25 first, within ``ranges``, not in ``exclude``."""
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


_GAP = r"\W+(?:(?:" + "|".join(sorted(STOPWORDS)) + r")\W+){0,2}"
"""Between two words of a phrase: up to two stop words (``change in control``)."""


def _unit_regex(unit: Unit, gaps: bool = False) -> re.Pattern[str]:
    """Where a page holds ``unit``: its words in order, each as a stem with any ending (with
    ``gaps``, up to two stop words between them)."""
    between = _GAP if gaps else r"\W+"
    return re.compile(r"\b" + between.join(_stem(w) + r"\w*" for w in unit.words), re.I)


def _stem(word: str) -> str:
    word = word.lower()
    return re.escape(word[: max(4, len(word) - 3)] if len(word) > 5 else word)


def boosted(scores: dict[int, float], units: list[Unit], phrase: Unit | None,
            text_of: Callable[[int], str]) -> dict[int, float]:
    """``scores`` times ``1 + BOOST_ALL`` (page holds every unit) ``+ BOOST_NEAR`` (all within
    :data:`NEAR` words) ``+ BOOST_PHRASE`` (the query as written), looked for in the text."""
    patterns = [_unit_regex(u) for u in units]
    wanted = (_unit_regex(phrase, gaps=True) if phrase is not None and len(phrase.words) > 1
              else None)
    out = {}
    for rowid, score in scores.items():
        text = text_of(rowid)
        spots = [[m.start() for m in p.finditer(text)] for p in patterns]
        mult = 1.0
        if len(units) > 1 and all(spots):
            mult += BOOST_ALL + (BOOST_NEAR if _close(text, spots) else 0.0)
        if wanted is not None and wanted.search(text):
            mult += BOOST_PHRASE
        out[rowid] = score * mult
    return out


def _close(text: str, spots: list[list[int]]) -> bool:
    """Whether one place of every unit lies within :data:`NEAR` words of one place of the
    rarest unit (words counted only between the two places)."""
    rarest = min(spots, key=len)
    others = [s for s in spots if s is not rarest]
    for pos in rarest[:200]:
        if all(any(_words_between(text, pos, p) <= NEAR + 2 for p in _near_first(s, pos))
               for s in others):
            return True
    return False


def _near_first(places: list[int], pos: int, reach: int = 400) -> list[int]:
    """The places within ``reach`` characters of ``pos`` (the only ones that can be close)."""
    lo, hi = bisect_right(places, pos - reach), bisect_right(places, pos + reach)
    return places[lo:hi]


def _words_between(text: str, a: int, b: int) -> int:
    lo, hi = min(a, b), max(a, b)
    return len(_WORD.findall(text, lo, hi)) - 1 if hi > lo else 0


def snippet_regex(units: list[Unit]) -> re.Pattern[str] | None:
    """A pattern finding where a hit page mentions the query (stems cut to match variants)."""
    alts = []
    for unit in units:
        word = unit.words[0]
        stem = word[: max(4, len(word) - 3)] if len(word) > 5 else word
        alts.append(re.escape(stem) if len(unit.words) == 1 else
                    r"\W+".join(re.escape(w) for w in unit.words))
    return re.compile(r"\b(?:" + "|".join(alts) + ")", re.I) if alts else None
