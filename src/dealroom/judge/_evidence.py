"""Evidence figures: does the memo cite the documents and pages the answer key holds?

The gold comes from the rubric and, where the room has one, its answer key:

* a *gold finding* is the ``finding`` of a positive criterion whose ``expect`` names documents
  (``cite`` or ``pages``; a criterion without ``finding`` is its own finding); its *gold
  citations* are those documents, each with the pages it must be cited at: ``expect.pages``
  and the pages where the answer key's evidence of that finding lies in it (no page known:
  any citation of the document counts). A rubric naming no documents takes every finding of
  the answer key, with its evidence documents and pages.
* a memo citation ``[D00042 p.3]`` is *correct* when its page holds answer-key evidence of
  any finding, or is a page a criterion expects; a citation without a page (``[D00042]``), or
  of a document no page is known for, is correct when the rubric or the answer key names the
  document (a ``cite``, ``pages`` or ``reviewed`` entry, or evidence).

Recall is gold citations cited / gold citations; precision is correct citations / citations
(distinct document-page pairs in every deliverable; a range ``pp.2-4`` is three); F1 their
harmonic mean. A memo without citations has no precision (NaN) and, with gold to find,
recall and F1 0; a room without gold has no evidence figures (``None``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dealroom.judge._reference import _CITE_GROUP, _DOC_PART, _PAGE_LIST, _PAGE_SPAN
from dealroom.judge._scores import is_negative

COUNTS = ("n_findings", "n_findings_cited", "n_gold", "n_gold_cited", "n_citations",
          "n_citations_correct")
"""The counts of :class:`Evidence`, in its fields' order."""
Citation = tuple[str, int | None]
"""(document id, page), the page None for a citation without one."""


@dataclass(frozen=True)
class EvidenceKey:
    """What counts as grounded in a room: gold citations and the pages holding evidence."""

    gold: dict[str, dict[str, frozenset[int]]]
    """Gold finding → document → the pages a citation of it must name (empty: any)."""
    pages: dict[str, frozenset[int]] = field(default_factory=dict)
    """Document → every page holding answer-key evidence or a page a criterion expects."""
    docs: frozenset[str] = frozenset()
    """Documents the rubric or the answer key names."""

    def correct(self, citation: Citation) -> bool:
        """Whether ``citation`` points at evidence (see the module docstring)."""
        doc, page = citation
        known = self.pages.get(doc)
        if page is None or not known:
            return doc in self.docs
        return page in known


@dataclass(frozen=True)
class Evidence:
    """A memo's evidence figures; :meth:`to_dict` is ``scores.json``'s ``evidence``."""

    n_findings: int
    """Gold findings."""
    n_findings_cited: int
    """Gold findings whose every gold citation the memo makes."""
    n_gold: int
    """Gold citations (a gold finding's document, with its pages)."""
    n_gold_cited: int
    n_citations: int
    """Distinct (document, page) pairs the memo cites."""
    n_citations_correct: int

    @property
    def recall(self) -> float:
        return self.n_gold_cited / self.n_gold if self.n_gold else math.nan

    @property
    def precision(self) -> float:
        return self.n_citations_correct / self.n_citations if self.n_citations else math.nan

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall; 0 when recall is 0, NaN without gold."""
        p, r = self.precision, self.recall
        if math.isnan(r):
            return math.nan
        if r == 0 or math.isnan(p) or p == 0:
            return 0.0
        return 2 * p * r / (p + r)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Evidence:
        """Read ``scores.json``'s ``evidence`` (its counts; the rates follow from them)."""
        return cls(*(int(data.get(name) or 0) for name in COUNTS))

    def to_dict(self) -> dict[str, Any]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "n_findings": self.n_findings, "n_findings_cited": self.n_findings_cited,
                "n_gold": self.n_gold, "n_gold_cited": self.n_gold_cited,
                "n_citations": self.n_citations,
                "n_citations_correct": self.n_citations_correct}


def cited(text: str) -> frozenset[Citation]:
    """The (document, page) pairs ``text`` cites in brackets or parentheses; a citation
    without a page gives (document, None).

    >>> sorted(cited("[D00001 p.3] and (D00002, pp. 4-5) [D00003]"), key=str)
    [('D00001', 3), ('D00002', 4), ('D00002', 5), ('D00003', None)]
    """
    out: set[Citation] = set()
    for group in _CITE_GROUP.findall(text):
        for doc, rest in _DOC_PART.findall(group):
            pages = [(int(lo), int(hi or lo)) for listed in _PAGE_LIST.findall(rest)
                     for lo, hi in _PAGE_SPAN.findall(listed)]
            out.update((doc, p) for lo, hi in pages for p in range(lo, min(hi, lo + 500) + 1))
            if not pages:
                out.add((doc, None))
    return frozenset(out)


