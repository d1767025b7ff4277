# ruff: noqa: E501  (sentence banks: one sentence per line, by design)
"""Clause banks for contracts: topics of sentences that the filler composes into sections.

``ZZA`` stands for the target's defined term and ``ZZB`` for the counterparty's; both are
replaced per document by one-word names, which keeps token counts exact. ``{slot}`` fields are
filled when the room's paragraph pools are built. Some clauses are deliberate look-alikes of
planted issues (assignment and change-of-control language that triggers nothing).
"""

from __future__ import annotations

Topic = tuple[str, str]

GENERAL: list[Topic] = [
    ("Confidentiality", """\
Each party shall hold the Confidential Information of the other party in strict confidence and shall not disclose it to any third party except as expressly permitted by this Agreement.
The receiving party may disclose Confidential Information to its employees, officers, advisors and auditors who have a need to know and who are bound by obligations of confidentiality no less protective than those set out herein.
Confidential Information does not include information that is or becomes generally available to the public other than as a result of a disclosure by the receiving party in breach of this Agreement.
Upon written request, the receiving party shall promptly return or destroy all Confidential Information of the disclosing party, save for copies retained in accordance with routine backup procedures.
The obligations in this Section shall survive for a period of {n} years following the expiration or termination of this Agreement.
Where disclosure is required by law or by order of a court of competent jurisdiction, the receiving party shall, to the extent legally permitted, give the disclosing party prompt notice so that it may seek a protective order."""),
    ("Notices", """\
All notices under this Agreement shall be in writing and shall be deemed given when delivered personally, one business day after deposit with a recognized overnight courier, or three business days after mailing by certified mail, return receipt requested.
Notices to ZZA shall be addressed to its General Counsel at its principal place of business, and notices to ZZB shall be addressed to the address set out on the signature page.
Either party may change its address for notices by giving notice of the new address in accordance with this Section.
Notices given by electronic mail shall be effective only if confirmed by one of the other methods permitted by this Section."""),
    ("Governing Law and Disputes", """\
This Agreement shall be governed by and construed in accordance with the laws of the State of {state}, without regard to its conflict of laws principles.
Each party irrevocably submits to the exclusive jurisdiction of the state and federal courts located in the State of {state} for any action arising out of or relating to this Agreement.
Before commencing any proceeding, the parties shall attempt in good faith to resolve any dispute through negotiation between senior executives for a period of not less than {days} days.
EACH PARTY HEREBY WAIVES ITS RIGHT TO A JURY TRIAL IN ANY ACTION ARISING OUT OF OR RELATING TO THIS AGREEMENT.
Nothing in this Section shall prevent either party from seeking injunctive or other equitable relief to protect its intellectual property or Confidential Information."""),
    ("Assignment", """\
Either party may assign this Agreement without the consent of the other party to an Affiliate or to a successor in connection with a merger, reorganization or sale of all or substantially all of its assets, provided that the assignee assumes this Agreement in writing.
Subject to the foregoing, this Agreement shall be binding upon and inure to the benefit of the parties and their respective permitted successors and assigns.
Any purported assignment in violation of this Section shall be null and void.
ZZA may subcontract any of its obligations hereunder, provided that ZZA remains responsible for the performance of its subcontractors."""),
    ("Change in Ownership", """\
No change of control, merger or reorganization of either party shall give the other party any right to terminate or modify this Agreement or require the consent of the other party.
A change in the ownership of either party shall not, by itself, constitute an assignment of this Agreement for any purpose.
Each party shall notify the other of any change in its legal name or principal address within {days} days after such change becomes effective."""),
    ("Force Majeure", """\
Neither party shall be liable for any failure or delay in performance caused by events beyond its reasonable control, including acts of God, fire, flood, epidemic, war, terrorism, labor disputes or governmental action.
The affected party shall give prompt notice of the force majeure event and use commercially reasonable efforts to resume performance as soon as practicable.
If a force majeure event continues for more than {days} consecutive days, either party may terminate the affected Order on written notice without liability.
Payment obligations for amounts already due shall not be excused by a force majeure event."""),
    ("Limitation of Liability", """\
EXCEPT FOR BREACHES OF CONFIDENTIALITY, NEITHER PARTY SHALL BE LIABLE FOR ANY INDIRECT, INCIDENTAL, CONSEQUENTIAL, SPECIAL OR PUNITIVE DAMAGES, INCLUDING LOST PROFITS, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGES.
Each party's aggregate liability arising out of or relating to this Agreement shall not exceed the fees paid or payable in the twelve (12) months preceding the event giving rise to the claim.
The limitations in this Section apply to all causes of action in the aggregate, whether in contract, tort or otherwise.
The parties agree that the limitations of liability set out herein reflect an allocation of risk that is reflected in the fees."""),
    ("Indemnification", """\
Each party shall defend, indemnify and hold harmless the other party and its officers, directors and employees from and against third-party claims arising out of its gross negligence or willful misconduct, subject to the limitations of liability set out in this Agreement.
The indemnified party shall give prompt written notice of any claim, permit the indemnifying party to control the defense and settlement, and provide reasonable cooperation at the indemnifying party's expense.
The indemnifying party shall not settle any claim that imposes any obligation on the indemnified party without its prior written consent, which shall not be unreasonably withheld.
The remedies in this Section are the indemnified party's exclusive remedies for third-party claims."""),
    ("Term and Renewal", """\
This Agreement shall commence on the Effective Date and continue for an initial term of {n} years, after which it shall renew automatically for successive one-year terms unless either party gives notice of non-renewal at least {days} days before the end of the then-current term.
Either party may terminate this Agreement upon written notice if the other party materially breaches this Agreement and fails to cure such breach within {days} days after receiving notice of it.
Either party may terminate this Agreement immediately if the other party becomes insolvent, makes a general assignment for the benefit of creditors or becomes subject to any bankruptcy proceeding.
Termination shall not relieve either party of obligations accrued before the effective date of termination.
Sections concerning confidentiality, limitation of liability, indemnification and governing law shall survive any expiration or termination."""),
    ("Payment Terms", """\
Invoices are payable within {days} days of the invoice date, and undisputed amounts not paid when due shall accrue interest at the lesser of one percent per month and the maximum rate permitted by law.
All amounts are stated and payable in United States dollars and are exclusive of sales, use, value-added and similar taxes, which shall be borne by the purchasing party.
A party disputing an invoice in good faith shall notify the other party of the disputed amount within {days} days and shall pay the undisputed portion when due.
ZZA may adjust its fees once in each contract year by an amount not exceeding the change in the Consumer Price Index over the preceding twelve months."""),
    ("Compliance with Laws", """\
Each party shall comply with all laws and regulations applicable to its performance under this Agreement, including anti-corruption, export control and sanctions laws.
Neither party shall offer or give anything of value to any government official for the purpose of improperly obtaining or retaining business.
Each party shall maintain accurate books and records relating to its performance hereunder for not less than {n} years after termination.
ZZB may, upon {days} days' notice and not more than once per calendar year, audit the records of ZZA relating to the fees charged under this Agreement."""),
    ("Miscellaneous", """\
This Agreement, together with its Schedules and each Order, constitutes the entire agreement between the parties and supersedes all prior agreements and understandings relating to its subject matter.
No amendment or waiver of any provision of this Agreement shall be effective unless in writing and signed by both parties.
If any provision of this Agreement is held invalid or unenforceable, the remaining provisions shall continue in full force and effect.
The parties are independent contractors, and nothing in this Agreement creates a partnership, joint venture or agency relationship.
This Agreement may be executed in counterparts, each of which shall be deemed an original, and signatures delivered electronically shall be binding.
The failure of either party to enforce any provision shall not constitute a waiver of that provision or of any other provision."""),
    ("Insurance", """\
During the term and for {n} years thereafter, ZZA shall maintain commercial general liability insurance with limits of not less than USD {amount} per occurrence.
ZZA shall also maintain professional liability and cyber liability insurance with limits customary for companies of its size and industry.
Upon request, each party shall furnish certificates of insurance evidencing the coverage required by this Section.
Each policy shall be issued by insurers rated A- or better by A.M. Best and shall provide for at least {days} days' notice of cancellation."""),
    ("Data Protection", """\
To the extent ZZA processes personal data on behalf of ZZB, the parties shall comply with the Data Processing Addendum attached as a Schedule to this Agreement.
ZZA shall implement appropriate technical and organizational measures to protect personal data against unauthorized access, loss or alteration.
ZZA shall notify ZZB without undue delay, and in any event within {days} days, after becoming aware of a security breach affecting ZZB's personal data.
ZZA shall not transfer personal data outside the United States without ZZB's prior written authorization."""),
]

