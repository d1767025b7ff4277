"""Evaluation: summaries over run folders, error-prefix evaluation (failure points pooled from
recorded runs, continued by each policy, compared), and BudgetMix plans and their audit."""

from dealroom.eval._budgetmix import (
    BudgetMixAudit,
    BudgetMixEntry,
    BudgetMixPlan,
    RunAudit,
    audit_budgetmix,
    make_budgetmix_plan,
)
from dealroom.eval._prefixes import PREFIX_KINDS, Prefix, PrefixPool, pool_prefixes
from dealroom.eval._recover import recover, sign_test
from dealroom.eval._summary import run_row, summarize_runs

__all__ = [
    "BudgetMixAudit",
    "BudgetMixEntry",
    "BudgetMixPlan",
    "PREFIX_KINDS",
    "Prefix",
    "PrefixPool",
    "RunAudit",
    "audit_budgetmix",
    "make_budgetmix_plan",
    "pool_prefixes",
    "recover",
    "run_row",
    "sign_test",
    "summarize_runs",
]
