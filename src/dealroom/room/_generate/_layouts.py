"""Document layouts: how each kind of document is put together from filler and inserts.

A layout returns a list of *items* ``(text, tokens, mark)``: ``mark`` is the index of the plan's
insert that the item carries, ``-1`` for filler, and :data:`BREAK` forces a page break. Layouts
fill the middle of a document with whole sections until its token budget is reached, then place
the plan's inserts: ``front`` ones after the opening, ``body`` ones at seeded positions between
paragraphs, ``end`` ones in the closing schedules.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import format_datetime
from random import Random

from dealroom.room._generate._doctypes import DOCTYPES
from dealroom.room._generate._grammar import DOCTYPE_GRAMMAR, LAYOUT_GRAMMAR
from dealroom.room._generate._model import DocPlan, Insert
from dealroom.room._generate._names import FIRST, LAST, long_date
from dealroom.room._generate._text import Library, Pool

Item = tuple[str, int, int]
BREAK: Item = ("", 0, -2)
BANK_VISITS = 2
"""Visits per sentence-bank topic in one document before grammar topics take over."""


def heading(fmt: str, level: int, text: str) -> str:
    """A heading in the document's format: ``## Text`` in Markdown, capitals elsewhere."""
    if fmt == "md":
        return "#" * level + " " + text
    return text.upper() if level <= 2 else text


class Writer:
    """Collects the items of one document and tracks their token total."""

    def __init__(self, plan: DocPlan, lib: Library, rng: Random) -> None:
        self.plan, self.lib, self.rng, self.fmt = plan, lib, rng, plan.fmt
        self.items: list[Item] = []
        self.total = 0
        self.headers: list[tuple[str, str]] = []
        self.anchor = 0
        """Where ``end`` inserts go among this writer's items (when it is a document's end)."""

    def extend(self, items: list[Item]) -> None:
        self.items.extend(items)
        self.total += sum(n for _, n, _ in items)

    def add(self, text: str, tokens: int | None = None, mark: int = -1) -> None:
        n = self.lib.tokens(text) if tokens is None else tokens
        self.items.append((text, n, mark))
        self.total += n

    def head(self, level: int, text: str) -> None:
        self.add(heading(self.fmt, level, text))

    def brk(self) -> None:
        self.items.append(BREAK)

    def person(self) -> str:
        return f"{self.rng.choice(FIRST)} {self.rng.choice(LAST)}"


def _insert_items(w: Writer, idx: int, ins: Insert) -> list[Item]:
    out = []
    if ins.heading:
        text = heading(w.fmt, 3, ins.heading)
        out.append((text, w.lib.tokens(text), -1))
    out.append((ins.text, w.lib.tokens(ins.text), idx))
    return out


def _inserts(w: Writer, where: str) -> list[list[Item]]:
    return [_insert_items(w, i, ins) for i, ins in enumerate(w.plan.inserts) if ins.where == where]


def _sections(
    w: Writer, target: int, pools: list[Pool], numbered: str | None, clause: bool = True
) -> list[Item]:
    """Filler sections until ``target`` tokens, one per topic, each heading used once.

    Topics are visited round-robin, one paragraph group per visit, so a long document gets
    longer sections rather than repeated headings. When the layout has a grammar (see
    :mod:`._grammar`), bank topics get at most :data:`BANK_VISITS` visits and the grammar's
    topics take over. ``numbered`` formats a section heading from its number and topic
    (``None``: no headings); ``clause`` numbers paragraphs ``3.1, 3.2``.
    """
    rng, total, visit = w.rng, 0, 0
    order = list(range(len(pools)))
    rng.shuffle(order)
    kind = w.plan.doctype
    name = DOCTYPE_GRAMMAR.get(kind) or LAYOUT_GRAMMAR.get(DOCTYPES[kind].layout, "")
    extra = w.lib.grammars.get(name, [])
    every = [*pools, *extra] if pools else []
    sections: dict[int, list[Item]] = {}
    while total < target and every:
        if extra and visit >= BANK_VISITS * len(pools):
            topic = len(pools) + (visit - BANK_VISITS * len(pools)) % len(extra)
        else:
            topic = order[visit % len(pools)]
        visit += 1
        section = sections.get(topic)
        if section is None:
            section = sections[topic] = []
            if numbered is not None:
                label = numbered.format(n=len(sections), h=every[topic].heading)
                text = heading(w.fmt, 2, label)
                section.append((text, w.lib.tokens(text), -1))
                total += section[-1][1]
        number, added = list(sections).index(topic) + 1, 0
        for text, n in rng.choice(every[topic].groups):
            if total + n // 2 > target and len(section) > 1:
                break
            if clause:
                text, n = f"{number}.{len(section) + (numbered is None)} {text}", n + 3
            section.append((text, n, -1))
            total, added = total + n, added + 1
        if not added:  # the budget is within half a paragraph: stop here
            break
    return [item for section in sections.values() for item in section]


