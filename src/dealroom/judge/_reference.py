"""The reference judge: deterministic verdicts from each criterion's ``expect`` block.

A positive criterion passes when one finding context of the memo (a paragraph, a top-level list
item with its sub-items, or a table row; long paragraphs are read as windows of
:data:`WINDOW_SENTENCES` sentences) holds *all* of its expected elements together:

* ``cite``: every listed document cited (``[D00042 p.3]``, ``[D00042]``, ...);
* ``pages``: ``{doc: [pages]}``, each document cited at one of its listed pages
  (``[D00042 p.3]``, ``[D00042 pp.2-4]``, ``(D00042, p. 3)``): where a labelled clause is;
* ``amounts``: every ``{value, tolerance}`` stated in US dollars within tolerance (default
  :data:`DEFAULT_TOLERANCE` of the value);
* ``dates``: every ISO date stated (an ISO month matches any day of it);
* ``terms``: one synonym of every group, in the context or its nearest heading;
* ``severity``: the one label of the context (or, if it has none, of its nearest labelled
  heading) equals the expected one;
* ``amounts`` may also be met by a stated range (``$1.1–1.8 million``) that holds the value
  (within tolerance) and spans no more than :data:`RANGE_RATIO` (high / low);
* ``contrary``: phrases stating the opposite polarity (``single-trigger`` where the criterion
  wants ``double-trigger``); a context stating one, not negated, does not count.

A context is a list, not a finding, and satisfies nothing when it cites :data:`LISTED` or more
of the documents the rubric cites for *other* findings (or more than :data:`MAX_LISTED`
documents in all), or states :data:`LISTED` or more of the amounts the rubric expects for other
findings; a criterion's finding is its ``finding`` key, else the criterion itself. Amounts are
counted by what the context states, not by what the rubric holds: a figure within tolerance of
one of the finding's own amounts is its own, and each other figure stands for at most one other
finding's amount, so one figure near several rubric amounts (common when a large room's rubric
holds hundreds of amounts) is not a list. So a memo that lists every document id, amount and
party of the room scores as if it were empty.
Sections headed like an index (*Documents reviewed*, *Appendix*, *Sources*, ...) hold no
findings and are skipped.

``sections``: every required heading is present. ``negative: true``: the criterion passes
unless some context states the described claim (all its elements) in a sentence, the claim's
terms read outside citation brackets (naming a document is not stating a claim), and no clause
stating the claim (holding a term of a group after the first: the first names the subject)
is left unqualified: a status word (*cured*, *waived*, *resolved*, ...) in that clause, or a
negation (*not*, *no*, *never*, ...) at most :data:`NEGATION_WINDOW` words before a claim term,
qualifies it ("could not sell" elsewhere in the sentence does not deny the claim). An empty
memo passes it, unless ``reviewed`` lists documents the deliverable must cite somewhere (a
claim left out counts only where the document was reviewed: CUAD's absent clauses); the
scores report the pass rate on positive criteria apart for that reason.

A criterion marked ``llm_only: true`` (a fact whose polarity the terms cannot tell) is a judge
error here, counted as not judgeable and never passed: the LLM judge scores it.
A criterion without a usable ``expect`` block is a judge error, never a pass.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from dealroom.errors import ConfigError
from dealroom.judge._memo import (
    Block,
    Memo,
    amount_ranges,
    amounts,
    citations,
    date_matches,
    dates,
    heading_severity,
    normalize,
    parse_iso,
    parse_memo,
    sentences,
    severities,
    term_pattern,
)
from dealroom.judge._scores import (
    ERROR,
    FAIL,
    PASS,
    Judge,
    Scores,
    graded_by_name,
    make_scores,
)

DEFAULT_TOLERANCE = 0.005
"""Relative tolerance for an amount whose ``tolerance`` is not given (0.5%)."""
LISTED = 3
"""A context citing this many documents, or stating this many amounts, of other findings is a
list."""
MAX_LISTED = 12
"""A context citing more documents than this is a list."""
WINDOW_SENTENCES = 5
LONG_BLOCK_WORDS = 250
RANGE_RATIO = 2.0
"""A stated range states a value inside it only when high <= RANGE_RATIO * low."""
NEGATION_WINDOW = 3
"""Words before a claim term in which a negation denies it."""
ELEMENT_KEYS = ("cite", "pages", "amounts", "dates", "terms", "severity")
KNOWN_KEYS = {*ELEMENT_KEYS, "negative", "sections", "reviewed", "contrary"}
_INDEX_HEADING = re.compile(
    r"\b(documents? (reviewed|list)|index|appendix|annex|sources|references|bibliography)\b",
    re.I,
)
"""Headings of sections that list documents rather than state findings."""
_CITE_GROUP = re.compile(r"[\[(]([^\[\]()]*\bD\d{5}\b[^\[\]()]*)[\])]")
_DOC_PART = re.compile(r"\b(D\d{5})\b([^D]*)")
_PAGE_LIST = re.compile(r"\b(?:pp?|pages?)\.?\s*(\d+(?:\s*[-\u2013]\s*\d+)?"
                        r"(?:\s*(?:,|and)\s*\d+(?:\s*[-\u2013]\s*\d+)?)*)", re.I)
_PAGE_SPAN = re.compile(r"(\d+)(?:\s*[-\u2013]\s*(\d+))?")
_STATUS = re.compile(
    r"\b(cured|waived|waiver|resolved|remedied|released|satisfied|obtained|settled|dismissed|"
    r"withdrawn|superseded|expired|terminated|rescinded|no longer)\b"
)
"""Words that mark the claim of their clause as no longer live."""
_NEGATION = re.compile(r"\b(not|never|none|no|nothing|neither|nor|without)\b|n't\b")
_CLAUSE = re.compile(r"[,;:()\[\]]|\b(?:but|although|though|however|whereas|while|yet|"
                     r"unless|except)\b")


def cited_pages(text: str) -> dict[str, frozenset[int]]:
    """Pages cited per document in ``text``'s bracketed or parenthesised citations.

    >>> sorted(cited_pages("[D00001 p.3] and (D00002, pp. 4-6, 9)")["D00002"])
    [4, 5, 6, 9]
    """
    out: dict[str, set[int]] = {}
    for group in _CITE_GROUP.findall(text):
        for doc, rest in _DOC_PART.findall(group):
            pages = out.setdefault(doc, set())
            for listed in _PAGE_LIST.findall(rest):
                for lo, hi in _PAGE_SPAN.findall(listed):
                    first, last = int(lo), int(hi or lo)
                    pages.update(range(first, min(last, first + 500) + 1))
    return {doc: frozenset(p) for doc, p in out.items()}


def reference_judge() -> Judge:
    """A :class:`Judge` that scores from ``expect`` blocks alone; no model is called."""

    async def judge(task: dict[str, Any], deliverables: dict[str, str]) -> Scores:
        memos: dict[tuple[str, ...], tuple[Memo, list[Context]]] = {}
        others = others_of(task)
        verdicts = {}
        for criterion in graded_by_name(task):
            names = tuple(criterion.get("deliverables") or deliverables)
            if names not in memos:
                memo = parse_memo("\n\n".join(deliverables.get(n, "") for n in names))
                memos[names] = memo, contexts_of(memo)
            verdicts[criterion["id"]] = _judge(criterion, *memos[names], others[criterion["id"]])
        return make_scores(task, verdicts, {"name": "reference"})

    judge.name = "reference"  # type: ignore[attr-defined]
    judge.args = {}  # type: ignore[attr-defined]
    judge.check_task = check_task  # type: ignore[attr-defined]
    return judge  # type: ignore[return-value]


def check_task(task: dict[str, Any], source: str) -> None:
    """Refuse a rubric with no ``expect`` block: the reference judge could score none of it."""
    if not any(c.get("expect") for c in task.get("criteria", [])):
        raise ConfigError(
            f"the rubric of {source} has no expect blocks (only generated rooms have them), so "
            "the reference judge cannot score it: pass --judge MODEL for the LLM judge"
        )


@dataclass(frozen=True, eq=False)
class Others:
    """The documents and amounts the rubric expects for *other* findings than a criterion's.

    A criterion's finding is its ``finding`` key (generated rubrics group criteria by finding),
    else the criterion alone; :func:`others_of` gives the criteria of one finding the same
    instance. ``own`` holds the finding's own amounts.
    """

    docs: frozenset[str] = frozenset()
    amounts: tuple[float, ...] = ()
    """Other findings' amounts, ascending."""
    own: tuple[float, ...] = ()

    def count_amounts(self, stated: tuple[float, ...], limit: int | None = None) -> int:
        """How many of these amounts ``stated`` states, each stated figure standing for one.

        A figure within :data:`DEFAULT_TOLERANCE` of one of the finding's own amounts is its
        own and not counted. The other figures are paired one-to-one with these amounts within
        the same tolerance, and the pairs counted (a maximum matching: the figures in ascending
        order, each taking the smallest amount still free within its reach). Counting rubric
        amounts instead would read a single figure as several when other findings' amounts lie
        within half a percent of it, as they do in rubrics of 5,000-document rooms. Counting
        stops at ``limit``.
        """
        return self.count_figures(figures_of(stated), limit)

    def count_figures(self, figures: tuple[float, ...], limit: int | None = None) -> int:
        """:meth:`count_amounts` of :func:`figures_of` amounts."""
        values = self.amounts
        count = j = 0
        for s in figures:
            if _near_any(s, self.own):
                continue
            # amounts below this figure's reach are below every later figure's too
            j = max(j, bisect_left(values, s / (1 + DEFAULT_TOLERANCE) * (1 - 1e-12)))
            while j < len(values) and values[j] < s and not _near(s, values[j]):
                j += 1
            if j < len(values) and _near(s, values[j]):
                count += 1
                j += 1
                if limit is not None and count >= limit:
                    break
        return count


