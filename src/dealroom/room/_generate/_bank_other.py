# ruff: noqa: E501  (sentence banks: one sentence per line, by design)
"""Sentence banks for everything that is not a contract: minutes, notes, reports, letters.

Same conventions as :mod:`._bank_contracts`: ``ZZA`` is the target, ``ZZB`` the other party
named in the document (auditor, regulator, correspondent), ``{slot}`` filled per room.
"""

from __future__ import annotations

from dealroom.room._generate._bank_contracts import Topic

MINUTES: list[Topic] = [
    ("Approval of Prior Minutes", """\
The minutes of the previous meeting, having been circulated in advance, were approved as presented on a motion duly made and seconded.
A director noted a typographical correction to the minutes of the prior meeting, which the Secretary undertook to make.
The Chair confirmed that all action items arising from the prior meeting had been completed or were on the agenda."""),
    ("Chief Executive Officer's Report", """\
The Chief Executive Officer reported on the Company's performance against plan, noting that {metric} for the quarter was in line with the budget approved by the Board.
The Chief Executive Officer reviewed the pipeline for {product} and answered questions from directors regarding competitive pressures in the market.
Management described the progress of the hiring plan and the status of key initiatives for the remainder of the fiscal year.
Directors discussed the outlook for the coming quarter and asked management to provide a revised forecast at the next meeting."""),
    ("Financial Update", """\
The Chief Financial Officer presented the financial results for the quarter, including revenue, operating expenses and cash position, copies of which had been distributed to the directors.
The Chief Financial Officer reviewed the Company's liquidity and confirmed that the Company was in compliance with the covenants under its credit facility.
Following discussion, the Board accepted the financial report as presented.
The Chief Financial Officer noted that the annual audit by {auditor} was expected to be completed on schedule."""),
    ("Audit Committee Report", """\
The Chair of the Audit Committee reported on the Committee's most recent meeting, including its review of internal controls and the status of the external audit.
The Committee had met in executive session with representatives of {auditor} without management present, and no significant matters were raised.
The Committee recommended that the Board approve the engagement of {auditor} for the current fiscal year."""),
    ("Compensation Matters", """\
The Chair of the Compensation Committee summarized the Committee's recommendations on annual bonus payouts for senior management.
After discussion, the Board approved the grant of stock options to the employees listed on the schedule presented to the meeting, at an exercise price equal to the fair market value determined by the most recent independent valuation.
The Board discussed retention of key employees and requested that management prepare a proposal for the next meeting."""),
    ("Strategic Matters", """\
The Board discussed strategic alternatives, including potential acquisitions and partnerships, and authorized management to continue preliminary discussions with interested parties.
Representatives of the Company's financial advisor reviewed market conditions and valuation considerations.
The directors emphasized the importance of maintaining confidentiality with respect to all strategic discussions.
No decisions were taken, and the Board requested an update at its next meeting."""),
    ("Legal and Compliance", """\
The General Counsel reported on pending legal matters, none of which was expected to have a material adverse effect on the Company beyond amounts already reserved.
The General Counsel reviewed the Company's compliance program and the results of the most recent training cycle.
The Board discussed developments in the regulatory environment relating to {regulator} and their potential impact on the Company's operations."""),
]