CUSTOMER: list[Topic] = [
    ("Services", """\
ZZA shall provide the {service} described in each Order executed by the parties, in a professional and workmanlike manner consistent with generally accepted industry standards.
Each Order shall specify the services, the service term, the fees and any service-specific terms, and shall be governed by this Agreement.
ZZB shall provide ZZA with timely access to the personnel, information and systems reasonably required for ZZA to perform the services.
ZZA may update the services from time to time, provided that no update materially reduces the functionality or security of the services during the current term.
ZZA shall assign a relationship manager who shall serve as ZZB's primary point of contact for the services."""),
    ("Service Levels", """\
ZZA shall make the services available at least {uptime} of the time in each calendar month, excluding scheduled maintenance notified at least {n} business days in advance.
If ZZA fails to meet the availability commitment in any month, ZZB shall be entitled to a service credit equal to {n} percent of the monthly fees for each full percentage point of shortfall.
Service credits are ZZB's sole remedy for availability failures, except that ZZB may terminate the affected Order if availability falls below the commitment in three consecutive months.
ZZA shall respond to Severity 1 incidents within one hour and use continuous efforts to restore service."""),
    ("Fees", """\
ZZB shall pay the fees set out in each Order, which shall be invoiced annually in advance unless the Order provides otherwise.
Fees for any renewal term shall not increase by more than {n} percent over the fees for the preceding term.
Implementation and professional services are billed monthly in arrears at the rates set out in the applicable Order.
Except as expressly provided in this Agreement, fees are non-cancellable and non-refundable."""),
    ("Acceptance", """\
Deliverables shall be deemed accepted unless ZZB notifies ZZA of a material nonconformity within {days} days after delivery.
ZZA shall correct any nonconformity notified in accordance with this Section and redeliver the corrected deliverable for acceptance testing.
If ZZA fails to correct a material nonconformity after two attempts, ZZB may terminate the affected statement of work and receive a refund of the fees paid for the nonconforming deliverable."""),
]

