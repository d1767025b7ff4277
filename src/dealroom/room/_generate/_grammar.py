"""A small phrase grammar for varied filler: operative clauses, proceedings, observations, rules.

The sentence banks give each topic a handful of well-formed sentences, which is too few for a
document of a hundred pages. These grammars combine a subject, an action, a timing and a
qualifier from short phrase lists, giving tens of thousands of distinct, plausible sentences
(``ZZA`` and ``ZZB`` stand for the parties, as in the banks). Long documents use them once the
bank topics have been used twice.
"""

from __future__ import annotations

from random import Random

_OBLIGATIONS = (
    "deliver to ZZO a copy of each material notice received from any governmental authority",
    "maintain complete and accurate records of all amounts invoiced and paid",
    "notify ZZO in writing of any material breach of this Agreement",
    "notify ZZO in writing of any claim reasonably expected to exceed USD {amount}",
    "provide ZZO with an updated schedule of insurance coverage",
    "deliver a certificate signed by an authorized officer confirming compliance with this "
    "Section",
    "use commercially reasonable efforts to minimize any disruption to the other party's "
    "operations",
    "cooperate in good faith with ZZO in connection with any audit or regulatory inquiry",
    "maintain all licences, permits and registrations required for its performance",
    "keep its facilities and systems in good working order and condition",
    "designate a representative with authority to make decisions on its behalf",
    "provide reasonable access to its books and records relating to this Agreement",
    "comply with the reasonable security and site policies of ZZO made known to it in writing",
    "pay all taxes imposed on it in connection with this Agreement",
    "preserve all documents relevant to any dispute arising under this Agreement",
    "obtain any third-party consents required for its performance at its own cost",
    "deliver quarterly reports on {metric} in the form agreed by the parties",
    "remedy any failure to meet the agreed specifications at no additional charge",
    "give ZZO reasonable advance notice of any planned change to the key personnel",
    "maintain a business continuity plan and test it at least once in each contract year",
    "indemnify ZZO for any fines imposed as a result of its failure to comply with this "
    "Section",
    "provide such further documents and take such further actions as may reasonably be "
    "requested",
    "keep confidential the terms of any settlement entered into under this Agreement",
    "return or destroy any materials of ZZO that are no longer required",
    "provide a written remediation plan for any deficiency identified in an audit",
)
_PROHIBITIONS = (
    "disclose the pricing terms of this Agreement to any third party",
    "create or permit any lien on the deliverables other than permitted liens",
    "use the name or marks of ZZO in any publicity without prior written approval",
    "subcontract any material obligation to a person located outside the United States",
    "make any public announcement concerning this Agreement without the consent of ZZO",
    "solicit for employment any employee of ZZO engaged in the performance of the services",
    "modify the agreed specifications without a written change order",
    "withhold any undisputed amount as a set-off against any other amount",
    "remove any proprietary notice from the materials supplied by ZZO",
    "take any action that would cause ZZO to be in breach of applicable law",
)
_TIMING = (
    "within {days} days after the end of each calendar quarter",
    "promptly after becoming aware of the relevant facts",
    "within {days} days after written request",
    "no later than the last business day of each calendar month",
    "at least {days} days before the proposed effective date",
    "on or before the {n}th business day after the Effective Date",
    "at all times during the term",
    "within {days} days after the occurrence of the relevant event",
)
_QUALIFIERS = (
    "", "", ", at its own cost and expense", ", subject to applicable law",
    ", except as otherwise agreed in writing", ", in each case in accordance with the "
    "applicable Order", ", to the extent reasonably practicable",
)
_DISCUSSIONS = (
    "the status of the {service} program and the related budget",
    "the results of the most recent customer satisfaction survey",
    "management's plan to improve {metric} over the next two quarters",
    "the renewal of the Company's principal insurance policies",
    "the timetable for the annual audit by {auditor}",
    "the hiring plan for the remainder of the fiscal year",
    "the Company's cybersecurity posture and recent tabletop exercise",
    "pricing trends for {product} in the Company's principal markets",
    "the proposed capital expenditure budget for {asset}",
    "the status of the Company's regulatory filings with {regulator}",
    "succession planning for senior management",
    "the performance of the Company's largest customer accounts",
    "the Company's liquidity position and cash forecast",
    "the results of the internal audit of {service}",
    "a proposal to refinance a portion of the Company's indebtedness",
)
_REPORTERS = ("The Chief Executive Officer", "The Chief Financial Officer", "The General Counsel",
              "Management", "The Chair of the Audit Committee", "The Chief Operating Officer",
              "A representative of the Company's financial advisor")