def figures_of(stated: tuple[float, ...]) -> tuple[float, ...]:
    """The distinct absolute values of ``stated``, ascending."""
    return tuple(sorted({abs(s) for s in stated}))


def _near(stated: float, value: float) -> bool:
    return abs(stated - abs(value)) <= abs(value) * DEFAULT_TOLERANCE


def _near_any(stated: float, values: tuple[float, ...]) -> bool:
    return any(_near(stated, v) for v in values)


def others_of(task: dict[str, Any]) -> dict[str, Others]:
    """:class:`Others` for every criterion of ``task``."""
    docs: dict[str, set[str]] = {}
    amounts: dict[str, set[float]] = {}
    criteria = task.get("criteria", [])
    for c in criteria:
        expect = c.get("expect") if isinstance(c.get("expect"), dict) else {}
        key = str(c.get("finding") or c["id"])
        docs.setdefault(key, set()).update(str(d) for d in expect.get("cite") or [])
        amounts.setdefault(key, set()).update(
            abs(float(a["value"])) for a in expect.get("amounts") or []
        )
    all_docs = set().union(*docs.values()) if docs else set()
    all_amounts = set().union(*amounts.values()) if amounts else set()
    by_key = {
        key: Others(
            frozenset(all_docs - docs[key]),
            tuple(sorted(all_amounts - amounts[key])),
            tuple(sorted(amounts[key])),
        )
        for key in docs
    }
    return {c["id"]: by_key[str(c.get("finding") or c["id"])] for c in criteria}