SUPPLIER: list[Topic] = [
    ("Supply and Purchase Orders", """\
ZZB shall supply the {product} ordered by ZZA under purchase orders issued from time to time in accordance with this Agreement.
ZZA shall provide ZZB with a rolling {n}-month non-binding forecast of its requirements, updated monthly.
ZZB shall accept or reject each purchase order within {n} business days, failing which the purchase order shall be deemed accepted.
Lead times shall not exceed {days} days from acceptance of a purchase order unless otherwise agreed in writing.
ZZB shall maintain a safety stock of finished goods sufficient to cover not less than {n} weeks of forecast demand."""),
    ("Delivery and Inspection", """\
Deliveries shall be made FCA ZZB's facility, and title and risk of loss shall pass to ZZA upon delivery to the carrier.
ZZA may inspect the goods within {days} days after receipt and reject any goods that do not conform to the specifications.
ZZB shall, at its option and expense, repair or replace rejected goods or credit ZZA for the price of such goods.
Late deliveries shall entitle ZZA to liquidated damages of {n} percent of the price of the late goods for each week of delay, up to a maximum of ten percent."""),
    ("Pricing", """\
Prices are set out in the pricing schedule and shall remain fixed for the first contract year.
Thereafter, ZZB may request a price adjustment not more than once per contract year on {days} days' written notice, supported by documented changes in raw material costs.
Prices include packaging and labelling in accordance with ZZA's reasonable instructions.
ZZA shall be entitled to a volume rebate of {n} percent on annual purchases in excess of USD {amount}."""),
    ("Warranties", """\
ZZB warrants that the goods and services shall conform to the specifications, be free from defects in materials and workmanship, and comply with applicable law for a period of {n} months from delivery.
ZZB warrants that it has good title to the goods and that the goods are free of any liens or encumbrances.
THE WARRANTIES IN THIS SECTION ARE EXCLUSIVE AND IN LIEU OF ALL OTHER WARRANTIES, WHETHER EXPRESS OR IMPLIED."""),
]

