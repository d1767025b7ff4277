"""``dealroom eval prefixes`` and ``eval recover``: error-prefix evaluation."""

from __future__ import annotations

from pathlib import Path

import typer

from dealroom.cli import eval_app
from dealroom.cli.display import render_json
from dealroom.cli.display_prefixes import render_pool


@eval_app.command()
def prefixes(
    sweeps: list[Path] = typer.Argument(..., help="Sweeps, run folders, or folders of them."),
    out: Path = typer.Option(..., "--out", help="New pool folder (pool.json, prefixes.jsonl)."),
    kinds: list[str] = typer.Option(
        None, "--kinds",
        help="Kinds to pool (comma-separated or repeated): cell_error, failed_wave, no_code, "
             "low_budget, tool_error; default all."),
    near: float = typer.Option(
        0.25, "--near", help="Share of the turn budget left that counts as nearly spent."),
    as_json: bool = typer.Option(False, "--json", help="Print pool.json instead of a table."),
) -> None:
    """Pool the failure points of recorded runs: (run, turn j, kind, remaining budget T-j)."""
    from dealroom.eval import pool_prefixes

    chosen = [k.strip() for given in kinds or [] for k in given.split(",") if k.strip()]
    pool = pool_prefixes(sweeps, out, chosen or None, near)
    if as_json:
        render_json(pool.info, indent=2)
        return
    render_pool(pool.info, len(pool.prefixes), out)