class Context:
    """A finding context of a memo and what it states, extracted once for every criterion."""

    def __init__(self, block: Block, text: str) -> None:
        self.block, self.text = block, text
        self.cited = citations(text)
        self.stated = amounts(text)
        self.ranges = amount_ranges(text)
        self.figures = figures_of(self.stated)
        self.listed: dict[Others, str | None] = {}
        """:func:`_list_reason` by finding."""

    @cached_property
    def dates(self) -> frozenset[tuple[int, int, int]]:
        return dates(self.text)

    @cached_property
    def pages(self) -> dict[str, frozenset[int]]:
        return cited_pages(self.text)

    @cached_property
    def near(self) -> str:
        """The normalised text and its nearest heading, where terms are looked for."""
        heading = self.block.headings[-1] if self.block.headings else ""
        return normalize(self.text + "\n" + heading)

    @cached_property
    def severity(self) -> str | None:
        return _severity(self.block, self.text)


def contexts_of(memo: Memo) -> list[Context]:
    """Each block outside index sections, or for a long block each window of sentences."""
    out = []
    for block in memo.blocks:
        if any(_INDEX_HEADING.search(h) for h in block.headings):
            continue
        if len(block.text.split()) <= LONG_BLOCK_WORDS:
            out.append(Context(block, block.text))
            continue
        parts = sentences(block.text)
        for i in range(max(1, len(parts) - WINDOW_SENTENCES + 1)):
            out.append(Context(block, " ".join(parts[i : i + WINDOW_SENTENCES])))
    return out