LICENCE: list[Topic] = [
    ("License Grant", """\
Subject to the terms of this Agreement, the licensor grants the licensee a non-exclusive, non-transferable license to use the Licensed Technology solely for its internal business purposes.
The licensee shall not reverse engineer, decompile or disassemble the Licensed Technology except to the extent expressly permitted by applicable law.
All rights not expressly granted in this Agreement are reserved by the licensor.
The licensee may permit its contractors to use the Licensed Technology solely on its behalf, and shall be responsible for their compliance with this Agreement."""),
    ("Royalties and Reports", """\
The licensee shall pay a running royalty of {pct} of Net Sales of Licensed Products, payable quarterly within {days} days after the end of each calendar quarter.
Each royalty payment shall be accompanied by a report setting out, by product and by country, the units sold, gross sales, deductions and royalties due.
The licensor may, at its own expense and not more than once per year, appoint an independent accountant to audit the licensee's royalty records.
If an audit reveals an underpayment of more than five percent, the licensee shall bear the reasonable costs of the audit."""),
    ("Intellectual Property", """\
As between the parties, the licensor owns all right, title and interest in and to the Licensed Technology and all improvements made by the licensor.
The licensee shall promptly notify the licensor of any suspected infringement of the Licensed Technology by a third party.
The licensor shall have the first right, but not the obligation, to bring an action for infringement at its own expense.
Improvements made solely by the licensee shall be owned by the licensee, subject to a non-exclusive license back to the licensor."""),
]

DISTRIBUTION: list[Topic] = [
    ("Appointment", """\
ZZA appoints ZZB as a non-exclusive distributor of the {product} in the Territory, and ZZB accepts such appointment.
ZZB shall not actively market the products outside the Territory without ZZA's prior written approval.
ZZB shall purchase the products for its own account and resell them in its own name.
ZZA reserves the right to sell the products directly to customers in the Territory and to appoint other distributors."""),
    ("Marketing and Minimum Purchases", """\
ZZB shall use commercially reasonable efforts to promote the products and shall maintain a sales force with appropriate technical training.
ZZB shall purchase products having an aggregate value of not less than USD {amount} in each contract year.
If ZZB fails to meet the minimum purchase commitment in two consecutive years, ZZA may terminate this Agreement on {days} days' notice.
ZZA shall provide marketing materials and reasonable sales training at no additional charge."""),
    ("Trademarks", """\
ZZB may use ZZA's trademarks solely in connection with the promotion and sale of the products in accordance with ZZA's brand guidelines.
ZZB shall not register any trademark, trade name or domain name that is confusingly similar to ZZA's trademarks.
All goodwill arising from ZZB's use of the trademarks shall inure to the benefit of ZZA."""),
]

JV: list[Topic] = [
    ("Collaboration", """\
The parties shall collaborate on the development and commercialization of {product} in accordance with the Collaboration Plan.
A joint steering committee of {n} members, half appointed by each party, shall oversee the collaboration and meet at least quarterly.
Decisions of the steering committee shall be made unanimously, and deadlocks shall be escalated to the chief executive officers of the parties.
Each party shall bear its own costs of the collaboration except as set out in the budget approved by the steering committee."""),
    ("Ownership of Results", """\
Intellectual property developed solely by one party shall be owned by that party, and jointly developed intellectual property shall be owned jointly.
Neither party shall license jointly owned intellectual property to a third party without the consent of the other party.
Each party shall promptly disclose to the other any invention made in the course of the collaboration."""),
    ("Revenue Sharing", """\
Net revenue from jointly developed products shall be shared equally after deduction of the direct costs of each party.
Each party shall deliver a quarterly statement of revenue and costs within {days} days after the end of each quarter.
Either party may audit the other's statements once per year on reasonable notice."""),
]

