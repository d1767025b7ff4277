"""Planted issues found in commercial contracts.

Each kind spreads its evidence the way a real room does: the trigger clause in one document,
the money in a schedule or another agreement, an amendment elsewhere; the exposure is often a
sum or product that no single document states.
"""

from __future__ import annotations

from dealroom.room._generate._findings import (
    COC,
    CONSENT,
    INDEMNITY,
    MISSING,
    OBTAIN,
    TERMINATE,
    DocSpec,
    Finding,
    Kit,
    Point,
    severity_of,
    usd,
)
from dealroom.room._generate._model import Insert

_TERRITORIES = ("the Midwest region", "Canada", "the Southeast region", "the Pacific Northwest",
                "New England", "Mexico", "the Gulf Coast region", "the Mountain West",
                "the Mid-Atlantic region", "the Great Lakes region", "Puerto Rico",
                "the Southwest region", "the Central Plains", "the Tri-State area")


def severity_point(subject: str, sev: str, cite: tuple[str, ...], terms: tuple) -> Point:
    """The severity criterion every live finding carries."""
    return Point("severity", f"Rates {subject} as {sev} severity",
                 f"PASS if the memo rates {subject} as {sev.title()} severity. FAIL if it gives "
                 "another rating or none.", cite=cite, severity=sev, terms=terms)