def judge_criterion(
    criterion: dict[str, Any], memo: Memo, others: Others | None = None
) -> tuple[str, str]:
    """``(verdict, reasoning)`` for one criterion against a parsed memo.

    ``others`` (from :func:`others_of` the whole task) lets lists of other findings' documents
    and amounts be told from findings; without it only :data:`MAX_LISTED` applies.
    """
    return _judge(criterion, memo, contexts_of(memo), others)


def _judge(
    criterion: dict[str, Any], memo: Memo, contexts: list[Context], others: Others | None
) -> tuple[str, str]:
    expect = criterion.get("expect")
    if not isinstance(expect, dict) or not expect:
        return ERROR, "no expect block: the reference judge cannot score this criterion"
    unknown = set(expect) - KNOWN_KEYS - {"llm_only"}
    if unknown:
        return ERROR, f"unknown expect keys {sorted(unknown)}"
    if criterion.get("llm_only") or expect.get("llm_only"):
        return ERROR, ("not judgeable by the reference judge (llm_only: its polarity needs a "
                       "reader); the LLM judge scores it")
    others = others or Others()
    if expect.get("negative"):
        return _negative(expect, contexts, others)
    missing = [s for s in expect.get("sections") or [] if not _has_section(memo, s)]
    if missing:
        return FAIL, f"missing section(s): {', '.join(missing)}"
    if not any(expect.get(k) for k in ELEMENT_KEYS):
        if expect.get("sections"):
            return PASS, "all required sections are present"
        return ERROR, "the expect block names nothing to check"
    best: tuple[tuple[bool, int], list[str], Block | None] = ((False, 0), [], None)
    for ctx in contexts:
        listed = _list_reason(ctx, others)
        # a finding lacking as much as the closest so far cannot be closer: stop counting there
        enough = len(best[1]) if best[0][0] else None
        missing_here = [listed] if listed else _lacks(expect, ctx, enough)
        if not missing_here:
            return PASS, f"stated together at line {ctx.block.line}: {_quote(ctx.text)}"
        score = (not listed, -len(missing_here))  # the closest is a finding, not a list
        if best[2] is None or score > best[0]:
            best = (score, missing_here, ctx.block)
    if best[2] is None:
        return FAIL, "the deliverable is empty"
    return FAIL, f"no finding states all of it; closest (line {best[2].line}) lacks " + "; ".join(
        best[1]
    )


def _incomplete(expect: dict[str, Any], ctx: Context, others: Others) -> bool:
    """Whether the context lacks anything of ``expect``; a list lacks everything."""
    return bool(_list_reason(ctx, others) or _lacks(expect, ctx, enough=1))


