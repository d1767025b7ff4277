"""Planning a room: the company, the planted findings, the folders and every document.

Planning is cheap and happens in the parent process; it fixes each document's folder, title,
type, format, date, token budget and planted paragraphs, and assigns ids in index order (folder
by folder, then by date). Rendering (in :mod:`._render`) only executes this plan.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, timedelta
from random import Random

from dealroom.room._generate._doctypes import BINARY_CAP, DOCTYPES, FORMATS
from dealroom.room._generate._findings import DocSpec, Finding, Kit
from dealroom.room._generate._kinds_cured import DISTRACTORS, LIVE, STARTERS
from dealroom.room._generate._model import DocPlan, RoomContext
from dealroom.room._generate._names import (
    AUDITORS,
    CITIES,
    CODENAMES,
    INSURERS,
    LAW_FIRMS,
    STREETS,
    NameBook,
    long_date,
)
from dealroom.room._generate._profiles import (
    PROFILES,
    FolderSpec,
    Profile,
    category_name,
    folders_of,
)
from dealroom.room._generate._settings import GenerateSettings

CRITERIA_PER_DOC = 0.2515
"""571 criteria for 2,270 documents, as in the seeds' example room."""
FOLDERS_PER_SQRT_DOC = 1.68
"""About 80 folders for 2,270 documents."""
PLANTED_SHARE = 0.6
"""At most this share of a room's documents carry planted evidence."""
_SCALE = {"bank": (120_000, 900_000), "software": (40_000, 400_000),
          "manufacturer": (80_000, 700_000)}
_TOPICS = ("Internal Controls", "Credit Risk Management", "Vendor Management", "Sales Tax Nexus",
           "IT General Controls", "Business Continuity", "Anti-Money Laundering", "Quality System")
_SUBJECTS = ("Q3 invoice query", "Renewal discussion", "Updated forecast", "Service review",
             "Board pack", "Signature pages", "Audit request list", "Pricing follow-up")
_LINES = ("Directors and Officers", "Commercial General Liability", "Cyber Liability",
          "Property", "Workers Compensation", "Umbrella")


@dataclass
class RoomPlan:
    """Everything decided before any file is written."""

    ctx: RoomContext
    plans: list[DocPlan]
    findings: list[Finding]
    roles: list[dict[str, int]]
    """Per finding: role → index into ``plans``."""
    missing: list[dict[str, str]]
    """Per finding: role → title of each referenced-but-missing document."""


def make_context(settings: GenerateSettings) -> tuple[RoomContext, Profile, NameBook, Random]:
    """The company under review and the room-wide generators."""
    profile = PROFILES[settings.profile]
    rng = Random(f"room:{settings.key}:{profile.key}")
    names = NameBook(rng, profile.sectors)
    short = names.word()
    buyer = f"{names.word()} {rng.choice(('Holdings, Inc.', 'Capital Partners LP', 'Group plc'))}"
    as_of = date(rng.choice((2024, 2025)), rng.randint(1, 12), rng.randint(1, 28))
    people = [names.person() for _ in range(12)]
    officers = tuple(zip(("CEO", "CFO", "General Counsel", "Secretary", "CTO"), people[7:],
                         strict=False))
    ctx = RoomContext(
        profile=profile.key, key=settings.key, target=f"{short} {rng.choice(profile.suffixes)}",
        short=short, buyer=buyer, codename=rng.choice(CODENAMES),
        state=rng.choice(profile.vocab["state"]), as_of=as_of.isoformat(),
        close_date=(as_of + timedelta(days=rng.randint(120, 200))).isoformat(),
        fiscal_year=as_of.year - 1, directors=tuple(people[:7]), officers=officers,
        auditor=rng.choice(AUDITORS), law_firm=rng.choice(LAW_FIRMS),
        address=f"{rng.randint(100, 9900)} {rng.choice(STREETS)}, {rng.choice(CITIES)}",
        scale=rng.randint(*_SCALE[profile.key]),
    )
    return ctx, profile, names, rng


def criteria_target(docs: int) -> int:
    """How many rubric criteria a room of ``docs`` documents should have."""
    return max(1, round(docs * CRITERIA_PER_DOC))


