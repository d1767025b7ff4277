"""``dealroom budgetmix plan`` and ``audit``: parse flags, call the API, render."""

from __future__ import annotations

from pathlib import Path

import typer

from dealroom.cli import app
from dealroom.cli.display import render_json
from dealroom.cli.display_budgetmix import render_audit, render_plan

budgetmix_app = typer.Typer(
    name="budgetmix", no_args_is_help=True,
    help="BudgetMix: explicit turn budgets per training group, and the audit of runs.")
app.add_typer(budgetmix_app, name="budgetmix")


@budgetmix_app.command()
def plan(
    budgets: str = typer.Option(..., "--budgets", help="Turn budgets, comma-separated: 8,16,32,64"),
    groups: int = typer.Option(..., "--groups", help="Groups per step (each one room, one T)."),
    rooms: list[str] = typer.Option(..., "--rooms", help="Room folders or globs (repeatable)."),
    steps: int = typer.Option(..., "--steps", help="Training steps."),
    seed: int = typer.Option(0, "--seed", help="Shuffles the budgets and rooms."),
    out: Path = typer.Option(..., "--out", help="PLAN.json to write (never overwritten)."),
) -> None:
    """Assign each group of each step a room and an explicit turn budget, balanced."""
    from dealroom.errors import ConfigError
    from dealroom.eval import make_budgetmix_plan

    try:
        turns = [int(b) for b in budgets.split(",")]
    except ValueError:
        raise ConfigError(f"--budgets takes whole numbers separated by commas, not {budgets!r}") \
            from None
    made = make_budgetmix_plan(turns, groups, rooms, steps, seed)
    made.save(out)
    render_plan(made.to_dict(), out)


@budgetmix_app.command()
def audit(
    plan_file: Path = typer.Argument(..., help="The PLAN.json the runs follow."),
    runs: list[Path] = typer.Argument(..., help="Run folders, sweeps, or folders of them."),
    as_json: bool = typer.Option(False, "--json", help="Print the audit as one JSON object."),
) -> None:
    """Check every run against its plan entry: its max_turns, and that each root turn was
    told "Turn k of T" with the entry's T. Exit 1 when a run does not follow the plan."""
    from dealroom.eval import BudgetMixPlan, audit_budgetmix
    from dealroom.runs import find_runs

    result = audit_budgetmix(BudgetMixPlan.load(plan_file), find_runs(runs))
    if as_json:
        render_json(result.to_dict(), indent=2)
    else:
        render_audit(result.to_dict())
    raise typer.Exit(0 if result.ok else 1)
