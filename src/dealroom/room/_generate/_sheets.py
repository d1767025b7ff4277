"""Spreadsheet-like documents: cap tables, schedules, logs and ledgers.

A sheet document is a list of :class:`Sheet` objects. As XLSX each sheet is one page; as
Markdown or text each sheet is a table (its header repeated every 25 rows) starting a new page.
Planted rows (an insert's text, cells split by tabs) go into the first sheet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from random import Random

from dealroom.room._generate._layouts import BREAK, Item, Writer, heading
from dealroom.room._generate._names import FIRST, LAST
from dealroom.room._tokens import count_tokens

Columns = tuple[tuple[str, str], ...]

_COMPANY_A = ("Apex", "Birch", "Cedar", "Delta", "Elm", "Fjord", "Granite", "Hudson", "Iris",
              "Juniper", "Kestrel", "Linden", "Maple", "Nimbus", "Oakline", "Pioneer", "Quarry")
_COMPANY_B = ("Foods", "Logistics", "Health", "Retail", "Capital", "Energy", "Media", "Tools",
              "Motors", "Labs", "Partners", "Holdings")

_STD: dict[str, list[tuple[str, Columns]]] = {
    "cap_table": [
        ("Summary", (("Holder", "person"), ("Class", "choice:Common|Series A Preferred|"
                     "Series B Preferred|Common (Founder)"), ("Shares", "shares"),
                     ("Certificate", "id:CS"))),
        ("Option Pool", (("Optionee", "person"), ("Grant Date", "date"),
                         ("Options", "small"), ("Exercise Price (USD)", "price"))),
    ],
    "stock_ledger": [("Ledger", (("Date", "date"), ("Holder", "person"), ("Transaction",
                     "choice:Issuance|Transfer|Exercise|Repurchase"), ("Shares", "shares"),
                     ("Certificate", "id:CS")))],
    "org_schedule": [("Entities", (("Entity", "company"), ("Jurisdiction", "state"),
                     ("Ownership", "choice:100%|100%|100%|80%|51%"), ("Status",
                     "choice:Active|Active|Dormant")))],
    "budget": [("Operating Budget", (("Account", "id:GL"), ("Line item", "choice:Salaries|"
               "Rent|Software|Travel|Marketing|Professional fees|Insurance|Utilities"),
               ("Q1", "money"), ("Q2", "money"), ("Q3", "money"), ("Q4", "money")))],
    "revenue_schedule": [("Revenue by Customer", (("Customer", "company"), ("Contract",
                         "id:CT"), ("Revenue (USD)", "money"), ("Share", "pct")))],
    "aging": [("Aging", (("Customer", "company"), ("Current", "money"), ("31-60", "money"),
               ("61-90", "money"), ("Over 90", "money")))],
    "purchase_order": [("Lines", (("Line", "small"), ("Part number", "id:PN"),
                       ("Description", "choice:Housing|Bracket|Valve|Fastener kit|Gasket"),
                       ("Quantity", "small"), ("Unit price (USD)", "price")))],
    "ip_schedule": [("Registrations", (("Mark or title", "choice:Word mark|Design mark|Patent|"
                    "Copyright"), ("Number", "id:REG"), ("Jurisdiction",
                    "choice:US|EU|UK|CA|JP"), ("Status", "choice:Registered|Pending|Renewal due"),
                    ("Owner", "target")))],
    "comp_schedule": [("Executives", (("Name", "person"), ("Title", "choice:Vice President|"
                      "Senior Vice President|Director|Managing Director"), ("Base salary (USD)",
                      "salary"), ("Target bonus (USD)", "money")))],
    "census": [("Employees", (("Employee ID", "id:E"), ("Department", "choice:Operations|"
               "Sales|Finance|Engineering|Legal|HR"), ("Hire date", "date"), ("Status",
               "choice:Full-time|Full-time|Part-time|Contractor"), ("State", "state")))],
    "docket": [("Matters", (("Matter", "company"), ("Court", "choice:Superior Court|"
               "U.S. District Court|Arbitration (AAA)|State Court"), ("Filed", "date"),
               ("Status", "choice:Closed|Dismissed|Settled|Closed"), ("Reserve (USD)", "zero")))],
    "osha_log": [("Log", (("Case", "id:OSHA"), ("Date", "date"), ("Description",
                 "choice:Laceration|Strain|Contusion|Burn|Fracture"), ("Days away", "small")))],
    "loss_run": [("Claims", (("Claim", "id:CL"), ("Date of loss", "date"), ("Line",
                 "choice:General liability|Auto|Property|Workers compensation"),
                 ("Paid (USD)", "money"), ("Status", "choice:Closed|Closed|Open")))],
    "it_inventory": [("Systems", (("System", "choice:ERP|CRM|HRIS|Email|Data warehouse|"
                     "Ticketing|Payroll"), ("Vendor", "company"), ("Hosting",
                     "choice:SaaS|On-premises|IaaS"), ("Owner", "person")))],
    "loan_tape": [("Loans", (("Loan", "id:LN"), ("Borrower", "company"), ("Balance (USD)",
                  "money"), ("Rate", "rate"), ("Maturity", "date"), ("Risk grade",
                  "choice:2|3|3|4|5")))],
    "deposit_schedule": [("Deposits", (("Depositor", "company"), ("Type",
                         "choice:DDA|Money market|Savings|CD"), ("Balance (USD)", "money")))],
    "call_report": [("Schedule RC", (("Item", "id:RC"), ("Description",
                    "choice:Cash and balances|Securities|Loans and leases|Deposits|"
                    "Other liabilities|Equity capital"), ("Amount (USD thousands)", "money")))],
    "sla_report": [("Availability", (("Service", "choice:API|Web app|Reporting|Sync"),
                   ("Month", "date"), ("Uptime", "choice:99.95%|99.99%|99.90%|100.00%"),
                   ("Incidents", "small")))],
    "asset_register": [("Assets", (("Asset", "id:FA"), ("Description", "choice:CNC mill|"
                       "Press|Forklift|Paint booth|Compressor|Robot cell"), ("Cost (USD)",
                       "money"), ("Acquired", "date")))],
    "inventory_sheet": [("Inventory", (("SKU", "id:SKU"), ("Description", "choice:Raw steel|"
                        "Resin|Finished housings|WIP brackets|Packaging"), ("Units", "small"),
                        ("Value (USD)", "money")))],
    "waste_manifest": [("Manifests", (("Manifest", "id:WM"), ("Date", "date"), ("Waste code",
                       "choice:F003|F005|D001|D008"), ("Quantity (lb)", "small"),
                       ("Transporter", "company")))],
}


SCHEDULES: dict[str, list[tuple[str, Columns]]] = {
    "finance": [
        ("Commitments", (("Lender", "company"), ("Commitment (USD)", "money"),
                         ("Applicable Percentage", "pct"))),
        ("Subsidiaries", (("Subsidiary", "company"), ("Jurisdiction", "state"),
                          ("Ownership", "choice:100%|100%|80%"), ("Guarantor", "choice:Yes|No"))),
        ("Existing Liens", (("Lien", "id:UCC"), ("Secured Party", "company"), ("Collateral",
                            "choice:Equipment|Vehicles|Deposit account|Real property"),
                            ("Amount (USD)", "money"))),
        ("Existing Indebtedness", (("Instrument", "id:NOTE"), ("Holder", "company"),
                                   ("Principal (USD)", "money"), ("Maturity", "date"))),
    ],
    "lease": [
        ("Rent Schedule", (("Lease year", "small"), ("Monthly rent (USD)", "money"),
                           ("Annual rent (USD)", "money"))),
        ("Tenant Improvements", (("Item", "choice:HVAC|Electrical|Flooring|Fit-out|Signage"),
                                 ("Allowance (USD)", "money"), ("Completion", "date"))),
    ],
    "insurance": [
        ("Schedule of Coverages", (("Coverage", "choice:Property|General liability|Cyber|"
                                    "Crime|Auto|Umbrella"), ("Limit (USD)", "money"),
                                   ("Retention (USD)", "money"))),
        ("Scheduled Locations", (("Location", "id:LOC"), ("City", "choice:Columbus|Toledo|"
                                 "Denver|Austin|Albany"), ("Insured value (USD)", "money"))),
    ],
    "report": [
        ("Findings Log", (("Ref", "id:F"), ("Area", "choice:Access|Change management|"
                          "Reconciliation|Vendor|Backup|Training"), ("Rating",
                          "choice:Low|Low|Moderate|Elevated"), ("Owner", "person"),
                          ("Due", "date"))),
        ("Sample Tested", (("Item", "id:S"), ("Date", "date"), ("Amount (USD)", "money"),
                           ("Exception", "choice:None|None|None|Documentation"))),
    ],
    "fin_notes": [
        ("Debt Maturities", (("Year", "small"), ("Principal (USD thousands)", "money"))),
        ("Segment Information", (("Segment", "choice:Commercial|Consumer|Enterprise|Services|"
                                 "Industrial"), ("Revenue (USD thousands)", "money"),
                                 ("Operating income (USD thousands)", "money"))),
    ],
    "default": [
        ("Products and Pricing", (("Item", "choice:Standard|Premium|Enterprise|Support|"
                                   "Implementation|Training"), ("Reference", "id:SKU"),
                                  ("Unit price (USD)", "price"), ("Volume", "small"))),
        ("Service Levels", (("Service", "choice:Availability|Response|Resolution|Reporting"),
                            ("Target", "choice:99.9%|4 hours|2 business days|Monthly"),
                            ("Credit", "pct"))),
        ("Key Personnel and Contacts", (("Name", "person"), ("Role", "choice:Account lead|"
                                        "Project manager|Escalation|Billing"),
                                        ("Reference", "id:C"))),
    ],
}
"""Tables for the schedules and appendices of long documents, by clause family."""


def schedule_items(w: Writer, budget: int, family: str) -> list[Item]:
    """Lettered schedules (tables of 25-row blocks, each on new pages) worth ~``budget`` tokens."""
    specs = SCHEDULES.get(family, SCHEDULES["default"])
    out: list[Item] = []
    total, share, label = 0, budget / len(specs), "Appendix" if family == "report" else "Schedule"
    for number, (title, cols) in enumerate(specs):
        head = heading(w.fmt, 2, f"{label} {'BCDEFGH'[number]} - {title}")
        out += [BREAK, (head, count_tokens(head), -1)]
        total += out[-1][1]
        while total < share * (number + 1):
            rows = [[_cell(kind, w, w.rng) for _, kind in cols] for _ in range(25)]
            text = _render_rows(w, [h for h, _ in cols], rows)
            out.append((text, count_tokens(text), -1))
            total += out[-1][1]
    return out


def _render_rows(w: Writer, head: list[str], rows: list[list[str]]) -> str:
    if w.fmt == "md":
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])
    return "\n".join("  ".join(r) for r in [head, *rows])


@dataclass
class Sheet:
    title: str
    rows: list[list[str]]
    marks: dict[int, int] = field(default_factory=dict)
    """Row index → insert index of a planted row."""

    def page_text_tokens(self) -> int:
        """Tokens of this sheet's page as ``extract_pages`` renders it."""
        return count_tokens(f"# {self.title}") + sum(count_tokens("\t".join(r)) for r in self.rows)


