"""Planted issues in property, regulatory, environmental and privacy documents, and figures
that contradict each other across documents."""

from __future__ import annotations

from dealroom.room._generate._findings import (
    INDEMNITY,
    DocSpec,
    Finding,
    Kit,
    Point,
    severity_of,
    usd,
)
from dealroom.room._generate._kinds_contracts import severity_point
from dealroom.room._generate._model import Insert
from dealroom.room._generate._names import CITIES, CONSULTANTS, FORENSICS, STREETS

_DISCREPANCY = ("inconsistent", "contradict", "discrepancy", "do not match", "does not match",
                "differ")


def _site(k: Kit) -> tuple[str, str]:
    """A fresh street address and its one-word street name (unique in the room)."""
    rng = k.rng
    street = k.unique(lambda: f"{rng.randint(100, 9900)} {rng.choice(STREETS)}")
    return f"{street}, {rng.choice(CITIES)}", street


def related_party(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    word = k.names.word()
    landlord, term = f"{word} Properties LLC", word
    insider = rng.choice(ctx.directors)
    last = insider.split()[-1]
    site, street = _site(k)
    years = rng.randint(4, 9)
    ends = f"{int(ctx.as_of[:4]) + years}{ctx.as_of[4:]}"
    rent = k.amount(300_000, 2_400_000, 1_000)
    market = round(rent * rng.uniform(0.62, 0.85), -3)
    diff = rent - market
    total = diff * years
    sev = severity_of(total)
    share = rng.choice((40, 50, 60, 75, 100))
    docs = [
        DocSpec("lease", "lease", "property.leases", f"Lease Agreement - {site} ({landlord})",
                k.day(600, 1500), landlord, term,
                [Insert(f"Base Rent for the Premises at {site}: USD {rent:,} per year, payable "
                        f"monthly in advance, for a term ending on {k.long(ends)}.",
                        (f"USD {rent:,} per year", f"a term ending on {k.long(ends)}"),
                        where="end", heading="Schedule 1 - Base Rent")]),
        DocSpec("questionnaire", "questionnaire", "corporate.questionnaires",
                f"Director and Officer Questionnaire - {insider} ({ctx.fiscal_year})",
                k.day(60, 300), insider, last,
                [Insert(f"Related Party Transactions. I hold a {share}% membership interest in "
                        f"{landlord}, the landlord of {ctx.short}'s premises at {site}.",
                        (f"{share}% membership interest in {landlord}",))]),
        DocSpec("appraisal", "zoning_report", "property.surveys", f"Rent Appraisal - {site}",
                k.day(30, 200), inserts=[Insert(f"Conclusion. The fair market rent for the "
                                                f"premises at {site} is USD {market:,.0f} per "
                                                "year.", (f"USD {market:,.0f} per year",))]),
    ]
    rp = ("related party", "related-party")
    points = [
        Point("fact", f"{insider} owns the landlord {landlord}",
              f"PASS if the memo states that {insider} holds an interest in {landlord}, the "
              f"landlord of {site}, making the lease a related-party transaction. FAIL otherwise.",
              cite=("questionnaire",), terms=((term,), (last,), rp)),
        Point("conclusion", f"The {landlord} rent is above market",
              f"PASS if the memo concludes that the rent under the {landlord} lease exceeds "
              "market rent. FAIL otherwise.", cite=("lease", "appraisal"),
              terms=((term,), ("above market", "above-market", "exceeds market"))),
        Point("monetary", f"Above-market rent paid to {landlord}",
              f"PASS if the memo quantifies the above-market rent as about {usd(total)} over the "
              f"remaining {years} years ({usd(rent)} less {usd(market)} market rent, "
              f"{usd(diff)} a year). FAIL otherwise.", cite=("lease", "appraisal"),
              amounts=(total,), terms=((term,),)),
        severity_point(f"the {landlord} related-party lease", sev, ("questionnaire",),
                       ((term,), rp)),
        Point("recommendation", f"Put the {landlord} lease on arm's-length terms",
              "PASS if the memo recommends renegotiating the lease to market rent on arm's-length "
              "terms or terminating it at closing. FAIL otherwise.", cite=("lease",),
              terms=((term,), ("renegotiate", "arm's-length", "arm's length", "market rent",
                               "terminate"))),
    ]
    memo = (f"Related-party lease with {landlord}. {insider}, a director of {ctx.target}, "
            f"holds a {share}% interest in {landlord} {{questionnaire}}, the landlord of {site} "
            f"under a lease running until {ends} {{lease}}, a related-party transaction. The rent "
            "exceeds the fair market rent in the rent appraisal {appraisal}, so the rent is "
            f"above market; over the remaining {years} years the excess comes to {usd(total)}. "
            f"Severity: {sev.title()}. Recommendation: "
            "renegotiate the lease to market rent on arm's-length terms or terminate it at "
            "closing.")
    return Finding("related_party", f"{landlord}: related-party lease above market", sev,
                   f"{insider} owns the landlord; rent exceeds market by {usd(diff)} a year.",
                   docs, points, memo, step=f"Renegotiate the {landlord} lease {{lease}}.",
                   amounts=[("above-market rent, remaining term", total)])


def _shares(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    a = rng.randrange(8_000_000, 40_000_000, 1_000)
    b = a + rng.randrange(150_000, 900_000, 1_000)
    c = a + rng.randrange(20_000, b - a - 10_000, 1_000)
    price = rng.randrange(400, 9000) / 100
    value = round((b - a) * price, 2)
    sev = severity_of(value)
    meeting = k.day(60, 300)
    fy = ctx.fiscal_year
    docs = [
        DocSpec("captable", "cap_table", "cap.table", f"Capitalization Table as of "
                f"{k.long(k.day(10, 40))}", k.day(10, 40),
                inserts=[Insert(f"Total shares outstanding\t\t{a:,}\t", (f"{a:,}",),
                                where="end")]),
        DocSpec("minutes", "minutes", "corporate.minutes", f"Minutes of the Board of Directors "
                f"({k.long(meeting)})", meeting,
                inserts=[Insert(f"Capitalization. Following the issuance approved at this "
                                f"meeting, {b:,} shares of Common Stock will be issued and "
                                "outstanding.", (f"{b:,} shares of Common Stock",))]),
        DocSpec("fs", "audited_fs", "fin.audited", f"Audited Consolidated Financial Statements "
                f"FY{fy}", k.day(60, 150),
                inserts=[Insert(f"Stockholders' Equity. Common stock: {c:,} shares issued and "
                                f"outstanding as of December 31, {fy}.",
                                (f"{c:,} shares issued and outstanding",))]),
        DocSpec("loi", "loi", "corporate.transaction", f"Letter of Intent - {ctx.buyer}",
                k.day(5, 40), ctx.buyer, ctx.buyer.split()[0],
                [Insert(f"Purchase Price. {ctx.buyer} proposes to acquire all outstanding shares "
                        f"of {ctx.target} at USD {price:,.2f} per share in cash.",
                        (f"USD {price:,.2f} per share",))]),
    ]
    diff = b - a
    points = [
        Point("fact", "Share counts contradict each other",
              f"PASS if the memo reports the three share counts: {a:,} (capitalization table), "
              f"{b:,} (board minutes) and {c:,} (financial statements). FAIL otherwise.",
              cite=("captable", "minutes", "fs"), terms=((f"{a:,}",), (f"{b:,}",), (f"{c:,}",))),
        Point("conclusion", "The share count cannot be relied on",
              "PASS if the memo concludes that the share counts are inconsistent. FAIL "
              "otherwise.", cite=("captable",), terms=(("share",), _DISCREPANCY)),
        Point("monetary", "Value of the share-count discrepancy",
              f"PASS if the memo values the {diff:,}-share spread at about {usd(value)} at the "
              f"{usd(price)} per-share price in the letter of intent. FAIL otherwise.",
              cite=("loi",), amounts=(value,), terms=(("share",),)),
        severity_point("the share-count discrepancy", sev, ("captable",),
                       (("share",), _DISCREPANCY)),
        Point("recommendation", "Reconcile the capitalization",
              "PASS if the memo recommends reconciling the share count and obtaining a "
              "certified capitalization table before signing. FAIL otherwise.",
              cite=("captable",), terms=(("cap table", "capitalization"),
                                         ("reconcile", "certified", "certify"))),
    ]
    memo = (f"Inconsistent share counts. The capitalization table {{captable}} shows {a:,} "
            f"shares outstanding, the board minutes of {meeting} {{minutes}} record {b:,} shares "
            f"outstanding after an approved issuance, and the audited financial statements "
            f"{{fs}} report {c:,} shares issued and outstanding; the figures are inconsistent. "
            f"Severity: {sev.title()}. Recommendation: reconcile the share count and require a "
            "certified capitalization table before signing.\n\nAt the per-share price in the "
            f"letter of intent {{loi}}, the {diff:,}-share "
            f"spread between the capitalization table and the board minutes is worth "
            f"{usd(value)}.")
    return Finding("figure_contradiction", "Share counts contradict each other", sev,
                   "Cap table, board minutes and financial statements give different share "
                   "counts.", docs, points, memo,
                   step="Obtain a certified capitalization table {captable}.",
                   amounts=[("value of discrepancy", value)])


def _revenue(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    cp, term = k.company()
    r1 = k.amount(2_000_000, 30_000_000, 1_000)
    r2 = r1 + rng.choice((-1, 1)) * rng.randrange(300_000, 3_000_000, 1_000)
    gap = abs(r1 - r2)
    sev = severity_of(gap)
    fy = ctx.fiscal_year
    meeting = k.day(30, 200)
    docs = [
        DocSpec("schedule", "revenue_schedule", "fin.revenue", f"Revenue by Customer FY{fy}",
                k.day(20, 100), inserts=[Insert(f"{cp}\tCT-{rng.randint(1000, 9999)}\t{r1:,}\t",
                                                (cp, f"{r1:,}"))]),
        DocSpec("minutes", "minutes", "corporate.minutes", f"Minutes of the Board of Directors "
                f"({k.long(meeting)})", meeting,
                inserts=[Insert(f"Customer Update. Management reported that FY{fy} revenue from "
                                f"{cp} was USD {r2:,}.", (f"revenue from {cp} was USD {r2:,}",))]),
    ]
    points = [
        Point("fact", f"Conflicting FY{fy} revenue figures for {cp}",
              f"PASS if the memo reports that the revenue schedule shows {usd(r1)} of FY{fy} "
              f"revenue from {cp} while the board minutes report {usd(r2)}. FAIL otherwise.",
              cite=("schedule", "minutes"), amounts=(r1, r2), terms=((term,),)),
        Point("conclusion", f"{cp} revenue figures are inconsistent",
              f"PASS if the memo concludes that the {cp} revenue figures are inconsistent. FAIL "
              "otherwise.", cite=("schedule",), terms=((term,), _DISCREPANCY)),
        Point("monetary", f"Size of the {cp} revenue discrepancy",
              f"PASS if the memo quantifies the discrepancy as about {usd(gap)}. FAIL otherwise.",
              cite=("schedule", "minutes"), amounts=(gap,), terms=((term,),)),
        severity_point(f"the {cp} revenue discrepancy", sev, ("schedule",),
                       ((term,), _DISCREPANCY)),
        Point("recommendation", f"Reconcile {cp} revenue",
              f"PASS if the memo recommends reconciling the {cp} revenue figures with the "
              "sellers. FAIL otherwise.", cite=("schedule",),
              terms=((term,), ("reconcile", "reconciliation"))),
    ]
    memo = (f"Inconsistent revenue figures for {cp}. The FY{fy} revenue schedule {{schedule}} "
            f"shows {usd(r1)} of revenue from {cp}, but the board minutes of {meeting} "
            f"{{minutes}} report {usd(r2)}; the figures are inconsistent. Severity: "
            f"{sev.title()}. Recommendation: reconcile the {cp} revenue figures with the sellers "
            f"before relying on the revenue base.\n\nThe gap between the two {cp} figures "
            f"{{schedule}} {{minutes}} is {usd(gap)}.")
    return Finding("figure_contradiction", f"{cp}: revenue figures contradict each other", sev,
                   f"Revenue schedule and board minutes disagree on {cp} revenue.", docs, points,
                   memo, step=f"Reconcile the {cp} revenue figures {{schedule}}.",
                   amounts=[("discrepancy", gap)])


def figure_contradiction(k: Kit) -> Finding:
    if "shares" not in k.flags:
        k.flags.add("shares")
        return _shares(k)
    return _revenue(k)


def permit_expired(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    permit = rng.choice(k.profile.permits)
    number = k.unique(lambda: f"{rng.choice('ABCDEFGHKLMNPRSTW')}{rng.randint(10000, 99999)}")
    site, _ = _site(k)
    expired = k.day(40, 300)
    issued = k.after(expired, -365 * rng.randint(3, 5))
    days = k.days_between(expired, ctx.as_of)
    daily = rng.choice((1_000, 2_500, 5_000, 10_000))
    penalty = daily * days
    sev = severity_of(penalty)
    letter_date = k.day(5, 35)
    regulator = rng.choice(k.profile.regulators)
    folder = "ehs.permits" if ctx.profile == "manufacturer" else "reg.permits"
    docs = [
        DocSpec("permit", "permit", folder, f"{permit} - Permit No. {number}", issued,
                inserts=[Insert(f"Permit No.: {number}\nPermittee: {ctx.target}\nFacility: {site}"
                                f"\nIssue Date: {k.long(issued)}\nExpiration Date: "
                                f"{k.long(expired)}",
                                (f"Permit No.: {number}", f"Expiration Date: {k.long(expired)}"),
                                where="front")]),
        DocSpec("letter", "reg_letter", "reg.correspondence", f"Letter from {regulator} "
                f"({k.long(letter_date)})", letter_date,
                inserts=[Insert(f"Our records indicate that no renewal application has been "
                                f"received for Permit No. {number}, which expired on "
                                f"{k.long(expired)}. Operating without a valid permit may result "
                                f"in penalties of up to USD {daily:,} per day.",
                                (f"no renewal application has been received for Permit No. "
                                 f"{number}", f"up to USD {daily:,} per day"))]),
    ]
    lapsed = ("expired", "lapsed")
    points = [
        Point("fact", f"Permit No. {number} has expired",
              f"PASS if the memo states that {permit} No. {number} has expired. FAIL otherwise.",
              cite=("permit",), terms=((number,), lapsed)),
        Point("timeline", f"Permit No. {number} expired on {expired}",
              f"PASS if the memo gives the expiry date {k.long(expired)}. FAIL otherwise.",
              cite=("permit",), dates=(expired,), terms=((number,),)),
        Point("conclusion", f"Operating without Permit No. {number}",
              f"PASS if the memo concludes that no renewal has been filed and {ctx.target} is "
              "operating without a valid permit. FAIL otherwise.", cite=("letter",),
              terms=((number,), ("no renewal", "not renewed", "without a valid"))),
        Point("monetary", f"Accrued penalty exposure, Permit No. {number}",
              f"PASS if the memo quantifies potential penalties of about {usd(penalty)} "
              f"({usd(daily)} a day for the {days} days from expiry to the review date "
              f"{ctx.as_of}). FAIL otherwise.", cite=("letter",), amounts=(penalty,),
              terms=((number,),)),
        severity_point(f"the expired Permit No. {number}", sev, ("permit",),
                       ((number,), lapsed)),
        Point("recommendation", f"Renew Permit No. {number} before closing",
              "PASS if the memo recommends filing the renewal and making it a condition to "
              "closing. FAIL otherwise.", cite=("permit",),
              terms=((number,), ("renew", "renewal"), ("condition to closing", "closing condition",
                                             "before closing"))),
    ]
    memo = (f"Expired {permit}, Permit No. {number}. The permit for {site} {{permit}} expired "
            f"on {expired}, and {regulator}'s letter of {letter_date} {{letter}} confirms that no "
            f"renewal application has been filed; {ctx.target} is operating without a valid "
            f"permit. At the daily maximum in that letter, penalties for the {days} days from "
            f"{expired} to the review date {ctx.as_of} could reach {usd(penalty)}. Severity: "
            f"{sev.title()}. Recommendation: file the renewal immediately and make its grant a "
            "condition to closing.")
    return Finding("permit_expired", f"Permit No. {number} ({permit}) expired", sev,
                   f"{permit} No. {number} expired on {expired} with no renewal filed.", docs,
                   points, memo, step=f"Renew Permit No. {number} before closing {{permit}}.",
                   amounts=[("accrued penalties", penalty)], dates=[("expired", expired)])


def data_breach(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    found = k.day(120, 500)
    incident = k.unique(lambda: f"INC-{found[:4]}-{rng.randint(100, 999)}")
    notified = k.after(found, rng.randint(65, 110))
    late = k.days_between(found, notified)
    records = rng.randrange(4_000, 400_000, 2)
    per = rng.randrange(8, 60) + rng.choice((0, 0.5))
    cost = round(records * per, 2)
    sev = severity_of(cost)
    data = k.vocab("data")
    firm = rng.choice(FORENSICS)
    docs = [
        DocSpec("report", "incident_report", "privacy.incidents",
                f"Security Incident Report {incident}", k.after(found, 20),
                inserts=[Insert(f"Incident {incident}. On {k.long(found)}, {ctx.short} "
                                f"discovered unauthorized access to a database containing {data} "
                                f"of {records:,} individuals. Applicable law requires notice "
                                "within 60 days of discovery. Notice to affected individuals was "
                                f"completed on {k.long(notified)}.",
                                (f"{data} of {records:,} individuals",
                                 f"completed on {k.long(notified)}"), where="front")]),
        DocSpec("estimate", "letter", "privacy.incidents", f"Letter from {firm} "
                f"({k.long(k.after(found, 30))})", k.after(found, 30), firm, firm.split()[0],
                [Insert(f"Re: Incident {incident}. Based on comparable matters, we estimate "
                        "notification, credit monitoring and regulatory costs at USD "
                        f"{per:,.2f} per affected record.",
                        (f"USD {per:,.2f} per affected record",))]),
    ]
    points = [
        Point("fact", f"Incident {incident} affected {records:,} individuals",
              f"PASS if the memo reports security incident {incident} exposing {data} of "
              f"{records:,} individuals. FAIL otherwise.", cite=("report",),
              terms=((incident,), (f"{records:,}",))),
        Point("timeline", f"Late notice for incident {incident}",
              f"PASS if the memo notes that notice was completed on {k.long(notified)}, "
              f"{late} days after discovery, beyond the 60-day deadline. FAIL otherwise.",
              cite=("report",), dates=(notified,), terms=((incident,), ("60 days", "60-day"))),
        Point("monetary", f"Cost exposure of incident {incident}",
              f"PASS if the memo estimates the cost at about {usd(cost)} ({records:,} records x "
              f"{usd(per)} per record). FAIL otherwise.", cite=("report", "estimate"),
              amounts=(cost,), terms=((incident,),)),
        Point("conclusion", f"Notice of incident {incident} was late",
              "PASS if the memo concludes that the notice was late and creates regulatory "
              "exposure. FAIL otherwise.", cite=("report",),
              terms=((incident,), ("late", "untimely", "beyond the"))),
        severity_point(f"security incident {incident}", sev, ("report",), ((incident,),)),
        Point("recommendation", f"Indemnity for incident {incident}",
              f"PASS if the memo recommends a specific indemnity or escrow for incident "
              f"{incident}. FAIL otherwise.", cite=("report",), terms=((incident,), INDEMNITY)),
    ]
    memo = (f"Data-security incident {incident}. On {found}, {ctx.target} discovered "
            f"unauthorized access to {data} of {records:,} individuals {{report}}. Notice was "
            f"completed on {notified}, {late} days after discovery and beyond the 60-day "
            f"statutory deadline, so the notice was late. At {firm}'s per-record cost estimate "
            f"{{estimate}}, the exposure is about {usd(cost)}. Severity: "
            f"{sev.title()}. Recommendation: obtain a specific indemnity and escrow for incident "
            f"{incident} and confirm that no regulatory investigation is pending.")
    return Finding("data_breach", f"Security incident {incident}: {records:,} records", sev,
                   f"Incident {incident} exposed {records:,} records; notice was late.", docs,
                   points, memo, step=f"Negotiate a specific indemnity for incident {incident} "
                                      "{report}.", amounts=[("cost exposure", cost)],
                   dates=[("discovered", found), ("notified", notified)])


def environmental(k: Kit) -> Finding:
    rng = k.rng
    site, street = _site(k)
    wells = (rng.randint(1, 9), rng.randint(10, 19))
    conc = rng.randint(12, 480)
    c1, c2 = k.amount(150_000, 2_500_000, 1_000), k.amount(200_000, 3_000_000, 1_000)
    annual, years = k.amount(20_000, 150_000, 1_000), rng.randint(5, 15)
    total = c1 + c2 + annual * years
    sev = severity_of(total)
    consultant = rng.choice(CONSULTANTS)
    report_date = k.day(100, 500)
    docs = [
        DocSpec("esa", "esa_report", "ehs.esa", f"Phase II Environmental Site Assessment - "
                f"{site}", report_date, consultant, consultant.split()[0],
                [Insert(f"Groundwater samples from monitoring wells MW-{wells[0]} and "
                        f"MW-{wells[1]} at {site} contained trichloroethylene (TCE) at "
                        f"concentrations up to {conc} micrograms per liter, exceeding the "
                        "groundwater standard of 5 micrograms per liter. This is a recognized "
                        "environmental condition.",
                        (f"trichloroethylene (TCE) at concentrations up to {conc} micrograms "
                         "per liter",))]),
        DocSpec("letter", "remediation_letter", "ehs.remediation", f"Remediation Cost "
                f"Estimate - {site}", k.after(report_date, 45), consultant,
                consultant.split()[0],
                [Insert(f"We estimate the cost of source removal at {site} at USD {c1:,} and "
                        f"groundwater treatment at USD {c2:,}, followed by monitoring at USD "
                        f"{annual:,} per year for {years} years.",
                        (f"source removal at {site} at USD {c1:,}",
                         f"USD {annual:,} per year for {years} years"))]),
    ]
    points = [
        Point("fact", f"TCE contamination at {street}",
              f"PASS if the memo reports trichloroethylene (TCE) in groundwater at {site} above "
              "the standard. FAIL otherwise.", cite=("esa",),
              terms=((street,), ("trichloroethylene", "TCE"), ("groundwater",))),
        Point("conclusion", f"Recognized environmental condition at {street}",
              "PASS if the memo concludes that the contamination is a recognized environmental "
              "condition requiring remediation. FAIL otherwise.", cite=("esa",),
              terms=((street,), ("recognized environmental condition",))),
        Point("monetary", f"Remediation cost at {street}",
              f"PASS if the memo quantifies remediation at about {usd(total)} ({usd(c1)} + "
              f"{usd(c2)} + {usd(annual)} a year for {years} years). FAIL otherwise.",
              cite=("letter",), amounts=(total,), terms=((street,),)),
        severity_point(f"the contamination at {street}", sev, ("esa",),
                       ((street,), ("trichloroethylene", "TCE"))),
        Point("recommendation", f"Environmental indemnity for {street}",
              "PASS if the memo recommends an environmental indemnity, escrow or price "
              "adjustment. FAIL otherwise.", cite=("esa",),
              terms=((street,), ("indemnity", "escrow", "price adjustment"))),
    ]
    memo = (f"Environmental contamination at {site}. The Phase II Environmental Site Assessment "
            f"{{esa}} found trichloroethylene (TCE) in groundwater at {site} at up to {conc} "
            "micrograms per liter, above the 5 micrograms per liter standard, a recognized "
            f"environmental condition. {consultant} estimates source removal, groundwater "
            f"treatment and {years} years of monitoring {{letter}} at a total of {usd(total)}. "
            f"Severity: {sev.title()}. "
            "Recommendation: obtain an environmental indemnity backed by an escrow sized to the "
            "estimate.")
    return Finding("environmental", f"TCE contamination at {site}", sev,
                   f"TCE in groundwater at {site}; remediation {usd(total)}.", docs, points,
                   memo, step=f"Negotiate an environmental indemnity for {site} {{esa}}.",
                   amounts=[("remediation cost", total)])
