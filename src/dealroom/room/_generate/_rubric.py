"""The rubric (``task.json``), the answer key (``findings.json``) and the gold memo.

Built after the documents are written, because citations carry the pages where the planted
paragraphs landed. Every criterion's ``expect`` is met by one paragraph of ``gold_memo.md``: the
paragraph of its finding (see ``docs/environment.md`` for how a deterministic judge reads
``expect``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dealroom.room._generate._model import DocResult
from dealroom.room._generate._plan import RoomPlan

if TYPE_CHECKING:
    from dealroom.room._generate._findings import Point

SEVERITY_ORDER = {"high": 0, "medium": 1, "low": 2}
CORE_SECTIONS = ("Executive Summary", "Key Findings", "Recommended Next Steps")


FAIL_IF = {
    "fact": "FAIL if the memo omits this or states it wrongly.",
    "conclusion": "FAIL if the memo does not draw this conclusion.",
    "citation": "FAIL if any of these documents is not cited.",
    "severity": "FAIL if the memo gives another rating or none.",
    "recommendation": "FAIL if no such step is recommended.",
    "timeline": "FAIL if the date or period is missing or wrong.",
    "monetary": "FAIL if no amount is given or it is materially different.",
    "negative": "FAIL if the memo presents it as a live issue.",
}
"""How a kind's terse "FAIL otherwise." is spelled out, by criterion type."""


def match_text(match: str, type_: str, negative: bool) -> str:
    """``match_criteria`` with an explicit FAIL clause."""
    if match.endswith("FAIL otherwise."):
        return match.removesuffix("FAIL otherwise.") + FAIL_IF["negative" if negative else type_]
    return match


def tolerance(value: float) -> float:
    """Half a percent of the amount, at least one dollar."""
    return max(1.0, round(abs(value) * 0.005, 2))