_CLAUSE = re.compile(r"^(\d+\.\d+) ")


def _place(rng: Random, middle: list[Item], groups: list[list[Item]]) -> list[Item]:
    """Insert each group of items at a seeded position between the middle's paragraphs.

    A single planted paragraph that follows a numbered clause ``8.1`` becomes clause ``8.1A``.
    """
    for group in groups:
        spots = [i for i in range(1, len(middle) + 1) if i == len(middle) or middle[i][2] != -2]
        at = rng.choice(spots) if spots else len(middle)
        number = _CLAUSE.match(middle[at - 1][0]) if at and len(group) == 1 else None
        if number:
            text, n, mark = group[0]
            group = [(f"{number.group(1)}A {text}", n + 3, mark)]
        middle[at:at] = group
    return middle


def _fill(
    w: Writer, end: Writer, pools: list[Pool], numbered: str | None, clause: bool = True
) -> None:
    """Front inserts, then filler up to the budget with body inserts, then the end."""
    for group in _inserts(w, "front"):
        w.items.extend(group)
        w.total += sum(n for _, n, _ in group)
    body = _inserts(w, "body")
    endins = _inserts(w, "end")
    fixed = sum(n for g in body + endins for _, n, _ in g) + end.total
    middle = _sections(w, w.plan.budget - w.total - fixed, pools, numbered, clause)
    w.items.extend(_place(w.rng, middle, body))
    w.total += sum(n for _, n, _ in middle)
    at = end.anchor
    for group in endins:
        end.items[at:at] = group
        at += len(group)
    w.items.extend(end.items)
    w.total += end.total + sum(n for g in endins for _, n, _ in g)


LONG = 10_000
"""Documents longer than this (tokens) get schedules or appendices of tables."""


def _tables(w: Writer, end: Writer, family: str) -> None:
    """Append table schedules to ``end``: 10-35% of a long document's budget."""
    from dealroom.room._generate._sheets import schedule_items  # (imports this module)

    budget = w.plan.budget
    if budget > LONG:
        end.extend(schedule_items(w, int(budget * min(0.35, 0.1 + budget / 400_000)), family))


def _pools(w: Writer) -> list[Pool]:
    return w.lib.topics(DOCTYPES[w.plan.doctype].families or ("report",))


def _a(word: str) -> str:
    return ("an " if word[0] in "AEIOU" else "a ") + word


def _label(plan: DocPlan) -> str:
    return plan.title.split(" - ")[0].split(" (")[0]


def _signature(w: Writer, end: Writer) -> None:
    ctx, plan = w.lib.ctx, w.plan
    end.add("IN WITNESS WHEREOF, the parties have executed this Agreement as of the date first "
            "written above.")
    end.add(f"{ctx.target}\nBy: /s/ {ctx.officer('CEO')}\nName: {ctx.officer('CEO')}\n"
            "Title: Chief Executive Officer")
    if plan.party:
        who = w.person()
        end.add(f"{plan.party}\nBy: /s/ {who}\nName: {who}\nTitle: Authorized Signatory")