FIN_NOTES: list[Topic] = [
    ("Summary of Significant Accounting Policies", """\
The consolidated financial statements include the accounts of the Company and its wholly owned subsidiaries, and all intercompany balances and transactions have been eliminated in consolidation.
The preparation of financial statements in conformity with accounting principles generally accepted in the United States requires management to make estimates and assumptions that affect the reported amounts.
Cash equivalents consist of highly liquid investments with original maturities of three months or less.
Property and equipment are stated at cost less accumulated depreciation, computed on a straight-line basis over estimated useful lives of three to {n} years."""),
    ("Revenue Recognition", """\
The Company recognizes revenue when control of the promised goods or services is transferred to customers in an amount that reflects the consideration the Company expects to be entitled to receive.
Revenue from {service} is recognized ratably over the contract term, beginning on the date the services are made available.
Contract liabilities consist of billings in advance of revenue recognition and are recognized as revenue as performance obligations are satisfied.
The Company applies the practical expedient not to disclose the value of unsatisfied performance obligations for contracts with an original term of one year or less."""),
    ("Leases", """\
The Company leases office space and equipment under operating leases expiring at various dates through {future}.
Right-of-use assets and lease liabilities are recognized at the commencement date based on the present value of lease payments over the lease term.
The weighted-average remaining lease term was {n}.4 years and the weighted-average discount rate was 5.{n} percent.
Operating lease expense for the year was USD {amount}."""),
    ("Income Taxes", """\
The Company accounts for income taxes under the asset and liability method, under which deferred tax assets and liabilities are recognized for the future tax consequences of temporary differences.
A valuation allowance is recorded when it is more likely than not that some portion of the deferred tax assets will not be realized.
The Company recognizes the tax benefit of an uncertain tax position only if it is more likely than not that the position will be sustained on examination.
The Company's federal income tax returns for years before {year} are no longer subject to examination."""),
    ("Commitments and Contingencies", """\
From time to time the Company is involved in legal proceedings arising in the ordinary course of business, and management does not expect their outcome to have a material effect on the financial statements.
The Company has purchase commitments with suppliers totaling USD {amount} over the next {n} years.
The Company indemnifies customers against certain third-party claims, and no material claims have been made under such indemnities to date.
The Company records accruals for loss contingencies when a loss is probable and the amount can be reasonably estimated."""),
    ("Subsequent Events", """\
The Company has evaluated subsequent events through the date on which the financial statements were available to be issued.
Other than as disclosed in these notes, no subsequent events occurred that would require recognition or disclosure in the financial statements."""),
]

REPORT: list[Topic] = [
    ("Scope and Methodology", """\
This report was prepared at the request of ZZA and is based on documents provided by management, interviews with personnel and observations made during site visits.
Our procedures were limited to those described in this report and do not constitute an audit or an opinion on the matters addressed.
We relied on the accuracy and completeness of the information provided to us and did not independently verify it except as expressly stated.
Fieldwork was performed over {n} days by a team of {n} professionals."""),
    ("Observations", """\
We observed that policies and procedures relating to {service} are documented and generally followed, although documentation of management review was inconsistent.
Key controls over {asset} were found to be designed appropriately, and testing of a sample of {n}0 items identified no exceptions.
Management has implemented most of the recommendations from the prior review, and the remaining items are in progress.
We noted opportunities to improve the timeliness of reconciliations and the segregation of duties in the finance function."""),
    ("Recommendations", """\
Management should formalize the review and approval of user access rights on a quarterly basis.
We recommend that ZZA document its risk assessment annually and present it to the Board.
Management should consider automating the reconciliation process to reduce the risk of manual error.
Each recommendation has been discussed with management, whose responses are included in the appendix."""),
    ("Limitations", """\
This report is intended solely for the use of ZZA and should not be relied upon by any other party.
The conclusions in this report reflect conditions observed at the time of our work and may not be indicative of future conditions.
Nothing in this report should be construed as legal advice."""),
]