class Rubric:
    """Resolves roles to document ids and pages, then renders the rubric and the answer key."""

    def __init__(self, plan: RoomPlan, results: list[DocResult]) -> None:
        self.plan, self.results = plan, results
        order = sorted(range(len(plan.findings)), key=lambda i: (
            plan.findings[i].cured, SEVERITY_ORDER[plan.findings[i].severity], i))
        self.order = order
        for rank, i in enumerate(order, 1):
            plan.findings[i].id = f"F-{rank:03d}"
        self.criteria: list[dict[str, Any]] = []
        self.criteria_of: dict[int, list[str]] = {}
        for i in order:
            self.criteria_of[i] = [self._criterion(i, p) for p in plan.findings[i].points]
        self._formatting()

    def doc_id(self, i: int, role: str) -> str:
        return self.plan.plans[self.plan.roles[i][role]].id

    def cite(self, i: int, role: str, nth: int = 0) -> str:
        index = self.plan.roles[i][role]
        pages = self.results[index].insert_pages
        page = pages[nth] if nth < len(pages) else 1
        return f"[{self.plan.plans[index].id} p.{page}]"

    def citations(self, i: int) -> dict[str, str]:
        out = {}
        for role, index in self.plan.roles[i].items():
            out[role] = self.cite(i, role)
            for nth in range(1, len(self.plan.plans[index].inserts)):
                out[f"{role}_{nth + 1}"] = self.cite(i, role, nth)
        return out

    def _add(self, title: str, type_: str, match: str, expect: dict[str, Any],
             finding: str | None) -> str:
        cid = f"C-{len(self.criteria) + 1:03d}"
        self.criteria.append({"id": cid, "title": title, "match_criteria": match,
                              "deliverables": ["memo"], "source": "generator", "type": type_,
                              "finding": finding, "expect": expect})
        return cid

    def _criterion(self, i: int, point: Point) -> str:
        expect: dict[str, Any] = {}
        if point.cite:
            expect["cite"] = [self.doc_id(i, r) for r in point.cite]
        if point.amounts:
            expect["amounts"] = [{"value": v, "tolerance": tolerance(v)} for v in point.amounts]
        if point.dates:
            expect["dates"] = list(point.dates)
        if point.terms:
            expect["terms"] = [list(group) for group in point.terms]
        if point.severity:
            expect["severity"] = point.severity
        if point.negative:
            expect["negative"] = True
        match = match_text(point.match, point.type, point.negative)
        return self._add(point.title, point.type, match, expect, self.plan.findings[i].id)

    def _formatting(self) -> None:
        self._add("Memo structure", "formatting",
                  "PASS if the memo has an Executive Summary, a Key Findings section and a "
                  "Recommended Next Steps section. FAIL if any is missing.",
                  {"sections": list(CORE_SECTIONS)}, None)
        if any(self.plan.missing):
            self._add("Missing documents listed", "formatting",
                      "PASS if the memo has a Missing Documents section listing documents that "
                      "are referenced in the room but absent from it. FAIL if there is none.",
                      {"sections": ["Missing Documents"]}, None)
        if any(f.cured for f in self.plan.findings):
            self._add("Resolved items listed", "formatting",
                      "PASS if the memo has a Resolved Items section for issues cured by later "
                      "documents. FAIL if there is none.", {"sections": ["Resolved Items"]}, None)

    def findings_json(self) -> dict[str, Any]:
        out = []
        for i in self.order:
            f = self.plan.findings[i]
            evidence = []
            for role, index in self.plan.roles[i].items():
                plan, pages = self.plan.plans[index], self.results[index].insert_pages
                for nth, ins in enumerate(plan.inserts):
                    evidence += [{"doc": plan.id, "role": role, "page": pages[nth], "fact": fact}
                                 for fact in ins.facts]
            missing = [{"title": title, "referenced_in": self._referrer(i)}
                       for title in self.plan.missing[i].values()]
            out.append({
                "id": f.id, "kind": f.kind, "title": f.title, "severity": f.severity,
                "cured": f.cured, "summary": f.summary,
                "multi_doc": len({e["doc"] for e in evidence}) >= 2,
                "evidence": evidence, "missing": missing,
                "amounts": [{"label": label, "value": v} for label, v in f.amounts],
                "dates": [{"label": label, "date": d} for label, d in f.dates],
                "criteria": self.criteria_of[i],
            })
        return {"version": 1, "room": self.plan.ctx.target, "findings": out}

    def _main_role(self, i: int) -> str:
        """The finding's first document that carries planted text."""
        roles = self.plan.roles[i]
        return next((r for r, x in roles.items() if self.plan.plans[x].inserts), next(iter(roles)))

    def _referrer(self, i: int) -> str:
        return self.doc_id(i, self._main_role(i))

    def task_json(self) -> dict[str, Any]:
        ctx = self.plan.ctx
        instructions = (
            f"{ctx.buyer} has asked us to advise on its proposed acquisition of {ctx.target} "
            f"(Project {ctx.codename}) by reverse triangular merger, with closing targeted for "
            f"{ctx.close_date}. Please review the data room (current as of {ctx.as_of}) and "
            "write a full diligence memo in memo.md: an executive summary; key findings, each "
            "with a severity (High, Medium or Low), document citations such as [D00042 p.3] and "
            "quantified exposures; resolved items; missing documents; and recommended next "
            "steps.")
        return {"title": f"Project {ctx.codename}: due diligence review of {ctx.target}",
                "instructions": instructions, "work_type": "due_diligence_memo",
                "deliverables": {"memo": "memo.md"}, "criteria": self.criteria,
                "tags": ["diligence", "synthetic", ctx.profile]}

    def gold_memo(self, docs: int) -> str:
        ctx, findings = self.plan.ctx, self.plan.findings
        live = [i for i in self.order if not findings[i].cured]
        cured = [i for i in self.order if findings[i].cured and findings[i].memo]
        counts = {s: sum(findings[i].severity == s for i in live) for s in SEVERITY_ORDER}
        out = [f"# Due Diligence Memorandum: Project {ctx.codename}", "",
               f"To: Deal team, {ctx.buyer} | From: Diligence team | Date: {ctx.as_of}",
               f"Re: Proposed acquisition of {ctx.target} by {ctx.buyer}", "",
               "## Executive Summary", "",
               f"We reviewed the {docs:,} documents in the data room as of {ctx.as_of}. We "
               f"identified {len(live)} issues ({counts['high']} high, {counts['medium']} medium "
               f"and {counts['low']} low severity); later documents resolved {len(cured)} "
               f"further item{'' if len(cured) == 1 else 's'}. The most significant issues "
               "are:", ""]
        out += [f"- {findings[i].title} {self._first_cite(i)} (Severity: "
                f"{findings[i].severity.title()})" for i in live[:12]]
        out += ["", "## Key Findings", ""]
        for n, i in enumerate(live, 1):
            f = findings[i]
            out += [f"### {n}. {f.title}", "", f.memo.format_map(self.citations(i)), ""]
        out += ["## Resolved Items", ""]
        for i in cured:
            f = findings[i]
            out += [f"### {f.title}", "", f.memo.format_map(self.citations(i)), ""]
        if not cured:
            out += ["None identified.", ""]
        out += ["## Missing Documents", ""]
        missing = [(title, self._first_cite(i)) for i in live
                   for title in self.plan.missing[i].values()]
        out += [f"- {title}: referenced in {cite} but not in the data room."
                for title, cite in missing] or ["None identified."]
        out += ["", "## Recommended Next Steps", ""]
        out += [f"{n}. " + findings[i].step.format_map(self.citations(i))
                for n, i in enumerate((i for i in live if findings[i].step), 1)]
        out += ["", "## Scope", "",
                "This memo is based solely on the documents in the data room. Citations give the "
                "document id and page in brackets.", ""]
        return "\n".join(out)

    def _first_cite(self, i: int) -> str:
        return self.cite(i, self._main_role(i))
