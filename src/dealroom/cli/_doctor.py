"""``dealroom doctor``: what this machine has for dealroom, and the fix for what it lacks."""

from __future__ import annotations

from pathlib import Path

import typer

from dealroom.cli import app


@app.command()
def doctor(
    isolation: str = typer.Option(
        "auto", help="Isolation level to try: auto, namespaces+uid, userns, rlimits."),
    models: Path = typer.Option(
        None, "--models", help="Models file whose models to check (default: the one found)."),
    start_local: bool = typer.Option(
        True, "--start-local/--no-start-local",
        help="Start the embedded model's server for a moment (not only find its GGUF)."),
    as_json: bool = typer.Option(False, "--json", help="Print every check as one JSON object."),
) -> None:
    """Python and packages (drift from the pins), extras, the sandbox's confinement, the
    embedded model, the models file's models, Ray, torch and GPUs, free disk. Exit 1 when
    something needed is missing; each problem comes with its fix."""
    from dealroom import diagnose
    from dealroom.cli.display import render_json
    from dealroom.cli.display_doctor import render_diagnosis

    result = diagnose(isolation=isolation, models_file=models, start_local=start_local)
    if as_json:
        render_json(result.to_dict(), indent=2)
    else:
        render_diagnosis(result.to_dict())
    raise typer.Exit(0 if result.ok else 1)
