"""Planted issues in corporate, finance, employment, litigation and tax documents."""

from __future__ import annotations

from dealroom.room._generate._findings import (
    COC,
    INDEMNITY,
    MISSING,
    OBTAIN,
    DocSpec,
    Finding,
    Kit,
    Point,
    severity_of,
    usd,
)
from dealroom.room._generate._kinds_contracts import severity_point
from dealroom.room._generate._model import Insert

_STATES = ("Ohio", "Texas", "California", "Illinois", "Georgia", "Pennsylvania", "Minnesota",
           "Colorado", "Michigan", "Virginia", "Arizona", "Tennessee", "Missouri", "Indiana",
           "Wisconsin", "Oregon", "Kentucky", "Louisiana", "Alabama", "Iowa")


def litigation(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    cp, term = k.company()
    claim = k.amount(1_000_000, 15_000_000, 50_000)
    lo = round(claim * rng.uniform(0.15, 0.3), -3)
    hi = round(claim * rng.uniform(0.45, 0.7), -3)
    reserve = round(lo * rng.uniform(0.3, 0.9), -3)
    gap = hi - reserve
    sev = severity_of(gap)
    trial = k.after(ctx.as_of, rng.randint(90, 420))
    filed = k.day(200, 700)
    fy = ctx.fiscal_year
    docs = [
        DocSpec("complaint", "complaint", "lit.pending", f"Complaint - {cp} v. {ctx.target}",
                filed, cp, term,
                [Insert(f"Plaintiff {cp} demands judgment against Defendant {ctx.target} for "
                        f"compensatory damages of not less than USD {claim:,.0f}, together with "
                        "interest, costs and attorneys' fees.",
                        (f"compensatory damages of not less than USD {claim:,.0f}",),
                        where="front")]),
        DocSpec("counsel", "counsel_letter", "lit.counsel",
                f"Audit Response Letter from {ctx.law_firm} ({fy})", k.day(40, 120),
                ctx.law_firm, ctx.law_firm.split()[0],
                [Insert(f"{cp} v. {ctx.target}: we believe an unfavorable outcome is reasonably "
                        f"possible and estimate the range of possible loss at USD {lo:,.0f} to "
                        f"USD {hi:,.0f}. Trial is scheduled for {k.long(trial)}.",
                        (f"USD {lo:,.0f} to USD {hi:,.0f}",
                         f"Trial is scheduled for {k.long(trial)}"))]),
        DocSpec("fs", "audited_fs", "fin.audited",
                f"Audited Consolidated Financial Statements FY{fy}", k.day(60, 150),
                inserts=[Insert(f"Litigation. The Company is a defendant in an action brought by "
                                f"{cp}. The Company has accrued USD {reserve:,.0f} in respect of "
                                "this matter, which management considers adequate.",
                                (f"accrued USD {reserve:,.0f} in respect of this matter",))]),
    ]
    suit = ("lawsuit", "litigation", "complaint", "suit")
    points = [
        Point("fact", f"{cp} lawsuit and amount claimed",
              f"PASS if the memo reports the pending lawsuit by {cp} seeking at least "
              f"{usd(claim)} in damages. FAIL otherwise.", cite=("complaint",),
              amounts=(claim,), terms=((term,), suit)),
        Point("monetary", f"Unreserved exposure on the {cp} lawsuit",
              f"PASS if the memo quantifies the unreserved exposure at the high end of counsel's "
              f"range as about {usd(gap)} ({usd(hi)} less the {usd(reserve)} reserve). FAIL "
              "otherwise.", cite=("counsel", "fs"), amounts=(gap,), terms=((term,),)),
        Point("conclusion", f"The {cp} reserve is inadequate",
              f"PASS if the memo concludes that the {usd(reserve)} reserve is insufficient "
              "against counsel's estimated range of loss. FAIL otherwise.", cite=("fs",),
              terms=((term,), ("reserve", "accrual", "accrued"),
                     ("insufficient", "inadequate", "under-reserved", "understated", "short"))),
        Point("timeline", f"Trial date in the {cp} case",
              f"PASS if the memo states that trial is scheduled for {k.long(trial)}. FAIL "
              "otherwise.", cite=("counsel",), dates=(trial,), terms=((term,),)),
        Point("citation", f"Cites complaint, counsel letter and financial statements ({cp})",
              f"PASS if the memo cites the {cp} complaint, the audit response letter and the "
              "audited financial statements. FAIL if any is missing.",
              cite=("complaint", "counsel", "fs"), terms=((term,),)),
        severity_point(f"the {cp} litigation", sev, ("complaint",), ((term,), suit)),
        Point("recommendation", f"Specific indemnity for the {cp} lawsuit",
              f"PASS if the memo recommends a specific indemnity or escrow for the {cp} "
              "lawsuit. FAIL otherwise.", cite=("complaint",), terms=((term,), INDEMNITY)),
    ]
    memo = (f"{cp} v. {ctx.target}: pending lawsuit, under-reserved. {cp} seeks compensatory "
            f"damages of not less than {usd(claim)} {{complaint}}. Severity: {sev.title()}. "
            f"Recommendation: obtain a specific indemnity and escrow for the {cp} lawsuit."
            f"\n\nLitigation counsel {ctx.law_firm} reports that trial in the {cp} lawsuit "
            f"{{complaint}} is scheduled for {trial} {{counsel}}. The reserve accrued in the "
            "audited financial statements {fs} is insufficient: the high end of counsel's "
            f"estimated range of loss exceeds it by {usd(gap)} of unreserved exposure.")
    return Finding("litigation", f"{cp} lawsuit: under-reserved exposure", sev,
                   f"{cp} sues for {usd(claim)}; counsel's range tops {usd(hi)} against a "
                   f"{usd(reserve)} reserve.", docs, points, memo,
                   step=f"Negotiate a specific indemnity and escrow for the {cp} lawsuit "
                        "{complaint}.",
                   amounts=[("claimed", claim), ("unreserved exposure", gap)],
                   dates=[("trial", trial)])


def tax_audit(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    state = k.unique(lambda: rng.choice(_STATES))
    year = ctx.fiscal_year - rng.randint(2, 4)
    tax = k.amount(200_000, 4_000_000, 1_000)
    pct = rng.choice((10, 15, 20, 25))
    penalty = tax * pct // 100
    interest = k.amount(20_000, 600_000, 100)
    total = tax + penalty + interest
    sev = severity_of(total)
    notice_date = k.day(30, 150)
    deadline = k.after(ctx.as_of, rng.randint(20, 120))
    authority = f"{state} Department of Revenue"
    advisor = ctx.auditor
    docs = [
        DocSpec("notice", "tax_notice", "tax.audits", f"Notice of Proposed Assessment - "
                f"{authority} ({year})", notice_date, authority, state.split()[0],
                [Insert(f"Proposed deficiency: USD {tax:,} in {state} corporate income tax for "
                        f"tax year {year}. A protest must be filed on or before "
                        f"{k.long(deadline)}.",
                        (f"Proposed deficiency: USD {tax:,}",
                         f"on or before {k.long(deadline)}"), where="front")]),
        DocSpec("advice", "tax_advice", "tax.opinions", f"Tax Memorandum - {state} Audit "
                f"({year})", k.after(notice_date, 10), advisor, advisor.split()[0],
                [Insert(f"If the {state} assessment is sustained, a penalty of {pct}% of the "
                        "deficiency will apply, and interest accrued to the date of this "
                        f"memorandum amounts to USD {interest:,}.",
                        (f"a penalty of {pct}% of the deficiency",
                         f"amounts to USD {interest:,}"))]),
    ]
    points = [
        Point("fact", f"{state} proposed tax assessment",
              f"PASS if the memo reports the {authority}'s proposed deficiency of {usd(tax)} for "
              f"tax year {year}. FAIL otherwise.", cite=("notice",), amounts=(tax,),
              terms=((state,), ("assessment", "deficiency", "audit"))),
        Point("monetary", f"Total {state} tax exposure",
              f"PASS if the memo quantifies the total exposure as about {usd(total)} (deficiency "
              f"{usd(tax)} + {pct}% penalty {usd(penalty)} + interest {usd(interest)}). FAIL "
              "otherwise.", cite=("notice", "advice"), amounts=(total,), terms=((state,),)),
        Point("timeline", f"{state} protest deadline",
              f"PASS if the memo states that a protest must be filed by {k.long(deadline)}. "
              "FAIL otherwise.", cite=("notice",), dates=(deadline,), terms=((state,),)),
        severity_point(f"the {state} tax assessment", sev, ("notice",),
                       ((state,), ("assessment", "deficiency", "audit"))),
        Point("recommendation", f"Protest and indemnity for the {state} assessment",
              "PASS if the memo recommends filing the protest before the deadline and obtaining "
              "a tax indemnity or escrow. FAIL otherwise.", cite=("notice",),
              terms=((state,), ("protest", "appeal", "contest"), ("indemnity", "escrow"))),
    ]
    memo = (f"{state} tax assessment. The {authority} proposes a deficiency of {usd(tax)} in "
            f"corporate income tax for tax year {year} {{notice}}; a protest must be filed by "
            f"{deadline}. With the {pct}% penalty and the accrued interest in {advisor}'s "
            f"memorandum {{advice}}, the total exposure is {usd(total)}. Severity: "
            f"{sev.title()}. "
            f"Recommendation: file the protest before {deadline} and obtain a specific tax "
            "indemnity or escrow from the sellers.")
    return Finding("tax_audit", f"{state} proposed tax assessment", sev,
                   f"{authority} proposes {usd(tax)}; with penalty and interest {usd(total)}.",
                   docs, points, memo, step=f"File the {state} protest by {deadline} {{notice}}.",
                   amounts=[("total tax exposure", total)], dates=[("protest deadline", deadline)])


def golden_parachute(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    exec_name = k.person()
    last, first = exec_name.split()[-1], exec_name.split()[0]
    title = rng.choice(("Chief Operating Officer", "Chief Revenue Officer", "Chief Risk Officer",
                        "President, Commercial", "Chief Product Officer"))
    mult = rng.choice((1.5, 2, 2.5, 3))
    salary = k.amount(280_000, 650_000, 5_000)
    bonus = round(salary * rng.choice((0.4, 0.5, 0.6, 0.75)), -3)
    pay = round(mult * (salary + bonus), 2)
    sev = severity_of(pay)
    fy = ctx.fiscal_year
    docs = [
        DocSpec("agreement", "exec_agreement", "hr.executive",
                f"Executive Employment Agreement - {exec_name}", k.day(400, 1500), exec_name,
                last, inserts=[Insert(f"Change in Control Payment. If a Change in Control occurs "
                                f"while {exec_name} is employed as {title}, {ctx.short} shall "
                                "pay the "
                                "Executive, within ten days after the Change in Control and "
                                "whether or not the Executive's employment terminates, a lump sum "
                                f"equal to {mult:g} times the sum of the Executive's annual base "
                                "salary and target annual bonus.",
                                (f"a lump sum equal to {mult:g} times the sum of the Executive's "
                                 "annual base salary and target annual bonus",
                                 "whether or not the Executive's employment terminates"))]),
        DocSpec("comp", "comp_schedule", "hr.comp", f"Executive Compensation Schedule {fy}",
                k.day(30, 200), inserts=[Insert(f"{exec_name}\t{title}\t{salary:,}\t{bonus:,.0f}",
                                               (f"{salary:,}", f"{bonus:,.0f}"))]),
    ]
    coc = ("change in control", "change of control", "change-of-control")
    single = ("single-trigger", "single trigger", "whether or not", "regardless of")
    points = [
        Point("fact", f"{exec_name}'s change-in-control payment",
              f"PASS if the memo states that {exec_name} is entitled to a lump sum of {mult:g} "
              "times base salary plus target bonus on a change in control. FAIL otherwise.",
              cite=("agreement",), terms=((last,), coc, ("lump sum", "payment"))),
        Point("conclusion", f"{exec_name}'s payment is single-trigger",
              f"PASS if the memo concludes that the payment to {exec_name} is single-trigger "
              "(due whether or not employment terminates). FAIL otherwise.", cite=("agreement",),
              terms=((last,), single)),
        Point("monetary", f"Amount payable to {exec_name}",
              f"PASS if the memo quantifies the payment as about {usd(pay)} ({mult:g} x "
              f"({usd(salary)} salary + {usd(bonus)} target bonus)). FAIL otherwise.",
              cite=("agreement", "comp"), amounts=(pay,), terms=((last,),)),
        severity_point(f"the {exec_name} change-in-control payment", sev, ("agreement",),
                       ((last,), coc)),
        Point("recommendation", f"Restructure {exec_name}'s payment",
              "PASS if the memo recommends seeking a waiver or conversion to a double-trigger "
              "payment, or a Section 280G analysis. FAIL otherwise.", cite=("agreement",),
              terms=((last,), ("280G", "double-trigger", "double trigger", "waiver", "waive"))),
    ]
    memo = (f"Single-trigger change-in-control payment to {exec_name}, {title}. The Executive "
            f"Employment Agreement {{agreement}} entitles {first} {last} to a lump sum of {mult:g} "
            "times base salary plus target bonus on a change in control, whether or not "
            "employment terminates, so the payment is single-trigger. The Executive Compensation "
            f"Schedule {{comp}} gives the salary and target bonus, so the payment is "
            f"{usd(pay)}. Severity: {sev.title()}. "
            "Recommendation: seek a waiver converting it to a double-trigger payment and run a "
            "Section 280G analysis before signing.")
    return Finding("golden_parachute", f"{exec_name}: single-trigger change-in-control payment",
                   sev, f"{exec_name} receives {usd(pay)} on a change in control.", docs, points,
                   memo, step=f"Seek a double-trigger waiver from {exec_name} {{agreement}}.",
                   amounts=[("change-in-control payment", pay)])


def debt_coc_default(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    word = k.names.word()
    lender, term = f"{word} Bank, N.A.", word
    principal = k.amount(5_000_000, 80_000_000, 25_000)
    pct = rng.choice((1, 1.5, 2, 3))
    premium = round(principal * pct / 100, 2)
    payoff = principal + premium
    start = k.day(500, 1500)
    fy = ctx.fiscal_year
    q_end = f"{fy}-12-31"
    docs = [
        DocSpec("credit", "credit_agreement", "debt.credit", f"Credit Agreement - {lender} as "
                "Administrative Agent", start, lender, term,
                [Insert(f"Section 8.01(k) Change of Control. The occurrence of any Change of "
                        f"Control of {ctx.short} shall constitute an immediate Event of Default, "
                        f"whereupon {term} as Administrative Agent may declare all outstanding "
                        "Loans immediately due and payable.",
                        (f"Change of Control of {ctx.short} shall constitute an immediate Event "
                         "of Default",))]),
        DocSpec("fee", "fee_letter", "debt.letters", f"Fee Letter - {lender}", start, lender,
                term, [Insert(f"Any prepayment of the Term Loan, including upon acceleration, "
                              f"shall be accompanied by a prepayment premium equal to {pct:g}% of "
                              "the principal amount prepaid.",
                              (f"prepayment premium equal to {pct:g}% of the principal",))]),
        DocSpec("cert", "compliance_cert", "debt.compliance",
                f"Compliance Certificate Q4 {fy} - {lender}", k.day(20, 90), lender, term,
                [Insert(f"Outstanding principal of the Term Loan as of {k.long(q_end)}: USD "
                        f"{principal:,}.", (f"USD {principal:,}",))]),
    ]
    points = [
        Point("fact", f"Change of control is an event of default ({lender})",
              f"PASS if the memo states that a change of control of {ctx.target} is an event of "
              f"default under the credit agreement with {lender}. FAIL otherwise.",
              cite=("credit",), terms=((term,), COC, ("event of default", "default"))),
        Point("monetary", f"Payoff amount for the {lender} facility",
              f"PASS if the memo quantifies the payoff at about {usd(payoff)} ({usd(principal)} "
              f"principal plus a {pct:g}% premium of {usd(premium)}). FAIL otherwise.",
              cite=("cert", "fee"), amounts=(payoff,), terms=((term,),)),
        Point("conclusion", f"The {lender} facility must be repaid or waived at closing",
              "PASS if the memo concludes that the facility must be repaid or refinanced at "
              "closing unless the lenders waive the default. FAIL otherwise.",
              cite=("credit",), terms=((term,), ("repaid", "repay", "refinance", "payoff",
                                                 "pay off"))),
        Point("citation", f"Cites credit agreement, certificate and fee letter ({lender})",
              "PASS if the memo cites the credit agreement, the compliance certificate and the "
              "fee letter. FAIL if any is missing.", cite=("credit", "cert", "fee"),
              terms=((term,),)),
        severity_point(f"the {lender} change-of-control default", "high", ("credit",),
                       ((term,), ("default",))),
        Point("recommendation", f"Payoff letter or consent from {lender}",
              f"PASS if the memo recommends obtaining a payoff letter or the lenders' consent "
              f"from {lender} before closing. FAIL otherwise.", cite=("credit",),
              terms=((term,), ("payoff letter", "consent", "waiver"))),
    ]
    memo = (f"{lender}: change of control is an event of default. Under Section 8.01(k) of the "
            f"Credit Agreement {{credit}}, a change of control of {ctx.target} is an immediate "
            f"event of default that lets {lender} accelerate the loans. With the principal "
            f"outstanding in the compliance certificate {{cert}} and the {pct:g}% prepayment "
            f"premium in the fee letter {{fee}}, the payoff at closing would be {usd(payoff)}. "
            "The facility must be repaid or refinanced at closing unless the "
            "lenders waive the default. Severity: High. Recommendation: obtain a payoff letter "
            f"or the lenders' consent from {lender} before closing.")
    return Finding("debt_coc_default", f"{lender}: change of control triggers default", "high",
                   f"The {lender} facility accelerates on closing; payoff {usd(payoff)}.", docs,
                   points, memo, step=f"Obtain a payoff letter from {lender} {{credit}}.",
                   amounts=[("payoff amount", payoff)])


def ip_assignment_gap(k: Kit) -> Finding:
    ctx = k.ctx
    dev = k.person()
    last = dev.split()[-1]
    others = (k.person(), k.person())
    core = {"bank": "proprietary loan-pricing model", "software": "core data synchronization "
            "engine"}.get(ctx.profile, "patented valve-sealing process")
    meeting = k.day(200, 900)
    docs = [
        DocSpec("minutes", "minutes", "corporate.minutes",
                f"Minutes of the Board of Directors ({k.long(meeting)})", meeting,
                inserts=[Insert(f"Technology Update. Management reported that the {core} was "
                                f"developed by {dev} as an outside consultant before {dev} "
                                f"joined {ctx.short} as an employee, and that it remains the "
                                f"basis of {ctx.short}'s principal products.",
                                (f"the {core} was developed by {dev} as an outside consultant",))]),
    ]
    for n, person in enumerate(others, 1):
        docs.append(DocSpec(f"piia{n}", "ip_assignment", "ip.assignments",
                            f"Proprietary Information and Inventions Assignment Agreement - "
                            f"{person}", k.day(500, 2000), person, person.split()[-1],
                            inserts=[Insert(f"This Proprietary Information and Inventions "
                                            f"Assignment Agreement is made between {ctx.target} "
                                            f"and {person}.", (person,), where="front")]))
    docs.append(DocSpec("missing", "ip_assignment", "ip.assignments", "Proprietary Information "
                        f"and Inventions Assignment Agreement - {dev}", meeting, missing=True))
    piia = ("invention assignment", "inventions assignment", "ip assignment",
            "assignment of inventions", "assignment agreement")
    points = [
        Point("fact", f"No invention assignment from {dev}",
              f"PASS if the memo notes that no invention assignment agreement signed by {dev} "
              "is in the data room. FAIL otherwise.", cite=("minutes",),
              terms=((last,), piia, MISSING)),
        Point("conclusion", f"Title to the {core} is uncertain",
              f"PASS if the memo concludes that {ctx.target}'s title to the {core} is uncertain "
              f"because {dev} developed it as a consultant. FAIL otherwise.",
              cite=("minutes",), terms=((core,), ("title", "ownership"),
                                        ("uncertain", "unclear", "in doubt", "not established"))),
        Point("citation", f"Cites the minutes and a signed assignment ({dev})",
              f"PASS if the memo cites the board minutes recording {dev}'s development work and "
              "at least the first signed assignment agreement of another contributor. FAIL "
              "otherwise.", cite=("minutes", "piia1"), terms=((last,),)),
        severity_point(f"the {dev} IP assignment gap", "high", ("minutes",), ((last,), piia)),
        Point("recommendation", f"Confirmatory assignment from {dev}",
              f"PASS if the memo recommends obtaining a confirmatory (nunc pro tunc) assignment "
              f"of inventions from {dev} before signing. FAIL otherwise.", cite=("minutes",),
              terms=((last,), ("confirmatory", "nunc pro tunc"), OBTAIN)),
    ]
    memo = (f"Missing invention assignment from {dev}. The board minutes of {meeting} "
            f"{{minutes}} record that the {core} was developed by {dev} as an outside "
            f"consultant before joining {ctx.target}. The data room holds signed invention "
            f"assignment agreements for {others[0]} {{piia1}} and {others[1]} {{piia2}}, but the "
            f"invention assignment agreement for {dev} is missing, so title to the {core} is "
            "uncertain. Severity: High. Recommendation: obtain a confirmatory nunc pro tunc "
            f"assignment of inventions from {dev} before signing.")
    return Finding("ip_assignment_gap", f"{dev}: no invention assignment for core IP", "high",
                   f"The {core} was built by {dev}, who signed no invention assignment.", docs,
                   points, memo, step=f"Obtain a confirmatory IP assignment from {dev} "
                                      "{minutes}.")
