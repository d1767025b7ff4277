"""Target-company profiles: folder tree, document mix, vocabulary and counterparties.

A profile is pure data. Every profile shares the 14-category backbone (:data:`BASE`) whose
folder keys the planted-issue kinds rely on, renames a few categories, and adds its own
folders (about 87 folders per profile), contract names, permits, regulators and words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Mix = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class FolderSpec:
    """One subfolder of the room: ``key`` is stable, ``name`` is what the room shows."""

    key: str
    category: int
    name: str
    weight: float
    """Relative number of documents the folder holds."""
    mix: Mix
    """Document types filed here, with relative weights."""


@dataclass(frozen=True)
class Profile:
    """A kind of target company."""

    key: str
    label: str
    suffixes: tuple[str, ...]
    """Legal-name endings of the target, e.g. ``Bancorp, Inc.``."""
    sectors: tuple[str, ...]
    """Words that make counterparties sound like this industry's trading partners."""
    contracts: dict[str, str]
    """Contract name per role: customer, supplier, distribution, licence, jv."""
    permits: tuple[str, ...]
    regulators: tuple[str, ...]
    vocab: dict[str, tuple[str, ...]]
    """Slot fillers for the filler text (product, service, site, metric, asset, data)."""
    category_names: dict[int, str] = field(default_factory=dict)
    extra_folders: tuple[FolderSpec, ...] = ()


CATEGORIES: dict[int, str] = {
    1: "Corporate Records",
    2: "Capitalization and Equity",
    3: "Financial Information",
    4: "Material Contracts",
    5: "Debt and Financing",
    6: "Real Property",
    7: "Intellectual Property",
    8: "Employees and Benefits",
    9: "Litigation and Disputes",
    10: "Tax",
    11: "Regulatory, Permits and Licences",
    12: "Environmental, Health and Safety",
    13: "Insurance",
    14: "Data Privacy and Information Technology",
}


def _f(key: str, cat: int, name: str, weight: float, *mix: tuple[str, float]) -> FolderSpec:
    return FolderSpec(key, cat, name, weight, tuple(mix))