def choose_findings(kit: Kit, docs: int) -> list[Finding]:
    """Planted findings until the criteria target is met (starters first, if they fit)."""
    rng = kit.rng
    limit = max(1, int(docs * PLANTED_SHARE))
    target = max(1, criteria_target(docs) - 3)  # the formatting criteria come on top
    kinds = {**LIVE, **DISTRACTORS}
    names = list(kinds)
    weights = [0.7 if n in DISTRACTORS or n == "figure_contradiction" else 1.0 for n in names]
    findings: list[Finding] = []
    used = criteria = misses = 0
    queue = list(STARTERS)
    while misses < 40:
        if not queue and criteria >= target:
            break
        name = queue.pop(0) if queue else rng.choices(names, weights)[0]
        try:
            finding = kinds[name](kit)
        except RuntimeError:  # the kind ran out of unique names or numbers
            misses += 1
            continue
        size = len(finding.present())
        if used + size > limit:
            misses += 1
            continue
        findings.append(finding)
        used += size
        criteria += len(finding.points)
    return findings


def choose_folders(profile: Profile, findings: list[Finding], docs: int,
                   rng: Random) -> list[FolderSpec]:
    """The room's folders: those the findings need, then one per category, then by weight
    (the profile's own folders count double: they are what makes a bank's room a bank's)."""
    pool = folders_of(profile)
    own = set(profile.extra_folders)
    by_key = {f.key: f for f in pool}
    need = {d.folder for f in findings for d in f.present()}
    planted = sum(len(f.present()) for f in findings)
    target = round(FOLDERS_PER_SQRT_DOC * math.sqrt(docs))
    target = max(len(need), min(target, len(need) + docs - planted, len(pool)))
    chosen = [by_key[k] for k in sorted(need)]
    rest = [f for f in pool if f.key not in need]
    firsts = [f for f in rest if f is next(g for g in pool if g.category == f.category)]
    rng.shuffle(firsts)
    others = sorted((f for f in rest if f not in firsts),
                    key=lambda f: -f.weight * (2 if f in own else 1) * rng.uniform(0.5, 1.5))
    for folder in firsts + others:
        if len(chosen) >= target:
            break
        chosen.append(folder)
    return sorted(chosen, key=pool.index)


def _counts(folders: list[FolderSpec], planted: dict[str, int], n: int) -> dict[str, int]:
    """Filler documents per folder: every folder gets one document, the rest by weight."""
    out = {f.key: 0 if planted.get(f.key) else 1 for f in folders}
    left = n - sum(out.values())
    total = sum(f.weight for f in folders)
    shares = {f.key: left * f.weight / total for f in folders}
    for key, share in shares.items():
        out[key] += int(share)
    rest = left - sum(int(s) for s in shares.values())
    for key in sorted(shares, key=lambda k: (int(shares[k]) - shares[k], k))[:rest]:
        out[key] += 1
    return out