def _list_reason(ctx: Context, others: Others) -> str | None:
    """Why the context is a list of other findings' documents or amounts; None if it is not."""
    if others not in ctx.listed:
        foreign_docs = len(ctx.cited & others.docs)
        reason = None
        if foreign_docs >= LISTED or len(ctx.cited) > MAX_LISTED:
            reason = f"it cites {len(ctx.cited)} documents, {foreign_docs} of other findings"
        elif others.count_figures(ctx.figures, limit=LISTED) >= LISTED:
            reason = f"it states {LISTED} or more amounts of other findings"
        ctx.listed[others] = reason and reason + ": a list"
    return ctx.listed[others]


def _lacks(expect: dict[str, Any], ctx: Context, enough: int | None = None) -> list[str]:
    """The elements of ``expect`` the context does not state.

    With ``enough``, the terms (the costly check) are left unchecked once that many elements
    are known to be lacking.
    """
    out = [f"citation of {d}" for d in map(str, expect.get("cite") or []) if d not in ctx.cited]
    out += [
        f"citation of {doc} at p.{', '.join(map(str, pages))}"
        for doc, pages in (expect.get("pages") or {}).items()
        if not ctx.pages.get(str(doc), frozenset()) & {int(p) for p in pages}
    ]
    out += [
        f"amount ${a['value']:,}"
        for a in expect.get("amounts") or []
        if not _amount_stated(a, ctx.stated, ctx.ranges)
    ]
    out += [
        f"date {d}"
        for d in expect.get("dates") or []
        if not date_matches(parse_iso(str(d)), ctx.dates)
    ]
    if expect.get("severity"):
        label = ctx.severity
        if label != str(expect["severity"]).lower():
            out.append(f"severity {expect['severity']} (found {label or 'none'})")
    if enough is not None and len(out) >= enough:
        return out
    out += [
        f"term {group[0]!r}" for group in _groups(expect) if not _any_term(group, ctx.near)
    ]
    contrary = _contrary(expect, ctx.text)
    return out + [f"the polarity (it states {contrary!r})"] if contrary else out


def _contrary(expect: dict[str, Any], text: str) -> str | None:
    """The first ``contrary`` phrase ``text`` states without negating it, if any."""
    phrases = [str(t) for t in expect.get("contrary") or []]
    for sentence in map(normalize, sentences(text)):
        for clause in _CLAUSE.split(sentence):
            for phrase in phrases:
                match = term_pattern(phrase).search(clause or "")
                if match and not _negated(clause[: match.start()]):
                    return phrase
    return None


def _negated(before: str) -> bool:
    """Whether a negation stands within :data:`NEGATION_WINDOW` words before a term."""
    words = before.split()[-NEGATION_WINDOW:]
    return bool(_NEGATION.search(" ".join(words)))


def _amount_stated(want: dict[str, Any], stated: tuple[float, ...],
                   ranges: tuple[tuple[float, float], ...] = ()) -> bool:
    """The value is stated within tolerance, or inside a stated range of at most
    :data:`RANGE_RATIO` (a range is not read as its upper figure alone)."""
    value = abs(float(want["value"]))
    tol = want.get("tolerance")
    tol = float(tol) if tol is not None else value * DEFAULT_TOLERANCE
    if any(abs(abs(s) - value) <= tol + 1e-9 for s in stated):
        return True
    return any(lo - tol <= value <= hi + tol and hi <= RANGE_RATIO * lo for lo, hi in ranges)


def _groups(expect: dict[str, Any]) -> list[list[str]]:
    groups = expect.get("terms") or []
    return [[g] if isinstance(g, str) else [str(t) for t in g] for g in groups if g]


def _any_term(group: list[str], text: str) -> bool:
    """Whether ``text`` (normalised) holds a synonym of ``group`` as a whole word."""
    return any(normalize(t) in text and term_pattern(t).search(text) for t in group)


def _severity(block: Block, text: str) -> str | None:
    """The single severity label of the context, else of its nearest labelled heading."""
    labels = severities(text)
    if len(labels) == 1:
        return next(iter(labels))
    if labels:
        return "ambiguous"
    for heading in reversed(block.headings):
        found = heading_severity(heading)
        if found:
            return next(iter(found)) if len(found) == 1 else "ambiguous"
    return None