ENVIRONMENTAL: list[Topic] = [
    ("Site Description", """\
The subject property comprises approximately {n}.2 acres improved with a single-story building used for {service}.
The surrounding properties are used for commercial and light industrial purposes.
The property is served by municipal water and sewer, and no private wells were observed.
Topography slopes gently to the southeast, and shallow groundwater is inferred to flow in the same direction."""),
    ("Historical Use", """\
Review of historical aerial photographs and city directories indicates that the property was undeveloped until the 1950s.
Sanborn maps show a former machine shop on the adjoining property to the north.
No evidence of underground storage tanks was observed, and none are listed in the regulatory databases for the property.
Interviews with the site manager did not identify any known spills or releases."""),
    ("Regulatory Database Review", """\
The regulatory database report identified no listings for the subject property on federal or state lists of contaminated sites.
Several nearby facilities are listed as small-quantity generators of hazardous waste, none of which is considered to present a recognized environmental condition to the property.
A closed leaking underground storage tank case at a gasoline station approximately one-quarter mile away received regulatory closure and is not considered a concern."""),
    ("Findings", """\
This assessment has revealed no evidence of recognized environmental conditions in connection with the property, except as noted in this report.
De minimis staining was observed near the loading dock and is not considered a recognized environmental condition.
Asbestos-containing materials may be present in building materials installed before 1980 and should be managed under an operations and maintenance program."""),
]

SECURITY: list[Topic] = [
    ("Access Control", """\
Access to production systems is granted on a least-privilege basis and reviewed quarterly by system owners.
Multi-factor authentication is required for all remote access and for privileged accounts.
User accounts are disabled within {n} business days after an employee's termination.
Shared and generic accounts are prohibited except where approved by the Information Security Officer."""),
    ("Data Protection", """\
{data} are encrypted in transit using TLS 1.2 or higher and at rest using AES-256.
Encryption keys are managed in a hardware security module and rotated annually.
Backups are performed daily and tested for restoration at least quarterly.
Data retention periods are defined in the records retention schedule and enforced through automated deletion."""),
    ("Incident Response", """\
The incident response plan defines roles, escalation paths and communication procedures for security incidents.
The plan is tested annually through a tabletop exercise involving management and the legal department.
Incidents are classified by severity, and incidents involving personal data are escalated to the Privacy Officer within {n} hours.
Post-incident reviews are documented and remediation items are tracked to completion."""),
    ("Vendor Management", """\
Vendors with access to {data} are subject to a security assessment before onboarding and annually thereafter.
Contracts with such vendors include data protection terms and breach notification obligations.
The vendor inventory is maintained by the procurement team and reviewed by the Information Security Officer."""),
]

LITIGATION: list[Topic] = [
    ("Allegations", """\
Plaintiff alleges that Defendant failed to perform its obligations under the parties' agreement and that such failure caused Plaintiff to incur substantial losses.
Plaintiff further alleges that Defendant's representations regarding {product} were false and misleading when made.
Defendant has failed and refused to cure its breaches despite repeated written demands.
As a direct and proximate result of Defendant's conduct, Plaintiff has suffered damages in an amount to be proven at trial."""),
    ("Procedural History", """\
The action was commenced by the filing of a complaint in the Superior Court and was subsequently removed to federal court.
The parties have exchanged initial disclosures and written discovery, and depositions are scheduled to be completed within {n} months.
The court denied Defendant's motion to dismiss with respect to the breach of contract claim and granted it with respect to the fraud claim, with leave to amend.
A mediation session was held without resolution, and the parties remain in discussions."""),
    ("Defenses", """\
Defendant denies each of the material allegations of the complaint and intends to defend the action vigorously.
Defendant contends that Plaintiff's claims are barred in whole or in part by the limitation of liability provisions of the agreement.
Defendant has asserted affirmative defenses of waiver, estoppel, failure to mitigate and the applicable statute of limitations."""),
]

TAX: list[Topic] = [
    ("Filing Positions", """\
The Company files a consolidated federal income tax return and separate or combined returns in the states in which it has nexus.
The Company has taken the position that its {service} revenue is not subject to sales tax in states where such services are exempt.
Research and development credits have been claimed for qualified research expenses incurred in each of the last {n} years.
The Company has not entered into any closing agreement or private letter ruling with any taxing authority."""),
    ("Examinations", """\
The Company's federal returns have been examined through {year}, and all adjustments have been settled.
No state tax authority has notified the Company of an examination except as described in the schedule of tax matters.
The statute of limitations for assessment remains open for the three most recent tax years."""),
    ("Computation", """\
Taxable income was computed on the accrual method, adjusted for timing differences in the deduction of reserves and stock-based compensation.
Depreciation was computed using MACRS, including bonus depreciation where elected.
Estimated tax payments of USD {amount} were applied against the liability for the year."""),
]