def contract(w: Writer) -> None:
    ctx, plan, rng = w.lib.ctx, w.plan, w.rng
    w.head(1, plan.title)
    if plan.party:
        w.add(f'This {_label(plan)} (this "Agreement") is entered into as of '
              f'{long_date(plan.date)} (the "Effective Date") by and between {ctx.target}, '
              f'{_a(ctx.state)} corporation ("{ctx.short}"), and {plan.party} ("{plan.term}").')
        families = DOCTYPES[plan.doctype].families
        if "employment" in families or "ip_assign" in families:
            w.add(f"WHEREAS, {ctx.short} wishes to employ or engage {plan.term}, and {plan.term} "
                  "wishes to accept on the terms and conditions set out in this Agreement;")
        else:
            w.add(f"WHEREAS, {ctx.short} and {plan.term} wish to set out the terms on which they "
                  "will do business with each other; and WHEREAS, each party has the authority "
                  "to enter into this Agreement;")
        w.add("NOW, THEREFORE, in consideration of the mutual covenants set out herein, the "
              "parties agree as follows:")
    else:
        w.add(f"{plan.title} of {ctx.target}, {_a(ctx.state)} corporation, as adopted by its Board "
              f"of Directors on {long_date(plan.date)} and in effect as of that date.")
    end = Writer(plan, w.lib, rng)
    end.brk()
    _signature(w, end)
    if plan.budget > 2500 or any(i.where == "end" for i in plan.inserts):
        end.brk()
        end.head(2, "Schedule A - " + rng.choice(("Fees", "Pricing", "Service Description",
                                                  "Key Terms", "Contacts")))
        end.add("The terms of this Schedule form part of the Agreement and prevail over the body "
                "of the Agreement to the extent of any inconsistency.")
        end.anchor = len(end.items)
        _tables(w, end, DOCTYPES[plan.doctype].families[0])
    _fill(w, end, _pools(w), "Article {n}. {h}")


def pleading(w: Writer) -> None:
    ctx, plan, rng = w.lib.ctx, w.plan, w.rng
    plaintiff = plan.party or "Plaintiff"
    w.add(f"IN THE SUPERIOR COURT OF THE STATE OF {ctx.state.upper()}")
    w.add(f"{plaintiff},\nPlaintiff,\nv.\n{ctx.target},\nDefendant.")
    w.add(f"Case No. {plan.date[:4]}-CV-{rng.randint(1000, 99999)}")
    w.head(1, "Complaint")
    w.add(f"Plaintiff {plaintiff}, by its undersigned counsel, for its complaint against "
          f"Defendant {ctx.target}, alleges as follows:")
    end = Writer(plan, w.lib, rng)
    end.head(2, "Prayer for Relief")
    end.add("WHEREFORE, Plaintiff respectfully requests that the Court enter judgment in its "
            "favor, award damages in an amount to be proven at trial, together with interest, "
            "costs and attorneys' fees, and grant such further relief as the Court deems just.")
    end.add(f"Dated: {long_date(plan.date)}\nRespectfully submitted,\n/s/ {w.person()}\n"
            "Counsel for Plaintiff")
    _fill(w, end, _pools(w), "{h}", clause=False)


def minutes(w: Writer) -> None:
    ctx, plan, rng = w.lib.ctx, w.plan, w.rng
    w.head(1, plan.title)
    w.add(f"{ctx.target}\nDate: {long_date(plan.date)}\nLocation: {ctx.address} and by "
          "videoconference")
    present = rng.sample(ctx.directors, k=min(len(ctx.directors), rng.randint(4, 6)))
    w.add("Directors present: " + ", ".join(present) + ".")
    w.add(f"Also present: {ctx.officer('CFO')}, Chief Financial Officer; "
          f"{ctx.officer('General Counsel')}, General Counsel; and {ctx.officer('Secretary')}, "
          "who acted as secretary of the meeting.")
    w.add(f"The Chair called the meeting to order at {rng.randint(8, 10)}:{rng.randint(0, 5)}0 "
          "a.m., and the Secretary confirmed that a quorum was present.")
    end = Writer(plan, w.lib, rng)
    end.add(f"There being no further business, the meeting was adjourned at "
            f"{rng.randint(11, 12)}:{rng.randint(0, 5)}5 p.m.")
    end.add(f"/s/ {ctx.officer('Secretary')}\nSecretary of the Meeting")
    _fill(w, end, _pools(w), "{n}. {h}", clause=False)


