"""The memo: the root's deliverable, built section by section inside the REPL.

The memo lives in the sandboxed worker; after each cell its snapshot travels to the host, which
writes it to every deliverable the task names, under its file name and in its format
(``output/memo.md``, ``output/antitrust-risk-memo.docx``, ...). ``memo.write(markdown,
name=FILE)`` gives one deliverable its own text instead. Citations are written as
``[D00042 p.3]`` (see docs/architecture.md).

What the root writes is data: terminal control sequences (ESC, CSI, OSC, BEL, ...) are taken
out of it as out of sub-agents' replies (newlines and tabs stay), and the memo with its
deliverables' own texts is bounded (``memo_limit``, :data:`MEMO_LIMIT` by default): a write
that would pass it raises :class:`MemoTooLarge` in the REPL and changes nothing. The host
checks the snapshot again, so a memo tampered with inside the worker cannot pass either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dealroom._util.text import strip_controls

MEMO_LIMIT = 10 * 2**20
"""Characters of memo text (the memo and every deliverable's own text together) by default."""

PageRef = int | str
"""A page as cited: the PDF index (``3``) or the page as printed (``"A-12"``, ``"452:7"``)."""
Resolver = Callable[[str, PageRef], tuple[int, str]]
"""``(document id, page)`` → ``(PDF page, the page as printed or "")``: the REPL's is
``room.doc(id).locate(page)``."""


@dataclass(frozen=True)
class Cite:
    """A citation resolved against the room: PDF pages ``first``-``last`` and, where the
    document prints its own, the printed pages (``"A-12"``, ``"452:7"``, ``"A-2 to A-3"``)."""

    doc: str
    first: int
    last: int
    printed: str = ""


Citation = str | tuple[str, int] | tuple[str, int, int] | Cite


def format_citation(cite: Citation) -> str:
    """Render ``"D00042"``, ``("D00042", 3)``, ``("D00042", 3, 4)`` or a :class:`Cite` as a
    memo citation; a printed page follows the PDF index inside the brackets.

    >>> format_citation(("D00042", 3, 4)), format_citation(Cite("D00007", 12, 12, "452:7"))
    ('[D00042 pp.3-4]', '[D00007 p.12, printed 452:7]')
    """
    if isinstance(cite, str):
        return f"[{cite}]"
    if isinstance(cite, Cite):
        doc, first, last, printed = cite.doc, cite.first, cite.last, cite.printed
    else:
        doc, first, last, printed = cite[0], cite[1], cite[-1], ""
    pages = f"p.{first}" if first == last else f"pp.{first}-{last}"
    return f"[{doc} {pages}{f', printed {printed}' if printed else ''}]"


def resolve_cite(cite: Any, resolve: Resolver | None) -> Citation:
    """One ``cites=`` entry as stored: a document id; ``(id, page)`` or ``(id, first, last)``
    with PDF pages (ints) or printed pages (``"A-12"``, ``"452:7"``); or a mapping ``{"doc":
    id, "page": ..., "last": ..., "line": 7}`` (a ``line`` makes ``page`` the printed page
    of a transcript). With the room's ``resolve``, pages become a :class:`Cite` naming both
    the PDF page and the printed one; without it, printed pages are refused."""
    if isinstance(cite, Cite):
        return cite
    if isinstance(cite, dict):
        unknown = set(cite) - {"doc", "page", "last", "line"}
        if unknown or "doc" not in cite:
            raise ValueError(f"a citation mapping takes doc, page, last and line, got {cite!r}")
        page, line = cite.get("page"), cite.get("line")
        parts = [cite["doc"], *([] if page is None else
                                [f"{page}:{line}" if line else page]),
                 *([cite["last"]] if cite.get("last") is not None else [])]
    elif isinstance(cite, tuple | list):
        parts = list(cite)
    else:
        parts = [cite]
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"a citation is an id, (id, page) or (id, first, last), got {cite!r}")
    doc = str(getattr(parts[0], "id", parts[0]))
    pages: list[PageRef] = [p if isinstance(p, int) and not isinstance(p, bool) else str(p)
                            for p in parts[1:]]
    if not pages:
        return doc
    if resolve is None:
        if not all(isinstance(p, int) for p in pages):
            raise ValueError(f"{cite!r}: a printed page is found in the room's documents; "
                             "cite the PDF page (an int) here")
        return (doc, *pages)  # type: ignore[return-value]
    (first, shown), (last, shown_last) = resolve(doc, pages[0]), resolve(doc, pages[-1])
    if last < first:
        raise ValueError(f"{cite!r}: the range ends before it starts (PDF pages {first}-{last})")
    printed = shown if first == last and shown == shown_last else (
        f"{shown} to {shown_last}" if shown and shown_last else "")
    plain = printed in (str(first), f"{first} to {last}")
    return Cite(doc, first, last, "" if plain else printed)