def _cell(kind: str, w: Writer, rng: Random) -> str:
    fy = w.lib.ctx.fiscal_year
    if kind == "person":
        return f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    if kind == "company":
        return f"{rng.choice(_COMPANY_A)} {rng.choice(_COMPANY_B)} {rng.choice(('LLC', 'Inc.'))}"
    if kind in ("money", "salary", "shares"):
        lo, hi = {"money": (1_000, 2_500_000), "salary": (140_000, 420_000),
                  "shares": (5_000, 900_000)}[kind]
        return f"{rng.randrange(lo, hi, 50):,}"
    if kind == "small":
        return str(rng.randint(1, 400))
    if kind == "date":
        return f"{rng.randint(fy - 5, fy)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    if kind in ("pct", "rate", "price"):
        return f"{rng.uniform(0.1, 9.5):.2f}" + ("" if kind == "price" else "%")
    if kind.startswith("id:"):
        return f"{kind[3:]}-{rng.randint(1000, 99999)}"
    if kind.startswith("choice:"):
        return rng.choice(kind[7:].split("|"))
    if kind == "state":
        return rng.choice(("DE", "NY", "OH", "TX", "CA", "IL", "PA"))
    if kind == "target":
        return w.lib.ctx.target
    return "0"


def build_sheets(w: Writer) -> list[Sheet]:
    """The sheets of a sheet document, filled to its token budget, with planted rows."""
    rng, plan = w.rng, w.plan
    specs = _STD.get(plan.doctype) or _STD["budget"]
    sheets = [Sheet(title, [[h for h, _ in cols]]) for title, cols in specs]
    planted = [(i, ins) for i, ins in enumerate(plan.inserts)]
    fixed = sum(count_tokens(ins.text) for _, ins in planted)
    share = max(40, (plan.budget - fixed) // len(sheets))
    for sheet, (_, cols) in zip(sheets, specs, strict=True):
        total = count_tokens(f"# {sheet.title}") + count_tokens("\t".join(sheet.rows[0]))
        while total < share and len(sheet.rows) < 5000:
            row = [_cell(kind, w, rng) for _, kind in cols]
            sheet.rows.append(row)
            total += count_tokens("\t".join(row))
    first = sheets[0]
    _balance(first, planted)
    for i, ins in planted:
        n = len(first.rows)
        at = {"front": min(1 + rng.randint(0, 2), n), "end": n}.get(ins.where,
                                                                    rng.randint(1, n))
        first.rows.insert(at, ins.text.split("\t"))
        first.marks = {(r + 1 if r >= at else r): m for r, m in first.marks.items()}
        first.marks[at] = i
    return sheets


def _balance(sheet: Sheet, planted: list) -> None:
    """Make a cap table's holder rows add up to a planted "Total shares outstanding" row.

    The holders listed are scaled down if needed and an "Other holders" row carries the rest,
    so the planted total is consistent within its own document.
    """
    totals = [ins.text.split("\t") for _, ins in planted if ins.text.startswith("Total shares")]
    if not totals or sheet.rows[0][:3] != ["Holder", "Class", "Shares"]:
        return
    total = int(totals[0][2].replace(",", ""))
    listed = sum(int(r[2].replace(",", "")) for r in sheet.rows[1:])
    if listed > total * 0.8:
        factor = total * 0.8 / listed
        for row in sheet.rows[1:]:
            row[2] = f"{round(int(row[2].replace(',', '')) * factor, -2):,.0f}"
        listed = sum(int(r[2].replace(",", "")) for r in sheet.rows[1:])
    sheet.rows.append(["Other holders", "Common", f"{total - listed:,}", ""])


def sheet_items(w: Writer, sheets: list[Sheet]) -> list[Item]:
    """Sheets as Markdown tables (``md``) or tab-separated text, one new page per sheet."""
    out: list[Item] = []
    for number, sheet in enumerate(sheets):
        if number:
            out.append(BREAK)
        title = heading(w.fmt, 2, sheet.title) if w.fmt == "md" else f"# {sheet.title}"
        out.append((title, count_tokens(title), -1))
        head, body = sheet.rows[0], sheet.rows[1:]
        for start in range(0, max(1, len(body)), 25):
            chunk = body[start:start + 25]
            if w.fmt == "md":
                lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
                lines += ["| " + " | ".join(r) + " |" for r in chunk]
            else:
                lines = ["\t".join(r) for r in [head, *chunk]]
            text = "\n".join(lines)
            marks = [m for r, m in sorted(sheet.marks.items()) if start < r <= start + 25]
            out.append((text, count_tokens(text), marks[0] if marks else -1))
            out += [("", 0, m) for m in marks[1:]]  # more planted rows on the same page
    return out
