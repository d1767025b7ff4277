"""A small folder in CUAD v1's own format, written from clause texts of our own.

CUAD (the Contract Understanding Atticus Dataset, CC BY 4.0) cannot be shipped or downloaded
here, so tests, benchmarks and a first try of ``dealroom cuad import`` use a look-alike: the
same files and shapes (``CUAD_v1.json`` in SQuAD format, ``master_clauses.csv`` with the
same labels, ``full_contract_txt/``, ``full_contract_pdf/Part_I/<type>/``), contracts built
from boilerplate that uses the common words of real contracts (*change*, *control*,
*termination*, *assign*) in other senses, and the labelled clauses of :data:`CLAUSES`. None
of its text comes from CUAD.

    write_cuad_sample("cuad-sample", contracts=40, seed=0)
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

from dealroom.room._generate._formats import pdf_bytes

CLAUSES: dict[str, tuple[str, ...]] = {
    "Change Of Control": (
        "In the event of a Change of Control of {b}, {a} may terminate this Agreement upon "
        "written notice given within ninety (90) days after such Change of Control.",
        "Any merger, consolidation or sale of all or substantially all of the assets of {b}, "
        "or any transaction in which the persons controlling {b} cease to hold a majority of "
        "its voting securities, shall require the prior written consent of {a}.",
        "{b} shall notify {a} of any change in control of {b} within ten (10) business days, "
        "and {a} may elect to terminate this Agreement as of the effective date thereof.",
    ),
    "Anti-Assignment": (
        "Neither party may assign or transfer this Agreement or any of its rights or "
        "obligations hereunder without the prior written consent of the other party, and any "
        "purported assignment in violation of this Section shall be null and void.",
        "{b} shall not assign, delegate or subcontract any of its obligations under this "
        "Agreement without {a}'s express prior written approval.",
    ),
    "Non-Compete": (
        "During the Term and for two (2) years thereafter, {b} shall not, directly or "
        "indirectly, manufacture, market or sell any product that competes with the Products "
        "in the Territory.",
        "{b} agrees that it will not engage in any business competitive with the business of "
        "{a} within the Territory for the duration of this Agreement.",
    ),
    "Exclusivity": (
        "{a} hereby appoints {b} as its exclusive distributor of the Products in the "
        "Territory, and {a} shall not appoint any other distributor therein.",
        "{b} shall purchase all of its requirements of the Products exclusively from {a} "
        "during the Term.",
    ),
    "Termination For Convenience": (
        "{a} may terminate this Agreement for convenience at any time upon sixty (60) days' "
        "prior written notice to {b}, without liability except for fees accrued before the "
        "effective date of termination.",
        "Either party may terminate this Agreement without cause by giving the other party "
        "not less than thirty (30) days' written notice.",
    ),
    "Cap On Liability": (
        "In no event shall either party's aggregate liability arising out of this Agreement "
        "exceed the total fees paid by {a} in the twelve (12) months preceding the claim.",
        "The total liability of {b} under this Agreement shall be limited to five hundred "
        "thousand dollars ($500,000).",
    ),
    "Uncapped Liability": (
        "The foregoing limitation of liability shall not apply to a party's indemnification "
        "obligations, breach of confidentiality, or gross negligence or willful misconduct, "
        "for which liability shall be unlimited.",
    ),
    "Most Favored Nation": (
        "If {b} offers any other customer prices lower than those set forth in Exhibit A for "
        "substantially similar volumes, {b} shall promptly offer the same lower prices to "
        "{a}.",
        "{b} warrants that the prices charged to {a} are no less favorable than the prices "
        "charged to any other customer of {b} for comparable products.",
    ),
    "Rofr/Rofo/Rofn": (
        "Before offering the Licensed Territory rights to any third party, {a} shall first "
        "offer such rights to {b}, and {b} shall have thirty (30) days to accept the offer on "
        "the same terms.",
        "{b} shall have a right of first refusal to match any bona fide third-party offer to "
        "acquire the Assets.",
    ),
    "Liquidated Damages": (
        "If {b} fails to meet the Delivery Date, {b} shall pay {a} as liquidated damages, and "
        "not as a penalty, one percent (1%) of the Contract Price for each week of delay.",
    ),
    "Minimum Commitment": (
        "{a} shall purchase a minimum of 10,000 units of the Products in each Contract Year; "
        "any shortfall shall be invoiced at the then-current price.",
        "{b} shall order Products having an aggregate purchase price of not less than two "
        "million dollars ($2,000,000) during each calendar year of the Term.",
    ),
    "Governing Law": (
        "This Agreement shall be governed by and construed in accordance with the laws of the "
        "State of New York, without regard to its conflict of laws principles.",
        "This Agreement is governed by the laws of the State of Delaware.",
    ),
    "Renewal Term": (
        "This Agreement shall automatically renew for successive one (1) year terms unless "
        "either party gives notice of non-renewal at least ninety (90) days before the end of "
        "the then-current term.",
        "Upon expiry of the Initial Term, the Agreement shall be extended for additional "
        "periods of two (2) years each unless terminated in accordance with its terms.",
    ),
    "Audit Rights": (
        "{a} may, upon fifteen (15) days' notice and not more than once per year, inspect and "
        "audit the books and records of {b} relating to the royalties payable hereunder.",
        "{b} shall keep accurate records and permit an independent accountant appointed by "
        "{a} to examine such records during normal business hours.",
    ),
    "Ip Ownership Assignment": (
        "All Work Product created by {b} in the performance of the Services shall be the sole "
        "property of {a}, and {b} hereby assigns to {a} all right, title and interest therein, "
        "including all intellectual property rights.",
        "Any improvements to the Licensed Technology made by {b} shall vest in and are hereby "
        "assigned to {a}.",
    ),
}
"""The diligence categories (CUAD's names) and the clause texts the sample labels for each."""

BOILERPLATE = (
    "{b} shall promptly notify {a} of any change in its address for notices, and no change "
    "to the Specifications shall be effective unless agreed in writing by both parties.",
    "Each party shall maintain adequate quality control procedures and shall control the "
    "defense of any claim for which it provides indemnification, with counsel of its choice.",
    "Upon termination or expiration of this Agreement, {b} shall return all Confidential "
    "Information of {a}, and Sections 8, 9 and 12 shall survive any termination.",
    "Invoices are payable within thirty (30) days of receipt; late payments bear interest at "
    "one percent (1%) per month or the maximum rate permitted by law, whichever is less.",
    "Neither party shall be liable for any failure or delay in performance caused by events "
    "beyond its reasonable control, including fire, flood, strike or act of government.",
    "The headings in this Agreement are for convenience of reference only and shall not "
    "affect its interpretation; the word including means including without limitation.",
    "{b} shall comply with all applicable laws, regulations and export control requirements "
    "in the performance of its obligations hereunder.",
    "All notices shall be in writing and delivered by hand, by courier or by registered mail "
    "to the addresses set out above, or to such other address as a party may designate.",
    "{b} shall maintain commercial general liability insurance with limits of not less than "
    "two million dollars per occurrence and shall name {a} as an additional insured.",
    "Each party represents that it is duly organized, validly existing and in good standing "
    "and has full power and authority to enter into this Agreement.",
    "{a} shall provide {b} with forecasts of its requirements on a rolling quarterly basis; "
    "forecasts are for planning purposes only and do not constitute purchase orders.",
    "Any change order shall set out the change in scope, the revised fees and the revised "
    "schedule, and shall be signed by authorized representatives of both parties.",
    "The parties shall attempt in good faith to resolve any dispute through negotiation "
    "between executives who have authority to settle the controversy.",
    "This Agreement constitutes the entire agreement between the parties and supersedes all "
    "prior agreements, proposals and representations, whether written or oral.",
    "Products shall be delivered FCA {b}'s facility; title and risk of loss pass to {a} upon "
    "delivery to the carrier, and {a} shall inspect the Products within ten days.",
    "If any provision of this Agreement is held invalid, the remaining provisions shall "
    "continue in full force and effect, and the invalid provision shall be replaced.",
    "{b} warrants that the Products will conform to the Specifications for twelve (12) "
    "months from delivery; {a}'s remedy is repair or replacement of nonconforming Products.",
    "Any failure of {a} to terminate this Agreement upon a breach shall not be a waiver of "
    "its right to terminate upon a later breach of the same or another provision.",
    "Document control: this Agreement may be executed in counterparts, each of which shall "
    "be an original, and signatures delivered electronically shall be binding.",
)
"""Sections every contract may hold: common contract words, in other senses."""

KINDS = ("Supply Agreement", "Distribution Agreement", "License Agreement", "Services Agreement",
         "Manufacturing Agreement", "Reseller Agreement", "Consulting Agreement")
PARTIES = ("Arbor Biotech Inc.", "Kestrel Systems LLC", "Lumen Foods Corp.", "Norvik Energy Ltd.",
           "Pellucid Media Inc.", "Quarry Logistics LLC", "Redfern Medical Corp.",
           "Solano Software Inc.", "Tallis Mining Ltd.", "Vireo Pharma Inc.")
QUESTION = ('Highlight the parts (if any) of this contract related to "{category}" that should '
            "be reviewed by a lawyer.")


def _contract(rng: random.Random, n: int) -> tuple[str, str, list[tuple[str, str]]]:
    """A contract's title, text and labelled ``(category, clause text)`` pairs."""
    kind = rng.choice(KINDS)
    a, b = rng.sample(PARTIES, 2)
    title = f"{b.split()[0].upper()}_{2000 + n % 20}-EX-10.{n % 9 + 1}-{kind.upper()}"
    labels = [(c, rng.choice(texts).format(a=a, b=b)) for c, texts in CLAUSES.items()
              if rng.random() < (0.8 if c == "Governing Law" else 0.3)]
    sections = [rng.choice(BOILERPLATE).format(a=a, b=b) for _ in range(rng.randint(30, 70))]
    for _, text in labels:
        sections.insert(rng.randrange(len(sections) + 1), text)
    head = f"{kind.upper()}\n\nThis {kind} is entered into by {a} and {b}.\n"
    body = "\n\n".join(f"{i}. {s}" for i, s in enumerate(sections, 1))
    return title, f"{head}\n{body}\n", labels


def write_cuad_sample(folder: Path | str, contracts: int = 8, seed: int = 0) -> Path:
    """Write a CUAD-format folder of ``contracts`` contracts, its labels both as
    ``CUAD_v1.json`` and as ``master_clauses.csv``; return its path."""
    folder, rng = Path(folder), random.Random(seed)
    (folder / "full_contract_txt").mkdir(parents=True, exist_ok=True)
    data = []
    for n in range(contracts):
        title, text, labels = _contract(rng, n)
        title = f"{title}-{n:03d}"
        (folder / "full_contract_txt" / f"{title}.txt").write_text(text, encoding="utf-8")
        if n % 2 == 0:  # half the contracts also as PDFs, as CUAD ships them
            pdf = folder / "full_contract_pdf" / "Part_I" / title.rsplit("-", 2)[1].title()
            pdf.mkdir(parents=True, exist_ok=True)
            pages = [text[i:i + 3000] for i in range(0, len(text), 3000)]
            (pdf / f"{title}.pdf").write_bytes(pdf_bytes(pages, title))
        data.append({"title": title, "paragraphs": [{"context": text, "qas": _qas(title, text,
                                                                                  labels)}]})
    cuad = {"version": "aok_v1.0", "data": data}
    (folder / "CUAD_v1.json").write_text(json.dumps(cuad, indent=1), encoding="utf-8")
    write_master_clauses(folder / "master_clauses.csv", data)
    (folder / "README.txt").write_text(
        "A CUAD-format sample written by dealroom (dealroom.room._cuad_sample): contract text "
        "and labels are dealroom's own, not CUAD's. CUAD itself is CC BY 4.0, The Atticus "
        "Project: https://www.atticusprojectai.org/cuad\n", encoding="utf-8")
    return folder


def _qas(title: str, text: str, labels: list[tuple[str, str]]) -> list[dict[str, object]]:
    found = dict(labels)
    qas = []
    for category in ("Document Name", *CLAUSES):
        if category == "Document Name":
            first = text.split("\n", 1)[0]
            answers = [{"text": first, "answer_start": 0}]
        else:
            clause = found.get(category)
            answers = [{"text": clause, "answer_start": text.index(clause)}] if clause else []
        qas.append({"question": QUESTION.format(category=category), "id": f"{title}__{category}",
                    "answers": answers, "is_impossible": not answers})
    return qas


def write_master_clauses(path: Path, data: list[dict]) -> None:
    """``master_clauses.csv`` of the contracts ``data`` (CUAD_v1.json's entries), as CUAD
    ships it: ``Filename`` (the PDF's name), then per category its spans as a Python list
    literal and a ``<Category>-Answer`` column."""
    categories = ("Document Name", *CLAUSES)
    header = ["Filename"] + [c for category in categories for c in (category,
                                                                      f"{category}-Answer")]
    with open(path, "w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(header)
        for item in data:
            qas = {qa["id"].rsplit("__", 1)[1]: qa for qa in item["paragraphs"][0]["qas"]}
            row = [f"{item['title']}.pdf"]
            for category in categories:
                spans = [a["text"] for a in qas[category]["answers"]]
                answer = spans[0] if category == "Document Name" else "Yes" if spans else "No"
                row += [repr(spans), answer]
            out.writerow(row)
