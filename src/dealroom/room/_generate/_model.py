"""Records passed between the generator's planning, rendering and rubric stages.

Everything here is plain, picklable data: the planner builds :class:`DocPlan` objects in the
parent process, worker processes turn each into a file and a :class:`DocResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RoomContext:
    """Room-wide facts every document may mention."""

    profile: str
    key: str
    """Seeds every random draw (the settings' seed keyed by the room's secret)."""
    target: str
    """Full legal name of the company being acquired."""
    short: str
    """One-word defined term of the target, e.g. ``Aravon``."""
    buyer: str
    codename: str
    state: str
    as_of: str
    """Review date (ISO): the data room is read as of this day."""
    close_date: str
    fiscal_year: int
    """The latest completed fiscal year."""
    directors: tuple[str, ...]
    officers: tuple[tuple[str, str], ...]
    """(title, name) pairs: CEO, CFO, General Counsel, Secretary, CTO."""
    auditor: str
    law_firm: str
    address: str
    scale: int
    """Annual revenue in USD thousands; sizes the financial statements."""

    def officer(self, title: str) -> str:
        return dict(self.officers)[title]


@dataclass
class Insert:
    """A planted paragraph (or sheet row, cells split by tabs) placed in a document."""

    text: str
    facts: tuple[str, ...] = ()
    """Exact substrings of ``text`` that the answer key cites as evidence."""
    where: str = "body"
    """``front`` (opening pages), ``body`` (anywhere in the middle) or ``end`` (schedules)."""
    heading: str = ""
    """A heading placed right before the text (e.g. ``Schedule B - Fees``)."""


@dataclass
class DocPlan:
    """Everything a worker needs to write one document."""

    index: int
    id: str
    path: str
    """Relative to the room folder, starting with ``documents/``."""
    title: str
    doctype: str
    fmt: str
    budget: int
    """Target token count."""
    date: str
    party: str = ""
    """Counterparty's full name, if any."""
    term: str = ""
    """Counterparty's one-word defined term (replaces ``ZZB``)."""
    inserts: list[Insert] = field(default_factory=list)
    folder: str = ""
    category: str = ""


@dataclass
class DocResult:
    """What writing one document produced."""

    id: str
    pages: int
    tokens: int
    sha256: str
    bytes: int
    insert_pages: list[int]
    """1-based page of each insert of the plan, in order."""