BASE: tuple[FolderSpec, ...] = (
    _f("corporate.charter", 1, "Charter Documents", 1, ("charter", 1), ("bylaws", 1),
       ("good_standing", 1)),
    _f("corporate.minutes", 1, "Board Minutes", 4, ("minutes", 4), ("committee_minutes", 2)),
    _f("corporate.consents", 1, "Written Consents", 1.5, ("written_consent", 1)),
    _f("corporate.subs", 1, "Subsidiaries", 1, ("good_standing", 2), ("org_schedule", 1)),
    _f("corporate.questionnaires", 1, "Director and Officer Questionnaires", 1,
       ("questionnaire", 1)),
    _f("corporate.transaction", 1, "Transaction Documents", 0.5, ("loi", 1), ("nda", 1)),
    _f("cap.table", 2, "Capitalization Tables", 0.8, ("cap_table", 1)),
    _f("cap.plans", 2, "Equity Incentive Plans", 1.2, ("option_plan", 1), ("option_grant", 3)),
    _f("cap.investors", 2, "Stock Purchase and Investor Agreements", 1, ("spa", 1),
       ("investor_rights", 1)),
    _f("cap.warrants", 2, "Warrants and Convertible Instruments", 0.6, ("warrant", 1)),
    _f("cap.ledger", 2, "Stock Ledgers and Certificates", 0.5, ("stock_ledger", 1),
       ("certificate", 1)),
    _f("fin.audited", 3, "Audited Financial Statements", 1, ("audited_fs", 1)),
    _f("fin.interim", 3, "Interim Financial Statements", 1.5, ("interim_fs", 1)),
    _f("fin.budgets", 3, "Budgets and Projections", 0.8, ("budget", 1)),
    _f("fin.auditor", 3, "Auditor Correspondence", 0.6, ("auditor_letter", 2), ("email", 1)),
    _f("fin.revenue", 3, "Revenue and Customer Schedules", 0.8, ("revenue_schedule", 1)),
    _f("fin.ar", 3, "Receivables and Payables", 0.6, ("aging", 1)),
    _f("contracts.customer", 4, "Customer Agreements", 8, ("customer_contract", 3),
       ("order_form", 3), ("sow", 1)),
    _f("contracts.supplier", 4, "Supplier and Vendor Agreements", 6, ("supplier_contract", 3),
       ("sow", 1)),
    _f("contracts.distribution", 4, "Distribution and Reseller Agreements", 3,
       ("distribution_contract", 1)),
    _f("contracts.licence", 4, "Licence Agreements", 3, ("licence_contract", 1)),
    _f("contracts.jv", 4, "Partnerships and Joint Ventures", 2, ("jv_contract", 1)),
    _f("contracts.amendments", 4, "Amendments and Side Letters", 4, ("amendment", 3),
       ("side_letter", 1)),
    _f("contracts.consents", 4, "Consents, Waivers and Notices", 2, ("consent_letter", 2),
       ("letter", 1), ("email", 1)),
    _f("contracts.nda", 4, "Confidentiality Agreements", 2, ("nda", 1)),
    _f("debt.credit", 5, "Credit Agreements", 1, ("credit_agreement", 1), ("amendment", 1)),
    _f("debt.security", 5, "Security and Guarantee Documents", 1, ("security_agreement", 1),
       ("guarantee", 1)),
    _f("debt.compliance", 5, "Compliance Certificates", 1.5, ("compliance_cert", 1)),
    _f("debt.letters", 5, "Fee Letters and Lender Correspondence", 1, ("fee_letter", 1),
       ("letter", 1), ("email", 1)),
    _f("debt.loc", 5, "Letters of Credit and Surety Bonds", 0.6, ("loc", 1)),
    _f("property.leases", 6, "Leases", 3, ("lease", 3), ("amendment", 1)),
    _f("property.owned", 6, "Owned Real Property", 1, ("deed", 1), ("title_report", 1)),
    _f("property.subleases", 6, "Subleases and Licences", 1, ("sublease", 1)),
    _f("property.estoppels", 6, "Estoppels and SNDAs", 1, ("estoppel", 1)),
    _f("property.surveys", 6, "Surveys and Zoning", 0.6, ("zoning_report", 1)),
    _f("ip.patents", 7, "Patents", 2, ("patent", 1)),
    _f("ip.trademarks", 7, "Trademarks and Domain Names", 1, ("trademark_reg", 2),
       ("ip_schedule", 1)),
    _f("ip.assignments", 7, "Invention Assignment Agreements", 2, ("ip_assignment", 1)),
    _f("ip.inbound", 7, "Inbound Licences", 1.5, ("licence_contract", 1)),
    _f("ip.outbound", 7, "Outbound Licences", 1, ("licence_contract", 1)),
    _f("ip.oss", 7, "Open Source and Software Audits", 0.6, ("oss_report", 1)),
    _f("hr.executive", 8, "Executive Employment Agreements", 2, ("exec_agreement", 1)),
    _f("hr.policies", 8, "Policies and Handbooks", 1, ("handbook", 1), ("hr_policy", 2)),
    _f("hr.benefits", 8, "Benefit Plans", 1, ("benefit_plan", 1)),
    _f("hr.consultants", 8, "Consultants and Contractors", 1.5, ("consulting", 1)),
    _f("hr.comp", 8, "Compensation, Severance and Retention", 1, ("comp_schedule", 1),
       ("severance_plan", 1), ("offer_letter", 1)),
    _f("hr.labor", 8, "Labor and Employment Matters", 0.8, ("letter", 1), ("census", 1),
       ("email", 1)),
    _f("lit.pending", 9, "Pending Litigation", 1.5, ("complaint", 2), ("docket", 1)),
    _f("lit.threatened", 9, "Threatened Claims and Demand Letters", 1.5, ("demand_letter", 2),
       ("email", 1)),
    _f("lit.settlements", 9, "Settlements", 1, ("settlement", 2), ("dismissal", 1)),
    _f("lit.counsel", 9, "Audit Response Letters", 0.8, ("counsel_letter", 1)),
    _f("lit.investigations", 9, "Government Inquiries", 0.5, ("reg_letter", 1)),
    _f("tax.federal", 10, "Federal Income Tax Returns", 1, ("tax_return", 1)),
    _f("tax.state", 10, "State and Local Tax", 1.5, ("state_return", 1)),
    _f("tax.audits", 10, "Tax Audits and Assessments", 1, ("tax_notice", 1), ("tax_advice", 1)),
    _f("tax.opinions", 10, "Tax Opinions and Memoranda", 0.6, ("tax_advice", 1)),
    _f("tax.tp", 10, "Transfer Pricing", 0.4, ("tp_study", 1)),
    _f("reg.permits", 11, "Permits and Licences", 2, ("permit", 1)),
    _f("reg.correspondence", 11, "Regulatory Correspondence", 1.5, ("reg_letter", 2),
       ("email", 1)),
    _f("reg.compliance", 11, "Compliance Programs", 1, ("compliance_policy", 1)),
    _f("reg.exams", 11, "Examinations and Inspections", 1, ("exam_report", 1)),
    _f("ehs.esa", 12, "Environmental Site Assessments", 1, ("esa_report", 1)),
    _f("ehs.remediation", 12, "Remediation", 0.6, ("remediation_letter", 1),
       ("report", 1)),
    _f("ehs.safety", 12, "Health and Safety", 1, ("osha_log", 1), ("ehs_policy", 1)),
    _f("ehs.permits", 12, "Environmental Permits", 0.6, ("permit", 1)),
    _f("ins.policies", 13, "Insurance Policies", 1.5, ("insurance_policy", 1)),
    _f("ins.claims", 13, "Claims and Loss Runs", 1, ("loss_run", 1), ("letter", 1),
       ("email", 1)),
    _f("ins.certificates", 13, "Certificates of Insurance", 1, ("coi", 1)),
    _f("privacy.policies", 14, "Privacy Policies and Notices", 1, ("privacy_policy", 1)),
    _f("privacy.incidents", 14, "Security Incidents", 0.8, ("incident_report", 1),
       ("email", 1)),
    _f("privacy.security", 14, "Information Security Program", 1, ("infosec_policy", 1),
       ("pen_test", 1)),
    _f("privacy.dpa", 14, "Data Processing Agreements", 1.5, ("dpa", 1)),
    _f("privacy.it", 14, "IT Systems and Vendors", 1, ("it_inventory", 1),
       ("vendor_assessment", 1)),
)

