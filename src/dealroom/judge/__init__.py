"""Judging: the LLM rubric judge, the deterministic reference judge, and their agreement.

A :class:`Judge` is an async callable ``(task, deliverables) -> Scores`` built by a factory;
judges that need no model register by name in the ``dealroom.judges`` entry-point group
(``reference``). :func:`judge_run`, :func:`judge_memo` and :func:`judge_files` (``dealroom
judge``'s choices) are the front doors that read the files and write ``scores.json`` in Harvey
LAB's shape; :func:`judge_by_turn` judges a run's memo as of each turn. See docs/judging.md.
"""

from dealroom.judge._agreement import agreement
from dealroom.judge._byturn import ajudge_by_turn, judge_by_turn
from dealroom.judge._llm import llm_judge
from dealroom.judge._reference import reference_judge
from dealroom.judge._registry import judge_names
from dealroom.judge._run import (
    Judged,
    ajudge_files,
    ajudge_memo,
    ajudge_run,
    judge_files,
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
    "Judged",
    "Scores",
    "agreement",
    "ajudge_by_turn",
    "ajudge_files",
    "ajudge_memo",
    "ajudge_run",
    "judge_by_turn",
    "judge_files",
    "judge_memo",
    "judge_names",
    "judge_run",
    "llm_judge",
    "open_judge",
    "parse_verdicts",
    "read_deliverables",
    "reference_judge",
    "write_scores",
]
