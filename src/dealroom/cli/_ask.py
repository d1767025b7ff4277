"""``dealroom ask``: a follow-up question on a finished run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import typer

from dealroom.cli import app, read_models_file
from dealroom.cli._run import MODELS_HELP
from dealroom.cli.display_live import RunDisplay


@app.command()
def ask(
    run_dir: Path = typer.Argument(..., metavar="RUN", help="A finished RLM run folder."),
    question: str = typer.Argument(..., help="The question, in quotes."),
    root: str = typer.Option(None, help="Root model that answers (default: the run's)."),
    sub: list[str] = typer.Option(
        None, help="Sub-agent model (default: the run's); --sub fast=A --sub strong=B names them."),
    max_turns: int = typer.Option(10, "--max-turns", min=1,
                                  help="Root turns the answer may take."),
    max_cost: float = typer.Option(None, "--max-cost", help="Dollars the answer may spend."),
    revise: bool = typer.Option(
        False, "--revise",
        help="Make the memo the root leaves the run's newest version (when it changed it)."),
    room: Path = typer.Option(None, "--room",
                              help="The run's room where it lies elsewhere (same documents)."),
    models: Path = typer.Option(None, "--models", help=MODELS_HELP, callback=read_models_file),
    as_json: bool = typer.Option(False, "--json", help="Print answer.json instead."),
) -> None:
    """Ask a finished run a follow-up question: its REPL is rebuilt as the run left it (cells
    replayed against the recorded answers; no model call repeated) and the root answers
    with submit(answer), citations checked. Written to RUN/asks/N/ (answer.json, its own
    trajectory); the run's memo changes only with --revise. Exits 0 answered, 1 unanswered.
    """
    from dealroom.cli.display import render_answer
    from dealroom.harness import ask_run_async, sub_specs

    with RunDisplay(max_turns=None, every=0 if as_json else None) as display:
        result = asyncio.run(ask_run_async(
            run_dir, question, root=root, sub=sub_specs(sub or None), models_file=models,
            max_turns=max_turns,
            max_cost_usd=max_cost, revise=revise, room=room, listeners=(display,)))
    render_answer(result, as_json=as_json)
    if result.answer is None:
        raise typer.Exit(1)
