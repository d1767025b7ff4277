"""Evaluation: summaries over run folders, and BudgetMix plans and their audit."""

from dealroom.eval._budgetmix import (
    BudgetMixAudit,
    BudgetMixEntry,
    BudgetMixPlan,
    RunAudit,
    audit_budgetmix,
    make_budgetmix_plan,
)
from dealroom.eval._summary import run_row, summarize_runs

__all__ = [
    "BudgetMixAudit",
    "BudgetMixEntry",
    "BudgetMixPlan",
    "RunAudit",
    "audit_budgetmix",
    "make_budgetmix_plan",
    "run_row",
    "summarize_runs",
]