_VOCAB_COMMON = {
    "state": ("Delaware", "New York", "Illinois", "Ohio", "Texas", "California", "Georgia",
              "Pennsylvania", "Minnesota", "Colorado", "North Carolina", "Massachusetts"),
}

BANK = Profile(
    key="bank",
    label="a regional commercial bank",
    suffixes=("Bridge Bank", "Bancorp, Inc.", "Savings Bank", "Trust Company", "National Bank"),
    sectors=("Capital", "Logistics", "Holdings", "Health Partners", "Realty", "Foods",
             "Payments", "Equipment Finance", "Title Services", "Data Services"),
    contracts={
        "customer": "Treasury Management Services Agreement",
        "supplier": "Core Processing Services Agreement",
        "distribution": "Referral and Marketing Agreement",
        "licence": "Software License Agreement",
        "jv": "Joint Marketing Agreement",
    },
    permits=("Mortgage Lender Licence", "Consumer Lending Licence", "Money Transmitter Licence",
             "Trust Powers Approval", "Sales Finance Company Licence"),
    regulators=("the Office of the Comptroller of the Currency",
                "the Federal Deposit Insurance Corporation",
                "the Consumer Financial Protection Bureau",
                "the Federal Reserve Bank"),
    vocab={
        **_VOCAB_COMMON,
        "product": ("commercial real estate loans", "treasury management services",
                    "small business loans", "residential mortgages", "deposit accounts"),
        "service": ("core deposit and loan processing", "online banking services",
                    "remote deposit capture", "ACH origination", "card processing"),
        "site": ("the Main Street operations center", "the Riverside branch",
                 "the former OREO parcel on Route 9", "the Harbor Point loan center"),
        "metric": ("net interest margin", "Tier 1 leverage ratio", "loan-to-deposit ratio",
                   "allowance for credit losses", "efficiency ratio"),
        "asset": ("loan portfolio", "deposit base", "branch network", "securities portfolio"),
        "data": ("customer account records", "loan files", "online banking credentials"),
    },
    category_names={11: "Bank Regulatory and Licences"},
    extra_folders=(
        _f("bank.loans", 3, "Loan Portfolio", 2, ("loan_tape", 1), ("credit_memo", 2)),
        _f("bank.deposits", 3, "Deposit Schedules", 0.8, ("deposit_schedule", 1)),
        _f("bank.core", 4, "Core Processing and Technology", 1.5, ("supplier_contract", 1)),
        _f("bank.participations", 4, "Loan Participations", 1, ("participation", 1)),
        _f("bank.fhlb", 5, "FHLB Advances", 0.6, ("credit_agreement", 1), ("letter", 1)),
        _f("bank.branches", 6, "Branch Leases", 2, ("lease", 1)),
        _f("bank.officers", 8, "Loan Officer Agreements", 1, ("exec_agreement", 1)),
        _f("bank.complaints", 9, "Customer Complaints", 1, ("letter", 1), ("email", 1)),
        _f("bank.bsa", 11, "BSA and AML Program", 1, ("compliance_policy", 1), ("report", 1)),
        _f("bank.call", 11, "Call Reports", 0.8, ("call_report", 1)),
        _f("bank.cra", 11, "Community Reinvestment Act", 0.6, ("report", 1)),
        _f("bank.consumer", 11, "Consumer Compliance", 0.8, ("compliance_policy", 1),
           ("exam_report", 1)),
        _f("bank.fidelity", 13, "Fidelity Bond", 0.5, ("insurance_policy", 1)),
        _f("bank.holding", 1, "Holding Company Filings", 0.6, ("reg_letter", 1)),
    ),
)

