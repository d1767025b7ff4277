"""``dealroom judge`` and ``dealroom summary``: parse flags, call the API, render."""

from __future__ import annotations

from pathlib import Path

import typer

from dealroom.cli import app, read_models_file
from dealroom.cli.display import render_json
from dealroom.cli.display_scores import (
    render_by_turn,
    render_scores,
    render_scores_json,
    render_summary,
)
from dealroom.errors import ConfigError

MODELS_HELP = "Models file (TOML) naming models; default ./models.toml or ~/.config/dealroom."


@app.command()
def judge(
    run: Path = typer.Argument(
        None, help="A run folder: judges RUN/output, writes RUN/scores.json."
    ),
    judge_: str = typer.Option("reference", "--judge", help="`reference` or a judge model spec."),
    batch: int = typer.Option(1, "--batch", help="Criteria per judge call (1: one per criterion)."),
    retries: int = typer.Option(2, "--retries", help="Re-asks for unparsable or missing verdicts."),
    compare: str = typer.Option(None, "--compare", help="A second judge; reports agreement."),
    room: Path = typer.Option(None, "--room", help="Judge --memo against this room's rubric."),
    memo: Path = typer.Option(None, "--memo", help="Any memo file (with --room)."),
    out: Path = typer.Option(None, "--out", help="Where to write scores.json."),
    models: Path = typer.Option(None, "--models", help=MODELS_HELP,
                                callback=read_models_file),
    as_json: bool = typer.Option(False, "--json", help="Print scores.json instead of tables."),
    by_turn: bool = typer.Option(
        False, "--by-turn", help="Judge the memo as of each turn: RUN/scores_by_turn.json."),
) -> None:
    """Score a memo against the room's rubric (criteria pass rate, by type, judge errors)."""
    from dealroom.judge import judge_by_turn, judge_files

    if by_turn:
        if run is None or memo is not None:
            raise ConfigError("--by-turn judges a run folder's memo history: give RUN")
        result = judge_by_turn(run, judge_, out=out, batch=batch, retries=retries,
                               models_file=models)
        render_json(result, indent=2) if as_json else render_by_turn(result)
        return
    judged = judge_files(run, room=room, memo=memo, judge=judge_, compare=compare, out=out,
                         batch=batch, retries=retries, models_file=models)
    if as_json:
        render_scores_json(judged.to_dict())
        return
    render_scores(judged.to_dict(), judged.written)


@app.command()
def summary(
    runs: list[Path] = typer.Argument(
        ..., help="Run folders, sweeps, or folders holding run folders or sweeps."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object: runs and totals."),
) -> None:
    """One row per run (pass rate, coverage, cost, tokens, root share, sub-calls, turns)."""
    from dealroom.eval import summarize_runs
    from dealroom.runs import find_runs

    result = summarize_runs(find_runs(runs))
    if as_json:
        render_json(result, indent=2)
        return
    render_summary(result)
