"""Document types: layout, clause families, typical length, file formats and title patterns."""

from __future__ import annotations

from dataclasses import dataclass

from dealroom.room._generate import _bank_contracts as bc
from dealroom.room._generate import _bank_other as bo

FAMILIES: dict[str, list[bc.Topic]] = {
    "general": bc.GENERAL, "customer": bc.CUSTOMER, "supplier": bc.SUPPLIER,
    "licence": bc.LICENCE, "distribution": bc.DISTRIBUTION, "jv": bc.JV,
    "finance": bc.FINANCE, "lease": bc.LEASE, "employment": bc.EMPLOYMENT,
    "ip_assign": bc.IP_ASSIGN, "patent": bc.PATENT, "trademark": bc.TRADEMARK,
    "equity": bc.EQUITY, "insurance": bc.INSURANCE, "minutes": bo.MINUTES,
    "fin_notes": bo.FIN_NOTES, "report": bo.REPORT, "environmental": bo.ENVIRONMENTAL,
    "security": bo.SECURITY, "litigation": bo.LITIGATION, "tax": bo.TAX,
    "regulatory": bo.REGULATORY, "permit": bo.PERMIT, "correspondence": bo.CORRESPONDENCE,
    "policy": bo.POLICY,
}
"""Clause families by name; each is a list of (heading, sentences) topics."""

FORMATS: dict[str, tuple[tuple[str, float], ...]] = {
    "contract": (("md", 0.5), ("txt", 0.24), ("pdf", 0.15), ("docx", 0.11)),
    "short": (("md", 0.36), ("txt", 0.26), ("pdf", 0.2), ("docx", 0.18)),
    "letter": (("txt", 0.36), ("md", 0.26), ("pdf", 0.2), ("docx", 0.18)),
    "email": (("eml", 0.8), ("txt", 0.2)),
    "sheet": (("xlsx", 0.65), ("md", 0.2), ("txt", 0.15)),
    "form": (("pdf", 0.45), ("txt", 0.35), ("md", 0.2)),
    "text": (("md", 0.6), ("txt", 0.3), ("pdf", 0.1)),
}
"""File format weights by style; binary formats fall back to Markdown for long documents."""

BINARY_CAP = {"pdf": 8000, "docx": 8000, "xlsx": 3500, "eml": 2500}
"""Largest token budget a document may have in each binary format."""


@dataclass(frozen=True)
class DocType:
    key: str
    layout: str
    """contract, minutes, financials, report, policy, letter, email, sheet or form."""
    families: tuple[str, ...]
    size: float
    """Relative length (1.0 is an average document)."""
    style: str
    """Key of :data:`FORMATS`."""
    titles: tuple[str, ...]


def _d(key: str, layout: str, families: str, size: float, style: str, *titles: str) -> DocType:
    return DocType(key, layout, tuple(families.split()), size, style, titles)


