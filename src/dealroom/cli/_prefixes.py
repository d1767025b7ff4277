"""``dealroom eval prefixes`` and ``eval recover``: error-prefix evaluation."""

from __future__ import annotations

from pathlib import Path

import typer

from dealroom.cli import eval_app, read_models_file
from dealroom.cli.display import render_json
from dealroom.cli.display_prefixes import render_pool


@eval_app.command()
def prefixes(
    sweeps: list[str] = typer.Argument(
        ..., help="Sweeps, run folders, or folders of them (any depth); SWEEP:root=... selects."),
    out: Path = typer.Option(..., "--out", help="New pool folder (pool.json, prefixes.jsonl)."),
    kinds: list[str] = typer.Option(
        None, "--kinds",
        help="Kinds to pool (comma-separated or repeated): cell_error, failed_wave, no_code, "
             "low_budget, tool_error, failed_run, turn=J; default all but turn=J."),
    near: float = typer.Option(
        0.25, "--near", help="Share of the turn budget left that counts as nearly spent."),
    tau: float = typer.Option(
        0.5, "--tau", help="failed_run: a judged run with a pass rate below X failed."),
    as_json: bool = typer.Option(False, "--json", help="Print pool.json instead of a table."),
) -> None:
    """Pool the failure points of recorded runs: (run, turn j, kind, remaining budget T-j)."""
    from dealroom.eval import pool_prefixes

    chosen = [k.strip() for given in kinds or [] for k in given.split(",") if k.strip()]
    pool = pool_prefixes(sweeps, out, chosen or None, near, tau)
    if as_json:
        render_json(pool.info, indent=2)
        return
    render_pool(pool.info, len(pool.prefixes), out)


@eval_app.command()
def recover(
    pool: Path = typer.Argument(..., help="A prefix pool (dealroom eval prefixes --out)."),
    roots: list[str] = typer.Option(..., "--root", help="A policy to continue with (repeat)."),
    k: int = typer.Option(1, "--k", help="Continuations per prefix and policy."),
    out: Path = typer.Option(..., "--out", help="Folder of the continuations and the report."),
    judge: str = typer.Option("reference", "--judge", help="`reference` or a judge model spec."),
    sub: str = typer.Option(None, "--sub", help="Sub-agent of every continuation (default: "
                            "each run's own)."),
    temperature: float = typer.Option(None, "--temperature", help="The policies' temperature."),
    kinds: list[str] = typer.Option(None, "--kinds", help="Only prefixes of these kinds."),
    workers: int = typer.Option(1, "--workers", help="Continuations at once."),
    backend: str = typer.Option("process", "--backend", help="process (a local pool) or ray."),
    address: str = typer.Option(None, "--address", help="A running Ray cluster (--backend ray)."),
    models: Path = typer.Option(None, "--models", help="Models file naming the policies.",
                                callback=read_models_file),
    tau: float = typer.Option(
        0.5, "--tau", help="Success: a continuation's pass rate of at least X (default 0.5)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as one JSON object."),
) -> None:
    """Continue every prefix K times with each policy; report per policy and kind next-step
    quality, recovery rate, success (pass rate >= tau), beating the original, Pass@k over the
    K continuations, final pass rate and turns used, paired on the same prefixes.
    Running it again skips finished continuations and resumes interrupted ones."""
    from dealroom.cli.display_prefixes import continuation_progress, render_recovery
    from dealroom.eval import recover as recover_prefixes

    chosen = [x.strip() for given in kinds or [] for x in given.split(",") if x.strip()]
    with continuation_progress(quiet=as_json) as progress:
        report = recover_prefixes(pool, roots, k, out, judge=judge, sub=sub,
                                  temperature=temperature, kinds=chosen or None,
                                  workers=workers, backend=backend, address=address,
                                  models_file=models, progress=progress, tau=tau)
    if as_json:
        render_json(report, indent=2)
        return
    render_recovery(report, out)