SOFTWARE = Profile(
    key="software",
    label="an enterprise software company",
    suffixes=("Software, Inc.", "Labs, Inc.", "Systems Corp.", "Technologies, Inc.", "Cloud, Inc."),
    sectors=("Health Systems", "Retail Group", "Logistics", "Financial", "Media", "Insurance",
             "Analytics", "Networks", "Energy", "Education"),
    contracts={
        "customer": "Master Subscription Agreement",
        "supplier": "Cloud Hosting Services Agreement",
        "distribution": "Reseller Agreement",
        "licence": "Technology License Agreement",
        "jv": "Strategic Partnership Agreement",
    },
    permits=("FedRAMP Moderate Authorization", "Data Broker Registration",
             "Money Transmitter Licence", "PCI DSS Attestation of Compliance",
             "Export Classification Ruling"),
    regulators=("the Federal Trade Commission", "the State Attorney General",
                "the Bureau of Industry and Security", "the Department of Commerce"),
    vocab={
        **_VOCAB_COMMON,
        "product": ("the Platform", "the analytics suite", "the workflow automation module",
                    "the mobile SDK", "the data connector library"),
        "service": ("subscription services", "implementation services", "premium support",
                    "managed hosting", "professional services"),
        "site": ("the Austin headquarters", "the Denver engineering office",
                 "the leased data center in Reno", "the former print works site in Dayton"),
        "metric": ("annual recurring revenue", "net revenue retention", "gross margin",
                   "monthly active users", "uptime"),
        "asset": ("source code", "customer base", "subscription book", "product roadmap"),
        "data": ("customer usage data", "end-user personal data", "payment card data"),
    },
    category_names={7: "Intellectual Property and Technology"},
    extra_folders=(
        _f("sw.orders", 4, "SaaS Order Forms", 3, ("order_form", 1)),
        _f("sw.hosting", 4, "Cloud Hosting", 1, ("supplier_contract", 1)),
        _f("sw.channel", 4, "Channel Partners", 1, ("distribution_contract", 1)),
        _f("sw.escrow", 7, "Source Code Escrow", 0.6, ("licence_contract", 1)),
        _f("sw.docs", 7, "Product Documentation", 1.5, ("report", 1)),
        _f("sw.soc2", 14, "SOC 2 Reports", 0.6, ("report", 1)),
        _f("sw.pentest", 14, "Penetration Tests", 0.8, ("pen_test", 1)),
        _f("sw.subprocessors", 14, "Subprocessors", 0.8, ("it_inventory", 1), ("dpa", 1)),
        _f("sw.arr", 3, "ARR and Bookings", 1, ("revenue_schedule", 1)),
        _f("sw.contractors", 8, "Engineering Contractors", 1.2, ("consulting", 1)),
        _f("sw.safe", 2, "SAFEs and Convertible Notes", 0.6, ("warrant", 1)),
        _f("sw.ipclaims", 9, "IP Claims", 0.6, ("demand_letter", 1)),
        _f("sw.export", 11, "Export Controls", 0.5, ("reg_letter", 1)),
        _f("sw.sla", 14, "Uptime and SLA Reports", 1, ("sla_report", 1)),
    ),
)

