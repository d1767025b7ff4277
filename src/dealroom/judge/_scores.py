"""Scores in Harvey LAB's ``scores.json`` shape, and the Judge protocol that produces them.

LAB's keys (``score``, ``max_score``, ``summary``, ``all_pass``, ``n_criteria``, ``n_passed``,
``criteria_results: [{id, title, verdict, reasoning}]``) are kept exactly; dealroom adds
the format's ``version`` (the record :class:`~dealroom.runs.ScoresRecord`, checked when
:meth:`Scores.to_dict` builds it), ``headline`` and ``headline_kind`` (the figure shown
first), ``pass_rate``, ``pass_rate_judged``, ``pass_rate_by_type``, ``n_errors``, ``judge``
and ``usage``, and the pass rate on *positive* criteria alone (``n_positive``,
``n_positive_passed``, ``pass_rate_positive``): a negative criterion ("does not present the
cured claim as live") passes an empty memo, so the positive rate is the one an empty memo
scores 0 on, and the ``headline`` wherever the rubric has negatives. A verdict is ``pass``,
``fail`` or ``error``: a criterion the judge could not score is an ``error``, listed and
counted apart, never dropped and never passed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from dealroom.runs import (
    SCORES_VERSION,
    EvidenceRecord,
    ScoresRecord,
    UsageRecord,
    check_scores_written,
)
from dealroom.types import Usage

if TYPE_CHECKING:
    from dealroom.judge._evidence import Evidence

PASS, FAIL, ERROR = "pass", "fail", "error"
VERDICTS = (PASS, FAIL, ERROR)
UNTYPED = "untyped"
HEADLINE_POSITIVE, HEADLINE_TOTAL = "positive", "total"


class Judge(Protocol):
    """Scores a task's deliverables against its rubric. Build one with a factory:
    :func:`~dealroom.judge.reference_judge` or :func:`~dealroom.judge.llm_judge`.

    A judge may also have ``check_task(task, source)``, raising ConfigError for a rubric it
    cannot score; the front doors call it before any judge model is opened."""

    name: str
    """``reference`` or ``llm``."""
    args: dict[str, Any]
    """The options it was built with (the judge model's spec among them); logged."""

    async def __call__(self, task: dict[str, Any], deliverables: dict[str, str]) -> Scores:
        """Judge every criterion of ``task`` (LAB ``task.json``) against ``deliverables``
        (deliverable name → text)."""
        ...


@dataclass
class CriterionResult:
    """The verdict on one criterion."""

    id: str
    title: str
    verdict: str
    """``pass``, ``fail`` or ``error`` (the judge could not score it)."""
    reasoning: str

    def to_dict(self) -> dict[str, str]:
        return {
            "id": self.id,
            "title": self.title,
            "verdict": self.verdict,
            "reasoning": self.reasoning,
        }


@dataclass
class Scores:
    """A judged deliverable; :meth:`to_dict` is ``scores.json``."""

    criteria_results: list[CriterionResult]
    types: dict[str, str] = field(default_factory=dict)
    """Criterion id → criterion ``type`` (fact, conclusion, citation, ...)."""
    judge: dict[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    """Tokens and cost the judge spent (zero for the reference judge)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Further keys written to ``scores.json`` (run, room, agreement, ...)."""
    negatives: frozenset[str] = frozenset()
    """Ids of the negative criteria (:func:`is_negative`)."""
    evidence: Evidence | None = None
    """Whether the memo cites the answer key's documents and pages; set by the front doors
    (:func:`~dealroom.judge.judge_run`, ...) for any judge; None when not measured."""

    @property
    def n_criteria(self) -> int:
        return len(self.criteria_results)

    @property
    def n_passed(self) -> int:
        return sum(r.verdict == PASS for r in self.criteria_results)

    @property
    def n_errors(self) -> int:
        return sum(r.verdict == ERROR for r in self.criteria_results)

    @property
    def pass_rate(self) -> float:
        """Passed / all criteria (errors count as not passed); NaN without criteria."""
        return self.n_passed / self.n_criteria if self.n_criteria else math.nan

    @property
    def pass_rate_judged(self) -> float:
        """Passed / criteria the judge could score; NaN when it scored none."""
        judged = self.n_criteria - self.n_errors
        return self.n_passed / judged if judged else math.nan

    @property
    def n_positive(self) -> int:
        """Criteria that are not negative."""
        return sum(r.id not in self.negatives for r in self.criteria_results)

    @property
    def n_positive_passed(self) -> int:
        return sum(r.verdict == PASS and r.id not in self.negatives
                   for r in self.criteria_results)

    @property
    def pass_rate_positive(self) -> float:
        """Passed / positive criteria (an empty memo scores 0); NaN without positive ones."""
        return self.n_positive_passed / self.n_positive if self.n_positive else math.nan

    @property
    def headline_kind(self) -> str:
        """What :attr:`headline` is: ``positive`` when the rubric has negative criteria (and
        positive ones), else ``total`` (docs/judging.md, "The headline")."""
        return HEADLINE_POSITIVE if self.negatives and self.n_positive else HEADLINE_TOTAL

    @property
    def headline(self) -> float:
        """The figure shown first, one a memo without findings cannot raise: the positive
        criteria's pass rate when the rubric has negatives, else the total pass rate."""
        return self.pass_rate_positive if self.headline_kind == HEADLINE_POSITIVE \
            else self.pass_rate

    @property
    def all_pass(self) -> bool:
        return self.n_criteria > 0 and self.n_passed == self.n_criteria

    def by_type(self) -> dict[str, dict[str, Any]]:
        """Per criterion type: ``n``, ``passed``, ``errors`` and ``pass_rate``."""
        out: dict[str, dict[str, Any]] = {}
        for r in self.criteria_results:
            row = out.setdefault(
                self.types.get(r.id) or UNTYPED, {"n": 0, "passed": 0, "errors": 0}
            )
            row["n"] += 1
            row["passed"] += r.verdict == PASS
            row["errors"] += r.verdict == ERROR
        for row in out.values():
            row["pass_rate"] = row["passed"] / row["n"]
        return dict(sorted(out.items()))

    def summary(self) -> str:
        text = f"{self.n_passed}/{self.n_criteria} criteria passed"
        if self.n_criteria:
            text += f" ({100 * self.pass_rate:.1f}%)"
        if self.negatives and self.n_positive:
            text += (f"; positive criteria {self.n_positive_passed}/{self.n_positive} "
                     f"({100 * self.pass_rate_positive:.1f}%)")
        if self.n_errors:
            text += f"; {self.n_errors} judge error{'s' * (self.n_errors > 1)}"
        return text

    def to_dict(self) -> ScoresRecord:
        """The ``scores.json`` record (:class:`~dealroom.runs.ScoresRecord`, NaN where a rate
        is undefined: written as null); a ValueError for ``extra`` keys it does not name."""
        record: ScoresRecord = {
            "version": SCORES_VERSION,
            "score": 1.0 if self.all_pass else 0.0,
            "max_score": 1.0,
            "summary": self.summary(),
            "all_pass": self.all_pass,
            "n_criteria": self.n_criteria,
            "n_passed": self.n_passed,
            "n_errors": self.n_errors,
            "headline": self.headline,
            "headline_kind": self.headline_kind,
            "pass_rate": self.pass_rate,
            "pass_rate_judged": self.pass_rate_judged,
            "n_positive": self.n_positive,
            "n_positive_passed": self.n_positive_passed,
            "pass_rate_positive": self.pass_rate_positive,
            "pass_rate_by_type": self.by_type(),
            "criteria_results": [r.to_dict() for r in self.criteria_results],
            "judge": self.judge,
            "usage": cast(UsageRecord, self.usage.to_dict()),
            "evidence": cast(EvidenceRecord, self.evidence.to_dict()) if self.evidence
            else None,
            **self.extra,  # type: ignore[typeddict-item]  # checked just below
        }
        check_scores_written(record)
        return record

    @classmethod
    def from_dict(cls, data: ScoresRecord, task: dict[str, Any] | None = None) -> Scores:
        """Read a ``scores.json``; ``task`` restores criterion types for :meth:`by_type` and
        which criteria are negative."""
        results = [
            CriterionResult(
                r["id"], r.get("title", ""), _verdict_of(r.get("verdict")), r.get("reasoning", "")
            )
            for r in data.get("criteria_results", [])
        ]
        from dealroom.judge._evidence import Evidence

        extra_keys = ("run", "room", "agreement", "deliverables_missing")
        evidence = data.get("evidence")
        return cls(
            results,
            criterion_types(task) if task else {},
            data.get("judge", {}),
            Usage.from_dict(dict(data.get("usage") or {})),
            {k: v for k, v in data.items() if k in extra_keys},
            negative_ids(task) if task else frozenset(),
            Evidence.from_dict(dict(evidence)) if evidence else None,
        )


def _verdict_of(value: Any) -> str:
    verdict = str(value or "").strip().lower()
    return verdict if verdict in VERDICTS else ERROR


def graded_by_name(task: dict[str, Any]) -> list[dict[str, Any]]:
    """The task's criteria, each naming the deliverables it grades by their names: a file
    name (``["memo.md"]``, ``["antitrust-risk-memo.docx"]``) becomes its deliverable's name;
    a criterion that names none grades them all.

    >>> graded_by_name({"deliverables": {"memo": "memo.md"},
    ...                 "criteria": [{"id": "C-001", "deliverables": ["memo.md"]}]})
    [{'id': 'C-001', 'deliverables': ['memo']}]
    """
    from dealroom.room import DEFAULT_DELIVERABLES
    from dealroom.runs import deliverable_key

    files = task.get("deliverables") or DEFAULT_DELIVERABLES
    out = []
    for c in task.get("criteria", []):
        if c.get("deliverables"):
            c = {**c, "deliverables": [deliverable_key(files, d) or d for d in c["deliverables"]]}
        out.append(c)
    return out


def is_negative(criterion: dict[str, Any]) -> bool:
    """A negative criterion passes unless the memo states a claim: ``negative: true`` on the
    criterion or in its ``expect`` block.

    >>> is_negative({"expect": {"negative": True}}), is_negative({"expect": {"cite": []}})
    (True, False)
    """
    expect = criterion.get("expect")
    return bool(criterion.get("negative") or (isinstance(expect, dict) and expect.get("negative")))


def negative_ids(task: dict[str, Any]) -> frozenset[str]:
    """Ids of ``task``'s negative criteria."""
    return frozenset(c["id"] for c in task.get("criteria", []) if is_negative(c))


def criterion_types(task: dict[str, Any]) -> dict[str, str]:
    """Criterion id → ``type`` for every criterion of ``task``."""
    return {c["id"]: c.get("type") or UNTYPED for c in task.get("criteria", [])}


def make_scores(
    task: dict[str, Any],
    verdicts: dict[str, tuple[str, str]],
    judge: dict[str, Any],
    usage: Usage | None = None,
) -> Scores:
    """Scores for every criterion of ``task``; one missing from ``verdicts`` is an error."""
    results = []
    for c in task.get("criteria", []):
        verdict, reasoning = verdicts.get(c["id"], (ERROR, "the judge returned no verdict"))
        results.append(CriterionResult(c["id"], c.get("title", ""), verdict, reasoning))
    return Scores(results, criterion_types(task), judge, usage or Usage(),
                  negatives=negative_ids(task))