def _table(w: Writer, title: str, rows: list[tuple[str, ...]]) -> str:
    if w.fmt == "md":
        head = "| " + " | ".join(rows[0]) + " |\n|" + "---|" * len(rows[0])
        body = "\n".join("| " + " | ".join(r) + " |" for r in rows[1:])
        return f"**{title}**\n\n{head}\n{body}"
    return title.upper() + "\n" + "\n".join("  ".join(r) for r in rows)


def _statements(w: Writer) -> None:
    ctx, rng = w.lib.ctx, w.rng
    rev = ctx.scale * rng.uniform(0.8, 1.1)
    fy = ctx.fiscal_year

    def line(name: str, share: float) -> tuple[str, ...]:
        cur = round(rev * share * rng.uniform(0.9, 1.1))
        return (name, f"{cur:,}", f"{round(cur * rng.uniform(0.85, 1.05)):,}")

    years = ("(USD thousands)", f"FY{fy}", f"FY{fy - 1}")
    income = [years, line("Revenue", 1.0), line("Cost of revenue", 0.46),
              line("Gross profit", 0.54), line("Operating expenses", 0.38),
              line("Operating income", 0.16), line("Interest expense", 0.02),
              line("Income before taxes", 0.14), line("Income tax expense", 0.035),
              line("Net income", 0.105)]
    balance = [years, line("Cash and cash equivalents", 0.22), line("Accounts receivable", 0.15),
               line("Property and equipment, net", 0.3), line("Goodwill and intangibles", 0.4),
               line("Total assets", 1.3), line("Accounts payable and accruals", 0.12),
               line("Long-term debt", 0.35), line("Total liabilities", 0.6),
               line("Total stockholders' equity", 0.7)]
    cash = [years, line("Net cash from operating activities", 0.15),
            line("Net cash used in investing activities", 0.06),
            line("Net cash used in financing activities", 0.04)]
    for title, rows in (("Consolidated Statement of Operations", income),
                        ("Consolidated Balance Sheet", balance),
                        ("Consolidated Statement of Cash Flows", cash)):
        w.add(_table(w, title, rows))


def financials(w: Writer) -> None:
    ctx, plan = w.lib.ctx, w.plan
    w.head(1, plan.title)
    w.add(f"{ctx.target} and Subsidiaries")
    if plan.doctype == "audited_fs":
        w.head(2, "Independent Auditor's Report")
        w.add(f"To the Board of Directors of {ctx.target}: We have audited the accompanying "
              "consolidated financial statements, which comprise the consolidated balance sheet "
              "and the related statements of operations and cash flows for the year then ended, "
              "and the related notes. In our opinion, the financial statements present fairly, in "
              "all material respects, the financial position of the Company in accordance with "
              f"accounting principles generally accepted in the United States. {ctx.auditor}")
    _statements(w)
    w.brk()
    w.head(2, "Notes to the Consolidated Financial Statements")
    end = Writer(plan, w.lib, w.rng)
    _tables(w, end, "fin_notes")
    _fill(w, end, _pools(w), "Note {n} - {h}", clause=False)


def report(w: Writer) -> None:
    ctx, plan = w.lib.ctx, w.plan
    w.head(1, plan.title)
    by = plan.party or ctx.auditor
    w.add(f"Prepared for: {ctx.target}\nPrepared by: {by}\nDate: {long_date(plan.date)}")
    end = Writer(plan, w.lib, w.rng)
    end.brk()
    end.head(2, "Appendix A - Documents Reviewed")
    end.add("Documents reviewed include policies, procedures, prior reports and correspondence "
            "provided by management through the virtual data room.")
    _tables(w, end, "report")
    _fill(w, end, _pools(w), "{n}. {h}", clause=False)