class _Titler:
    """Fills title patterns for filler documents and keeps titles unique within a folder."""

    def __init__(self, ctx: RoomContext, profile: Profile, rng: Random, names: NameBook,
                 docs: int) -> None:
        self.ctx, self.profile, self.rng = ctx, profile, rng
        self.companies = [names.company() for _ in range(max(8, docs // 6))]
        self.people = [names.person() for _ in range(max(6, docs // 20))]
        self.seen: dict[str, set[str]] = {}

    def slots(self, when: str) -> dict[str, str]:
        rng, ctx, profile = self.rng, self.ctx, self.profile
        cp, _ = rng.choice(self.companies)
        values = {
            "cp": cp, "person": rng.choice(self.people), "date": long_date(when),
            "year": str(min(int(when[:4]), ctx.fiscal_year)), "n": str(rng.randint(1, 40)),
            "q": str(rng.randint(1, 4)),
            "state": ctx.state, "permit": rng.choice(profile.permits),
            "regulator": rng.choice(profile.regulators).removeprefix("the ").title(),
            "site": rng.choice(profile.vocab["site"]).removeprefix("the ").title(),
            "law_firm": ctx.law_firm, "auditor": ctx.auditor, "insurer": rng.choice(INSURERS),
            "series": rng.choice("ABCD"), "line": rng.choice(_LINES),
            "topic": rng.choice(_TOPICS), "subject": rng.choice(_SUBJECTS),
            "target": ctx.target, "patent": f"{rng.randint(9_000_000, 12_500_000):,}",
        }
        values.update({f"contract_{k}": v for k, v in profile.contracts.items()})
        return values

    def filler(self, folder: FolderSpec, when: str) -> tuple[str, str, str, str]:
        """(doctype, title, party, party term) for a filler document of ``folder``."""
        rng = self.rng
        kinds, weights = zip(*folder.mix, strict=True)
        doctype = rng.choices(kinds, weights)[0]
        seen = self.seen.setdefault(folder.key, set())
        for attempt in range(6):
            pattern = rng.choice(DOCTYPES[doctype].titles)
            values = self.slots(when)
            title = pattern.format(**values)
            if title not in seen or attempt == 5:
                break
        base, k = title, 2
        while title in seen:
            title, k = f"{base} ({k})", k + 1
        seen.add(title)
        if "{cp}" in pattern:
            return doctype, title, values["cp"], values["cp"].split()[0]
        if "{person}" in pattern:
            return doctype, title, values["person"], values["person"].split()[-1]
        return doctype, title, "", ""

    def reserve(self, folder: str, title: str) -> None:
        self.seen.setdefault(folder, set()).add(title)


def _format(doctype: str, budget: int, forced: str | None, rng: Random) -> tuple[str, int]:
    style = DOCTYPES[doctype].style
    fmts, weights = zip(*FORMATS[style], strict=True)
    fmt = forced or rng.choices(fmts, weights)[0]
    cap = BINARY_CAP.get(fmt)
    if cap is not None and budget > cap:
        if forced:
            return fmt, cap
        fmt = "md" if rng.random() < 0.65 else "txt"
    return fmt, budget


_UNSAFE = re.compile(r"[^A-Za-z0-9 .,'&()\-]+")


def _filename(prefix: str, title: str, fmt: str) -> str:
    safe = re.sub(r"\s+", " ", _UNSAFE.sub("-", title)).strip(" .-")[:110]
    return f"{prefix} {safe}.{fmt}"


def plan_room(settings: GenerateSettings) -> RoomPlan:
    """Decide every document of the room, without writing anything."""
    ctx, profile, names, rng = make_context(settings)
    kit = Kit(ctx, profile, rng, names)
    findings = choose_findings(kit, settings.docs)
    folders = choose_folders(profile, findings, settings.docs, rng)
    titler = _Titler(ctx, profile, rng, names, settings.docs)
    # (folder key, doctype, title, date, party, term, spec or None)
    entries: list[tuple[str, str, str, str, str, str, DocSpec | None]] = []
    for finding in findings:
        for spec in finding.present():
            titler.reserve(spec.folder, spec.title)
            entries.append((spec.folder, spec.doctype, spec.title, spec.date, spec.party,
                            spec.term, spec))
    planted: dict[str, int] = {}
    for entry in entries:
        planted[entry[0]] = planted.get(entry[0], 0) + 1
    counts = _counts(folders, planted, settings.docs - len(entries))
    start = date.fromisoformat(ctx.as_of) - timedelta(days=6 * 365)
    for folder in folders:
        for _ in range(counts[folder.key]):
            when = (start + timedelta(days=rng.randint(0, 6 * 365 - 5))).isoformat()
            doctype, title, party, term = titler.filler(folder, when)
            entries.append((folder.key, doctype, title, when, party, term, None))
    return _assemble(settings, ctx, profile, folders, findings, entries, rng)


def _assemble(settings: GenerateSettings, ctx: RoomContext, profile: Profile,
              folders: list[FolderSpec], findings: list[Finding], entries: list,
              rng: Random) -> RoomPlan:
    weights = [DOCTYPES[e[1]].size * rng.lognormvariate(0, 0.55) for e in entries]
    scale = settings.total_tokens / sum(weights)
    pool = folders_of(profile)
    names: dict[str, tuple[str, str, str]] = {}
    for folder in folders:
        number = [f for f in pool if f.category == folder.category].index(folder) + 1
        prefix = f"{folder.category}.{number}"
        names[folder.key] = (category_name(profile, folder.category),
                             f"{prefix} {folder.name}", prefix)
    rank = {f.key: pool.index(f) for f in folders}
    order = sorted(range(len(entries)), key=lambda i: (rank[entries[i][0]], entries[i][3],
                                                       entries[i][2]))
    plans: list[DocPlan] = []
    spec_index: dict[int, int] = {}
    within: dict[str, int] = {}
    for index, i in enumerate(order):
        key, doctype, title, when, party, term, spec = entries[i]
        budget = max(120, round(weights[i] * scale))
        fmt, budget = _format(doctype, budget, spec.fmt if spec else None, rng)
        category, folder_name, prefix = names[key]
        within[key] = within.get(key, 0) + 1
        name = _filename(f"{prefix}.{within[key]}", title, fmt)
        path = f"documents/{category}/{folder_name}/{name}"
        plans.append(DocPlan(index=index, id=f"D{index + 1:05d}", path=path, title=title,
                             doctype=doctype, fmt=fmt, budget=budget, date=when, party=party,
                             term=term, inserts=list(spec.inserts) if spec else [],
                             folder=f"{category}/{folder_name}", category=category))
        if spec is not None:
            spec_index[id(spec)] = index
    roles = [{d.role: spec_index[id(d)] for d in f.present()} for f in findings]
    missing = [{d.role: d.title for d in f.docs if d.missing} for f in findings]
    return RoomPlan(ctx, plans, findings, roles, missing)
