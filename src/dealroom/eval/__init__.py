"""Evaluation: summaries over run folders, sweeps of episodes on a process pool or Ray, the
metrics and analyses over them (Pass@(K,T), comparisons, the source's analyses), error-prefix
evaluation (failure points pooled from recorded runs, continued by each policy, compared), and
BudgetMix plans and their audit."""

from dealroom.eval._analyze import analyze, coverage_pass
from dealroom.eval._budgetmix import (
    BudgetMixAudit,
    BudgetMixEntry,
    BudgetMixPlan,
    RunAudit,
    audit_budgetmix,
    budgetmix_run_options,
    expand_rooms,
    make_budgetmix_plan,
)
from dealroom.eval._compare import compare
from dealroom.eval._executor import POLL_S, Stopped, execute, import_ray
from dealroom.eval._metrics import (
    as_of,
    bootstrap_ci,
    cluster_bootstrap_ci,
    mean_pass_at_k,
    pass_at_k,
    pearson_log,
    sign_test,
    size_bucket,
    spearman,
)
from dealroom.eval._passk import passk, success, table
from dealroom.eval._prefixes import (
    PREFIX_KINDS,
    Prefix,
    PrefixPool,
    failure_points,
    pool_prefixes,
)
from dealroom.eval._recover import recover, recovery_report
from dealroom.eval._results import (
    HEADLINES,
    Row,
    load_rows,
    parse_source,
    sweep_spec,
    with_headline,
)
from dealroom.eval._spec import (
    EpisodeSpec,
    GeneratedRoom,
    GeneratedRooms,
    SweepSpec,
    generated_room,
    load_spec,
    spec_from_dict,
)
from dealroom.eval._summary import run_row, summarize_runs
from dealroom.eval._sweep import SweepProgress, SweepResult, run_sweep
from dealroom.eval._sweep_record import SWEEP_MIGRATIONS, SWEEP_VERSION, SweepRecord, read_sweep

__all__ = [
    "HEADLINES",
    "POLL_S",
    "Stopped",
    "execute",
    "import_ray",
    "PREFIX_KINDS",
    "BudgetMixAudit",
    "BudgetMixEntry",
    "BudgetMixPlan",
    "EpisodeSpec",
    "GeneratedRoom",
    "GeneratedRooms",
    "Prefix",
    "PrefixPool",
    "Row",
    "RunAudit",
    "SweepProgress",
    "SweepRecord",
    "SweepResult",
    "SweepSpec",
    "SWEEP_MIGRATIONS",
    "SWEEP_VERSION",
    "analyze",
    "as_of",
    "audit_budgetmix",
    "bootstrap_ci",
    "budgetmix_run_options",
    "cluster_bootstrap_ci",
    "compare",
    "coverage_pass",
    "expand_rooms",
    "failure_points",
    "generated_room",
    "load_rows",
    "load_spec",
    "make_budgetmix_plan",
    "mean_pass_at_k",
    "parse_source",
    "pass_at_k",
    "passk",
    "pearson_log",
    "pool_prefixes",
    "recover",
    "recovery_report",
    "run_row",
    "read_sweep",
    "run_sweep",
    "sign_test",
    "spec_from_dict",
    "size_bucket",
    "spearman",
    "success",
    "summarize_runs",
    "sweep_spec",
    "table",
    "with_headline",
]