_OUTCOMES = (
    "Following discussion, the Board asked management to report back at the next meeting.",
    "The directors asked questions, which management answered.",
    "No action was taken.",
    "The Board expressed its support for management's approach.",
    "The Board requested a written summary before the next scheduled meeting.",
    "Following discussion, the matter was referred to the Audit Committee.",
)
_OBSERVED = (
    "{n} of the {n}0 items tested in {year} lacked evidence of approval",
    "the average time to close exceptions on {service} was {days} days",
    "payments above USD {amount} required two approvals, as designed",
    "the {metric} report for the quarter was reviewed {n} days after the deadline",
    "{n} user accounts with access to {asset} belonged to former employees",
    "the reconciliation of {asset} showed unexplained differences of USD {amount}",
    "controls over {service} operated effectively in {n} of the {n} months sampled",
    "the business impact analysis for {service} was last updated in {year}",
    "segregation of duties over {service} was adequate for the size of the team",
    "the policy on {asset} had been approved by the Board within the last year",
    "supporting invoices were available for every payment selected",
    "year-end cut-off procedures were performed and documented",
    "user access to {service} systems was removed promptly for leavers in the sample",
    "the vendor master file contained duplicate records that had not been cleansed",
    "documented procedures for {service} were in place but were not consistently followed",
    "approvals for a sample of {n}0 transactions were evidenced as required",
    "reconciliations of {asset} were performed monthly and reviewed by a supervisor",
    "two of the {n}0 items tested lacked evidence of secondary review",
    "access rights to systems supporting {service} were reviewed during the period",
    "the risk register had not been updated since the prior review",
    "training records were complete for all personnel selected for testing",
    "exceptions identified in the prior review had been remediated",
    "key performance indicators for {metric} were reported to management monthly",
    "the inventory of third-party providers was incomplete",
)
_RULES = (
    "report any suspected violation of law or policy to the Compliance Officer",
    "complete the required annual training within {days} days of assignment",
    "use company systems only for legitimate business purposes",
    "protect passwords and never share them with any other person",
    "obtain approval from their manager before incurring expenses above USD {amount}",
    "record all hours worked accurately and on time",
    "disclose any outside employment that could create a conflict of interest",
    "keep customer information confidential and store it only in approved systems",
    "report workplace injuries to their supervisor on the day they occur",
    "return all company property on or before their last day of employment",
    "refrain from accepting gifts of more than nominal value from suppliers",
    "follow the records retention schedule for all business records",
)
_WHO = ("Employees", "All personnel", "Managers", "Contractors engaged by ZZA",
        "Employees and officers", "Supervisors", "Members of the finance team",
        "Personnel with system access")
_RULE_TAILS = ("", "", " at all times", " unless the Compliance Officer approves otherwise in "
               "writing", " in accordance with the relevant procedure", " without exception",
               " and keep evidence that they have done so", " as described in the appendix")
_AFTERMATH = ("", "", " Management has agreed to address this by the end of the next quarter.",
              " This is consistent with the prior review.", " No exceptions were noted.",
              " The responsible manager has been informed.",
              " We recommend that the control be re-tested at the next review.",
              " The matter is rated low risk.")
_LEADS = ("We noted that", "Testing showed that", "Our review found that",
          "Management confirmed that", "We observed that", "Inquiry of management indicated that",
          "Inspection of supporting documents showed that", "Walkthroughs confirmed that")
_BALANCES = ("accrued liabilities", "prepaid expenses", "deferred revenue", "inventories",
             "goodwill", "intangible assets, net", "operating lease liabilities",
             "deferred tax assets", "accounts receivable, net", "capitalized software costs",
             "property and equipment, net", "accrued compensation", "customer deposits",
             "contract assets", "other long-term liabilities", "restricted cash")
_DISCLOSE = (
    "As of December 31, {year}, {item} amounted to USD {amount} (prior year: USD {amount}).",
    "The change in {item} during the year reflected normal business activity and the timing of "
    "payments.",
    "{item} are stated net of an allowance of USD {amount}.",
    "Management reviews {item} for impairment annually and whenever events indicate that the "
    "carrying amount may not be recoverable.",
    "No impairment of {item} was recorded in the years presented.",
    "The fair value of {item} approximates its carrying amount because of its short maturity.",
    "Amortization expense related to {item} was USD {amount} for the year.",
    "Of the total {item}, USD {amount} is expected to be realized within twelve months.",
)


def _pick(rng: Random, options: tuple[str, ...]) -> str:
    return options[rng.randrange(len(options))]


def operative(rng: Random) -> str:
    """One operative contract sentence."""
    actor, other = ("ZZA", "ZZB") if rng.random() < 0.5 else ("ZZB", "ZZA")
    if rng.random() < 0.2:
        actor = "Each party"
        other = "the other party"
    if rng.random() < 0.25:
        body = "shall not " + _pick(rng, _PROHIBITIONS) + _pick(rng, _QUALIFIERS)
    else:
        body = f"shall {_pick(rng, _OBLIGATIONS)} {_pick(rng, _TIMING)}{_pick(rng, _QUALIFIERS)}"
    return f"{actor} {body}.".replace("ZZO", other)


_FIGURES = (
    "reported that {metric} was {n}.{n}% for the quarter, against a plan of {n}.{n}%",
    "reported that headcount stood at {n}{n}0, {n} below plan",
    "presented a forecast of USD {amount} in capital expenditure for the next fiscal year",
    "reported that collections in the quarter were USD {amount}, ahead of forecast",
    "noted that {n} customer contracts were due for renewal in the next {days} days",
    "reported {n} open matters before {regulator}, none of them material",
    "reported that the pipeline for {product} had grown by {n}{n}% since the last meeting",
    "summarized the results of the {n}{n} interviews conducted for the engagement survey",
)