FINANCE: list[Topic] = [
    ("Definitions", """\
"Applicable Margin" means {n}.25% per annum for SOFR Loans and {n}.00% per annum for Base Rate Loans, subject to adjustment based on the Total Leverage Ratio.
"Consolidated EBITDA" means, for any period, consolidated net income plus interest expense, income taxes, depreciation and amortization, and non-cash charges, in each case to the extent deducted in computing net income.
"Material Adverse Effect" means a material adverse effect on the business, assets, operations or financial condition of the Borrower and its Subsidiaries, taken as a whole.
"Permitted Liens" means liens described in Section 7.02 of this Agreement.
"Loan Documents" means this Agreement, each Note, the Security Agreement, each Guaranty and each other document executed in connection herewith."""),
    ("Financial Covenants", """\
The Borrower shall not permit the Total Leverage Ratio as of the last day of any fiscal quarter to exceed {n}.50 to 1.00.
The Borrower shall maintain a Fixed Charge Coverage Ratio of not less than 1.25 to 1.00 as of the last day of each fiscal quarter.
Compliance with the financial covenants shall be tested quarterly on the basis of the financial statements delivered under Section 6.01.
The Borrower shall deliver a Compliance Certificate signed by a Responsible Officer within {days} days after the end of each fiscal quarter."""),
    ("Reporting", """\
The Borrower shall deliver audited consolidated financial statements within 120 days after the end of each fiscal year, accompanied by an unqualified opinion of independent certified public accountants.
The Borrower shall deliver unaudited quarterly financial statements within {days} days after the end of each of the first three fiscal quarters.
The Borrower shall promptly notify the Administrative Agent of any Default, any litigation reasonably expected to have a Material Adverse Effect, and any ERISA Event."""),
    ("Events of Default", """\
It shall be an Event of Default if the Borrower fails to pay any principal when due or any interest within {n} business days after it becomes due.
It shall be an Event of Default if any representation made in any Loan Document proves to have been incorrect in any material respect when made.
It shall be an Event of Default if the Borrower fails to perform any covenant and such failure continues for {days} days after notice from the Administrative Agent.
Upon the occurrence of an Event of Default, the Administrative Agent may, and at the request of the Required Lenders shall, declare the Loans immediately due and payable."""),
    ("Collateral", """\
The Obligations shall be secured by a first-priority lien on substantially all assets of the Borrower and each Guarantor, subject to Permitted Liens.
The Borrower shall cause each new domestic Subsidiary to become a Guarantor within {days} days after its formation or acquisition.
The Borrower shall maintain deposit account control agreements over all deposit accounts other than Excluded Accounts."""),
]

LEASE: list[Topic] = [
    ("Premises and Term", """\
The landlord leases to the tenant the premises at {site} comprising approximately {n},500 rentable square feet, together with the non-exclusive right to use the common areas.
The term shall commence on the Commencement Date and expire on the last day of the {n}th lease year, unless sooner terminated in accordance with this Lease.
The tenant shall have {n} options to extend the term for five years each, exercisable on not less than {days} days' notice.
The premises shall be used for general office and related purposes and for no other purpose without the landlord's consent."""),
    ("Rent and Operating Expenses", """\
The tenant shall pay base rent in equal monthly installments in advance on the first day of each month, as set out in the rent schedule.
Base rent shall increase by {n} percent on each anniversary of the Commencement Date.
The tenant shall pay its proportionate share of operating expenses and real estate taxes in excess of the base year.
Late payments shall bear a late charge of five percent of the overdue amount."""),
    ("Maintenance and Alterations", """\
The landlord shall maintain the roof, structure and building systems, and the tenant shall maintain the interior of the premises in good condition.
The tenant shall not make alterations costing more than USD {amount} without the landlord's prior written consent.
At the end of the term, the tenant shall surrender the premises broom-clean and in good condition, ordinary wear and tear excepted."""),
    ("Assignment and Subletting", """\
The tenant may assign this Lease or sublet the premises to an affiliate or to a successor by merger without the landlord's consent, provided that the tenant gives notice within {days} days.
Any other assignment or subletting requires the landlord's consent, which shall not be unreasonably withheld.
The landlord may transfer its interest in the building without the tenant's consent."""),
]