class MemoTooLarge(ValueError):
    """A memo write that would take the memo past its size limit; the memo is unchanged."""


def clean(text: object) -> str:
    """``text`` as a string without terminal control sequences (newlines and tabs kept)."""
    return strip_controls(str(text))[0]


def check_size(size: int, limit: int, what: str = "the memo") -> None:
    """Raise :class:`MemoTooLarge` when ``size`` characters pass ``limit``."""
    if size > limit:
        raise MemoTooLarge(
            f"{what} would be {size:,} characters, over the memo's limit of {limit:,} "
            "(memo_limit, --memo-limit): nothing was changed; write a shorter memo (summarize, "
            "cite documents instead of quoting them)")


@dataclass
class Finding:
    """One finding: what, how bad, how much, and where it is evidenced."""

    title: str
    text: str
    cites: list[Citation] = field(default_factory=list)
    severity: str | None = None
    amount: str | None = None
    next_step: str | None = None

    def size(self) -> int:
        """Characters the finding adds to the memo (about)."""
        return (sum(len(x or "") for x in (self.title, self.text, self.severity, self.amount,
                                            self.next_step)) + 20 * len(self.cites) + 40)

    def render(self) -> str:
        head = f"- **{self.title}**"
        if self.severity:
            head += f" (severity: {self.severity})"
        parts = [head + ": " + self.text.strip()]
        if self.amount:
            parts.append(f"Exposure: {self.amount}.")
        if self.next_step:
            parts.append(f"Next step: {self.next_step}")
        if self.cites:
            parts.append(" ".join(format_citation(c) for c in self.cites))
        return " ".join(parts)


@dataclass
class Section:
    title: str
    text: str = ""
    findings: list[Finding] = field(default_factory=list)