def change_of_control(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    cp, term = k.company()
    contract = k.contract("customer")
    start = k.day(500, 1800)
    notice, days = rng.choice((10, 15, 30)), rng.choice((30, 60, 90))
    a1, a2 = k.amount(300_000, 5_000_000), k.amount(100_000, 2_000_000)
    total, sev = a1 + a2, severity_of(a1 + a2)
    clause = (f"Change of Control. {ctx.short} shall notify {term} in writing within {notice} days "
              f"after any Change of Control of {ctx.short}. If a Change of Control of {ctx.short} "
              f"occurs without {term}'s prior written consent, {term} may terminate this Agreement "
              f"on {days} days' written notice without liability or early termination charge.")
    facts = (f"{term} may terminate this Agreement on {days} days' written notice",
             f"within {notice} days after any Change of Control of {ctx.short}")
    base = DocSpec("contract", "customer_contract", "contracts.customer", f"{contract} - {cp}",
                   start, cp, term)
    docs = [base]
    amend = rng.random() < 0.4
    if amend:
        docs.append(DocSpec("trigger", "amendment", "contracts.amendments",
                            f"Amendment No. 1 to {contract} - {cp}", k.after(start, 400), cp, term,
                            [Insert("The Agreement is amended by adding the following new Section "
                                    "14.6: " + clause, facts)]))
    else:
        base.role = "trigger"
        base.inserts.append(Insert(clause, facts))
    for n, amount in ((1, a1), (2, a2)):
        docs.append(DocSpec(f"order{n}", "order_form", "contracts.customer",
                            f"Order Form No. {n} - {cp}", k.after(start, 30 + 200 * n), cp, term,
                            [Insert(f"Annual fees payable by {term} under this Order Form No. {n}: "
                                    f"USD {amount:,} per contract year.", (f"USD {amount:,}",))]))
    subject = f"the {cp} change-of-control issue"
    where = " as amended by Amendment No. 1 {trigger}" if amend else " {trigger}"
    points = [
        Point("fact", f"{cp} may terminate on a change of control",
              f"PASS if the memo states that {cp} may terminate the {contract} if {ctx.target} "
              f"undergoes a change of control without {cp}'s prior written consent. FAIL if the "
              "right is omitted or attributed to the wrong agreement.",
              cite=("trigger",), terms=((term,), COC, TERMINATE)),
        Point("monetary", f"Revenue at risk from {cp}",
              f"PASS if the memo quantifies the annual revenue at risk from {cp} as about "
              f"{usd(total)} (Order Form No. 1: {usd(a1)} plus Order Form No. 2: {usd(a2)}). "
              "FAIL if no figure is given or one order form is left out.",
              cite=("order1", "order2"), amounts=(total,), terms=((term,),)),
        severity_point(subject, sev, ("trigger",), ((term,), COC)),
        Point("recommendation", f"Obtain {cp}'s consent",
              f"PASS if the memo recommends obtaining {cp}'s written consent to the change of "
              "control (or a waiver of its termination right) before signing or closing. FAIL "
              "if no such step is recommended.", cite=("trigger",),
              terms=((term,), CONSENT, OBTAIN)),
        Point("timeline", f"{notice}-day notice to {cp}",
              f"PASS if the memo notes that {ctx.target} must notify {cp} within {notice} days "
              "after the change of control. FAIL otherwise.", cite=("trigger",),
              terms=((term,), (f"{notice} days", f"{notice}-day"))),
    ]
    if amend:
        points.append(Point("citation", f"Cites the amendment creating the {cp} right",
                            f"PASS if the memo cites Amendment No. 1 to the {cp} {contract} as "
                            "the source of the change-of-control right. FAIL if it cites only "
                            "the original agreement.", cite=("trigger",), terms=((term,), COC)))
    memo = (f"{cp}: change-of-control termination right. Under the {contract}{where}, {cp} may "
            f"terminate on {days} days' written notice if {ctx.target} undergoes a change of "
            f"control without {cp}'s prior written consent, and {ctx.target} must notify {cp} "
            f"within {notice} days after the change of control. Annual revenue at risk is "
            f"{usd(total)}, the sum of the annual fees under Order Form No. 1 {{order1}} and "
            f"Order Form No. 2 {{order2}}. Severity: {sev.title()}. Recommendation: obtain "
            f"{cp}'s written consent to the change of control before signing.")
    return Finding("change_of_control", f"{cp}: termination right on change of control", sev,
                   f"{cp} may terminate the {contract} on a change of control without its "
                   f"consent; {usd(total)} of annual revenue at risk.", docs, points, memo,
                   step=f"Obtain {cp}'s written consent under the {contract} {{trigger}}.",
                   amounts=[("annual revenue at risk", total)])


def anti_assignment(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    cp, term = k.company()
    role = rng.choice(("licence", "supplier"))
    contract = k.contract(role)
    fee = k.amount(150_000, 3_000_000)
    sev = severity_of(fee)
    fy = ctx.fiscal_year
    clause = (f"Assignment. Neither party may assign or transfer this Agreement, in whole or in "
              "part, without the prior written consent of the other party. For purposes of this "
              f"Section, any merger, consolidation or change of control of {ctx.short}, whether "
              f"by operation of law or otherwise, shall be deemed an assignment requiring "
              f"{term}'s prior written consent, and any assignment without such consent shall "
              f"entitle {term} to terminate this Agreement immediately.")
    docs = [
        DocSpec("contract", f"{role}_contract", f"contracts.{role}", f"{contract} - {cp}",
                k.day(400, 1500), cp, term,
                [Insert(clause, (f"shall be deemed an assignment requiring {term}'s prior "
                                 "written consent",))]),
        DocSpec("schedule", "budget", "fin.budgets", f"Vendor Spend Schedule FY{fy}",
                k.day(60, 200), inserts=[Insert(f"{cp}\t{contract}\t{fee:,}\tCritical",
                                                (cp, f"{fee:,}"))]),
    ]
    points = [
        Point("fact", f"Merger deemed an assignment under the {cp} agreement",
              f"PASS if the memo states that the {contract} with {cp} treats a merger or change "
              f"of control of {ctx.target}, including by operation of law, as an assignment "
              f"requiring {cp}'s consent. FAIL otherwise.", cite=("contract",),
              terms=((term,), ("assignment", "assign"), ("merger", "operation of law") + COC)),
        Point("conclusion", f"The merger needs {cp}'s consent",
              f"PASS if the memo concludes that the proposed merger requires {cp}'s consent and "
              f"that without it {cp} may terminate the agreement. FAIL otherwise.",
              cite=("contract",), terms=((term,), ("consent",), TERMINATE)),
        Point("monetary", f"Annual spend with {cp}",
              f"PASS if the memo states that {ctx.target} spends about {usd(fee)} a year with "
              f"{cp}, per the Vendor Spend Schedule. FAIL otherwise.", cite=("schedule",),
              amounts=(fee,), terms=((term,),)),
        severity_point(f"the {cp} anti-assignment issue", sev, ("contract",),
                       ((term,), ("assignment", "assign"))),
        Point("recommendation", f"Obtain {cp}'s consent to the deemed assignment",
              f"PASS if the memo recommends obtaining {cp}'s written consent before closing. "
              "FAIL otherwise.", cite=("contract",), terms=((term,), CONSENT, OBTAIN)),
    ]
    memo = (f"{cp}: anti-assignment clause triggered by the merger. The {contract} {{contract}} "
            f"deems any merger or change of control of {ctx.target}, including by operation of "
            f"law, an assignment requiring {cp}'s prior written consent; without consent {cp} "
            f"may terminate immediately. {ctx.target} spends {usd(fee)} a year with {cp}, which "
            "the Vendor Spend Schedule {schedule} lists as a critical vendor. Severity: "
            f"{sev.title()}. Recommendation: obtain {cp}'s written consent to the deemed "
            "assignment before closing.")
    return Finding("anti_assignment", f"{cp}: merger deemed an assignment", sev,
                   f"The {contract} with {cp} treats the merger as an assignment needing "
                   "consent.", docs, points, memo,
                   step=f"Obtain {cp}'s consent to the deemed assignment {{contract}}.",
                   amounts=[("annual spend", fee)])


def exclusivity(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    cp, term = k.company()
    contract = k.contract("distribution")
    territory = k.unique(lambda: rng.choice(_TERRITORIES))
    start = k.day(700, 1600)
    new_end = k.after(ctx.as_of, rng.randint(500, 1400))
    buyer_word = ctx.buyer.split()[0]
    docs = [
        DocSpec("contract", "distribution_contract", "contracts.distribution",
                f"{contract} - {cp}", start, cp, term,
                [Insert(f"Exclusivity. During the Exclusivity Period, {ctx.short} shall not, and "
                        f"shall cause its Affiliates not to, appoint any other distributor or "
                        f"sell the Products directly to customers in {territory}. For this "
                        f"purpose Affiliates include any person that controls {ctx.short} now or "
                        "in the future.",
                        ("shall cause its Affiliates not to, appoint any other distributor",
                         f"directly to customers in {territory}"))]),
        DocSpec("amendment", "amendment", "contracts.amendments",
                f"Amendment No. 2 to {contract} - {cp}", k.after(start, 500), cp, term,
                [Insert(f"The Exclusivity Period is extended and shall now end on "
                        f"{k.long(new_end)}. All other terms of the Agreement remain in full "
                        "force and effect.", (f"shall now end on {k.long(new_end)}",))]),
    ]
    points = [
        Point("fact", f"Exclusivity granted to {cp}",
              f"PASS if the memo states that {ctx.target} granted {cp} exclusivity in "
              f"{territory} binding {ctx.target} and its affiliates. FAIL otherwise.",
              cite=("contract",), terms=((term,), ("exclusive", "exclusivity"), (territory,))),
        Point("timeline", f"{cp} exclusivity runs to {new_end}",
              f"PASS if the memo states that the exclusivity period runs until {k.long(new_end)} "
              "as extended by Amendment No. 2. FAIL if it gives the original end date.",
              cite=("amendment",), dates=(new_end,), terms=((term,),)),
        Point("conclusion", f"Exclusivity would bind {ctx.buyer}",
              f"PASS if the memo concludes that after closing the restriction would bind "
              f"{ctx.buyer} and its affiliates, because affiliates include future controlling "
              "persons. FAIL otherwise.", cite=("contract",),
              terms=((term,), ("affiliate",), (buyer_word, "buyer", "acquirer"))),
        severity_point(f"the {cp} exclusivity", "medium", ("contract",),
                       ((term,), ("exclusive", "exclusivity"))),
        Point("recommendation", f"Carve-out from the {cp} exclusivity",
              f"PASS if the memo recommends negotiating a carve-out or waiver from {cp} for the "
              "buyer's existing business. FAIL otherwise.", cite=("contract",),
              terms=((term,), ("carve-out", "carve out", "waiver", "waive"), OBTAIN)),
    ]
    memo = (f"{cp}: exclusivity binding future affiliates. The {contract} {{contract}} bars "
            f"{ctx.target} and its Affiliates, defined to include any future controlling person, "
            f"from appointing other distributors or selling directly in {territory}. Amendment "
            f"No. 2 {{amendment}} extended the exclusivity period to {new_end}, so after closing "
            f"the restriction would bind {ctx.buyer} and its affiliates in {territory}. Severity: "
            f"Medium. Recommendation: negotiate a carve-out or waiver from {cp} for "
            f"{ctx.buyer}'s existing business before signing.")
    return Finding("exclusivity", f"{cp}: exclusivity binding affiliates", "medium",
                   f"{cp} holds exclusivity in {territory} until {new_end}, binding future "
                   "affiliates.", docs, points, memo,
                   step=f"Negotiate a carve-out from the {cp} exclusivity {{contract}}.",
                   dates=[("exclusivity ends", new_end)])


def non_compete(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    cp, term = k.company()
    contract = k.contract("jv")
    start = k.day(300, 900)
    years = rng.choice((3, 4, 5))
    ends = k.after(start, 365 * years + 1)
    field = f"the sale of {k.vocab('product')}"
    damages = k.amount(250_000, 4_000_000, 50_000)
    sev = severity_of(damages)
    buyer_word = ctx.buyer.split()[0]
    text = (f"Non-Competition. For a period of {years} years after the Effective Date, neither "
            f"{ctx.short} nor any of its Affiliates shall engage in {field} anywhere in North "
            f"America, other than through the collaboration. Any breach of this Section shall "
            f"entitle {term} to liquidated damages of USD {damages:,} for each breach.")
    docs = [DocSpec("contract", "jv_contract", "contracts.jv", f"{contract} - {cp}", start, cp,
                    term, [Insert(text, (f"neither {ctx.short} nor any of its Affiliates shall "
                                         f"engage in {field}",
                                         f"liquidated damages of USD {damages:,}"))])]
    nc = ("non-compete", "non-competition", "noncompete", "not compete", "covenant not to")
    points = [
        Point("fact", f"Non-compete in the {cp} agreement",
              f"PASS if the memo states that the {contract} with {cp} prohibits {ctx.target} and "
              f"its affiliates from engaging in {field}. FAIL otherwise.", cite=("contract",),
              terms=((term,), nc)),
        Point("monetary", f"Liquidated damages under the {cp} non-compete",
              f"PASS if the memo states liquidated damages of {usd(damages)} per breach. FAIL "
              "otherwise.", cite=("contract",), amounts=(damages,), terms=((term,),)),
        Point("conclusion", f"The {cp} non-compete would restrict the buyer",
              f"PASS if the memo concludes that the non-compete would bind {ctx.buyer} and its "
              "affiliates after closing. FAIL otherwise.", cite=("contract",),
              terms=((term,), ("affiliate",), (buyer_word, "buyer", "acquirer"))),
        Point("timeline", f"The {cp} non-compete runs to {ends}",
              f"PASS if the memo states that the restriction lasts until about {k.long(ends)} "
              f"({years} years from the effective date). FAIL otherwise.", cite=("contract",),
              dates=(ends,), terms=((term,),)),
        severity_point(f"the {cp} non-compete", sev, ("contract",), ((term,), nc)),
        Point("recommendation", f"Waiver of the {cp} non-compete",
              f"PASS if the memo recommends obtaining a waiver or amendment from {cp} limiting "
              "the non-compete to the target. FAIL otherwise.", cite=("contract",),
              terms=((term,), ("waiver", "waive", "amend", "carve-out", "carve out"))),
    ]
    memo = (f"{cp}: non-compete binding affiliates. The {contract} {{contract}} prohibits "
            f"{ctx.target} and its affiliates from engaging in {field} in North America for "
            f"{years} years, that is until {ends}, with liquidated damages of {usd(damages)} for "
            f"each breach. After closing the non-compete would bind {ctx.buyer} and its "
            f"affiliates. Severity: {sev.title()}. Recommendation: obtain a waiver or amendment "
            f"from {cp} limiting the restriction to {ctx.target} before signing.")
    return Finding("non_compete", f"{cp}: non-compete binding affiliates", sev,
                   f"A {years}-year non-compete in favour of {cp} binds the buyer's group.", docs,
                   points, memo, step=f"Obtain a waiver of the {cp} non-compete {{contract}}.",
                   amounts=[("liquidated damages per breach", damages)],
                   dates=[("non-compete ends", ends)])


def mfn(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    cp, term = k.company()
    other, other_term = k.company()
    contract = k.contract("customer")
    unit = {"bank": "account", "software": "seat"}.get(ctx.profile, "unit")
    p1 = rng.randrange(80, 360) / 2
    p2 = p1 - rng.randrange(4, 30) / 2
    volume = rng.randrange(2_000, 40_000) * 2
    exposure = round((p1 - p2) * volume, 2)
    sev = severity_of(exposure)
    start = k.day(500, 1400)
    other_date = k.after(start, rng.randint(120, 400))
    docs = [
        DocSpec("contract", "customer_contract", "contracts.customer", f"{contract} - {cp}",
                start, cp, term, [
                    Insert(f"Most Favored Customer. {ctx.short} represents that the prices "
                           f"charged to {term} are and shall remain no less favorable than those "
                           "offered to any other customer for comparable volumes. If "
                           f"{ctx.short} offers lower prices to another customer, it shall "
                           f"promptly offer the same prices to {term} and refund the difference "
                           "retroactively from the date the lower price was first offered.",
                           ("no less favorable than those offered to any other customer",)),
                    Insert(f"Price per {unit}: USD {p1:,.2f} per year. Committed volume: "
                           f"{volume:,} {unit}s.", (f"USD {p1:,.2f}", f"{volume:,} {unit}s"),
                           where="end", heading="Schedule B - Pricing")]),
        DocSpec("other", "order_form", "contracts.customer", f"Order Form No. 3 - {other}",
                other_date, other, other_term,
                [Insert(f"Price per {unit}: USD {p2:,.2f} per year, for a committed volume of "
                        f"{volume + rng.randrange(-500, 500, 2):,} {unit}s.",
                        (f"USD {p2:,.2f} per year",))]),
    ]
    mfn_terms = ("most favored", "most-favored", "most favoured", "most-favoured", "MFN")
    points = [
        Point("fact", f"MFN pricing for {cp}",
              f"PASS if the memo states that the {contract} gives {cp} most-favored-customer "
              "pricing with a retroactive refund of any difference. FAIL otherwise.",
              cite=("contract",), terms=((term,), mfn_terms)),
        Point("conclusion", f"The {other} price triggers {cp}'s MFN",
              f"PASS if the memo concludes that the lower price granted to {other} triggers "
              f"{cp}'s MFN clause. FAIL otherwise.", cite=("other",),
              terms=((term,), (other_term,), mfn_terms)),
        Point("monetary", f"MFN refund exposure to {cp}",
              f"PASS if the memo quantifies the annual MFN exposure as about {usd(exposure)} "
              f"(USD {p1 - p2:,.2f} difference x {volume:,} {unit}s). FAIL otherwise.",
              cite=("contract", "other"), amounts=(exposure,), terms=((term,),)),
        Point("citation", f"Cites both agreements for the {cp} MFN",
              f"PASS if the memo cites both the {cp} agreement and the {other} order form. FAIL "
              "if either is missing.", cite=("contract", "other"), terms=((term,),)),
        severity_point(f"the {cp} MFN issue", sev, ("contract",), ((term,), mfn_terms)),
        Point("recommendation", f"Resolve the {cp} MFN exposure",
              f"PASS if the memo recommends quantifying and resolving the MFN refund with {cp} "
              "(a release, price reset or specific indemnity). FAIL otherwise.",
              cite=("contract",), terms=((term,), ("release", "indemnity", "escrow", "reset",
                                                   "renegotiate"))),
    ]
    memo = (f"{cp}: most-favored-customer (MFN) pricing triggered. The {contract} {{contract}} "
            f"gives {cp} MFN pricing with a retroactive refund of any difference; {cp} pays "
            f"USD {p1:,.2f} per {unit} for {volume:,} {unit}s a year {{contract_2}}, but {other} "
            f"was granted USD {p2:,.2f} per {unit} on {other_date} {{other}}. The lower {other} "
            f"price triggers {cp}'s MFN clause: the refund exposure is about {usd(exposure)} a "
            f"year (the price difference times {volume:,} {unit}s). Severity: {sev.title()}. "
            f"Recommendation: obtain a release from {cp} or a specific indemnity for the "
            "refund.")
    return Finding("mfn", f"{cp}: MFN pricing triggered by {other} pricing", sev,
                   f"{cp}'s MFN is triggered by the lower price given to {other}.", docs, points,
                   memo, step=f"Resolve the {cp} MFN refund exposure {{contract}}.",
                   amounts=[("annual MFN exposure", exposure)])


def uncapped_indemnity(k: Kit) -> Finding:
    ctx = k.ctx
    cp, term = k.company()
    claimant = k.company()[0]
    contract = k.contract("customer")
    costs, damages = k.amount(50_000, 900_000), k.amount(200_000, 6_000_000, 5_000)
    total = costs + damages
    sev = severity_of(total)
    start = k.day(700, 1800)
    docs = [
        DocSpec("contract", "customer_contract", "contracts.customer", f"{contract} - {cp}",
                start, cp, term,
                [Insert(f"Indemnification by {ctx.short}. {ctx.short} shall defend, indemnify "
                        f"and hold harmless {term} and its Affiliates from and against all "
                        "losses arising out of any claim that the services infringe the rights "
                        "of a third party. Notwithstanding anything to the contrary in this "
                        f"Agreement, {ctx.short}'s obligations to {term} under this Section are "
                        "not subject to any limitation or cap on liability.",
                        (f"{ctx.short}'s obligations to {term} under this Section are not "
                         "subject to any limitation or cap on liability",))]),
        DocSpec("letter", "demand_letter", "lit.threatened",
                f"Indemnification Demand from {cp}", k.day(30, 200), cp, term,
                [Insert(f"{cp} hereby tenders to {ctx.short} the defense of the action brought "
                        f"against {term} by {claimant} and demands indemnification under the "
                        f"Agreement. {term} has incurred USD {costs:,} in defense costs to date, "
                        f"and the plaintiff seeks damages of USD {damages:,}.",
                        (f"USD {costs:,} in defense costs", f"damages of USD {damages:,}"))]),
    ]
    uncapped = ("uncapped", "no cap", "not capped", "unlimited", "not subject to any limitation")
    points = [
        Point("fact", f"Uncapped indemnity to {cp}",
              f"PASS if the memo states that {ctx.target}'s IP indemnity to {cp} under the "
              f"{contract} is not subject to the liability cap. FAIL otherwise.",
              cite=("contract",), terms=((term,), uncapped)),
        Point("monetary", f"Indemnity claim exposure to {cp}",
              f"PASS if the memo quantifies the tendered claim at about {usd(total)} "
              f"({usd(costs)} defense costs plus {usd(damages)} damages sought). FAIL otherwise.",
              cite=("letter",), amounts=(total,), terms=((term,),)),
        Point("citation", f"Cites the agreement and the {cp} demand",
              f"PASS if the memo cites both the {contract} and {cp}'s indemnification demand. "
              "FAIL otherwise.", cite=("contract", "letter"), terms=((term,),)),
        severity_point(f"the {cp} indemnity exposure", sev, ("contract",), ((term,), uncapped)),
        Point("recommendation", f"Specific indemnity for the {cp} claim",
              f"PASS if the memo recommends a specific indemnity, escrow or holdback from the "
              f"sellers for the {cp} claim. FAIL otherwise.", cite=("letter",),
              terms=((term,), INDEMNITY)),
    ]
    memo = (f"{cp}: uncapped IP indemnity with a live claim. Under the {contract} {{contract}}, "
            f"{ctx.target}'s indemnity to {cp} for third-party infringement claims is uncapped, "
            f"outside the limitation of liability. {cp} has tendered a claim {{letter}}: "
            "defense costs incurred to date plus the damages the plaintiff seeks make an "
            f"exposure of {usd(total)} with no contractual cap. Severity: {sev.title()}. "
            f"Recommendation: require a specific indemnity from the sellers, backed by an "
            f"escrow, for the {cp} claim.")
    return Finding("uncapped_indemnity", f"{cp}: uncapped indemnity and tendered claim", sev,
                   f"Uncapped IP indemnity to {cp}; a {usd(total)} claim has been tendered.",
                   docs, points, memo,
                   step=f"Negotiate a specific indemnity and escrow for the {cp} claim "
                        "{letter}.", amounts=[("claim exposure", total)])


def missing_document(k: Kit) -> Finding:
    rng = k.rng
    cp, term = k.company()
    role = rng.choice(("customer", "supplier"))
    contract = k.contract(role)
    start = k.day(800, 1800)
    number = rng.randint(2, 4)
    dated = k.after(start, rng.randint(200, 600))
    missing_title = f"Amendment No. {number} to {contract} - {cp}"
    label = f"Amendment No. {number}"
    docs = [
        DocSpec("contract", f"{role}_contract", f"contracts.{role}", f"{contract} - {cp}", start,
                cp, term, [Insert(f"Amendments. This Agreement has been amended by {label} dated "
                                  f"{k.long(dated)}, which revised the pricing in Schedule B and "
                                  "the termination provisions of Section 12.",
                                  (f"{label} dated {k.long(dated)}",), where="front")]),
        DocSpec("missing", "amendment", "contracts.amendments", missing_title, dated, cp, term,
                missing=True),
    ]
    points = [
        Point("fact", f"{label} to the {cp} agreement is missing",
              f"PASS if the memo notes that the {cp} {contract} refers to {label} dated "
              f"{k.long(dated)} and that it is not in the data room. FAIL otherwise.",
              cite=("contract",), terms=((term,), (label,), MISSING)),
        severity_point(f"the missing {cp} amendment", "medium", ("contract",),
                       ((term,), (label,))),
        Point("recommendation", f"Request {label} from the sellers",
              f"PASS if the memo recommends requesting {label} to the {cp} agreement from the "
              "sellers. FAIL otherwise.", cite=("contract",),
              terms=((term,), (label,), ("request", "obtain", "ask"))),
    ]
    memo = (f"{cp}: {label} missing. The {contract} with {cp} {{contract}} states that it was "
            f"amended by {label} dated {dated}, which changed the pricing and the termination "
            f"provisions, but {label} is missing from the data room, so the current terms cannot "
            f"be confirmed. Severity: Medium. Recommendation: request {label} from the sellers "
            "before signing.")
    return Finding("missing_document", f"{cp}: {label} referenced but missing", "medium",
                   f"{label} to the {cp} agreement is referenced but not in the room.", docs,
                   points, memo, step=f"Request {label} to the {cp} agreement {{contract}}.",
                   dates=[("amendment dated", dated)])
