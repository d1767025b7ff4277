"""The rubric, task and gold memo of a CUAD room, from the located labels.

Per contract and category: labelled → a criterion that one finding of the memo names the
clause (a synonym of :data:`TERMS`) and cites the contract at a page a labelled span is on;
labelled absent → a negative criterion that the memo, having reviewed the contract (cited it
somewhere), does not claim the clause. Without the review condition an empty memo would pass
every negative criterion. A category missing from a contract's labels (its spans, from the
CSV, were not found in the text) gets no criterion.
"""

from __future__ import annotations

from typing import Any

TERMS: dict[str, list[str]] = {
    "Change Of Control": ["change of control", "change in control", "change-of-control"],
    "Anti-Assignment": ["anti-assignment", "assignment", "assign"],
    "Non-Compete": ["non-compete", "noncompete", "non-competition", "compete"],
    "Exclusivity": ["exclusivity", "exclusive"],
    "Termination For Convenience": ["termination for convenience", "terminate for convenience",
                                    "without cause"],
    "Cap On Liability": ["cap on liability", "liability cap", "limitation of liability",
                         "capped"],
    "Uncapped Liability": ["uncapped liability", "uncapped", "unlimited liability"],
    "Most Favored Nation": ["most favored nation", "most favoured nation", "most favored",
                            "MFN"],
    "Rofr/Rofo/Rofn": ["right of first refusal", "right of first offer",
                       "right of first negotiation", "ROFR", "ROFO", "ROFN"],
    "Liquidated Damages": ["liquidated damages"],
    "Minimum Commitment": ["minimum commitment", "minimum purchase", "minimum order",
                           "take-or-pay"],
    "Governing Law": ["governing law", "governed by"],
    "Renewal Term": ["renewal term", "renewal", "renew", "auto-renew"],
    "Audit Rights": ["audit rights", "audit", "inspect"],
    "Ip Ownership Assignment": ["ownership of intellectual property", "IP ownership",
                                "intellectual property"],
}
"""The diligence categories (CUAD's names) and the words a memo names each by; the first is
how the gold memo names it."""


def terms_of(category: str) -> list[str]:
    """Synonyms for ``category``: :data:`TERMS`, or the category's own name in lower case."""
    return TERMS.get(category) or [category.lower().replace("/", " ")]


def instructions(categories: list[str], n: int) -> str:
    return (
        f"This data room holds {n} commercial contracts. Review every contract for these "
        f"clause categories: {', '.join(categories)}. Write memo.md with one section per "
        "contract that cites it (e.g. [D00003]) and, for each category the contract has, one "
        "finding naming the clause and citing the page it is on, e.g. [D00003 p.4]. Do not "
        "claim a clause a contract does not have."
    )


def build_task(located: list[dict[str, Any]], categories: list[str], n: int) -> dict[str, Any]:
    """The room's task.json: LAB's format with dealroom's ``expect`` blocks."""
    return build_rubric(located, categories, n)[0]


def build_rubric(located: list[dict[str, Any]], categories: list[str],
                 n: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The task.json and the answer key's findings (one per labelled clause, for the
    ``oracle`` simulator and for reading; the criteria cite them as ``finding``)."""
    criteria: list[dict[str, Any]] = []
    findings: list[dict[str, Any]] = []
    for contract in located:
        doc = contract["doc"]
        for category in categories:
            if category not in contract["labels"]:  # its spans were not found: no criterion
                continue
            spans = contract["labels"][category]
            cid = f"C-{len(criteria) + 1:03d}"
            if spans:
                fid = f"F-{len(findings) + 1:03d}"
                findings.append(_finding(fid, cid, doc, category, spans))
                criteria.append({"id": cid, **_positive(doc, category, spans,
                                                        contract["title"]), "finding": fid})
            else:
                criteria.append({"id": cid, **_negative(doc, category, contract["title"])})
    return _task(criteria, categories, n), findings


def _finding(fid: str, cid: str, doc: str, category: str,
             spans: list[dict[str, Any]]) -> dict[str, Any]:
    term = terms_of(category)[0]
    return {
        "id": fid, "kind": category, "title": f"{doc}: {term} clause", "severity": "medium",
        "cured": False, "summary": f"{doc} has a {term} clause.", "multi_doc": False,
        "evidence": [{"doc": doc, "role": "clause", "page": s["pages"][0], "fact": s["fact"]}
                     for s in spans],
        "missing": [], "amounts": [], "dates": [], "criteria": [cid],
    }


def _task(criteria: list[dict[str, Any]], categories: list[str], n: int) -> dict[str, Any]:
    return {
        "title": f"CUAD clause review: {n} contracts",
        "instructions": instructions(categories, n),
        "work_type": "contract_review",
        "deliverables": {"memo": "memo.md"},
        "criteria": criteria,
        "tags": ["cuad", "real-documents", "expert-labels"],
    }


def _positive(doc: str, category: str, spans: list[dict[str, Any]], title: str) -> dict:
    pages = sorted({p for s in spans for p in s["pages"]})
    return {
        "title": f"Identifies the {category} clause in {doc}",
        "match_criteria": f"PASS if the memo identifies the {category.lower()} clause of "
                          f"{title} ({doc}) and cites a page it is on (p. "
                          f"{', '.join(map(str, pages))}). FAIL if it is missed or cited "
                          "elsewhere.",
        "deliverables": ["memo"], "source": "cuad", "type": "citation",
        "expect": {"cite": [doc], "pages": {doc: pages}, "terms": [terms_of(category)]},
    }


def _negative(doc: str, category: str, title: str) -> dict:
    return {
        "title": f"Reviews {doc} and claims no {category} clause",
        "match_criteria": f"PASS if the memo reviews {title} ({doc}) and does not claim it has "
                          f"a {category.lower()} clause (CUAD's annotators found none). FAIL "
                          "if it claims one, or does not review the contract.",
        "deliverables": ["memo"], "source": "cuad", "type": "conclusion",
        "expect": {"cite": [doc], "terms": [terms_of(category)], "negative": True,
                   "reviewed": [doc]},
    }


def gold_memo(located: list[dict[str, Any]]) -> str:
    """A memo written from the labels: each contract reviewed, each labelled clause named and
    cited at the first page of its first span."""
    lines = ["# Contract review", ""]
    for contract in located:
        doc = contract["doc"]
        lines += [f"## {doc}", "", f"Reviewed [{doc}].", ""]  # titles may name clauses
        found = [(c, spans[0]["pages"][0]) for c, spans in contract["labels"].items() if spans]
        lines += [f"- The {terms_of(c)[0]} clause of this contract [{doc} p.{page}]."
                  for c, page in found]
        lines.append("")
    return "\n".join(lines)