EMPLOYMENT: list[Topic] = [
    ("Position and Duties", """\
The Executive shall serve as a senior officer of ZZA, reporting to the Chief Executive Officer, and shall perform the duties customarily associated with that position.
The Executive shall devote substantially all of the Executive's business time to the business of ZZA.
The Executive may serve on the board of one non-competing company with the prior approval of the Board.
The Executive's principal place of employment shall be ZZA's offices at {site}."""),
    ("Compensation and Benefits", """\
ZZA shall pay the Executive a base salary at the annual rate set out in the compensation schedule, reviewed annually by the Compensation Committee.
The Executive shall be eligible for an annual cash bonus under ZZA's incentive plan, based on the achievement of performance goals set by the Board.
The Executive shall be entitled to participate in the employee benefit plans generally available to senior executives of ZZA.
ZZA shall reimburse the Executive for reasonable business expenses in accordance with its expense policy."""),
    ("Termination", """\
ZZA may terminate the Executive's employment for Cause, and the Executive may resign for Good Reason, in each case as defined in this Agreement.
Upon a termination without Cause or a resignation for Good Reason, the Executive shall receive continued base salary for {n} months, subject to execution of a release of claims.
Severance under this Section is not increased by, and is not conditioned on, any change of control of ZZA.
Upon any termination, the Executive shall receive accrued but unpaid salary, unused vacation and unreimbursed expenses."""),
    ("Restrictive Covenants", """\
During employment and for {n} months thereafter, the Executive shall not solicit any employee or customer of ZZA.
The Executive shall not use or disclose any confidential information of ZZA except in the performance of the Executive's duties.
The Executive acknowledges that the restrictions in this Section are reasonable and necessary to protect ZZA's legitimate business interests."""),
]

IP_ASSIGN: list[Topic] = [
    ("Assignment of Inventions", """\
The employee hereby assigns to ZZA all right, title and interest in and to all inventions, works of authorship and developments conceived or reduced to practice during the period of employment that relate to ZZA's business.
The employee shall promptly disclose each such invention to ZZA in writing and shall execute all documents reasonably requested to perfect ZZA's rights.
The employee has listed on Exhibit A all inventions made before employment that the employee wishes to exclude from this assignment.
This assignment does not apply to inventions that qualify fully for protection under the applicable provisions of the labor code."""),
    ("Confidential Information", """\
The employee shall hold in strict confidence, and shall not use except for the benefit of ZZA, any confidential information of ZZA, including source code, customer lists, pricing and business plans.
The obligations in this Section continue during and after the period of employment for so long as the information remains confidential.
The employee shall not bring to ZZA or use in the performance of the employee's duties any confidential information of a former employer or other third party."""),
    ("Return of Company Property", """\
Upon termination of employment, or earlier on request, the employee shall return to ZZA all documents, devices and materials containing confidential information of ZZA.
The employee shall not retain any copies, notes or extracts of such materials and shall certify compliance in writing on request.
ZZA may inspect any personal device used for work purposes to confirm that company information has been removed."""),
    ("Prior Inventions", """\
The employee represents that Exhibit A lists every invention made by the employee before the start of employment that relates to ZZA's business.
If no list is attached, the employee represents that there are no such prior inventions.
If the employee incorporates a prior invention into any product of ZZA, the employee grants ZZA a perpetual, royalty-free license to use it."""),
]

PATENT: list[Topic] = [
    ("Claims", """\
A method comprising receiving a plurality of input records, normalizing each record according to a schema, and storing the normalized records in a partitioned index.
The method of claim 1, wherein the partitioned index is distributed across a plurality of nodes according to a hash of a key field.
A system comprising one or more processors and memory storing instructions that, when executed, cause the processors to perform the method of claim 1.
The system of claim 3, further comprising a cache configured to store frequently accessed partitions."""),
    ("Description", """\
In one embodiment, the apparatus includes a housing, a control module and a sensor array arranged to detect variations in pressure.
Those skilled in the art will appreciate that the embodiments described herein are illustrative and that various modifications may be made without departing from the scope of the invention.
The figures are not drawn to scale, and certain features may be exaggerated for clarity.
Prior approaches suffered from excessive latency and were unable to scale beyond a single processing node."""),
]