REGULATORY: list[Topic] = [
    ("Background", """\
This letter follows the periodic review conducted by our office and the information submitted by ZZA in response to our request.
{regulator} has reviewed the materials and appreciates the cooperation of ZZA's management during the review.
The review covered the period from January 1 through December 31 of the prior year."""),
    ("Matters Requiring Attention", """\
Management should strengthen its monitoring of {service} to ensure timely identification of exceptions.
The compliance function should report to the Board at least quarterly on the status of corrective actions.
Policies relating to {asset} should be updated to reflect current regulatory guidance.
ZZA should provide a written response describing its corrective actions within {days} days of the date of this letter."""),
    ("Conclusion", """\
Based on our review, no formal enforcement action is contemplated at this time.
This letter is confidential supervisory information and may not be disclosed without the prior written consent of our office.
Please direct any questions to the examiner-in-charge identified above."""),
]

PERMIT: list[Topic] = [
    ("Conditions", """\
The Permittee shall operate in accordance with the application materials submitted to the issuing authority and the conditions of this permit.
The Permittee shall maintain records of operations and monitoring for at least five years and make them available on request.
Any change in ownership or operational control of the Permittee shall be reported to the issuing authority within {days} days.
The Permittee shall submit an annual compliance report by March 1 of each year.
This permit does not relieve the Permittee of the obligation to comply with any other applicable law."""),
    ("Monitoring and Reporting", """\
The Permittee shall conduct monitoring at the frequencies specified in the monitoring schedule and report the results quarterly.
Exceedances of any limit in this permit shall be reported within {n} business days of discovery.
Monitoring equipment shall be calibrated in accordance with the manufacturer's specifications."""),
]

CORRESPONDENCE: list[Topic] = [
    ("Letter", """\
We write further to our recent discussions regarding the matters described below.
Please find enclosed the documents requested in your letter, together with a summary of the key points for your convenience.
We would be grateful if you could confirm your agreement by countersigning and returning a copy of this letter.
Should you have any questions, please do not hesitate to contact the undersigned.
We look forward to continuing our productive relationship.
This letter is without prejudice to any rights or remedies available to either party, all of which are expressly reserved.
We note that the quarterly business review is scheduled for next month and propose to cover these points then.
Thank you for your prompt attention to this matter."""),
]

POLICY: list[Topic] = [
    ("Purpose and Scope", """\
This policy sets out the standards that apply to all employees, officers and contractors of ZZA.
The policy applies to all locations and business units, including {site}.
Managers are responsible for ensuring that their teams understand and comply with this policy.
Questions about this policy should be directed to the Human Resources or Compliance department."""),
    ("Standards of Conduct", """\
Employees must act honestly and ethically and avoid conflicts between their personal interests and the interests of ZZA.
Gifts and entertainment may be accepted only if they are modest in value and do not create an obligation.
Employees must protect the confidential information of ZZA and its customers.
Any actual or potential conflict of interest must be disclosed promptly to the Compliance Officer."""),
    ("Reporting and Non-Retaliation", """\
Employees who suspect a violation of this policy should report it to their manager, the Compliance Officer or the confidential hotline.
ZZA prohibits retaliation against anyone who raises a concern in good faith.
Reports are investigated promptly and confidentially, and corrective action is taken where appropriate.
Violations of this policy may result in disciplinary action up to and including termination of employment."""),
    ("Review", """\
This policy is reviewed at least annually by the Compliance Officer and approved by the Board or a committee of the Board.
Material changes are communicated to employees, who are required to acknowledge the revised policy within {days} days."""),
]