def _has_section(memo: Memo, section: str) -> bool:
    want = normalize(section)
    return any(want in normalize(h) for h in memo.headings)


def _negative(expect: dict[str, Any], contexts: list[Context], others: Others) -> tuple[str, str]:
    claim = {k: expect[k] for k in ("cite", "pages", "amounts", "dates", "terms")
             if expect.get(k)}
    if not claim:
        return ERROR, "a negative criterion needs the claim's cite, amounts, dates or terms"
    cited = frozenset().union(*(ctx.cited for ctx in contexts))
    unreviewed = [str(d) for d in expect.get("reviewed") or [] if str(d) not in cited]
    if unreviewed:
        return FAIL, f"the deliverable does not review {', '.join(unreviewed)} (never cited)"
    for ctx in contexts:
        if _incomplete(claim, ctx, others):
            continue
        stating = _live_statement(ctx, _groups(claim))
        if stating:
            return FAIL, f"states the claim at line {ctx.block.line}: {_quote(stating)}"
    return PASS, "the deliverable does not state the claim as a live issue"


def _live_statement(ctx: Context, groups: list[list[str]]) -> str | None:
    """A span of ``ctx`` stating the claim's terms with no qualifier scoped to them, or None.

    A span is a sentence, or two adjacent sentences that state the claim only together, read
    with citation brackets blanked; the heading may supply some of the terms but not all (a
    heading naming a document states nothing). Without term groups the claim is its citation,
    stated by any context citing it.
    """
    if not groups:
        return ctx.text
    parts = [normalize(s) for s in sentences(_CITE_GROUP.sub(" ", ctx.text))]
    heading = normalize(ctx.block.headings[-1]) if ctx.block.headings else ""
    patterns = [[term_pattern(t) for t in group] for group in groups]
    states = [_states(p, heading, patterns) for p in parts]
    spans = [p for p, ok in zip(parts, states, strict=True) if ok] + [
        f"{a} {b}" for (a, ok_a), (b, ok_b) in zip(zip(parts, states, strict=True),
                                                   zip(parts[1:], states[1:], strict=True),
                                                   strict=False)
        if not ok_a and not ok_b and _states(f"{a} {b}", heading, patterns)]
    return next((span for span in spans if not _qualified(span, patterns)), None)


def _states(span: str, heading: str, patterns: list[list[re.Pattern[str]]]) -> bool:
    """Every term group in ``span``, or some in it and the rest in the heading."""
    found = [any(p.search(span) for p in g) for g in patterns]
    return any(found) and all(ok or any(p.search(heading) for p in g)
                              for ok, g in zip(found, patterns, strict=True))


def _qualified(span: str, patterns: list[list[re.Pattern[str]]]) -> bool:
    """Whether every clause of ``span`` stating the claim qualifies it: a status word in the
    clause, or a negation just before a claim term (the terms themselves blanked, so a claim
    worded with "not" is not mistaken for its denial).

    The clauses stating the claim are those holding a term of a group after the first (the
    first names the subject, the counterparty), else those holding any term.
    """
    clauses = [c for c in _CLAUSE.split(span) if c and c.strip()]
    claim = patterns[1:] or patterns
    stating = [c for c in clauses if any(p.search(c) for g in claim for p in g)] or [
        c for c in clauses if any(p.search(c) for g in patterns for p in g)]
    return bool(stating) and all(_clause_qualified(c, patterns, claim) for c in stating)


def _clause_qualified(clause: str, patterns: list[list[re.Pattern[str]]],
                      claim: list[list[re.Pattern[str]]]) -> bool:
    """A status word in the clause, or a negation just before a term of the claim proper."""
    hits = [m for group in claim for p in group for m in p.finditer(clause)]
    blanked = clause
    for group in patterns:
        for p in group:
            blanked = p.sub(lambda m: " " * len(m.group()), blanked)
    return bool(_STATUS.search(blanked)) or any(_negated(blanked[: m.start()]) for m in hits)


def _quote(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
