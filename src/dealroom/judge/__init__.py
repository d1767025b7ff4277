"""Judging: the LLM rubric judge, the deterministic reference judge, and their agreement.

A :class:`Judge` is an async callable ``(task, deliverables) -> Scores`` built by a factory;
:func:`judge_run` and :func:`judge_memo` are the front doors that read the files and write
``scores.json`` in Harvey LAB's shape. See docs/judging.md.
"""

from dealroom.judge._agreement import agreement
from dealroom.judge._llm import llm_judge
from dealroom.judge._reference import reference_judge
from dealroom.judge._run import (
    ajudge_memo,
    ajudge_run,
    judge_memo,
    judge_run,
    open_judge,
    read_deliverables,
    write_scores,
)
from dealroom.judge._scores import CriterionResult, Judge, Scores
from dealroom.judge._verdicts import parse_verdicts

__all__ = [
    "CriterionResult",
    "Judge",
    "Scores",
    "agreement",
    "ajudge_memo",
    "ajudge_run",
    "judge_memo",
    "judge_run",
    "llm_judge",
    "open_judge",
    "parse_verdicts",
    "read_deliverables",
    "reference_judge",
    "write_scores",
]
