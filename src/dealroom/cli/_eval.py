"""``dealroom eval``: sweep, passk, table, compare, analyze."""

from __future__ import annotations

from pathlib import Path

import typer

from dealroom.cli import eval_app
from dealroom.cli.display_eval import SweepDisplay, render_sweep_result


@eval_app.command()
def sweep(
    spec: Path = typer.Argument(..., help="The sweep spec (TOML): rooms, roots, subs, T, K, ..."),
    out: Path = typer.Option(..., "--out", help="The sweep folder (new, or the same spec's)."),
    workers: int = typer.Option(None, "--workers", help="Parallel episodes (default: cores)."),
    backend: str = typer.Option("process", "--backend", help="process (a local pool) or ray."),
    address: str = typer.Option(None, "--address", help="A running Ray cluster (--backend ray)."),
    retry_failed: bool = typer.Option(
        False, "--retry-failed", help="Run again the episodes recorded as failed."),
) -> None:
    """Run every episode of SPEC (judged as each ends); run it again to continue after a kill.

    Exits 0 when every episode of the sweep ended as a run exiting 0 does (submitted, finished,
    max_turns, budget_exhausted); else the largest code among its episodes (1 error or an
    episode that failed to run, 3 degraded, 4 errors), and says how many ended so.
    """
    from dealroom.cli._exit import sweep_exit_code
    from dealroom.eval import run_sweep

    with SweepDisplay() as display:
        result = run_sweep(spec, out, workers=workers, backend=backend, address=address,
                           retry_failed=retry_failed, progress=display)
    render_sweep_result(result)
    code = sweep_exit_code(result.statuses, result.failed)
    if code:
        raise typer.Exit(code)


TAU_HELP = "Success: a criteria pass rate of at least X (default 0.5)."
ALL_PASS_HELP = "Success: every criterion passed (LAB's score)."
SETTING_HELP = ("Pass@(K,T) from runs per T (visible) or T_max runs as of turn T (truncation, "
                "also on budget-visible sweeps); default: the sweep's budget_visible.")


HEADLINE_HELP = ("The pass rate shown first: headline (each episode's scores.json headline: "
                 "positive criteria where its rubric has negative ones, else all), total (all "
                 "criteria; negative criteria pass an empty memo) or positive.")


def _tau(tau: float | None, all_pass: bool) -> float | None:
    from dealroom.errors import ConfigError

    if all_pass and tau is not None:
        raise ConfigError("give --tau or --all-pass, not both")
    if tau is not None and not 0.0 <= tau <= 1.0:
        raise ConfigError(f"--tau is a pass rate between 0 and 1, got {tau}")
    return None if all_pass else (0.5 if tau is None else tau)


@eval_app.command()
def passk(
    sweep: str = typer.Argument(..., help="A sweep folder (or SWEEP:root=...,sub=...)."),
    tau: float = typer.Option(None, "--tau", help=TAU_HELP),
    all_pass: bool = typer.Option(False, "--all-pass", help=ALL_PASS_HELP),
    setting: str = typer.Option(None, "--setting", help=SETTING_HELP),
    k: int = typer.Option(None, "--k", help="Largest k (default: the samples recorded)."),
    headline: str = typer.Option("headline", "--headline", help=HEADLINE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object per (policy, T, k)."),
) -> None:
    """Pass@(K,T): success within k samples under a turn budget T, per policy."""
    from dealroom.cli.display import render_json
    from dealroom.cli.display_eval import render_passk
    from dealroom.eval import passk as compute

    result = compute(sweep, tau=_tau(tau, all_pass), setting=setting, k=k, headline=headline)
    if as_json:
        render_json(result, indent=2)
    else:
        render_passk(result)


@eval_app.command()
def table(
    sweep: str = typer.Argument(..., help="A sweep folder (or SWEEP:root=...)."),
    by: str = typer.Option(
        "root,sub,depth,max_turns", "--by",
        help="Group on, comma-separated: root, sub, depth, max_turns, room, size, seed, type."),
    headline: str = typer.Option("headline", "--headline", help=HEADLINE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
) -> None:
    """Criteria pass rate with a 95% bootstrap interval over rooms, all-pass, coverage, cost."""
    from dealroom.cli.display import render_json
    from dealroom.cli.display_eval import render_table
    from dealroom.eval import table as compute

    groups = [g.strip() for g in by.split(",") if g.strip()]
    result = compute(sweep, by=groups, headline=headline)
    if as_json:
        render_json(result, indent=2)
    else:
        render_table(result, groups)


@eval_app.command()
def compare(
    a: str = typer.Argument(..., help="A sweep, or a selector SWEEP:root=scripted,..."),
    b: str = typer.Argument(..., help="Another sweep or selector."),
    tau: float = typer.Option(None, "--tau", help=TAU_HELP + " For the Pass@k cells."),
    all_pass: bool = typer.Option(False, "--all-pass", help=ALL_PASS_HELP),
    setting: str = typer.Option(None, "--setting", help=SETTING_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """A - B paired by room (and T, depth, seed): mean difference, bootstrap CI, sign test."""
    from dealroom.cli.display import render_json
    from dealroom.cli.display_eval import render_compare
    from dealroom.eval import compare as compute

    result = compute(a, b, tau=_tau(tau, all_pass), setting=setting)
    if as_json:
        render_json(result, indent=2)
    else:
        render_compare(result)


@eval_app.command()
def analyze(
    sweep: str = typer.Argument(..., help="A sweep folder (or SWEEP:root=...)."),
    as_json: bool = typer.Option(False, "--json", help="Print the analyses as JSON."),
) -> None:
    """The source's analyses: coverage and cost vs pass rate, delegation, root share, memo
    writing, depth 1 vs 2, the root x sub grid."""
    from dealroom.cli.display import render_json
    from dealroom.cli.display_eval import render_analysis
    from dealroom.eval import analyze as compute

    result = compute(sweep)
    if as_json:
        render_json(result, indent=2)
    else:
        render_analysis(result)
