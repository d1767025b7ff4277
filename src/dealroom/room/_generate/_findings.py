"""Planted findings: what a kind of issue produces, and the kit that kinds are written with.

A kind is a function ``kind(kit) -> Finding``. The finding names the documents it needs (by
role), the paragraphs planted in each, the rubric points it yields, and the gold-memo paragraph
that satisfies every one of those points. ``{role}`` placeholders in the memo text become
citations such as ``[D00042 p.3]`` once documents have ids and pages (``{role_2}``: the page of
the role's second insert).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from random import Random

from dealroom.room._generate._model import Insert, RoomContext
from dealroom.room._generate._names import NameBook, long_date
from dealroom.room._generate._profiles import Profile

TYPES = ("fact", "conclusion", "citation", "severity", "recommendation", "timeline", "monetary",
         "formatting")
"""Criterion types, as in Harvey LAB."""

COC = ("change of control", "change-of-control", "change in control")
TERMINATE = ("terminate", "termination")
CONSENT = ("consent", "waiver")
OBTAIN = ("obtain", "seek", "request", "secure", "negotiate")
MISSING = ("missing", "not in the data room", "absent", "not provided", "not been provided",
           "not included")
INDEMNITY = ("specific indemnity", "special indemnity", "escrow", "holdback")


@dataclass
class DocSpec:
    """A document a finding needs."""

    role: str
    doctype: str
    folder: str
    """Folder key (see :mod:`._profiles`)."""
    title: str
    date: str
    party: str = ""
    term: str = ""
    inserts: list[Insert] = field(default_factory=list)
    fmt: str | None = None
    """Force a file format (otherwise drawn from the document type's weights)."""
    missing: bool = False
    """Referenced by another document but absent from the room."""


@dataclass
class Point:
    """One rubric criterion, with ``cite`` given as document roles."""

    type: str
    title: str
    match: str
    cite: tuple[str, ...] = ()
    amounts: tuple[float, ...] = ()
    dates: tuple[str, ...] = ()
    terms: tuple[tuple[str, ...], ...] = ()
    severity: str | None = None
    negative: bool = False


@dataclass
class Finding:
    """A planted issue (or a distractor, ``cured=True``) and everything derived from it."""

    kind: str
    title: str
    severity: str
    summary: str
    docs: list[DocSpec]
    points: list[Point]
    memo: str
    """Gold-memo paragraph with ``{role}`` citation placeholders."""
    step: str = ""
    """A line for the memo's next-steps list (same placeholders)."""
    cured: bool = False
    amounts: list[tuple[str, float]] = field(default_factory=list)
    dates: list[tuple[str, str]] = field(default_factory=list)
    id: str = ""

    def present(self) -> list[DocSpec]:
        return [d for d in self.docs if not d.missing]

    def doc(self, role: str) -> DocSpec:
        return next(d for d in self.docs if d.role == role)


def severity_of(amount: float) -> str:
    """High from USD 1M, medium from USD 250k, else low."""
    return "high" if amount >= 1_000_000 else "medium" if amount >= 250_000 else "low"


def usd(value: float) -> str:
    """``$1,234,500`` (cents only when present)."""
    return f"${value:,.2f}" if round(value, 2) != int(value) else f"${int(value):,}"


class Kit:
    """Seeded helpers shared by every kind of a room; hands out unique names and numbers."""

    def __init__(self, ctx: RoomContext, profile: Profile, rng: Random, names: NameBook) -> None:
        self.ctx, self.profile, self.rng, self.names = ctx, profile, rng, names
        self.as_of = date.fromisoformat(ctx.as_of)
        self.used: set[str] = set()
        self.flags: set[str] = set()

    def company(self) -> tuple[str, str]:
        return self.names.company()

    def person(self) -> str:
        return self.names.person()

    def day(self, lo: int, hi: int) -> str:
        """An ISO date between ``hi`` and ``lo`` days before the review date."""
        return (self.as_of - timedelta(days=self.rng.randint(lo, hi))).isoformat()

    def after(self, iso: str, days: int) -> str:
        return (date.fromisoformat(iso) + timedelta(days=days)).isoformat()

    def days_between(self, a: str, b: str) -> int:
        return (date.fromisoformat(b) - date.fromisoformat(a)).days

    def amount(self, lo: int, hi: int, step: int = 500) -> int:
        return self.rng.randrange(lo, hi, step)

    def unique(self, make: object, tries: int = 200) -> str:
        """Call ``make()`` until it returns a value not handed out before in this room."""
        for _ in range(tries):
            value = make()  # type: ignore[operator]
            if value not in self.used:
                self.used.add(value)
                return value
        raise RuntimeError("ran out of unique values")

    def long(self, iso: str) -> str:
        return long_date(iso)

    def contract(self, role: str) -> str:
        return self.profile.contracts[role]

    def vocab(self, key: str) -> str:
        return self.rng.choice(self.profile.vocab[key])
