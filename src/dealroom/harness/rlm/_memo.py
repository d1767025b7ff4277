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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dealroom._util.text import strip_controls
from dealroom.runs import deliverable_key, primary_deliverable

MEMO_LIMIT = 10 * 2**20
"""Characters of memo text (the memo and every deliverable's own text together) by default."""

Citation = str | tuple[str, int] | tuple[str, int, int]


def format_citation(cite: Citation) -> str:
    """Render ``"D00042"``, ``("D00042", 3)`` or ``("D00042", 3, 4)`` as a memo citation.

    >>> format_citation(("D00042", 3, 4))
    '[D00042 pp.3-4]'
    """
    if isinstance(cite, str):
        return f"[{cite}]"
    if len(cite) == 2 or cite[1] == cite[2]:
        return f"[{cite[0]} p.{cite[1]}]"
    return f"[{cite[0]} pp.{cite[1]}-{cite[2]}]"


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
    next_step=...)`` appends a finding; ``memo.write(markdown)`` replaces the whole memo with
    free markdown; ``memo.write(markdown, name=FILE)`` gives the deliverable ``FILE`` its own
    text; ``memo.render()`` returns the markdown; ``print(memo)`` shows an outline.
    ``deliverables`` (name → file name) are the task's; the memo is written to each.
    """

    def __init__(self, title: str = "Due Diligence Memo",
                 deliverables: dict[str, str] | None = None, limit: int = MEMO_LIMIT) -> None:
        self.title = clean(title)
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
        """Append a finding to ``section`` (created if needed)."""
        found = Finding(clean(title), clean(text), list(cites),
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
        if key is None or key == primary_deliverable(self.deliverables):
            own = sum(len(text) for text in self._own.values())
            check_size(own + len(markdown), self.limit)
            self._free_text = markdown
        else:
            check_size(self.size() - len(self._own.get(key, "")) + len(markdown), self.limit)
            self._own[key] = markdown

    def _deliverable(self, name: str) -> str:
        key = deliverable_key(self.deliverables, name)
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