_TYPES = (
    _d("charter", "contract", "equity", 1.0, "text", "Amended and Restated Certificate of "
       "Incorporation", "Certificate of Amendment to Certificate of Incorporation ({year})"),
    _d("bylaws", "contract", "equity", 0.9, "text", "Amended and Restated Bylaws"),
    _d("good_standing", "form", "permit", 0.05, "form",
       "Certificate of Good Standing - {state} ({date})"),
    _d("org_schedule", "sheet", "", 0.1, "sheet", "Schedule of Subsidiaries and Ownership"),
    _d("minutes", "minutes", "minutes", 0.45, "short",
       "Minutes of the Board of Directors ({date})"),
    _d("committee_minutes", "minutes", "minutes", 0.3, "short",
       "Minutes of the Audit Committee ({date})", "Minutes of the Compensation Committee ({date})"),
    _d("written_consent", "minutes", "minutes", 0.2, "short",
       "Unanimous Written Consent of the Board of Directors ({date})"),
    _d("questionnaire", "form", "policy", 0.3, "short",
       "Director and Officer Questionnaire - {person} ({year})"),
    _d("loi", "letter", "correspondence", 0.3, "letter", "Letter of Intent ({date})"),
    _d("cap_table", "sheet", "", 0.15, "sheet", "Capitalization Table as of {date}"),
    _d("option_plan", "contract", "equity", 1.1, "text", "{year} Equity Incentive Plan"),
    _d("option_grant", "contract", "equity", 0.25, "short", "Stock Option Agreement - {person}"),
    _d("spa", "contract", "equity general", 2.0, "contract",
       "Series {series} Preferred Stock Purchase Agreement"),
    _d("investor_rights", "contract", "equity general", 1.4, "contract",
       "Amended and Restated Investors' Rights Agreement"),
    _d("warrant", "contract", "equity", 0.35, "short", "Warrant to Purchase Common Stock - {cp}"),
    _d("stock_ledger", "sheet", "", 0.12, "sheet", "Stock Ledger ({year})"),
    _d("certificate", "form", "permit", 0.05, "form", "Certificate No. {n} - {cp}"),
    _d("audited_fs", "financials", "fin_notes", 2.0, "text",
       "Audited Consolidated Financial Statements FY{year}"),
    _d("interim_fs", "financials", "fin_notes", 0.8, "text",
       "Unaudited Interim Financial Statements Q{q} {year}"),
    _d("budget", "sheet", "", 0.2, "sheet", "Operating Budget FY{year}"),
    _d("auditor_letter", "letter", "report correspondence", 0.35, "letter",
       "Management Letter from {auditor} (FY{year})"),
    _d("revenue_schedule", "sheet", "", 0.2, "sheet", "Revenue by Customer FY{year}"),
    _d("aging", "sheet", "", 0.15, "sheet", "Accounts Receivable Aging as of {date}"),
    _d("customer_contract", "contract", "customer general", 3.0, "contract",
       "{contract_customer} - {cp}"),
    _d("supplier_contract", "contract", "supplier general", 2.6, "contract",
       "{contract_supplier} - {cp}"),
    _d("distribution_contract", "contract", "distribution general", 2.4, "contract",
       "{contract_distribution} - {cp}"),
    _d("licence_contract", "contract", "licence general", 2.0, "contract",
       "{contract_licence} - {cp}"),
    _d("jv_contract", "contract", "jv general", 2.4, "contract", "{contract_jv} - {cp}"),
    _d("order_form", "contract", "customer", 0.25, "short", "Order Form No. {n} - {cp}"),
    _d("purchase_order", "sheet", "", 0.1, "sheet", "Purchase Order {n} - {cp}"),
    _d("sow", "contract", "customer general", 0.5, "short", "Statement of Work No. {n} - {cp}"),
    _d("amendment", "contract", "general", 0.25, "short", "Amendment No. {n} - {cp}"),
    _d("side_letter", "letter", "correspondence", 0.12, "letter", "Side Letter - {cp} ({date})"),
    _d("consent_letter", "letter", "correspondence", 0.08, "letter",
       "Consent and Acknowledgement - {cp} ({date})"),
    _d("nda", "contract", "general", 0.4, "short", "Mutual Non-Disclosure Agreement - {cp}"),
    _d("credit_agreement", "contract", "finance general", 6.0, "contract",
       "Credit Agreement - {cp} as Administrative Agent"),
    _d("security_agreement", "contract", "finance general", 1.8, "contract",
       "Pledge and Security Agreement - {cp}"),
    _d("guarantee", "contract", "finance", 0.7, "short", "Guaranty Agreement - {cp}"),
    _d("compliance_cert", "form", "finance", 0.15, "form",
       "Compliance Certificate Q{q} {year} - {cp}"),
    _d("fee_letter", "letter", "finance correspondence", 0.1, "letter", "Fee Letter - {cp}"),
    _d("loc", "form", "finance", 0.1, "form", "Standby Letter of Credit No. {n} - {cp}"),
    _d("lease", "contract", "lease general", 2.4, "contract", "Lease Agreement - {site} ({cp})"),
    _d("deed", "form", "lease", 0.3, "form", "Special Warranty Deed - {site}"),
    _d("title_report", "report", "report", 0.8, "text", "Title Commitment - {site}"),
    _d("sublease", "contract", "lease general", 1.2, "contract", "Sublease - {cp}"),
    _d("estoppel", "letter", "lease correspondence", 0.1, "letter",
       "Tenant Estoppel Certificate - {site}"),
    _d("zoning_report", "report", "report", 0.6, "text", "Zoning Report - {site}"),
    _d("patent", "report", "patent", 0.8, "form", "U.S. Patent No. {patent}"),
    _d("trademark_reg", "form", "trademark", 0.1, "form", "Trademark Registration No. {n}"),
    _d("ip_schedule", "sheet", "", 0.12, "sheet", "Schedule of Registered Intellectual Property"),
    _d("ip_assignment", "contract", "ip_assign", 0.4, "short",
       "Proprietary Information and Inventions Assignment Agreement - {person}"),
    _d("oss_report", "report", "report security", 1.0, "text",
       "Open Source Software Audit Report ({year})"),
    _d("exec_agreement", "contract", "employment", 1.2, "contract",
       "Executive Employment Agreement - {person}"),
    _d("handbook", "policy", "policy", 2.0, "text", "Employee Handbook ({year})"),
    _d("hr_policy", "policy", "policy", 0.6, "text", "Code of Business Conduct and Ethics",
       "Anti-Harassment Policy", "Remote Work Policy", "Expense Reimbursement Policy"),
    _d("benefit_plan", "contract", "employment", 1.8, "text", "401(k) Plan Document ({year})"),
    _d("consulting", "contract", "employment general", 0.6, "short",
       "Consulting Agreement - {person}"),
    _d("comp_schedule", "sheet", "", 0.15, "sheet", "Executive Compensation Schedule {year}"),
    _d("severance_plan", "contract", "employment", 0.8, "text", "Executive Severance Plan"),
    _d("offer_letter", "letter", "employment correspondence", 0.1, "letter",
       "Offer Letter - {person}"),
    _d("census", "sheet", "", 0.2, "sheet", "Employee Census as of {date}"),
    _d("cba", "contract", "employment general", 2.0, "contract",
       "Collective Bargaining Agreement ({year})"),
    _d("complaint", "pleading", "litigation", 1.4, "text", "Complaint - {cp} v. {target}"),
    _d("docket", "sheet", "", 0.1, "sheet", "Litigation Docket Summary ({year})"),
    _d("demand_letter", "letter", "litigation correspondence", 0.18, "letter",
       "Demand Letter from {cp} ({date})"),
    _d("settlement", "contract", "litigation general", 0.7, "short",
       "Settlement Agreement and Release - {cp}"),
    _d("dismissal", "form", "litigation", 0.08, "form", "Stipulation of Dismissal - {cp}"),
    _d("counsel_letter", "letter", "litigation correspondence", 0.3, "letter",
       "Audit Response Letter from {law_firm} ({year})"),
    _d("tax_return", "form", "tax", 0.6, "form", "Federal Income Tax Return Form 1120 ({year})"),
    _d("state_return", "form", "tax", 0.3, "form", "{state} Corporate Franchise Tax Return "
       "({year})"),
    _d("tax_notice", "letter", "tax", 0.25, "form", "Notice of Proposed Assessment ({date})"),
    _d("tax_advice", "letter", "tax correspondence", 0.45, "letter",
       "Tax Memorandum - {topic} ({year})"),
    _d("tp_study", "report", "tax report", 1.5, "text", "Transfer Pricing Study FY{year}"),
    _d("permit", "form", "permit", 0.12, "form", "{permit} - Permit No. {n}"),
    _d("reg_letter", "letter", "regulatory", 0.2, "letter", "Letter from {regulator} ({date})"),
    _d("compliance_policy", "policy", "policy regulatory", 1.2, "text",
       "Compliance Management Program ({year})", "Complaint Management Policy"),
    _d("exam_report", "report", "regulatory report", 2.0, "text", "Report of Examination ({year})"),
    _d("esa_report", "report", "environmental report", 2.0, "text",
       "Phase I Environmental Site Assessment - {site}"),
    _d("remediation_letter", "letter", "environmental correspondence", 0.3, "letter",
       "Remediation Status Letter - {site} ({date})"),
    _d("report", "report", "report", 1.2, "text", "{topic} Review ({year})"),
    _d("osha_log", "sheet", "", 0.15, "sheet", "OSHA 300 Log {year}"),
    _d("ehs_policy", "policy", "policy", 1.0, "text", "Environmental, Health and Safety Policy"),
    _d("insurance_policy", "contract", "insurance", 2.0, "contract",
       "{line} Insurance Policy - {insurer}"),
    _d("loss_run", "sheet", "", 0.15, "sheet", "Loss Run Report {year} - {insurer}"),
    _d("coi", "form", "insurance", 0.05, "form", "Certificate of Insurance - {cp}"),
    _d("privacy_policy", "policy", "security policy", 0.8, "text", "Privacy Notice ({year})"),
    _d("infosec_policy", "policy", "security", 1.2, "text", "Information Security Policy ({year})"),
    _d("incident_report", "report", "security report", 0.8, "text",
       "Security Incident Report {n} ({year})"),
    _d("dpa", "contract", "security general", 0.8, "short", "Data Processing Addendum - {cp}"),
    _d("vendor_assessment", "report", "security report", 0.6, "text",
       "Vendor Security Assessment - {cp}"),
    _d("pen_test", "report", "security report", 1.0, "text", "Penetration Test Report ({year})"),
    _d("it_inventory", "sheet", "", 0.15, "sheet", "IT Systems Inventory ({year})"),
    _d("letter", "letter", "correspondence", 0.12, "letter", "Letter from {cp} ({date})",
       "Letter to {cp} ({date})"),
    _d("email", "email", "correspondence", 0.06, "email", "Email - {subject} ({date})"),
    _d("loan_tape", "sheet", "", 0.35, "sheet", "Commercial Loan Tape as of {date}"),
    _d("credit_memo", "report", "report finance", 0.6, "text", "Credit Memorandum - {cp}"),
    _d("deposit_schedule", "sheet", "", 0.2, "sheet", "Deposit Concentration Schedule ({year})"),
    _d("participation", "contract", "finance general", 1.2, "contract",
       "Loan Participation Agreement - {cp}"),
    _d("call_report", "sheet", "", 0.3, "sheet", "Consolidated Report of Condition Q{q} {year}"),
    _d("sla_report", "sheet", "", 0.15, "sheet", "Monthly Uptime Report ({date})"),
    _d("asset_register", "sheet", "", 0.25, "sheet", "Fixed Asset Register ({year})"),
    _d("inventory_sheet", "sheet", "", 0.25, "sheet", "Inventory Valuation as of {date}"),
    _d("waste_manifest", "sheet", "", 0.12, "sheet", "Hazardous Waste Manifest Log ({year})"),
)

DOCTYPES: dict[str, DocType] = {t.key: t for t in _TYPES}
"""Every document type by key."""