TRADEMARK: list[Topic] = [
    ("Registration", """\
The mark shown in this certificate has been registered on the Principal Register in the name of the registrant identified above.
The registration covers the goods and services listed in the stated international classes.
Requirements for maintaining this registration include the filing of a declaration of use between the fifth and sixth years after the registration date.
The registration shall remain in force for ten years, unless terminated earlier, and may be renewed for further ten-year periods."""),
]

EQUITY: list[Topic] = [
    ("Authorized Capital", """\
The total number of shares of all classes of stock which the Corporation is authorized to issue is {n}0,000,000 shares of Common Stock and {n},000,000 shares of Preferred Stock, each with a par value of USD 0.0001 per share.
The Board of Directors is authorized to provide for the issuance of shares of Preferred Stock in one or more series and to fix the designations, powers and preferences of each series.
Each holder of Common Stock shall be entitled to one vote for each share held of record on all matters submitted to a vote of stockholders."""),
    ("Liquidation Preference", """\
In the event of any liquidation, dissolution or winding up of the Corporation, the holders of Preferred Stock shall be entitled to receive, in preference to the holders of Common Stock, an amount per share equal to the Original Issue Price plus declared but unpaid dividends.
After payment of the liquidation preference, the remaining assets shall be distributed ratably among the holders of Common Stock.
A merger or consolidation in which the stockholders of the Corporation do not retain a majority of the voting power shall be treated as a liquidation for purposes of this Section, unless waived by the holders of a majority of the Preferred Stock."""),
    ("Options and Vesting", """\
Options shall vest as to twenty-five percent of the shares on the first anniversary of the vesting commencement date and in equal monthly installments over the following thirty-six months.
The exercise price of each option shall be not less than the fair market value of a share on the date of grant.
Unvested options shall terminate upon the optionee's termination of service, and vested options shall remain exercisable for {n} months thereafter.
The Administrator may provide for the assumption or substitution of outstanding awards in connection with a corporate transaction."""),
    ("Board and Meetings", """\
The business and affairs of the Corporation shall be managed by or under the direction of its Board of Directors, consisting of {n} members.
Special meetings of the Board may be called by the Chair or by any two directors on not less than twenty-four hours' notice.
A majority of the directors then in office shall constitute a quorum for the transaction of business.
Any action required or permitted to be taken by the Board may be taken without a meeting if all directors consent in writing."""),
]

INSURANCE: list[Topic] = [
    ("Insuring Agreements", """\
The Insurer will pay on behalf of the Insured all Loss which the Insured is legally obligated to pay as a result of a Claim first made during the Policy Period.
The limit of liability stated in the Declarations is the maximum aggregate amount payable for all Loss under this Policy.
Defense Costs are part of, and not in addition to, the limit of liability.
The retention stated in the Declarations applies to each Claim and shall be borne by the Insured."""),
    ("Exclusions", """\
The Insurer shall not be liable for Loss arising out of any deliberately fraudulent act of the Insured established by a final adjudication.
This Policy does not apply to any Claim for bodily injury or property damage, except to the extent expressly covered by endorsement.
This Policy does not apply to any Claim based upon pollution, except for Defense Costs in securities claims.
Prior and pending litigation as of the continuity date is excluded."""),
    ("Conditions", """\
The Insured shall give written notice of any Claim as soon as practicable and in no event later than {days} days after the end of the Policy Period.
In the event of a change in control of the Named Insured, coverage shall continue until the end of the Policy Period for wrongful acts occurring before the change in control.
The Insured shall not admit liability or settle any Claim without the Insurer's prior written consent.
This Policy may be cancelled by the Named Insured at any time by written notice to the Insurer."""),
]
