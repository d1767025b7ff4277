"""The memo: the root's deliverable, built section by section inside the REPL.

The memo lives in the sandboxed worker; after each cell its snapshot travels to the host, which
writes it to every deliverable the task names, under its file name and in its format
(``output/memo.md``, ``output/antitrust-risk-memo.docx``, ...). ``memo.write(markdown,
name=FILE)`` gives one deliverable its own text instead. Citations are written as
``[D00042 p.3]`` (see docs/architecture.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from dealroom.runs import deliverable_key, primary_deliverable

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


@dataclass
class Finding:
    """One finding: what, how bad, how much, and where it is evidenced."""

    title: str
    text: str
    cites: list[Citation] = field(default_factory=list)
    severity: str | None = None
    amount: str | None = None
    next_step: str | None = None

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
                 deliverables: dict[str, str] | None = None) -> None:
        self.title = title
        self.deliverables = dict(deliverables or {"memo": "memo.md"})
        self._sections: dict[str, Section] = {}
        self._free_text: str | None = None
        self._own: dict[str, str] = {}

    def section(self, title: str, text: str = "") -> Section:
        """Create the section ``title`` (or replace its prose when ``text`` is given)."""
        sec = self._sections.setdefault(title, Section(title))
        if text:
            sec.text = text
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
        found = Finding(title, text, list(cites), severity, amount, next_step)
        self.section(section).findings.append(found)
        return found

    def move_to_end(self, title: str) -> None:
        """Put the section ``title`` after all others (e.g. next steps last)."""
        self._sections[title] = self._sections.pop(title)

    def write(self, markdown: str, name: str | None = None) -> None:
        """Replace the whole memo with ``markdown`` (sections are then ignored); with ``name``
        (a deliverable's file name or name), give that deliverable ``markdown`` instead of the
        memo."""
        if name is None:
            self._free_text = str(markdown)
            return
        key = self._deliverable(str(name))
        if key == primary_deliverable(self.deliverables):
            self._free_text = str(markdown)
        else:
            self._own[key] = str(markdown)

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