def proceeding(rng: Random) -> str:
    """One or two sentences of board minutes."""
    who = _pick(rng, _REPORTERS)
    if rng.random() < 0.5:
        return f"{who} {_pick(rng, _FIGURES)}. {_pick(rng, _OUTCOMES)}"
    return f"{who} reported on {_pick(rng, _DISCUSSIONS)}. {_pick(rng, _OUTCOMES)}"


def observation(rng: Random) -> str:
    """One or two sentences of a review or assessment report."""
    return f"{_pick(rng, _LEADS)} {_pick(rng, _OBSERVED)}.{_pick(rng, _AFTERMATH)}"


def rule(rng: Random) -> str:
    """One sentence of a policy."""
    return f"{_pick(rng, _WHO)} must {_pick(rng, _RULES)}{_pick(rng, _RULE_TAILS)}."


_MEDIA = ("soil boring SB-{n}", "monitoring well MW-{n}", "soil boring SB-1{n}",
          "monitoring well MW-2{n}", "sub-slab probe SS-{n}", "surface sample SS-1{n}")
_CHEMICALS = ("benzene", "toluene", "lead", "arsenic", "tetrachloroethylene", "naphthalene",
              "chromium", "total petroleum hydrocarbons", "vinyl chloride", "xylenes")


def sampling(rng: Random) -> str:
    """One sentence of an environmental site assessment's sampling results."""
    where, chem = _pick(rng, _MEDIA), _pick(rng, _CHEMICALS)
    value = f"{rng.randint(1, 900) / 100:.2f}"
    depth = rng.randint(2, 24)
    verdict = _pick(rng, ("below the applicable residential screening level",
                          "below the laboratory reporting limit",
                          "below the non-residential cleanup standard",
                          "within the range of regional background concentrations"))
    return (f"The sample from {where} at {depth} feet below grade contained {chem} at {value} "
            f"milligrams per kilogram, {verdict}.")


_CONDITIONS = (
    "keep a copy of this permit at the facility and make it available to inspectors",
    "calibrate continuous monitoring equipment at least once every {n} months",
    "submit a summary of monitoring results by the {n}th day of each month",
    "notify the issuing authority within {days} days of any change in the operations "
    "described in the application",
    "maintain an operating log recording hours of operation and fuel consumption",
    "limit operations to the hours stated in the permit application",
    "conduct a stack test within {days} days after any modification of the emission unit",
    "train operators annually on the requirements of this permit",
    "report any spill or release above the reportable quantity within {n} hours",
    "retain laboratory reports for at least {n} years",
    "apply for renewal at least {days} days before the expiration date",
    "pay the annual permit fee of USD {amount} by the due date",
)


def condition(rng: Random) -> str:
    """One condition of a permit."""
    lead = _pick(rng, ("The Permittee shall", "The Permittee must", "The Permittee shall at all "
                       "times", "Unless otherwise approved in writing, the Permittee shall"))
    return f"{lead} {_pick(rng, _CONDITIONS)}."


def disclosure(rng: Random) -> str:
    """One sentence of a note to the financial statements."""
    item = _pick(rng, _BALANCES)
    text = _pick(rng, _DISCLOSE).replace("{item}", item)
    return text[0].upper() + text[1:]


GRAMMARS = {
    "operative": (operative, ("Covenants", "Operational Matters", "Records and Reporting",
                              "Cooperation", "Further Assurances", "Additional Obligations",
                              "Restrictions", "Performance Standards")),
    "proceedings": (proceeding, ("Other Business", "Operational Update", "Committee Reports",
                                 "Management Presentations", "Discussion Items")),
    "observations": (observation, ("Detailed Observations", "Testing Results",
                                   "Follow-up of Prior Findings", "Other Matters")),
    "rules": (rule, ("Responsibilities", "Procedures", "Compliance Requirements",
                     "Specific Rules", "Employee Obligations")),
    "conditions": (condition, ("Special Conditions", "Recordkeeping", "Reporting Requirements",
                               "General Conditions")),
    "sampling": (sampling, ("Sampling Results", "Soil Quality", "Groundwater Quality",
                            "Vapor Assessment", "Data Validation")),
    "disclosures": (disclosure, ("Balance Sheet Components", "Accrued and Other Liabilities",
                                 "Intangible Assets", "Other Assets", "Supplemental "
                                 "Information", "Fair Value Measurements")),
}
"""Grammar families: a sentence function and the section headings it fills."""

LAYOUT_GRAMMAR = {"contract": "operative", "pleading": "operative", "minutes": "proceedings",
                  "report": "observations", "financials": "disclosures", "policy": "rules"}
"""Which grammar extends each layout's long documents."""
DOCTYPE_GRAMMAR = {"esa_report": "sampling", "zoning_report": "observations",
                   "permit": "conditions", "tax_return": "disclosures",
                   "state_return": "disclosures"}
"""Document types whose grammar differs from their layout's."""