def policy(w: Writer) -> None:
    ctx, plan, rng = w.lib.ctx, w.plan, w.rng
    w.head(1, plan.title)
    w.add(f"{ctx.target}\nEffective date: {long_date(plan.date)}\nVersion: "
          f"{rng.randint(1, 6)}.{rng.randint(0, 9)}\nOwner: {ctx.officer('General Counsel')}")
    end = Writer(plan, w.lib, rng)
    end.add(f"Approved by the Board of Directors of {ctx.target} on {long_date(plan.date)}.")
    _fill(w, end, _pools(w), "{n}. {h}", clause=False)


def letter(w: Writer) -> None:
    ctx, plan, rng = w.lib.ctx, w.plan, w.rng
    sender = plan.party or ctx.target
    w.add(f"{sender}\n{rng.randint(100, 9900)} {rng.choice(('Market', 'Main', 'Park'))} Street")
    w.add(long_date(plan.date))
    w.add(f"{ctx.officer('General Counsel')}\nGeneral Counsel\n{ctx.target}")
    subject = _label(plan)
    if subject.startswith(("Letter from", "Letter to")):
        subject = rng.choice(("Outstanding matters", "Request for information", "Annual review",
                              "Follow-up to our recent meeting", "Notice under the Agreement"))
    w.add(f"Re: {subject}")
    w.add(f"Dear {ctx.officer('General Counsel').split()[0]}:")
    end = Writer(plan, w.lib, rng)
    signer = w.person()
    end.add(f"Sincerely,\n/s/ {signer}\n{signer}\n{sender}")
    _fill(w, end, _pools(w), None, clause=False)


def email_headers(w: Writer) -> list[tuple[str, str]]:
    """From, To, Date and Subject of an e-mail document."""
    ctx, plan, rng = w.lib.ctx, w.plan, w.rng
    sender = w.person()
    domain = (plan.term or ctx.short).lower() + ".com"
    y, m, d = (int(x) for x in plan.date.split("-"))
    when = datetime(y, m, d, rng.randint(7, 19), rng.randint(0, 59), tzinfo=UTC)
    gc = ctx.officer("General Counsel")
    return [
        ("From", f"{sender} <{sender.split()[0].lower()}.{sender.split()[1].lower()}@{domain}>"),
        ("To", f"{gc} <{gc.split()[0].lower()}@{ctx.short.lower()}.com>"),
        ("Date", format_datetime(when)),
        ("Subject", plan.title.split(" - ", 1)[-1].rsplit(" (", 1)[0]),
    ]


def email(w: Writer) -> None:
    ctx, plan, rng = w.lib.ctx, w.plan, w.rng
    w.headers = email_headers(w)
    if w.fmt != "eml":
        w.add("\n".join(f"{k}: {v}" for k, v in w.headers))
    w.add(f"{ctx.officer('General Counsel').split()[0]},")
    end = Writer(plan, w.lib, rng)
    end.add(f"Best regards,\n{w.headers[0][1].split(' <')[0]}")
    _fill(w, end, _pools(w), None, clause=False)


def form(w: Writer) -> None:
    ctx, plan, rng = w.lib.ctx, w.plan, w.rng
    w.head(1, plan.title)
    if not any(i.where == "front" for i in plan.inserts):
        w.add(f"Issued to: {ctx.target}\nAddress: {ctx.address}\nDate of issue: "
              f"{long_date(plan.date)}\nReference: {rng.randint(10000, 99999)}-"
              f"{rng.choice('ABCDEFGH')}")
    end = Writer(plan, w.lib, rng)
    end.add(f"Authorized signature: /s/ {w.person()}")
    _fill(w, end, _pools(w), "{n}. {h}", clause=False)


LAYOUTS: dict[str, Callable[[Writer], None]] = {
    "contract": contract, "minutes": minutes, "financials": financials, "report": report,
    "pleading": pleading,
    "policy": policy, "letter": letter, "email": email, "form": form,
}
"""Flow layouts by name; ``sheet`` layouts live in :mod:`._sheets`."""