class Memo:
    """The diligence memo, written incrementally.

    ``memo.section(title, text)`` adds or replaces a section's prose; ``memo.finding(section,
    title, text, cites=[("D00042", 3)], severity="high", amount="$1.2 million",
    next_step=...)`` appends a finding (a page may be cited as printed: ``("D00042", "A-12")``,
    ``("D00007", "452:7")``); ``memo.write(markdown)`` replaces the whole memo with
    free markdown; ``memo.write(markdown, name=FILE)`` gives the deliverable ``FILE`` its own
    text; ``memo.render()`` returns the markdown; ``print(memo)`` shows an outline.
    ``deliverables`` (name → file name) are the task's; the memo is written to each.
    """

    def __init__(self, title: str = "Due Diligence Memo",
                 deliverables: dict[str, str] | None = None, limit: int = MEMO_LIMIT,
                 resolve: Resolver | None = None) -> None:
        self.title = clean(title)
        self.resolve = resolve
        """Finds cited pages in the room (the REPL's memo has it): printed pages are accepted
        and shown beside the PDF index."""
        self.deliverables = dict(deliverables or {"memo": "memo.md"})
        self.limit = limit
        self._sections: dict[str, Section] = {}
        self._free_text: str | None = None
        self._own: dict[str, str] = {}
        self._used = len(self.title)
        """Characters of the sections and findings, counted as they are written."""

    def size(self) -> int:
        """Characters of the memo (sections or free text) and the deliverables' own texts."""
        own = sum(len(text) for text in self._own.values())
        return own + (self._used if self._free_text is None else len(self._free_text))

    def section(self, title: str, text: str = "") -> Section:
        """Create the section ``title`` (or replace its prose when ``text`` is given)."""
        title, text = clean(title), clean(text)
        old = self._sections.get(title)
        grows = (0 if old is None else -len(old.text)) + len(text) if text else 0
        grows += 0 if old is not None else len(title) + 8
        check_size(self.size() + grows, self.limit)
        sec = self._sections.setdefault(title, Section(title))
        if text:
            sec.text = text
        self._used += grows
        return sec

    def finding(
        self,
        section: str,
        title: str,
        text: str,
        cites: Iterable[Citation] = (),
        severity: str | None = None,
        amount: str | None = None,
        next_step: str | None = None,
    ) -> Finding:
        """Append a finding to ``section`` (created if needed). ``cites``: ids, ``(id, page)``,
        ``(id, first, last)`` or ``{"doc": id, "page": ..., "line": ...}``, a page being the
        PDF index (an int) or the page as printed (``"A-12"``, a transcript's ``"452:7"``);
        see :func:`resolve_cite`."""
        resolved = [resolve_cite(c, self.resolve) for c in cites]
        found = Finding(clean(title), clean(text), resolved,
                        *(None if x is None else clean(x) for x in (severity, amount,
                                                                     next_step)))
        check_size(self.size() + found.size() + len(clean(section)) + 8, self.limit)
        self.section(section).findings.append(found)
        self._used += found.size()
        return found

    def move_to_end(self, title: str) -> None:
        """Put the section ``title`` after all others (e.g. next steps last)."""
        self._sections[title] = self._sections.pop(title)

    def write(self, markdown: str, name: str | None = None) -> None:
        """Replace the whole memo with ``markdown`` (sections are then ignored); with ``name``
        (a deliverable's file name or name), give that deliverable ``markdown`` instead of the
        memo."""
        markdown = clean(markdown)
        key = None if name is None else self._deliverable(str(name))
        if key is None or key == _runs().primary_deliverable(self.deliverables):
            own = sum(len(text) for text in self._own.values())
            check_size(own + len(markdown), self.limit)
            self._free_text = markdown
        else:
            check_size(self.size() - len(self._own.get(key, "")) + len(markdown), self.limit)
            self._own[key] = markdown

    def _deliverable(self, name: str) -> str:
        key = _runs().deliverable_key(self.deliverables, name)
        if key is None:
            names = ", ".join(self.deliverables.values())
            raise ValueError(f"no deliverable {name!r}: the task's deliverables are {names}")
        return key

    @property
    def sections(self) -> Sequence[str]:
        return list(self._sections)

    def render(self) -> str:
        """The memo as Markdown."""
        if self._free_text is not None:
            return self._free_text
        return clean(self._render_sections())  # a finding edited in place is cleaned too

    def _render_sections(self) -> str:
        out = [f"# {self.title}", ""]
        for sec in self._sections.values():
            out += [f"## {sec.title}", ""]
            if sec.text:
                out += [sec.text.strip(), ""]
            out += [f.render() for f in sec.findings]
            if sec.findings:
                out.append("")
        return "\n".join(out).rstrip() + "\n"

    def snapshot(self) -> dict[str, Any]:
        """What the host needs after every cell: the rendered memo, its section names, and the
        deliverables given their own text (name → markdown)."""
        return {"markdown": self.render(), "sections": list(self._sections),
                "documents": dict(self._own)}

    def __len__(self) -> int:
        return len(self.render())

    def __repr__(self) -> str:
        n = sum(len(s.findings) for s in self._sections.values())
        names = ", ".join(self._sections) or "none"
        files = ", ".join(self.deliverables.values())
        return f"<Memo {len(self)} chars; sections: {names}; {n} findings; written to {files}>"


def checked_memo(state: dict[str, Any], limit: int) -> str | None:
    """The host's check of the memo a worker sent after a cell: over ``limit`` (which the REPL
    enforces unless the memo was tampered with) it is refused, its text dropped from
    ``state``, and the note for the root returned; else None, the texts cleaned."""
    markdown, own = state.get("markdown"), state.get("documents") or {}
    if not isinstance(markdown, str) or not isinstance(own, dict):
        return None
    size = len(markdown) + sum(len(str(text)) for text in own.values())
    if size > limit:
        state["markdown"] = None
        return (f"[the memo was not saved: {size:,} characters, over the limit of {limit:,}; "
                "the last memo within it stands]")
    state["markdown"] = clean(markdown)
    state["documents"] = {str(k): clean(text) for k, text in own.items()}
    return None


def _runs() -> Any:
    """:mod:`dealroom.runs`, imported when a deliverable is named: the REPL's worker starts
    without it (its records' pydantic models are a fifth of a fresh REPL's start-up)."""
    import dealroom.runs

    return dealroom.runs