MANUFACTURER = Profile(
    key="manufacturer",
    label="an industrial manufacturer",
    suffixes=("Manufacturing Co.", "Industries, Inc.", "Precision Components, Inc.",
              "Fabrication LLC", "Industrial Group, Inc."),
    sectors=("Automotive", "Steel", "Plastics", "Freight", "Aerospace", "Packaging",
             "Chemicals", "Electric", "Machinery", "Agriculture"),
    contracts={
        "customer": "Master Supply Agreement",
        "supplier": "Raw Materials Supply Agreement",
        "distribution": "Distribution Agreement",
        "licence": "Patent License Agreement",
        "jv": "Joint Development Agreement",
    },
    permits=("Title V Air Operating Permit", "NPDES Wastewater Discharge Permit",
             "Hazardous Waste Generator Permit", "Industrial Stormwater Permit",
             "Boiler Operating Certificate"),
    regulators=("the Environmental Protection Agency", "the State Department of Environmental "
                "Quality", "the Occupational Safety and Health Administration",
                "the Consumer Product Safety Commission"),
    vocab={
        **_VOCAB_COMMON,
        "product": ("precision-machined housings", "stamped steel brackets",
                    "injection-molded components", "hydraulic valve assemblies",
                    "powder-coated enclosures"),
        "service": ("contract machining", "tooling maintenance", "freight and logistics",
                    "heat treatment", "assembly services"),
        "site": ("the Toledo plant", "the Gary stamping facility", "the Fort Wayne warehouse",
                 "the Elkhart paint line"),
        "metric": ("gross margin", "scrap rate", "on-time delivery", "capacity utilisation",
                   "EBITDA margin"),
        "asset": ("production lines", "tooling", "inventory", "plant and equipment"),
        "data": ("employee personal data", "customer drawings", "supplier bank details"),
    },
    category_names={12: "Environmental, Health and Safety"},
    extra_folders=(
        _f("mfg.po", 4, "Purchase Orders", 2, ("purchase_order", 1)),
        _f("mfg.tooling", 4, "Tooling Agreements", 1, ("supplier_contract", 1)),
        _f("mfg.freight", 4, "Logistics and Freight", 1, ("supplier_contract", 1)),
        _f("mfg.plants", 6, "Plants and Equipment", 1, ("report", 1), ("asset_register", 1)),
        _f("mfg.equipment", 6, "Equipment Leases", 0.8, ("lease", 1)),
        _f("mfg.air", 12, "Air Emissions", 0.8, ("permit", 1), ("report", 1)),
        _f("mfg.waste", 12, "Waste Disposal", 0.8, ("waste_manifest", 1), ("letter", 1)),
        _f("mfg.water", 12, "Wastewater", 0.6, ("permit", 1), ("report", 1)),
        _f("mfg.recalls", 11, "Product Safety and Recalls", 0.6, ("reg_letter", 1),
           ("report", 1)),
        _f("mfg.iso", 11, "Quality Certifications", 0.6, ("certificate", 1), ("report", 1)),
        _f("mfg.union", 8, "Collective Bargaining", 0.6, ("cba", 1)),
        _f("mfg.inventory", 3, "Inventory", 0.8, ("inventory_sheet", 1)),
        _f("mfg.productclaims", 13, "Product Liability Claims", 0.6, ("letter", 1),
           ("loss_run", 1)),
        _f("mfg.warranty", 9, "Warranty Claims", 0.8, ("demand_letter", 1)),
    ),
)

PROFILES: dict[str, Profile] = {p.key: p for p in (BANK, SOFTWARE, MANUFACTURER)}
"""Profiles by name."""


def folders_of(profile: Profile) -> list[FolderSpec]:
    """Every folder of ``profile``, in category order (base folders first within a category)."""
    out = list(BASE) + list(profile.extra_folders)
    return sorted(out, key=lambda f: f.category)  # stable: base before extras


def category_name(profile: Profile, number: int) -> str:
    """The category folder's name, e.g. ``04 Material Contracts``."""
    return f"{number:02d} {profile.category_names.get(number, CATEGORIES[number])}"