def evidence_key(task: dict[str, Any], answer_key: dict[str, Any] | None = None) -> EvidenceKey:
    """The gold of ``task`` (its ``expect`` blocks, documents given as ids: ``load_task``'s)
    and of the room's ``answer_key`` (``answer_key/findings.json``), when it has one."""
    found = _key_evidence(answer_key)
    gold: dict[str, dict[str, set[int]]] = {}
    pages: dict[str, set[int]] = {}
    docs: set[str] = set()
    for c in task.get("criteria") or []:
        expect = c.get("expect") if isinstance(c.get("expect"), dict) else {}
        named = {str(d): {int(p) for p in ps} for d, ps in (expect.get("pages") or {}).items()}
        for doc, listed in named.items():
            pages.setdefault(doc, set()).update(listed)
        named.update({str(d): named.get(str(d), set()) for d in expect.get("cite") or []})
        docs.update(named, map(str, expect.get("reviewed") or []))
        if named and not is_negative(c):
            finding = gold.setdefault(str(c.get("finding") or c["id"]), {})
            for doc, listed in named.items():
                finding.setdefault(doc, set()).update(listed)
    if not gold:  # a rubric naming no documents: the answer key's findings are the gold
        gold = {fid: {doc: set() for doc in held} for fid, held in found.items()}
    for fid, held in found.items():
        for doc, listed in held.items():
            pages.setdefault(doc, set()).update(listed)
            docs.add(doc)
            if doc in gold.get(fid, {}):
                gold[fid][doc].update(listed)
    return EvidenceKey({f: {d: frozenset(p) for d, p in held.items()} for f, held in gold.items()},
                       {d: frozenset(p) for d, p in pages.items()}, frozenset(docs))


def _key_evidence(answer_key: dict[str, Any] | None) -> dict[str, dict[str, set[int]]]:
    """Finding id → document → the pages its evidence is on, from an answer key (entries of
    the wrong shape are skipped: ``dealroom validate`` reports them)."""
    out: dict[str, dict[str, set[int]]] = {}
    for finding in (answer_key or {}).get("findings") or []:
        if not isinstance(finding, dict) or not isinstance(finding.get("evidence"), list):
            continue
        held = out.setdefault(str(finding.get("id")), {})
        for item in finding["evidence"]:
            if isinstance(item, dict) and isinstance(item.get("doc"), str):
                listed = held.setdefault(item["doc"], set())
                if isinstance(item.get("page"), int) and not isinstance(item["page"], bool):
                    listed.add(item["page"])
    return out


def measure_evidence(key: EvidenceKey, deliverables: Iterable[str]) -> Evidence | None:
    """The evidence figures of ``deliverables`` (their texts) against ``key``; None when the
    key has no gold."""
    if not key.gold:
        return None
    citations = frozenset().union(*(cited(text) for text in deliverables))
    by_doc: dict[str, set[int | None]] = {}
    for doc, page in citations:
        by_doc.setdefault(doc, set()).add(page)
    n_gold = n_cited = n_findings_cited = 0
    for held in key.gold.values():
        hits = sum(bool(by_doc.get(doc)) if not listed else bool(by_doc.get(doc, set()) & listed)
                   for doc, listed in held.items())
        n_gold, n_cited = n_gold + len(held), n_cited + hits
        n_findings_cited += hits == len(held)
    return Evidence(len(key.gold), n_findings_cited, n_gold, n_cited, len(citations),
                    sum(key.correct(c) for c in citations))


def room_evidence(room: Path, task: dict[str, Any],
                  deliverables: dict[str, str]) -> Evidence | None:
    """:func:`measure_evidence` of ``deliverables`` against ``room``'s rubric (``task``) and
    its answer key, when it has one."""
    from dealroom.room import ANSWER_KEY, load_answer_key

    has_key = (Path(room) / ANSWER_KEY / "findings.json").is_file()
    key = evidence_key(task, load_answer_key(Path(room)) if has_key else None)
    return measure_evidence(key, deliverables.values())
